// forward/conv2d_rows4: forward/conv2d register-blocked over samples — each
// fragment computes 4 samples (rows n..n+3) x 4 filters of one pixel, so every
// W texel fetched serves 4 samples: per (tap, channel) 1 W + 4 X fetches for
// 16 multiply-adds (8 in the one-row kernel); with C % 4 == 0, 8 fetches for 64.
// inputs: X, W, BIAS?
// outputs: R0, R1, R2, R3
// blocks: rows4
// uses: lib/activation, lib/window
// defines: ACT (lib/activation); VEC_C: C % 4 == 0 (X read 4 channels per fetch).
//          F % 4 == 0 and every tensor packed.
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad
// output: N x (OH*OW*F), PackedRows4
// formula: as forward/conv2d
void main() {
    ivec2 t = outTexel();
    int C = inHWC.z, lastRow = outShape().x - 1;
    // Rows past the end repeat the last one (their results are never read).
    ivec4 n = min(ivec4(t.y) + ivec4(0, 1, 2, 3), ivec4(lastRow));
    ivec3 o = pixelOf(t.x * 4, outHWC);
    int fx = o.z >> 2;
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
    for (int ky = 0; ky < ksize.x; ++ky) {
        int iy = o.x * stride.x - pad.x + ky * dilation.x;
        if (iy < 0 || iy >= inHWC.x) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int ix = o.y * stride.y - pad.y + kx * dilation.y;
            if (ix < 0 || ix >= inHWC.y) continue;
            int xc = columnOf(iy, ix, 0, inHWC), wr = (ky * ksize.y + kx) * C;
#if VEC_C
            for (int c = 0; c < C; c += 4) {
                vec4 w0 = W_texel(fx, wr + c), w1 = W_texel(fx, wr + c + 1);
                vec4 w2 = W_texel(fx, wr + c + 2), w3 = W_texel(fx, wr + c + 3);
                int xt = (xc + c) >> 2;
                vec4 a = X_texel(xt, n.x);
                c0 += a.x * w0 + a.y * w1 + a.z * w2 + a.w * w3;
                a = X_texel(xt, n.y);
                c1 += a.x * w0 + a.y * w1 + a.z * w2 + a.w * w3;
                a = X_texel(xt, n.z);
                c2 += a.x * w0 + a.y * w1 + a.z * w2 + a.w * w3;
                a = X_texel(xt, n.w);
                c3 += a.x * w0 + a.y * w1 + a.z * w2 + a.w * w3;
            }
#else
            for (int c = 0; c < C; ++c) {
                vec4 w = W_texel(fx, wr + c);
                c0 += X_at(n.x, xc + c) * w;
                c1 += X_at(n.y, xc + c) * w;
                c2 += X_at(n.z, xc + c) * w;
                c3 += X_at(n.w, xc + c) * w;
            }
#endif
        }
    }
#if BIAS_BOUND
    vec4 b = BIAS_texel(fx, 0);
    c0 += b; c1 += b; c2 += b; c3 += b;
#endif
    setR0(act_f(c0));
    setR1(act_f(c1));
    setR2(act_f(c2));
    setR3(act_f(c3));
}
