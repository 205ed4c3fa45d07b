// forward/layer_norm: each group of `channels` consecutive values of a row
// (an NHWC row's last axis) standardized, then scaled and shifted per channel.
// inputs: X, STATS, GAMMA?, BETA?
// (both GAMMA and BETA, or neither: the standardized values)
// uniforms: channels
// output: same shape as X, any layout; STATS is N x 2G (forward/layer_norm_stats), GAMMA, BETA 1 x channels
// formula: Y[r, c] = (X[r, c] - STATS[r, 2g]) * STATS[r, 2g + 1] * GAMMA[c % channels] + BETA[c % channels],
//          g = c / channels
uniform int channels;

float normalizedAt(int r, int c) {
    int g = c / channels;
    float xhat = (X_at(r, c) - STATS_at(r, 2 * g)) * STATS_at(r, 2 * g + 1);
#if GAMMA_BOUND
    int k = c - g * channels;
    return xhat * GAMMA_at(0, k) + BETA_at(0, k);
#else
    return xhat;
#endif
}

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = normalizedAt(t.y, c);
    }
    setOutput(v);
}
