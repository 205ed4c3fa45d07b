// loss/pointwise_grad: the gradient of a mean element-wise loss (MSE or BCE on logits).
// inputs: P, T, SCALE?
// uses: lib/pointwise_loss
// defines: PW_LOSS (lib/pointwise_loss)
// uniforms: invCount = 1 / (number of elements the loss is the mean of), from the host
// SCALE (optional, 1 x n): the gradient is multiplied by SCALE[0, 0] (dynamic loss scaling)
// output: same shape as P and T, any layout
// formula: G[r, c] = pw_grad(P[r, c], T[r, c]) — MSE 2 (p - t) invCount, BCE (sigmoid(p) - t) invCount
uniform float invCount;
void main() {
#if SCALE_BOUND
    setOutput(pw_grad(P_aligned(), T_aligned(), invCount) * SCALE_at(0, 0));
#else
    setOutput(pw_grad(P_aligned(), T_aligned(), invCount));
#endif
}
