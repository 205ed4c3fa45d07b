// forward/channel_bias_add: a bias per channel of image rows, Y = X + b[c]
// (graph/ops/elementwise.hpp's BiasAdd when the bias is shorter than a row;
// a convolution's plan fuses its bias into forward/conv2d instead).
// inputs: X, BIAS
// uses: lib/channels
// defines: VEC_C (lib/channels)
// uniforms: channels
// output: N x (P*C), X's shape; BIAS is 1 x C
// formula: Y[n, p*C + c] = X[n, p*C + c] + b[c]
void main() {
    ivec2 t = outTexel();
#if VEC_C
    // The texel's 4 lanes are channels c..c+3 of one pixel.
    setOutput(X_texel(t.x, t.y) + BIAS_texel(t.x % (channels >> 2), 0));
#else
    int lanes = OUT_PACKED == 1 ? 4 : 1, last = X_shape().y - 1;
    ivec4 j = min(ivec4(t.x * lanes) + ivec4(0, 1, 2, 3), ivec4(last));
    ivec4 c = j - (j / channels) * channels;
    vec4 x = vec4(X_at(t.y, j.x), X_at(t.y, j.y), X_at(t.y, j.z), X_at(t.y, j.w));
    setOutput(x + vec4(BIAS_at(0, c.x), BIAS_at(0, c.y), BIAS_at(0, c.z), BIAS_at(0, c.w)));
#endif
}
