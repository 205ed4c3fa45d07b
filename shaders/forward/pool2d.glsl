// forward/pool2d: max or average pooling over NHWC image rows.
// inputs: X
// uses: lib/window
// defines: MAX (1 max, 0 average); VEC_C: C % 4 == 0 and X, the output packed — a texel is
//          4 channels of one pixel in both
// uniforms: lib/window's inHWC, outHWC (F = C), ksize, stride, pad
// output: N x (OH*OW*C); X is N x (H*W*C)
// formula: max:     Y[n, oy, ox, c] = max over the in-bounds window of X (padding never wins)
//          average: Y[n, oy, ox, c] = mean over the in-bounds window of X (padding not counted)
vec4 poolPixel(int n, ivec3 o, int lane) {
    // lane < 0: the 4 channels o.z..o.z+3 as one texel; else channel o.z in .x.
    vec4 best = vec4(0.0), sum = vec4(0.0);
    int count = 0;
    for (int ky = 0; ky < ksize.x; ++ky) {
        int iy = o.x * stride.x - pad.x + ky;
        if (iy < 0 || iy >= inHWC.x) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int ix = o.y * stride.y - pad.y + kx;
            if (ix < 0 || ix >= inHWC.y) continue;
            int j = columnOf(iy, ix, o.z, inHWC);
            vec4 v = lane < 0 ? X_texel(j >> 2, n) : vec4(X_at(n, j));
            best = count == 0 ? v : max(best, v);
            sum += v;
            ++count;
        }
    }
#if MAX
    return best;
#else
    return sum / float(max(count, 1));
#endif
}

void main() {
    ivec2 t = outTexel();
#if VEC_C
    setOutput(poolPixel(t.y, pixelOf(t.x * 4, outHWC), -1));
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outHWC.x * outHWC.y * outHWC.z;
    vec4 y = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j >= cols) break;
        y[i] = poolPixel(t.y, pixelOf(j, outHWC), i).x;
    }
    setOutput(y);
#endif
}
