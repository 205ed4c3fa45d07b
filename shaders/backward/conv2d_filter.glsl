// backward/conv2d_filter: the filter gradient of forward/conv2d, as
// `slices` partial sums over consecutive groups of samples stacked in one
// output (reduce/sum_slices adds them). A filter is small (kh*kw*C x F), so one
// fragment per element would leave a GPU — and a CPU renderer, which shares
// work out by screen tiles — mostly idle on very long loops; slices give
// every element `slices` fragments of a short loop each.
// inputs: X, DY
// uses: lib/window
// defines: VEC_F: F % 4 == 0 and every tensor packed — an output texel is 4 filters of one
//          (tap, channel) row, dY read 4 filters per fetch
// uniforms: lib/window's inHWC, outHWC, ksize, stride, pad; perSlice (samples per slice)
// output: (slices * kh*kw*C) x F; X is N x (H*W*C), DY is N x (OH*OW*F)
// formula: row s*R + r (R = kh*kw*C, r = (ky*kw + kx)*C + c), column f:
//          sum_{s*perSlice <= n < (s+1)*perSlice, n < N} sum_{oy, ox} X[n, oy*sh - top + ky, ox*sw - left + kx, c] dY[n, oy, ox, f]
uniform int perSlice;

void main() {
    ivec2 t = outTexel();
    int C = inHWC.z, R = ksize.x * ksize.y * C;
    int slice = t.y / R, row = t.y - slice * R;
    int n0 = slice * perSlice, n1 = min(X_shape().x, n0 + perSlice);
    int tap = row / C, c = row - tap * C;
    int ky = tap / ksize.y, kx = tap - ky * ksize.y;
    // The output rows / columns whose taps stay inside the image.
    // (Negative numerators are clamped first: GLSL's division truncates toward zero.)
    int ny = inHWC.x - 1 + pad.x - ky, nx = inHWC.y - 1 + pad.y - kx;
    int oy0 = max(0, (pad.x - ky + stride.x - 1) / stride.x), oy1 = ny < 0 ? 0 : min(outHWC.x, ny / stride.x + 1);
    int ox0 = max(0, (pad.y - kx + stride.y - 1) / stride.y), ox1 = nx < 0 ? 0 : min(outHWC.y, nx / stride.y + 1);
    vec4 acc = vec4(0.0);
#if VEC_F
    int fx = t.x;
    for (int n = n0; n < n1; ++n)
        for (int oy = oy0; oy < oy1; ++oy) {
            int iy = oy * stride.x - pad.x + ky;
            for (int ox = ox0; ox < ox1; ++ox) {
                int ix = ox * stride.y - pad.y + kx;
                acc += X_at(n, columnOf(iy, ix, c, inHWC)) * DY_texel((columnOf(oy, ox, 0, outHWC) >> 2) + fx, n);
            }
        }
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1;
    for (int i = 0; i < lanes; ++i) {
        int f = t.x * lanes + i;
        if (f >= outHWC.z) break;
        float s = 0.0;
        for (int n = n0; n < n1; ++n)
            for (int oy = oy0; oy < oy1; ++oy) {
                int iy = oy * stride.x - pad.x + ky;
                for (int ox = ox0; ox < ox1; ++ox) {
                    int ix = ox * stride.y - pad.y + kx;
                    s += X_at(n, columnOf(iy, ix, c, inHWC)) * DY_at(n, columnOf(oy, ox, f, outHWC));
                }
            }
        acc[i] = s;
    }
#endif
    setOutput(acc);
}
