// backward/conv2d_filter: the filter gradient of forward/conv2d, as
// `slices` partial sums (lib/filter_slice: groups of samples, or bands of one
// sample's output rows) stacked in one output (reduce/sum_slices adds them). A filter is small (kh*kw*C x F), so one
// fragment per element would leave a GPU — and a CPU renderer, which shares
// work out by screen tiles — mostly idle on very long loops; slices give
// every element `slices` fragments of a short loop each.
// inputs: X, DY
// uses: lib/window, lib/filter_slice
// defines: VEC_F: F % 4 == 0 and every tensor packed — an output texel is 4 filters of one
//          (tap, channel) row, dY read 4 filters per fetch
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad; lib/filter_slice's slicing
// output: (slices * kh*kw*C) x F; X is N x (H*W*C), DY is N x (OH*OW*F)
// formula: row s*R + r (R = kh*kw*C, r = (ky*kw + kx)*C + c), column f:
//          sum over slice s's samples n and output rows oy (lib/filter_slice), every ox:
//          X[n, oy*sh - top + ky*dh, ox*sw - left + kx*dw, c] dY[n, oy, ox, f]
void main() {
    ivec2 t = outTexel();
    int C = inHWC.z, R = ksize.x * ksize.y * C;
    int slice = t.y / R, row = t.y - slice * R;
    int tap = row / C, c = row - tap * C;
    int ky = tap / ksize.y, kx = tap - ky * ksize.y;
    TapRange r = tapRange(slice, X_shape().x, ky * dilation.x, kx * dilation.y);
    vec4 acc = vec4(0.0);
#if VEC_F
    int fx = t.x;
    for (int n = r.n.x; n < r.n.y; ++n)
        for (int oy = r.oy.x; oy < r.oy.y; ++oy) {
            int iy = oy * stride.x - pad.x + ky * dilation.x;
            for (int ox = r.ox.x; ox < r.ox.y; ++ox) {
                int ix = ox * stride.y - pad.y + kx * dilation.y;
                acc += X_at(n, columnOf(iy, ix, c, inHWC)) * DY_texel((columnOf(oy, ox, 0, outHWC) >> 2) + fx, n);
            }
        }
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1;
    for (int i = 0; i < lanes; ++i) {
        int f = t.x * lanes + i;
        if (f >= outHWC.z) break;
        float s = 0.0;
        for (int n = r.n.x; n < r.n.y; ++n)
            for (int oy = r.oy.x; oy < r.oy.y; ++oy) {
                int iy = oy * stride.x - pad.x + ky * dilation.x;
                for (int ox = r.ox.x; ox < r.ox.y; ++ox) {
                    int ix = ox * stride.y - pad.y + kx * dilation.y;
                    s += X_at(n, columnOf(iy, ix, c, inHWC)) * DY_at(n, columnOf(oy, ox, f, outHWC));
                }
            }
        acc[i] = s;
    }
#endif
    setOutput(acc);
}
