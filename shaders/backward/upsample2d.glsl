// backward/upsample2d: the input gradient of forward/upsample2d, gathered:
// each input pixel sums the output gradients that read it, by the weight they read it with.
// inputs: DY
// uniforms: inHWC, outHWC, size, bilinear, scale — as forward/upsample2d's (of the forward pass)
// output: dX, N x (H*W*C) from dY, N x (OH*OW*C); any layout
// formula: nearest  dX[n, iy, ix, c] = sum_{y / sh = iy, x / sw = ix} dY[n, y, x, c]
//          bilinear dX[n, iy, ix, c] = sum_{y, x} w(y, iy) w(x, ix) dY[n, y, x, c], where along an axis
//          w(o, i) = (1 - f) [lo(o) = i] + f [hi(o) = i] with forward/upsample2d's lo, hi and f
uniform ivec3 inHWC;
uniform ivec3 outHWC;
uniform ivec2 size;
uniform int bilinear;
uniform vec2 scale;
// The weight output coordinate o reads input coordinate i with along one axis.
float weight(int o, int i, float s, int extent) {
    float src = s * float(o);
    float lo = max(0.0, floor(src)), f = src - lo;
    int h = min(extent - 1, int(ceil(src)));
    return (int(lo) == i ? 1.0 - f : 0.0) + (h == i ? f : 0.0);
}
void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int j = t.x * lanes + k;
        if (j >= cols) break;
        int p = j / inHWC.z, c = j - p * inHWC.z;
        int iy = p / inHWC.y, ix = p - iy * inHWC.y;
        float s = 0.0;
        if (bilinear == 0) {
            for (int y = iy * size.x; y < (iy + 1) * size.x; ++y)
                for (int x = ix * size.y; x < (ix + 1) * size.y; ++x)
                    s += DY_at(t.y, (y * outHWC.y + x) * outHWC.z + c);
        } else {
            // The outputs that read row iy lie within a factor of it (one more either side for rounding).
            int y0 = max(0, (iy - 1) * size.x - 1), y1 = min(outHWC.x - 1, (iy + 1) * size.x + 1);
            int x0 = max(0, (ix - 1) * size.y - 1), x1 = min(outHWC.y - 1, (ix + 1) * size.y + 1);
            for (int y = y0; y <= y1; ++y) {
                float wy = weight(y, iy, scale.x, inHWC.x);
                if (wy == 0.0) continue;
                for (int x = x0; x <= x1; ++x) {
                    float w = wy * weight(x, ix, scale.y, inHWC.y);
                    if (w != 0.0) s += w * DY_at(t.y, (y * outHWC.y + x) * outHWC.z + c);
                }
            }
        }
        v[k] = s;
    }
    setOutput(v);
}
