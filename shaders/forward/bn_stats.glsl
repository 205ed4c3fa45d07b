// forward/bn_stats: batch normalization's batch statistics — each channel's
// mean, then its (biased) variance around that mean (two loops: stable where
// E[x^2] - E[x]^2 would cancel).
// inputs: X
// outputs: MEAN, VAR
// uses: lib/channels
// defines: VEC_C (lib/channels)
// uniforms: channels
// output: MEAN and VAR, 1 x C each, packed (two render targets); X is N x (P*C)
// formula: mean[c] = sum_{n,p} X[n, p*C + c] / (N P);  var[c] = sum (X - mean[c])^2 / (N P)
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
    ivec4 cs = channelLanes();
    float m = float(shape.x * pixels);
    vec4 s = vec4(0.0);
    for (int n = 0; n < shape.x; ++n)
        for (int p = 0; p < pixels; ++p) s += at(n, p * channels, cs);
    vec4 mean = s / m, v = vec4(0.0);
    for (int n = 0; n < shape.x; ++n)
        for (int p = 0; p < pixels; ++p) {
            vec4 d = at(n, p * channels, cs) - mean;
            v += d * d;
        }
    setMEAN(mean);
    setVAR(v / m);
}
