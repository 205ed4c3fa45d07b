// forward/bn_stats: batch normalization's batch statistics for one slice of
// rows — each channel's share of the mean, or (given MEAN) of the (biased) variance
// around the mean already computed: two passes, stable where E[x^2] - E[x]^2
// would cancel. Slices let many fragments share a long sum; reduce/sum_slices
// adds them (each share is already divided by the count, so the sum is the
// statistic).
// inputs: X, MEAN?
// uses: lib/channels
// defines: VEC_C (lib/channels); MEAN_BOUND (MEAN, 1 x C, given: the variance pass)
// uniforms: channels; perSlice (rows per slice)
// output: S x C (S = ceil(N / perSlice)); X is N x (P*C)
// formula: row s, rows n of slice s, m = N P:
//          mean: sum_{n,p} X[n, p*C + c] / m;  variance: sum_{n,p} (X[n, p*C + c] - mean[c])^2 / m
uniform int perSlice;

vec4 at(int n, int j, ivec4 cs) {
#if VEC_C
    return X_texel((j >> 2) + outTexel().x, n);
#else
    return vec4(X_at(n, j + cs.x), X_at(n, j + cs.y), X_at(n, j + cs.z), X_at(n, j + cs.w));
#endif
}

void main() {
    ivec2 shape = X_shape();
    int pixels = pixelsPerRow(shape);
    int n0 = outTexel().y * perSlice, n1 = min(shape.x, n0 + perSlice);
    ivec4 cs = channelLanes();
#if MEAN_BOUND
    vec4 mean = vec4(MEAN_at(0, cs.x), MEAN_at(0, cs.y), MEAN_at(0, cs.z), MEAN_at(0, cs.w));
#endif
    vec4 s = vec4(0.0);
    for (int n = n0; n < n1; ++n)
        for (int p = 0; p < pixels; ++p) {
#if MEAN_BOUND
            vec4 d = at(n, p * channels, cs) - mean;
            s += d * d;
#else
            s += at(n, p * channels, cs);
#endif
        }
    setOutput(s / float(shape.x * pixels));
}
