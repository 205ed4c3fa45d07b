// forward/conv2d: a 2-D convolution over NHWC image rows, with bias and
// activation fused (gltrain/window.hpp has the layout, reference/conv.hpp the oracle).
// inputs: X, W, BIAS?
// uses: lib/activation, lib/window
// defines: ACT (lib/activation);
//          VEC_F: F % 4 == 0 and every tensor packed — an output texel is 4 filters of one
//                 pixel, read from one W texel per (tap, channel)
//          VEC_C: also C % 4 == 0 — X is read 4 channels per fetch (16 multiply-adds per 5 fetches)
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad
// output: N x (OH*OW*F); X is N x (H*W*C), W is (kh*kw*C) x F, BIAS 1 x F
// formula: Y[n, oy, ox, f] = act(b[f] + sum_{ky,kx,c} X[n, oy*sh - top + ky*dh, ox*sw - left + kx*dw, c]
//                                                       * W[(ky*kw + kx)*C + c, f])   (outside the image: 0)
void main() {
    ivec2 t = outTexel();
    int n = t.y, C = inHWC.z;
    vec4 acc = vec4(0.0);
#if VEC_F
    ivec3 o = pixelOf(t.x * 4, outHWC);
    int fx = o.z >> 2;
    for (int ky = 0; ky < ksize.x; ++ky) {
        int iy = o.x * stride.x - pad.x + ky * dilation.x;
        if (iy < 0 || iy >= inHWC.x) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int ix = o.y * stride.y - pad.y + kx * dilation.y;
            if (ix < 0 || ix >= inHWC.y) continue;
            int xc = columnOf(iy, ix, 0, inHWC), wr = (ky * ksize.y + kx) * C;
#if VEC_C
            for (int c = 0; c < C; c += 4) {
                vec4 a = X_texel((xc + c) >> 2, n);
                acc += a.x * W_texel(fx, wr + c) + a.y * W_texel(fx, wr + c + 1) +
                       a.z * W_texel(fx, wr + c + 2) + a.w * W_texel(fx, wr + c + 3);
            }
#else
            for (int c = 0; c < C; ++c) acc += X_at(n, xc + c) * W_texel(fx, wr + c);
#endif
        }
    }
#if BIAS_BOUND
    acc += BIAS_texel(fx, 0);
#endif
#else
    // Any F and layout: each lane is its own (pixel, filter).
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outHWC.x * outHWC.y * outHWC.z;
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j >= cols) break;
        ivec3 o = pixelOf(j, outHWC);
        float s = 0.0;
        for (int ky = 0; ky < ksize.x; ++ky) {
            int iy = o.x * stride.x - pad.x + ky * dilation.x;
            if (iy < 0 || iy >= inHWC.x) continue;
            for (int kx = 0; kx < ksize.y; ++kx) {
                int ix = o.y * stride.y - pad.y + kx * dilation.y;
                if (ix < 0 || ix >= inHWC.y) continue;
                int xc = columnOf(iy, ix, 0, inHWC), wr = (ky * ksize.y + kx) * C;
                for (int c = 0; c < C; ++c) s += X_at(n, xc + c) * W_at(wr + c, o.z);
            }
        }
#if BIAS_BOUND
        s += BIAS_at(0, o.z);
#endif
        acc[i] = s;
    }
#endif
    setOutput(act_f(acc));
}
