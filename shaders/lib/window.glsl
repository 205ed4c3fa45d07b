// lib/window: the window geometry of conv and pooling kernels (mirrors
// include/gltrain/window.hpp). Images are NHWC rows: column (y*W + x)*C + c.
// uniforms: inHWC (H, W, C) of the input image, outHWC (OH, OW, F) of the
//           output image, ksize (kh, kw), stride (sh, sw), dilation (dh, dw:
//           the pixels between taps; convolutions only), pad (top, left)
uniform ivec3 inHWC;
uniform ivec3 outHWC;
uniform ivec2 ksize;
uniform ivec2 stride;
uniform ivec2 dilation;
uniform ivec2 pad;

// (y, x, c) of column j of an image row of shape hwc.
ivec3 pixelOf(int j, ivec3 hwc) {
    int p = j / hwc.z;
    int y = p / hwc.y;
    return ivec3(y, p - y * hwc.y, j - p * hwc.z);
}
int columnOf(int y, int x, int c, ivec3 hwc) { return (y * hwc.y + x) * hwc.z + c; }
bool insideInput(int y, int x) { return y >= 0 && y < inHWC.x && x >= 0 && x < inHWC.y; }

// The output position (oy or ox) whose window reads input coordinate i at
// offset k (the tap times the dilation) along an axis with stride s and leading padding p; -1 if none.
int windowAt(int i, int k, int s, int p, int outSize) {
    int num = i + p - k;
    if (num < 0) return -1;
    int o = num / s;
    return (o * s == num && o < outSize) ? o : -1;
}
