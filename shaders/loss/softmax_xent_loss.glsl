// loss/softmax_xent_loss: the per-row softmax cross-entropy (mean them for the loss).
// inputs: X, STATS, Y
// defines: ONEHOT as in loss/softmax_xent_grad (labels N x 1, or targets N x C)
// output: N x 1, any layout
// formula: lse_r = m_r + log(s_r)                  (the reference's order of operations)
//          labels:  L[r] = lse_r - X[r, Y[r]]      (NaN for a label not an integer in [0, C))
//          targets: L[r] = sum_c t_rc (lse_r - X[r, c]), terms with t_rc == 0 skipped
//                   (so a -inf logit where the target is 0 costs nothing)
// Finite for logits of any finite magnitude; NaN for a row holding NaN or +inf.
void main() {
    int r = outTexel().y;
    int C = X_shape().y;
    float lse = STATS_at(r, 0) + log(STATS_at(r, 1));
#if ONEHOT
    float loss = 0.0;
#if X_PACKED && Y_PACKED
    // Padding lanes of the targets are zero: whole texels can be summed.
    vec4 acc = vec4(0.0);
    int texels = (C + 3) >> 2;
    for (int x = 0; x < texels; ++x) {
        vec4 tv = Y_texel(x, r);
        acc += mix(vec4(0.0), tv * (lse - X_texel(x, r)), notEqual(tv, vec4(0.0)));
    }
    loss = (acc.x + acc.y) + (acc.z + acc.w);
#else
    for (int c = 0; c < C; ++c) {
        float tv = Y_at(r, c);
        if (tv != 0.0) loss += tv * (lse - X_at(r, c));
    }
#endif
#else
    float label = Y_at(r, 0);
    bool valid = label >= 0.0 && label < float(C) && label == floor(label);
    float loss = valid ? lse - X_at(r, int(label)) : uintBitsToFloat(0x7fc00000u);
#endif
    setOutput(vec4(loss));
}
