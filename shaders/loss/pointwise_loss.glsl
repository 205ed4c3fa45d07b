// loss/pointwise_loss: element-wise losses (MSE or BCE on logits), per element, per row or their mean.
// inputs: P, T
// uses: lib/pointwise_loss
// defines: PW_LOSS (lib/pointwise_loss); ROWS = 0: per element, 1: per row, 2: the mean
// uniforms: invCols = 1 / C (ROWS 1), invCount = 1 / (N C) (ROWS 2)
// output: ROWS = 0: N x C, L[r, c] = pw_loss(P[r, c], T[r, c])
//         ROWS = 1: N x 1, L[r] = invCols * sum_c pw_loss(P[r, c], T[r, c])
//         ROWS = 2: 1 x 1, L = invCount * sum_r,c pw_loss(P[r, c], T[r, c]) — one fragment
//                   loops over everything: for small batches (ops/loss.hpp), in place of
//                   the per-row pass and the reduction after it
// Either way the mean of L is the reference's loss (the mean over all elements).
uniform float invCols;
uniform float invCount;

// The sum of row r's element losses.
float rowSum(int r) {
    int C = P_shape().y;
    float sum = 0.0;
#if P_PACKED && T_PACKED
    int full = C >> 2;
    vec4 acc = vec4(0.0);
    for (int x = 0; x < full; ++x) acc += pw_loss(P_texel(x, r), T_texel(x, r));
    if (full * 4 < C)  // padding lanes: BCE of (0, 0) is log 2, not 0, so mask them
        acc += mix(vec4(0.0), pw_loss(P_texel(full, r), T_texel(full, r)),
                   lessThan(ivec4(0, 1, 2, 3), ivec4(C - full * 4)));
    sum = (acc.x + acc.y) + (acc.z + acc.w);
#else
    for (int c = 0; c < C; ++c) sum += pw_loss(vec4(P_at(r, c)), vec4(T_at(r, c))).x;
#endif
    return sum;
}

void main() {
#if ROWS == 2
    float sum = 0.0;
    for (int r = 0; r < P_shape().x; ++r) sum += rowSum(r);
    setOutput(vec4(sum * invCount));
#elif ROWS == 1
    setOutput(vec4(rowSum(outTexel().y) * invCols));
#else
    setOutput(pw_loss(P_aligned(), T_aligned()));
#endif
}
