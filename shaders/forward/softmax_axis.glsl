// forward/softmax_axis: softmax over one axis of each row: over the `count`
// values `stride` apart that share the element's other coordinates (the
// channels of an NHWC row: stride 1; its height: stride W*C).
// inputs: X
// uniforms: count, stride
// output: same shape as X, any layout
// formula: Y[r, c] = exp(X[r, c] - m) / sum_j exp(X[r, b + j stride] - m), b = c - ((c / stride) % count) stride,
//          m = max_j X[r, b + j stride]
// Each element sums its own group (O(count)): the axes of an image are short.
uniform int count;
uniform int stride;

float softmaxAt(int r, int c) {
    int base = c - ((c / stride) % count) * stride;
    float m = X_at(r, base);
    for (int j = 1; j < count; ++j) m = max(m, X_at(r, base + j * stride));
    float s = 0.0;
    for (int j = 0; j < count; ++j) s += exp(X_at(r, base + j * stride) - m);
    return exp(X_at(r, c) - m) / s;
}

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = softmaxAt(t.y, c);
    }
    setOutput(v);
}
