// backward/pool2d: the input gradient of forward/pool2d. Max pooling sends
// each window's gradient to its first maximum in row-major window order
// (recomputed here from X, so no arg-max texture is kept and ties resolve
// the same way everywhere); average pooling spreads it over the in-bounds taps.
// inputs: X, DY
// uses: lib/window
// defines: MAX (1 max, 0 average)
// uniforms: lib/window's inHWC, outHWC (F = C), ksize, stride, pad
// output: dX, N x (H*W*C); X is N x (H*W*C), DY is N x (OH*OW*C); one lane at a time
// formula: dX[n, iy, ix, c] = sum over windows (oy, ox) containing (iy, ix) of
//          max: dY[n, oy, ox, c] if (iy, ix) is the window's first arg-max, else 0
//          average: dY[n, oy, ox, c] / (in-bounds taps of the window)
float windowShare(int n, int oy, int ox, int c, int iy, int ix) {
    // What window (oy, ox) sends to input pixel (iy, ix), channel c, per unit of dY.
    int count = 0, argY = -1, argX = -1;
    float best = 0.0;
    for (int ky = 0; ky < ksize.x; ++ky) {
        int y = oy * stride.x - pad.x + ky;
        if (y < 0 || y >= inHWC.x) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int x = ox * stride.y - pad.y + kx;
            if (x < 0 || x >= inHWC.y) continue;
#if MAX
            float v = X_at(n, columnOf(y, x, c, inHWC));
            if (count == 0 || v > best) {
                best = v;
                argY = y;
                argX = x;
            }
#endif
            ++count;
        }
    }
#if MAX
    return argY == iy && argX == ix ? 1.0 : 0.0;
#else
    return 1.0 / float(max(count, 1));
#endif
}

void main() {
    ivec2 t = outTexel();
    int n = t.y, lanes = OUT_PACKED == 1 ? 4 : 1, cols = inHWC.x * inHWC.y * inHWC.z;
    vec4 acc = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j >= cols) break;
        ivec3 p = pixelOf(j, inHWC);
        float s = 0.0;
        for (int ky = 0; ky < ksize.x; ++ky) {
            int oy = windowAt(p.x, ky, stride.x, pad.x, outHWC.x);
            if (oy < 0) continue;
            for (int kx = 0; kx < ksize.y; ++kx) {
                int ox = windowAt(p.y, kx, stride.y, pad.y, outHWC.y);
                if (ox < 0) continue;
                s += DY_at(n, columnOf(oy, ox, p.z, outHWC)) * windowShare(n, oy, ox, p.z, p.x, p.y);
            }
        }
        acc[i] = s;
    }
    setOutput(acc);
}
