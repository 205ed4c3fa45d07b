// backward/conv2d_input: the input gradient of forward/conv2d — every tap
// that read X[n, iy, ix, c] sends back dY[n, oy, ox, f] * W[tap, c, f].
// inputs: DY, W
// uses: lib/window
// defines: VEC_C: C % 4 == 0 and every tensor packed — an output texel is 4 channels of one pixel
//          VEC_F: also F % 4 == 0 — dY is read 4 filters per fetch (16 multiply-adds per 5 fetches)
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad (of the forward convolution)
// output: dX, N x (H*W*C); DY is N x (OH*OW*F), W is (kh*kw*C) x F
// formula: dX[n, iy, ix, c] = sum_{ky, kx: iy = oy*sh - top + ky*dh, ix = ox*sw - left + kx*dw}
//                             sum_f dY[n, oy, ox, f] W[(ky*kw + kx)*C + c, f]
void main() {
    ivec2 t = outTexel();
    int n = t.y, C = inHWC.z, F = outHWC.z;
    vec4 acc = vec4(0.0);
#if VEC_C
    ivec3 p = pixelOf(t.x * 4, inHWC);
    for (int ky = 0; ky < ksize.x; ++ky) {
        int oy = windowAt(p.x, ky * dilation.x, stride.x, pad.x, outHWC.x);
        if (oy < 0) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int ox = windowAt(p.y, kx * dilation.y, stride.y, pad.y, outHWC.y);
            if (ox < 0) continue;
            int yc = columnOf(oy, ox, 0, outHWC), wr = (ky * ksize.y + kx) * C + p.z;
#if VEC_F
            for (int f = 0; f < F; f += 4) {
                vec4 g = DY_texel((yc + f) >> 2, n);
                int fx = f >> 2;
                acc += vec4(dot(g, W_texel(fx, wr)), dot(g, W_texel(fx, wr + 1)), dot(g, W_texel(fx, wr + 2)),
                            dot(g, W_texel(fx, wr + 3)));
            }
#else
            for (int f = 0; f < F; ++f) {
                float g = DY_at(n, yc + f);
                acc += g * vec4(W_at(wr, f), W_at(wr + 1, f), W_at(wr + 2, f), W_at(wr + 3, f));
            }
#endif
        }
    }
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = inHWC.x * inHWC.y * inHWC.z;
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j >= cols) break;
        ivec3 p = pixelOf(j, inHWC);
        float s = 0.0;
        for (int ky = 0; ky < ksize.x; ++ky) {
            int oy = windowAt(p.x, ky * dilation.x, stride.x, pad.x, outHWC.x);
            if (oy < 0) continue;
            for (int kx = 0; kx < ksize.y; ++kx) {
                int ox = windowAt(p.y, kx * dilation.y, stride.y, pad.y, outHWC.y);
                if (ox < 0) continue;
                int yc = columnOf(oy, ox, 0, outHWC), wr = (ky * ksize.y + kx) * C + p.z;
                for (int f = 0; f < F; ++f) s += DY_at(n, yc + f) * W_at(wr, f);
            }
        }
        acc[i] = s;
    }
#endif
    setOutput(acc);
}
