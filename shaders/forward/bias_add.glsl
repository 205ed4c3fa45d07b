// forward/bias_add: row-broadcast add, Y = X + b.
// inputs: X, BIAS
// output: same shape as X (N x C), any layout; BIAS is 1 x C
// formula: Y[r, c] = X[r, c] + b[0, c]
vec4 biasRow() {
    ivec2 t = outTexel();
#if OUT_PACKED && BIAS_PACKED
    return BIAS_texel(t.x, 0);
#elif OUT_PACKED
    int c = t.x * 4, last = BIAS_geom.y - 1;
    return vec4(BIAS_at(0, c), BIAS_at(0, min(c + 1, last)), BIAS_at(0, min(c + 2, last)), BIAS_at(0, min(c + 3, last)));
#else
    return vec4(BIAS_at(0, t.x));
#endif
}
void main() {
    setOutput(X_aligned() + biasRow());
}
