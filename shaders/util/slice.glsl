// util/slice: a range along one axis of each example (graph's Slice: the
// gradient of Concat). A row of X is [outer, axis, inner] values.
// inputs: X
// uniforms: inner, axis, start, len — the values after the axis, its length in X, the range's first index and length
// output: N x (outer * length * inner), any layout
// formula: Y[n, (o*length + a)*inner + i] = X[n, (o*axis + start + a)*inner + i]
uniform int inner;
uniform int axis;
uniform int start;
uniform int len;
void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y, span = len * inner;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int c = t.x * lanes + k;
        if (c >= cols) break;
        int o = c / span, rest = c - o * span;
        int a = rest / inner, i = rest - a * inner;
        v[k] = X_at(t.y, (o * axis + start + a) * inner + i);
    }
    setOutput(v);
}
