// backward/depthwise_filter: the filter gradient of forward/depthwise_conv2d,
// as partial sums over slices of (sample, output row) stacked in one output
// (lib/filter_slice; reduce/sum_slices adds them), as backward/conv2d_filter.
// inputs: X, DY
// uses: lib/window, lib/filter_slice
// defines: none
// uniforms: lib/window's inHWC, outHWC (C*M channels), ksize, stride, dilation, pad; lib/filter_slice's slicing
// output: (slices * kh*kw*C) x M; X is N x (H*W*C), DY is N x (OH*OW*C*M)
// formula: row s*R + r (R = kh*kw*C, r = (ky*kw + kx)*C + c), column m:
//          sum over slice s's samples n and output rows oy (lib/filter_slice), every ox:
//          X[n, oy*sh - top + ky*dh, ox*sw - left + kx*dw, c] dY[n, oy, ox, c*M + m]
void main() {
    ivec2 t = outTexel();
    int C = inHWC.z, M = outHWC.z / inHWC.z, R = ksize.x * ksize.y * C;
    int slice = t.y / R, row = t.y - slice * R;
    int tap = row / C, c = row - tap * C;
    int ky = tap / ksize.y, kx = tap - ky * ksize.y;
    TapRange r = tapRange(slice, X_shape().x, ky * dilation.x, kx * dilation.y);
    int lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 acc = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int m = t.x * lanes + i;
        if (m >= M) break;
        float s = 0.0;
        for (int n = r.n.x; n < r.n.y; ++n)
            for (int oy = r.oy.x; oy < r.oy.y; ++oy) {
                int iy = oy * stride.x - pad.x + ky * dilation.x;
                for (int ox = r.ox.x; ox < r.ox.y; ++ox) {
                    int ix = ox * stride.y - pad.y + kx * dilation.y;
                    s += X_at(n, columnOf(iy, ix, c, inHWC)) * DY_at(n, columnOf(oy, ox, c * M + m, outHWC));
                }
            }
        acc[i] = s;
    }
    setOutput(acc);
}
