// forward/dense_train: a dense layer's forward pass while training, writing
// both the pre-activation (kept for the backward pass's f'(Z)) and the output.
// inputs: A, B, CPREV?, BIAS?, T?, SCALE?
// outputs: Z, Y
// uses: lib/activation, lib/matmul, lib/bias, lib/pointwise_loss
// defines: TRANS_A, TRANS_B (0 here), ACT (see lib/activation), PW_LOSS (lib/pointwise_loss; read with T)
// uniforms: k0, k1 (the K slice; the whole K unless split); invCount (with T)
// T (optional, targets shaped like Z): the layer makes the logits of a point-wise loss
//   (MSE, BCE on logits; ACT linear) and Y is that loss's gradient at Z, as
//   loss/pointwise_grad computes it (times SCALE[0, 0] when bound): one pass less a step
// output: Z and Y are M x N, one texel per fragment, two render targets
// formula: Z = CPREV + A·B + BIAS;  Y = f(Z), or with T: Y = pw_grad(Z, T, invCount) [* SCALE]
uniform float invCount;
void main() {
    vec4 z = product();
#if CPREV_BOUND
    z += CPREV_aligned();
#endif
#if BIAS_BOUND
    z += biasRow();
#endif
    setZ(z);
#if T_BOUND && SCALE_BOUND
    setY(pw_grad(z, T_aligned(), invCount) * SCALE_at(0, 0));
#elif T_BOUND
    setY(pw_grad(z, T_aligned(), invCount));
#else
    setY(act_f(z));
#endif
}
