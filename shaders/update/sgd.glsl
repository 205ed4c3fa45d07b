// update/sgd: one SGD step, p' = p - lr * (g * gscale + wd * p).
// inputs: P, G?, GSCALE?, LOSS?, X?, T?, W0?, B0?, W1?, B1?, W2?, B2?, W3?, B3?
// (G unbound: the gradient of a small dense network run by lib/update_grad from X .. B3)
// uses: lib/update_grad, lib/step_guard
// (run as a compute kernel, one invocation per texel, where compute kernels run: ops/optimizer.hpp)
// output: same shape as P (a new texture: the ping-pong partner of P)
// uniforms: lr, wd
// LOSS (1x1, optional): when not finite the update is skipped (the last good value is kept);
//   -Inf undoes the previous step (lib/step_guard)
// formula: g' = g * s + wd * p (s = GSCALE[0,0] when bound: clip by global norm);
//          p' = p - lr * g'   (include/gltrain/reference/optimizer.hpp: sgdStep)
uniform float lr;
uniform float wd;
void main() {
    vec4 p = P_aligned();
    vec4 g = updateGrad();
    g += wd * p;
#if LOSS_BOUND
    // The step's loss is NaN/Inf: keep the last good parameter.
    if (stepRevert()) SKIP_TEXEL;
    if (stepKeep()) { setOutput(p); return; }
#endif
    setOutput(p - lr * g);
}
