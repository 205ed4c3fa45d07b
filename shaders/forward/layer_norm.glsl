// forward/layer_norm: each group of `channels` consecutive values of a row
// (an NHWC row's last axis) standardized, then scaled and shifted per channel.
// inputs: X, GAMMA?, BETA?
// (both GAMMA and BETA, or neither: the standardized values)
// uniforms: channels, epsilon
// output: same shape as X, any layout; GAMMA, BETA are 1 x channels
// formula: Y[r, c] = (X[r, c] - m) / sqrt(v + epsilon) * GAMMA[c % channels] + BETA[c % channels],
//          m, v: the mean and (biased) variance of X[r, b .. b + channels - 1], b = c - c % channels
// Each element sums its own group (O(channels)), the mean first and then the
// squares around it (no cancellation).
uniform int channels;
uniform float epsilon;

float normalizedAt(int r, int c) {
    int k = c % channels, base = c - k;
    float m = 0.0;
    for (int j = 0; j < channels; ++j) m += X_at(r, base + j);
    m /= float(channels);
    float v = 0.0;
    for (int j = 0; j < channels; ++j) {
        float d = X_at(r, base + j) - m;
        v += d * d;
    }
    float xhat = (X_at(r, c) - m) * inversesqrt(v / float(channels) + epsilon);
#if GAMMA_BOUND
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
