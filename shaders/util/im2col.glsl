// util/im2col: the patches a convolution reads, one row per output pixel —
// so that conv = im2col(X) · W is one matmul (the path bench/conv compares
// with forward/conv2d's in-place reads).
// inputs: X
// uses: lib/window
// defines: VEC_C: C % 4 == 0 and X, the output packed (a texel is 4 channels of one tap)
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad
// output: (N*OH*OW) x (kh*kw*C); X is N x (H*W*C)
// formula: P[n*OH*OW + oy*OW + ox, (ky*kw + kx)*C + c] = X[n, oy*sh - top + ky*dh, ox*sw - left + kx*dw, c] (outside: 0)
float patchValue(int n, ivec2 o, int j) {
    int C = inHWC.z, tap = j / C, c = j - tap * C;
    int ky = tap / ksize.y, kx = tap - ky * ksize.y;
    int iy = o.x * stride.x - pad.x + ky * dilation.x, ix = o.y * stride.y - pad.y + kx * dilation.y;
    return insideInput(iy, ix) ? X_at(n, columnOf(iy, ix, c, inHWC)) : 0.0;
}

void main() {
    ivec2 t = outTexel();
    int pixels = outHWC.x * outHWC.y, n = t.y / pixels, p = t.y - n * pixels;
    ivec2 o = ivec2(p / outHWC.y, p - (p / outHWC.y) * outHWC.y);
#if VEC_C
    int C = inHWC.z, j = t.x * 4, tap = j / C, c = j - tap * C;
    int ky = tap / ksize.y, kx = tap - ky * ksize.y;
    int iy = o.x * stride.x - pad.x + ky * dilation.x, ix = o.y * stride.y - pad.y + kx * dilation.y;
    setOutput(insideInput(iy, ix) ? X_texel(columnOf(iy, ix, c, inHWC) >> 2, n) : vec4(0.0));
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j < cols) v[i] = patchValue(n, o, j);
    }
    setOutput(v);
#endif
}
