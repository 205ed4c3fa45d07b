// update/rmsprop: one RMSProp step (PyTorch's form, eps outside the sqrt), with
// or without a momentum buffer.
// inputs: P, G?, S, B?, GSCALE?, LOSS?, X?, T?, W0?, B0?, W1?, B1?, W2?, B2?, W3?, B3?
// (G unbound: the gradient of a small dense network run by lib/update_grad from X .. B3)
// uses: lib/update_grad, lib/step_guard
// (run as a compute kernel, one invocation per texel, where compute kernels run: ops/optimizer.hpp)
// outputs: PN, SN, BN
// (BN is the momentum buffer when B is bound; otherwise a scratch target)
// uniforms: lr, wd, rho, eps, mu
// formula: g' = g * s + wd * p;  s' = rho s + (1 - rho) g'^2
//          no momentum: p' = p - lr g' / (sqrt(s') + eps)
//          momentum:    b' = mu b + g' / (sqrt(s') + eps);  p' = p - lr b'
uniform float lr;
uniform float wd;
uniform float rho;
uniform float eps;
uniform float mu;
void main() {
    vec4 p = P_aligned(), s0 = S_aligned();
    vec4 g = updateGrad();
    g += wd * p;
    vec4 s = rho * s0 + (1.0 - rho) * g * g;
    vec4 step = g / (sqrt(s) + eps);
#if B_BOUND
    vec4 b0 = B_aligned();
    vec4 b = mu * b0 + step;
    vec4 pn = p - lr * b;
#else
    vec4 b0 = vec4(0.0), b = vec4(0.0);
    vec4 pn = p - lr * step;
#endif
#if LOSS_BOUND
    // The step's loss is NaN/Inf: keep the last good parameter and state (selected,
    // not branched to: see update/adam).
    if (stepRevert()) SKIP_TEXEL;  // the previous step is undone (lib/step_guard)
    bool bad = stepKeep();
    pn = bad ? p : pn;
    s = bad ? s0 : s;
    b = bad ? b0 : b;
#endif
    setPN(pn);
    setSN(s);
    setBN(b);
}
