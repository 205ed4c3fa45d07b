// backward/layer_norm_sums: each group's two sums the input's gradient needs,
// computed once for backward/layer_norm, not once per element.
// inputs: X, STATS, GAMMA, DY
// uniforms: channels
// uses: lib/elements
// output: N x 2G, any layout; STATS is N x 2G (forward/layer_norm_stats), GAMMA 1 x channels, DY X's shape
// formula: S[r, 2g] = sum_j GAMMA[j] DY[r, b + j], S[r, 2g + 1] = sum_j GAMMA[j] DY[r, b + j] xhat[r, b + j],
//          b = g * channels, xhat = (X - STATS[r, 2g]) * STATS[r, 2g + 1]
uniform int channels;

float elementAt(int r, int c) {
    int g = c / 2, base = g * channels;
    bool scaled = c % 2 == 1;
    float m = STATS_at(r, 2 * g), s = STATS_at(r, 2 * g + 1), sum = 0.0;
    for (int j = 0; j < channels; ++j) {
        float gdy = GAMMA_at(0, j) * DY_at(r, base + j);
        sum += scaled ? gdy * (X_at(r, base + j) - m) * s : gdy;
    }
    return sum;
}

void main() { setElements(); }
