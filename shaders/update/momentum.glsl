// update/momentum: SGD with momentum (PyTorch's form), classical or Nesterov.
// inputs: P, G?, V, GSCALE?, LOSS?, X?, T?, W0?, B0?, W1?, B1?, W2?, B2?, W3?, B3?
// (G unbound: the gradient of a small dense network run by lib/update_grad from X .. B3)
// uses: lib/update_grad
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
    vec4 p = P_aligned();
#if LOSS_BOUND
    // The step's loss is NaN/Inf: keep the last good parameter and state.
    float l = LOSS_at(0, 0);
    if (isnan(l) || isinf(l)) { setPN(p); setVN(V_aligned()); return; }
#endif
    vec4 g = updateGrad();
    g += wd * p;
    vec4 v = mu * V_aligned() + g;
#if NESTEROV
    setPN(p - lr * (g + mu * v));
#else
    setPN(p - lr * v);
#endif
    setVN(v);
}
