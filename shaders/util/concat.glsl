// util/concat: rows of A and B joined along one axis of each example (graph's
// Concat: Concatenate's merge). A row is [outer, axis, inner] values; A's and
// B's agree on outer and inner.
// inputs: A, B
// uniforms: inner, aAxis, bAxis — the values after the axis, and its length in A and in B
// output: N x (outer * (aAxis + bAxis) * inner), any layout
// formula: Y[n, (o*(aAxis+bAxis) + a)*inner + i] = a < aAxis ? A[n, (o*aAxis + a)*inner + i]
//                                                           : B[n, (o*bAxis + a - aAxis)*inner + i]
uniform int inner;
uniform int aAxis;
uniform int bAxis;
float joined(int r, int c) {
    int span = (aAxis + bAxis) * inner;
    int o = c / span, rest = c - o * span;
    int a = rest / inner, i = rest - a * inner;
    return a < aAxis ? A_at(r, (o * aAxis + a) * inner + i) : B_at(r, (o * bAxis + a - aAxis) * inner + i);
}
void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int c = t.x * lanes + k;
        if (c >= cols) break;
        v[k] = joined(t.y, c);
    }
    setOutput(v);
}
