// backward/conv2d_filter_rows4: backward/conv2d_filter register-blocked for
// C % 4 == 0 — each fragment computes rows r..r+3 (one tap, channels c..c+3)
// x filters f..f+3 as an outer product of one X texel and one dY texel:
// 16 multiply-adds per 2 fetches instead of 4 per 2.
// inputs: X, DY
// outputs: R0, R1, R2, R3
// blocks: rows4
// uses: lib/window, lib/filter_slice
// defines: none (C and F multiples of 4, every tensor packed)
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad; lib/filter_slice's slicing
// output: (slices * kh*kw*C) x F, PackedRows4; X is N x (H*W*C), DY is N x (OH*OW*F)
// formula: as backward/conv2d_filter
void main() {
    ivec2 t = outTexel();
    int C = inHWC.z, R = ksize.x * ksize.y * C;
    int slice = t.y / R, row = t.y - slice * R;  // row: a multiple of 4 (C % 4 == 0)
    int tap = row / C, c = row - tap * C;
    int ky = tap / ksize.y, kx = tap - ky * ksize.y;
    TapRange r = tapRange(slice, X_shape().x, ky * dilation.x, kx * dilation.y);
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
    int fx = t.x;
    for (int n = r.n.x; n < r.n.y; ++n)
        for (int oy = r.oy.x; oy < r.oy.y; ++oy) {
            int iy = oy * stride.x - pad.x + ky * dilation.x;
            for (int ox = r.ox.x; ox < r.ox.y; ++ox) {
                int ix = ox * stride.y - pad.y + kx * dilation.y;
                vec4 a = X_texel(columnOf(iy, ix, c, inHWC) >> 2, n);
                vec4 g = DY_texel((columnOf(oy, ox, 0, outHWC) >> 2) + fx, n);
                c0 += a.x * g; c1 += a.y * g; c2 += a.z * g; c3 += a.w * g;
            }
        }
    setR0(c0);
    setR1(c1);
    setR2(c2);
    setR3(c3);
}
