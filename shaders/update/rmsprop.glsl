// update/rmsprop: one RMSProp step (PyTorch's form, eps outside the sqrt), with
// or without a momentum buffer.
// inputs: P, G?, S, B?, GSCALE?, LOSS?, X?, T?, W0?, B0?, W1?, B1?, W2?, B2?, W3?, B3?
// (G unbound: the gradient of a small dense network run by lib/update_grad from X .. B3)
// uses: lib/update_grad
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
    vec4 p = P_aligned();
#if LOSS_BOUND
    // The step's loss is NaN/Inf: keep the last good parameter and state.
    float l = LOSS_at(0, 0);
    if (isnan(l) || isinf(l)) {
        setPN(p);
        setSN(S_aligned());
#if B_BOUND
        setBN(B_aligned());
#else
        setBN(vec4(0.0));
#endif
        return;
    }
#endif
    vec4 g = updateGrad();
    g += wd * p;
    vec4 s = rho * S_aligned() + (1.0 - rho) * g * g;
    vec4 step = g / (sqrt(s) + eps);
#if B_BOUND
    vec4 b = mu * B_aligned() + step;
    setPN(p - lr * b);
    setBN(b);
#else
    setPN(p - lr * step);
    setBN(vec4(0.0));
#endif
    setSN(s);
}
