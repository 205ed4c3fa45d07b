// loss/softmax_xent_grad: the gradient of the mean softmax cross-entropy, fused:
// the probabilities are never stored.
// inputs: X, STATS, Y, SCALE?
// defines: ONEHOT = 0: Y is N x 1 integer class labels stored as floats (0 .. C-1);
//          ONEHOT = 1: Y is N x C target distributions (one-hot or smoothed)
// uniforms: invN = 1 / N (computed on the host, as the reference does)
// SCALE (optional, 1 x n): the gradient is multiplied by SCALE[0, 0] (dynamic loss scaling)
// output: N x C (the shape of X), any layout
// formula: G[r, c] = (exp(X[r, c] - m_r) / s_r - t_rc) * invN
//          t_rc = Y[r, c] (ONEHOT) or (c == Y[r, 0] ? 1 : 0)
// A label that is not an integer in [0, C) (NaN included) makes its row NaN,
// in the gradient as in the loss: the GPU cannot throw, so it is made loud.
uniform float invN;

void main() {
    ivec2 t = outTexel();
    int r = t.y;
    float m = STATS_at(r, 0), s = STATS_at(r, 1);
    vec4 p = exp(X_aligned() - m) / s;
#if ONEHOT
    vec4 target = Y_aligned();
#else
    float label = Y_at(r, 0);
    int C = X_shape().y;
#if OUT_PACKED
    ivec4 cols = ivec4(t.x * 4) + ivec4(0, 1, 2, 3);
#else
    ivec4 cols = ivec4(t.x, -1, -1, -1);
#endif
    bool valid = label >= 0.0 && label < float(C) && label == floor(label);
    vec4 target = valid ? vec4(equal(cols, ivec4(int(label)))) : vec4(uintBitsToFloat(0x7fc00000u));
#endif
#if SCALE_BOUND
    setOutput((p - target) * invN * SCALE_at(0, 0));
#else
    setOutput((p - target) * invN);
#endif
}
