// backward/pool2d: the input gradient of forward/pool2d. Max pooling sends
// each window's gradient to its first maximum in row-major window order
// (recomputed here from X, so no arg-max texture is kept and ties resolve
// the same way everywhere); average pooling spreads it over the in-bounds taps.
// inputs: X, DY
// uses: lib/window
// defines: MAX (1 max, 0 average); VEC_C: C % 4 == 0 and every tensor packed — a texel is
//          4 channels of one pixel, handled together (else one lane at a time);
//          DISJOINT: stride >= window on both axes, so a pixel lies in at most one window,
//          found by one division instead of a search over the window's taps (the
//          search's divisions and branches cost 10x the forward pass on SwiftShader)
// uniforms: lib/window's inHWC, outHWC (F = C), ksize, stride, pad
// output: dX, N x (H*W*C); X is N x (H*W*C), DY is N x (OH*OW*C)
// formula: dX[n, iy, ix, c] = sum over windows (oy, ox) containing (iy, ix) of
//          max: dY[n, oy, ox, c] if (iy, ix) is the window's first arg-max, else 0
//          average: dY[n, oy, ox, c] / (in-bounds taps of the window)
// With DISJOINT windows: the output position whose window holds input coordinate i
// along an axis (stride s >= window k, leading padding p), or -1 if none does.
int disjointWindow(int i, int s, int p, int k, int outSize) {
    int num = i + p, o = num / s;
    return num - o * s < k && o < outSize ? o : -1;
}

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

// windowShare for the 4 channels c..c+3 of pixel (iy, ix) at once.
vec4 windowShare4(int n, int oy, int ox, int c, int iy, int ix) {
    vec4 best = vec4(0.0), mine = vec4(0.0);
    int count = 0;
    for (int ky = 0; ky < ksize.x; ++ky) {
        int y = oy * stride.x - pad.x + ky;
        if (y < 0 || y >= inHWC.x) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int x = ox * stride.y - pad.y + kx;
            if (x < 0 || x >= inHWC.y) continue;
#if MAX
            vec4 v = X_texel(columnOf(y, x, c, inHWC) >> 2, n);
            bvec4 better = count == 0 ? bvec4(true) : greaterThan(v, best);
            best = mix(best, v, better);
            mine = mix(mine, vec4(y == iy && x == ix ? 1.0 : 0.0), better);
#endif
            ++count;
        }
    }
#if MAX
    return mine;
#else
    return vec4(1.0 / float(max(count, 1)));
#endif
}

void main() {
    ivec2 t = outTexel();
#if VEC_C
    int n = t.y;
    ivec3 p = pixelOf(t.x * 4, inHWC);
    vec4 acc = vec4(0.0);
#if DISJOINT
    int oy = disjointWindow(p.x, stride.x, pad.x, ksize.x, outHWC.x);
    int ox = disjointWindow(p.y, stride.y, pad.y, ksize.y, outHWC.y);
    if (oy >= 0 && ox >= 0)
        acc = DY_texel(columnOf(oy, ox, p.z, outHWC) >> 2, n) * windowShare4(n, oy, ox, p.z, p.x, p.y);
#else
    for (int ky = 0; ky < ksize.x; ++ky) {
        int oy = windowAt(p.x, ky, stride.x, pad.x, outHWC.x);
        if (oy < 0) continue;
        for (int kx = 0; kx < ksize.y; ++kx) {
            int ox = windowAt(p.y, kx, stride.y, pad.y, outHWC.y);
            if (ox < 0) continue;
            acc += DY_texel(columnOf(oy, ox, p.z, outHWC) >> 2, n) * windowShare4(n, oy, ox, p.z, p.x, p.y);
        }
    }
#endif
    setOutput(acc);
#else
    int n = t.y, lanes = OUT_PACKED == 1 ? 4 : 1, cols = inHWC.x * inHWC.y * inHWC.z;
    vec4 acc = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int j = t.x * lanes + i;
        if (j >= cols) break;
        ivec3 p = pixelOf(j, inHWC);
        float s = 0.0;
#if DISJOINT
        int oy = disjointWindow(p.x, stride.x, pad.x, ksize.x, outHWC.x);
        int ox = disjointWindow(p.y, stride.y, pad.y, ksize.y, outHWC.y);
        if (oy >= 0 && ox >= 0) s = DY_at(n, columnOf(oy, ox, p.z, outHWC)) * windowShare(n, oy, ox, p.z, p.x, p.y);
#else
        for (int ky = 0; ky < ksize.x; ++ky) {
            int oy = windowAt(p.x, ky, stride.x, pad.x, outHWC.x);
            if (oy < 0) continue;
            for (int kx = 0; kx < ksize.y; ++kx) {
                int ox = windowAt(p.y, kx, stride.y, pad.y, outHWC.y);
                if (ox < 0) continue;
                s += DY_at(n, columnOf(oy, ox, p.z, outHWC)) * windowShare(n, oy, ox, p.z, p.x, p.y);
            }
        }
#endif
        acc[i] = s;
    }
    setOutput(acc);
#endif
}
