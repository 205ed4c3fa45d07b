// backward/bn_params: the gradients of batch normalization's scale and shift
// for one slice of rows; reduce/sum_slices adds the slices (the scale's share
// is already multiplied by 1 / sqrt(var + eps), so the sum is the gradient).
// inputs: DY, X, MEAN, VAR
// outputs: DGAMMA, DBETA
// uses: lib/channels
// defines: VEC_C (lib/channels)
// uniforms: channels, eps; perSlice (rows per slice)
// output: DGAMMA and DBETA, S x C each (S = ceil(N / perSlice); two render targets); DY and X are N x (P*C)
// formula: row s, rows n of slice s: dbeta = sum_{n,p} dY;  dgamma = sum_{n,p} dY (X - mean[c]) / sqrt(var[c] + eps)
uniform float eps;
uniform int perSlice;

void main() {
    ivec2 shape = X_shape();
    ivec2 t = outTexel();
    int pixels = pixelsPerRow(shape), x = t.x;
    int n0 = t.y * perSlice, n1 = min(shape.x, n0 + perSlice);
    ivec4 cs = channelLanes();
    vec4 mean = vec4(MEAN_at(0, cs.x), MEAN_at(0, cs.y), MEAN_at(0, cs.z), MEAN_at(0, cs.w));
    vec4 var = vec4(VAR_at(0, cs.x), VAR_at(0, cs.y), VAR_at(0, cs.z), VAR_at(0, cs.w));
    vec4 sdy = vec4(0.0), sdyx = vec4(0.0);
    for (int n = n0; n < n1; ++n)
        for (int p = 0; p < pixels; ++p) {
            int j = p * channels;
#if VEC_C
            vec4 g = DY_texel((j >> 2) + x, n), v = X_texel((j >> 2) + x, n);
#else
            vec4 g = vec4(DY_at(n, j + cs.x), DY_at(n, j + cs.y), DY_at(n, j + cs.z), DY_at(n, j + cs.w));
            vec4 v = vec4(X_at(n, j + cs.x), X_at(n, j + cs.y), X_at(n, j + cs.z), X_at(n, j + cs.w));
#endif
            sdy += g;
            sdyx += g * (v - mean);
        }
    setDGAMMA(sdyx * inversesqrt(var + eps));
    setDBETA(sdy);
}
