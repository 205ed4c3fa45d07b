// backward/bn_input: the input gradient of training-mode batch normalization
// (the batch statistics depend on X, hence the two correction terms).
// inputs: DY, X, MEAN, VAR, GAMMA, DGAMMA, DBETA
// uses: lib/channels
// defines: VEC_C (lib/channels)
// uniforms: channels, eps
// output: dX, N x (P*C); DY and X likewise; the others 1 x C
// formula: xhat = (X - mean) rstd, rstd = 1 / sqrt(var + eps), M = N P
//          dX = gamma rstd / M (M dY - dbeta - xhat dgamma)
uniform float eps;

vec4 perChannel(int which, ivec4 c) {
    // which: 0 mean, 1 var, 2 gamma, 3 dgamma, 4 dbeta — at the 4 lanes' channels.
    if (which == 0) return vec4(MEAN_at(0, c.x), MEAN_at(0, c.y), MEAN_at(0, c.z), MEAN_at(0, c.w));
    if (which == 1) return vec4(VAR_at(0, c.x), VAR_at(0, c.y), VAR_at(0, c.z), VAR_at(0, c.w));
    if (which == 2) return vec4(GAMMA_at(0, c.x), GAMMA_at(0, c.y), GAMMA_at(0, c.z), GAMMA_at(0, c.w));
    if (which == 3) return vec4(DGAMMA_at(0, c.x), DGAMMA_at(0, c.y), DGAMMA_at(0, c.z), DGAMMA_at(0, c.w));
    return vec4(DBETA_at(0, c.x), DBETA_at(0, c.y), DBETA_at(0, c.z), DBETA_at(0, c.w));
}

void main() {
    ivec2 t = outTexel(), shape = X_shape();
    float m = float(shape.x * (shape.y / channels));
#if VEC_C
    int cx = t.x % (channels >> 2);
    vec4 dy = DY_texel(t.x, t.y), x = X_texel(t.x, t.y);
    vec4 mean = MEAN_texel(cx, 0), var = VAR_texel(cx, 0), g = GAMMA_texel(cx, 0);
    vec4 dg = DGAMMA_texel(cx, 0), db = DBETA_texel(cx, 0);
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1, last = shape.y - 1;
    ivec4 j = min(ivec4(t.x * lanes) + ivec4(0, 1, 2, 3), ivec4(last));
    ivec4 c = j - (j / channels) * channels;
    vec4 dy = vec4(DY_at(t.y, j.x), DY_at(t.y, j.y), DY_at(t.y, j.z), DY_at(t.y, j.w));
    vec4 x = vec4(X_at(t.y, j.x), X_at(t.y, j.y), X_at(t.y, j.z), X_at(t.y, j.w));
    vec4 mean = perChannel(0, c), var = perChannel(1, c), g = perChannel(2, c);
    vec4 dg = perChannel(3, c), db = perChannel(4, c);
#endif
    vec4 rstd = inversesqrt(var + eps);
    setOutput(g * rstd / m * (m * dy - db - (x - mean) * rstd * dg));
}
