// update/moving_average: a running average (batch normalization's moving mean or
// variance) moved toward this step's statistic — after the loss is known, so a
// step whose loss is NaN or Inf leaves it as it was, as it leaves the parameters.
// inputs: A, X, LOSS?
// uses: lib/step_guard
// uniforms: momentum; scale (the statistic's factor: m / (m - 1) makes a biased
//           variance unbiased, 1 for a mean)
// output: like A (any layouts: X_aligned() lines X up with it)
// formula: A' = momentum A + (1 - momentum) scale X;  A' = A where LOSS (1x1: the step's loss,
//          or dynamic loss scaling's step guard) is NaN or Inf
uniform float momentum;
uniform float scale;
void main() {
    vec4 a = A_aligned();
#if LOSS_BOUND
    if (stepRevert()) SKIP_TEXEL;  // the previous step is undone (lib/step_guard)
    if (stepKeep()) { setOutput(a); return; }
#endif
    setOutput(momentum * a + (1.0 - momentum) * scale * X_aligned());
}
