// update/momentum: SGD with momentum (PyTorch's form), classical or Nesterov.
// inputs: P, G?, V, GSCALE?, LOSS?, X?, T?, W0?, B0?, W1?, B1?, W2?, B2?, W3?, B3?
// (G unbound: the gradient of a small dense network run by lib/update_grad from X .. B3)
// uses: lib/update_grad, lib/step_guard
// (run as a compute kernel, one invocation per texel, where compute kernels run: ops/optimizer.hpp)
// outputs: PN, VN
// (written together through two render targets)
// defines: NESTEROV 0/1
// uniforms: lr, wd, mu
// formula: g' = g * s + wd * p;  v' = mu * v + g';
//          p' = p - lr * v'  or (Nesterov)  p' = p - lr * (g' + mu * v')
uniform float lr;
uniform float wd;
uniform float mu;
void main() {
    vec4 p = P_aligned(), v0 = V_aligned();
    vec4 g = updateGrad();
    g += wd * p;
    vec4 v = mu * v0 + g;
#if NESTEROV
    vec4 pn = p - lr * (g + mu * v);
#else
    vec4 pn = p - lr * v;
#endif
#if LOSS_BOUND
    // The step's loss is NaN/Inf: keep the last good parameter and state (selected,
    // not branched to: see update/adam).
    if (stepRevert()) SKIP_TEXEL;  // the previous step is undone (lib/step_guard)
    bool bad = stepKeep();
    pn = bad ? p : pn;
    v = bad ? v0 : v;
#endif
    setPN(pn);
    setVN(v);
}
