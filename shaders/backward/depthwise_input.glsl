// backward/depthwise_input: the input gradient of forward/depthwise_conv2d —
// every tap that read X[n, iy, ix, c] sends back dY[n, oy, ox, c*M + m] * W[tap, c, m].
// inputs: DY, W
// uses: lib/window
// defines: none
// uniforms: lib/window's inHWC, outHWC (C*M channels), ksize, stride, dilation, pad (of the forward pass)
// output: dX, N x (H*W*C); DY is N x (OH*OW*C*M), W is (kh*kw*C) x M
// formula: dX[n, iy, ix, c] = sum_{ky, kx: iy = oy*sh - top + ky*dh, ix = ox*sw - left + kx*dw}
//                             sum_m dY[n, oy, ox, c*M + m] W[(ky*kw + kx)*C + c, m]
void main() {
    ivec2 t = outTexel();
    int n = t.y, C = inHWC.z, M = outHWC.z / inHWC.z;
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = inHWC.x * inHWC.y * inHWC.z;
    vec4 acc = vec4(0.0);
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
                int yc = columnOf(oy, ox, p.z * M, outHWC), wr = (ky * ksize.y + kx) * C + p.z;
                for (int m = 0; m < M; ++m) s += DY_at(n, yc + m) * W_at(wr, m);
            }
        }
        acc[i] = s;
    }
    setOutput(acc);
}
