// forward/layer_norm: each group of `channels` consecutive values of a row
// (an NHWC row's last axis) standardized, then scaled and shifted per channel.
// inputs: X, STATS, GAMMA?, BETA?
// (both GAMMA and BETA, or neither: the standardized values)
// uniforms: channels
// uses: lib/elements
// output: same shape as X, any layout; STATS is N x 2G (forward/layer_norm_stats), GAMMA, BETA 1 x channels
// formula: Y[r, c] = (X[r, c] - STATS[r, 2g]) * STATS[r, 2g + 1] * GAMMA[c % channels] + BETA[c % channels],
//          g = c / channels
uniform int channels;

float elementAt(int r, int c) {
    int g = c / channels;
    float xhat = (X_at(r, c) - STATS_at(r, 2 * g)) * STATS_at(r, 2 * g + 1);
#if GAMMA_BOUND
    int k = c - g * channels;
    return xhat * GAMMA_at(0, k) + BETA_at(0, k);
#else
    return xhat;
#endif
}

void main() { setElements(); }
