// backward/layer_norm: the input's gradient of forward/layer_norm.
// inputs: X, STATS, SUMS, GAMMA, DY
// uniforms: channels
// uses: lib/elements
// output: same shape as X, any layout; STATS, SUMS are N x 2G (forward/layer_norm_stats,
//         backward/layer_norm_sums), GAMMA 1 x channels
// formula: DX[r, c] = s (g[k] DY[r, c] - a / n - xhat[c] b / n), k = c % channels, n = channels,
//          (m, s) = STATS[r, 2G'..], (a, b) = SUMS[r, 2G'..] of c's group G', xhat = (X - m) s
uniform int channels;

float elementAt(int r, int c) {
    int g = c / channels, k = c - g * channels;
    float m = STATS_at(r, 2 * g), s = STATS_at(r, 2 * g + 1);
    float a = SUMS_at(r, 2 * g), b = SUMS_at(r, 2 * g + 1), n = float(channels);
    return s * (GAMMA_at(0, k) * DY_at(r, c) - a / n - (X_at(r, c) - m) * s * b / n);
}

void main() { setElements(); }
