// forward/upsample2d: each image resized by whole factors (graph's Upsample:
// the UpSampling2D layer). Nearest repeats each pixel; bilinear is TF.js's
// resizeBilinear without aligned corners or half-pixel centres.
// inputs: X
// uniforms: inHWC, outHWC — (height, width, channels); size (sh, sw); bilinear (0 or 1);
//           scale — (H / OH, W / OW) as float32, as TF.js computes it
// output: N x (H*sh * W*sw * C), any layout
// formula: nearest  Y[n, y, x, c] = X[n, y / sh, x / sw, c]
//          bilinear with src = scale * y, lo = floor(src), hi = min(H - 1, ceil(src)), f = src - lo (and the same
//          along x): top = X[lo_y, lo_x] + (X[lo_y, hi_x] - X[lo_y, lo_x]) f_x, bottom likewise at hi_y,
//          Y = top + (bottom - top) f_y
uniform ivec3 inHWC;
uniform ivec3 outHWC;
uniform ivec2 size;
uniform int bilinear;
uniform vec2 scale;
float pixel(int n, int y, int x, int c) { return X_at(n, (y * inHWC.y + x) * inHWC.z + c); }
void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int j = t.x * lanes + k;
        if (j >= cols) break;
        int p = j / outHWC.z, c = j - p * outHWC.z;
        int y = p / outHWC.y, x = p - y * outHWC.y;
        if (bilinear == 0) {
            v[k] = pixel(t.y, y / size.x, x / size.y, c);
            continue;
        }
        vec2 src = scale * vec2(float(y), float(x));
        vec2 lo = max(vec2(0.0), floor(src)), f = src - lo;
        ivec2 l = ivec2(lo), h = min(inHWC.xy - 1, ivec2(ceil(src)));
        float tl = pixel(t.y, l.x, l.y, c), tr = pixel(t.y, l.x, h.y, c);
        float bl = pixel(t.y, h.x, l.y, c), br = pixel(t.y, h.x, h.y, c);
        float top = tl + (tr - tl) * f.y, bottom = bl + (br - bl) * f.y;
        v[k] = top + (bottom - top) * f.x;
    }
    setOutput(v);
}
