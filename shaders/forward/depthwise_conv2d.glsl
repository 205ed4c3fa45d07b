// forward/depthwise_conv2d: a depthwise 2-D convolution over NHWC image rows —
// each input channel c convolved with its own M filters into output channels
// c*M .. c*M + M-1 (TensorFlow's order); reference/conv.hpp has the oracle.
// Each lane is its own (pixel, output channel): a depthwise convolution does
// kh*kw multiply-adds per output value, so its time is the texel reads.
// inputs: X, W
// uses: lib/window
// defines: none
// uniforms: lib/window's inHWC, outHWC (C*M channels), ksize, stride, dilation, pad
// output: N x (OH*OW*C*M); X is N x (H*W*C), W is (kh*kw*C) x M
// formula: Y[n, oy, ox, c*M + m] = sum_{ky,kx} X[n, oy*sh - top + ky*dh, ox*sw - left + kx*dw, c]
//                                              * W[(ky*kw + kx)*C + c, m]   (outside the image: 0)
void main() {
    ivec2 t = outTexel();
    int n = t.y, C = inHWC.z, M = outHWC.z / inHWC.z;
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outHWC.x * outHWC.y * outHWC.z;
    vec4 acc = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j >= cols) break;
        ivec3 o = pixelOf(j, outHWC);
        int c = o.z / M, m = o.z - c * M;
        float s = 0.0;
        for (int ky = 0; ky < ksize.x; ++ky) {
            int iy = o.x * stride.x - pad.x + ky * dilation.x;
            if (iy < 0 || iy >= inHWC.x) continue;
            for (int kx = 0; kx < ksize.y; ++kx) {
                int ix = o.y * stride.y - pad.y + kx * dilation.y;
                if (ix < 0 || ix >= inHWC.y) continue;
                s += X_at(n, columnOf(iy, ix, c, inHWC)) * W_at((ky * ksize.y + kx) * C + c, m);
            }
        }
        acc[i] = s;
    }
    setOutput(acc);
}
