// reduce/channel_sum: the sum of each channel over every pixel of a slice of
// rows — the bias gradient of a convolution, as partial sums that
// reduce/sum_slices adds (a few channels would otherwise be a few fragments
// looping over every row).
// inputs: X
// uses: lib/channels
// defines: VEC_C (lib/channels)
// uniforms: channels; perSlice (rows per slice)
// output: S x C (S = ceil(N / perSlice)); X is N x (P*C)
// formula: S[s, c] = sum_{s*perSlice <= n < (s+1)*perSlice, n < N} sum_p X[n, p*C + c]
uniform int perSlice;

void main() {
    ivec2 shape = X_shape();
    ivec2 t = outTexel();
    int pixels = pixelsPerRow(shape), x = t.x;
    int n0 = t.y * perSlice, n1 = min(shape.x, n0 + perSlice);
    ivec4 cs = channelLanes();
    vec4 s = vec4(0.0);
    for (int n = n0; n < n1; ++n)
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
