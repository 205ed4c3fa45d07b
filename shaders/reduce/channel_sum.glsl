// reduce/channel_sum: the sum of each channel over every row and pixel —
// the bias gradient of a convolution.
// inputs: X
// uses: lib/channels
// defines: VEC_C (lib/channels)
// uniforms: channels
// output: 1 x C, packed; X is N x (P*C)
// formula: S[c] = sum_{n, p} X[n, p*C + c]
void main() {
    ivec2 shape = X_shape();
    int pixels = pixelsPerRow(shape), x = outTexel().x;
    ivec4 cs = channelLanes();
    vec4 s = vec4(0.0);
    for (int n = 0; n < shape.x; ++n)
        for (int p = 0; p < pixels; ++p) {
            int j = p * channels;
#if VEC_C
            s += X_texel((j >> 2) + x, n);
#else
            s += vec4(X_at(n, j + cs.x), X_at(n, j + cs.y), X_at(n, j + cs.z), X_at(n, j + cs.w));
#endif
        }
    setOutput(s);
}
