// backward/layer_norm: the input's gradient of forward/layer_norm.
// inputs: X, GAMMA, DY
// uniforms: channels, epsilon
// output: same shape as X, any layout; GAMMA is 1 x channels
// formula: DX[r, c] = s (g[c] DY[r, c] - mean_j(g[j] DY[r, j]) - xhat[c] mean_j(g[j] DY[r, j] xhat[j])),
//          over the group j of c, xhat = (X - m) s, s = 1 / sqrt(v + epsilon)
// Each element recomputes its group's statistics and two sums (O(channels)).
uniform int channels;
uniform float epsilon;

float gradAt(int r, int c) {
    int k = c % channels, base = c - k;
    float m = 0.0;
    for (int j = 0; j < channels; ++j) m += X_at(r, base + j);
    m /= float(channels);
    float v = 0.0;
    for (int j = 0; j < channels; ++j) {
        float d = X_at(r, base + j) - m;
        v += d * d;
    }
    float s = inversesqrt(v / float(channels) + epsilon);
    float a = 0.0, b = 0.0;
    for (int j = 0; j < channels; ++j) {
        float gdy = GAMMA_at(0, j) * DY_at(r, base + j);
        a += gdy;
        b += gdy * (X_at(r, base + j) - m) * s;
    }
    float n = float(channels);
    return s * (GAMMA_at(0, k) * DY_at(r, c) - a / n - (X_at(r, c) - m) * s * b / n);
}

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = gradAt(t.y, c);
    }
    setOutput(v);
}
