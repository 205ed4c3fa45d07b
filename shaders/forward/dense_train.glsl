// forward/dense_train: a dense layer's forward pass while training, writing
// both the pre-activation (kept for the backward pass's f'(Z)) and the output.
// inputs: A, B, CPREV?, BIAS?
// outputs: Z, Y
// uses: lib/activation, lib/matmul, lib/bias
// defines: TRANS_A, TRANS_B (0 here), ACT (see lib/activation)
// uniforms: k0, k1 (the K slice; the whole K unless split)
// output: Z and Y are M x N, one texel per fragment, two render targets
// formula: Z = CPREV + A·B + BIAS;  Y = f(Z)
void main() {
    vec4 z = product();
#if CPREV_BOUND
    z += CPREV_aligned();
#endif
#if BIAS_BOUND
    z += biasRow();
#endif
    setZ(z);
    setY(act_f(z));
}
