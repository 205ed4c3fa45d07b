// util/reshape: the same row-major values under another (rows, cols) — e.g.
// an (N*P) x F matmul result as N image rows of P*F.
// inputs: X
// defines: VEC: both column counts are multiples of 4 and both tensors packed (one fetch a texel)
// output: R x C with R*C = X's rows * cols
// formula: Y[r, c] = X[(r*C + c) / Xcols, (r*C + c) % Xcols]
void main() {
    ivec2 t = outTexel();
    int xc = X_shape().y, cols = outShape().y;
#if VEC
    int f = t.y * cols + t.x * 4, r = f / xc;
    setOutput(X_texel((f - r * xc) >> 2, r));
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        int f = t.y * cols + c, r = f / xc;
        v[i] = X_at(r, f - r * xc);
    }
    setOutput(v);
#endif
}
