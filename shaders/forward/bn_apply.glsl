// forward/bn_apply: batch normalization with given statistics (the batch's
// while training, the moving averages at inference), activation fused.
// inputs: X, MEAN, VAR, GAMMA, BETA
// uses: lib/activation, lib/channels
// defines: ACT (lib/activation); VEC_C (lib/channels)
// uniforms: channels, eps
// output: N x (P*C), X's shape; MEAN, VAR, GAMMA, BETA are 1 x C
// formula: Y[n, p*C + c] = act(gamma[c] (X - mean[c]) / sqrt(var[c] + eps) + beta[c])
uniform float eps;

void main() {
    ivec2 t = outTexel();
#if VEC_C
    // The texel's 4 lanes are channels c..c+3 of one pixel.
    int cx = t.x % (channels >> 2);
    vec4 x = X_texel(t.x, t.y), mean = MEAN_texel(cx, 0), var = VAR_texel(cx, 0);
    vec4 g = GAMMA_texel(cx, 0), b = BETA_texel(cx, 0);
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1, last = X_shape().y - 1;
    ivec4 j = min(ivec4(t.x * lanes) + ivec4(0, 1, 2, 3), ivec4(last));
    ivec4 c = j - (j / channels) * channels;
    vec4 x = vec4(X_at(t.y, j.x), X_at(t.y, j.y), X_at(t.y, j.z), X_at(t.y, j.w));
    vec4 mean = vec4(MEAN_at(0, c.x), MEAN_at(0, c.y), MEAN_at(0, c.z), MEAN_at(0, c.w));
    vec4 var = vec4(VAR_at(0, c.x), VAR_at(0, c.y), VAR_at(0, c.z), VAR_at(0, c.w));
    vec4 g = vec4(GAMMA_at(0, c.x), GAMMA_at(0, c.y), GAMMA_at(0, c.z), GAMMA_at(0, c.w));
    vec4 b = vec4(BETA_at(0, c.x), BETA_at(0, c.y), BETA_at(0, c.z), BETA_at(0, c.w));
#endif
    setOutput(act_f(g * (x - mean) * inversesqrt(var + eps) + b));
}
