// util/reverse_steps: each row's steps in reverse order (a sequence [T, C] read from its end).
// inputs: X
// uniforms: channels
// output: X's shape, N x (T*C), any layout
// formula: Y[r, t*C + c] = X[r, (T-1-t)*C + c]
uniform int channels;

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1, steps = cols / channels;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        int s = c / channels;
        v[i] = X_at(t.y, (steps - 1 - s) * channels + c - s * channels);
    }
    setOutput(v);
}
