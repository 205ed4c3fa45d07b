// forward/layer_norm_stats: each group's mean and 1 / sqrt(variance + epsilon),
// computed once for the passes that read them, not once per element.
// inputs: X
// uniforms: channels, epsilon
// uses: lib/elements
// output: N x 2G, any layout; X is N x (G * channels)
// formula: S[r, 2g] = m, S[r, 2g + 1] = 1 / sqrt(v + epsilon), m, v: the mean and (biased) variance
//          of X[r, g * channels .. (g + 1) * channels - 1]; the mean first, then the squares around it
//          (no cancellation)
uniform int channels;
uniform float epsilon;

float elementAt(int r, int c) {
    int base = (c / 2) * channels;
    float m = 0.0;
    for (int j = 0; j < channels; ++j) m += X_at(r, base + j);
    m /= float(channels);
    if (c % 2 == 0) return m;
    float v = 0.0;
    for (int j = 0; j < channels; ++j) {
        float d = X_at(r, base + j) - m;
        v += d * d;
    }
    return inversesqrt(v / float(channels) + epsilon);
}

void main() { setElements(); }
