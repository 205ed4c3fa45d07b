// util/shift_image: each image moved by whole pixels, zeros where it reads
// outside X: a pad (negative offsets, graph's PadImage) or a crop (positive,
// CropImage), each the other's gradient. Rows are NHWC.
// inputs: X
// uniforms: inHWC, outHWC — the input's and output's (height, width, channels); offset (dy, dx)
// output: N x (OH*OW*C), any layout
// formula: Y[n, y, x, c] = X[n, y + dy, x + dx, c] inside X, else 0
uniform ivec3 inHWC;
uniform ivec3 outHWC;
uniform ivec2 offset;
void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int j = t.x * lanes + k;
        if (j >= cols) break;
        int p = j / outHWC.z, c = j - p * outHWC.z;
        int y = p / outHWC.y, x = p - y * outHWC.y;
        int iy = y + offset.x, ix = x + offset.y;
        if (iy >= 0 && iy < inHWC.x && ix >= 0 && ix < inHWC.y) v[k] = X_at(t.y, (iy * inHWC.y + ix) * inHWC.z + c);
    }
    setOutput(v);
}
