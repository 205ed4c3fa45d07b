// backward/conv2d_input_rows4: backward/conv2d_input register-blocked over
// samples — each fragment computes 4 samples (rows n..n+3) x 4 channels of one
// input pixel; the 4 W texels of a (tap, 4 filters) serve all 4 samples:
// 8 fetches per 64 multiply-adds (20 in the one-row kernel).
// inputs: DY, W
// outputs: R0, R1, R2, R3
// blocks: rows4
// uses: lib/window
// defines: none (C and F multiples of 4, every tensor packed)
// uniforms: lib/window's inHWC, outHWC, ksize, stride, dilation, pad (of the forward convolution)
// output: dX, N x (H*W*C), PackedRows4
// formula: as backward/conv2d_input
void main() {
    ivec2 t = outTexel();
    int C = inHWC.z, F = outHWC.z, lastRow = outShape().x - 1;
    ivec4 n = min(ivec4(t.y) + ivec4(0, 1, 2, 3), ivec4(lastRow));
    ivec3 p = pixelOf(t.x * 4, inHWC);
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
    for (int ky = 0; ky < ksize.x; ++ky) {
        int oy = windowAt(p.x, ky * dilation.x, stride.x, pad.x, outHWC.x);
        if (oy < 0) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int ox = windowAt(p.y, kx * dilation.y, stride.y, pad.y, outHWC.y);
            if (ox < 0) continue;
            int yt = columnOf(oy, ox, 0, outHWC) >> 2, wr = (ky * ksize.y + kx) * C + p.z;
            for (int f = 0; f < F; f += 4) {
                int fx = f >> 2;
                vec4 w0 = W_texel(fx, wr), w1 = W_texel(fx, wr + 1), w2 = W_texel(fx, wr + 2), w3 = W_texel(fx, wr + 3);
                vec4 g = DY_texel(yt + fx, n.x);
                c0 += vec4(dot(g, w0), dot(g, w1), dot(g, w2), dot(g, w3));
                g = DY_texel(yt + fx, n.y);
                c1 += vec4(dot(g, w0), dot(g, w1), dot(g, w2), dot(g, w3));
                g = DY_texel(yt + fx, n.z);
                c2 += vec4(dot(g, w0), dot(g, w1), dot(g, w2), dot(g, w3));
                g = DY_texel(yt + fx, n.w);
                c3 += vec4(dot(g, w0), dot(g, w1), dot(g, w2), dot(g, w3));
            }
        }
    }
    setR0(c0);
    setR1(c1);
    setR2(c2);
    setR3(c3);
}
