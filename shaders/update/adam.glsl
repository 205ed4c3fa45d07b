// update/adam: one Adam or AdamW step for a parameter, its moments in and out.
// inputs: P, G?, M, V, GSCALE?, LOSS?, X?, T?, W0?, B0?, W1?, B1?, W2?, B2?, W3?, B3?
// (G unbound: the gradient of a small dense network run by lib/update_grad from X .. B3)
// uses: lib/update_grad, lib/step_guard
// (run as a compute kernel, one invocation per texel, where compute kernels run: ops/optimizer.hpp)
// outputs: PN, MN, VN
// (three render targets: one pass per parameter)
// defines: DECOUPLED 0 (Adam, L2 decay added to g) / 1 (AdamW, decoupled decay)
// uniforms: lr, wd, b1, b2, eps, bc1 = 1 - b1^t, bc2 = 1 - b2^t (t >= 1, from the host)
// formula: g' = g * s (+ wd * p for Adam);  m' = b1 m + (1 - b1) g';  v' = b2 v + (1 - b2) g'^2
//          p' = p (- lr wd p for AdamW) - lr (m' / bc1) / (sqrt(v' / bc2) + eps)
uniform float lr;
uniform float wd;
uniform float b1;
uniform float b2;
uniform float eps;
uniform float bc1;
uniform float bc2;
void main() {
    vec4 p = P_aligned(), m0 = M_aligned(), v0 = V_aligned();
    vec4 g = updateGrad();
#if !DECOUPLED
    g += wd * p;
#endif
    vec4 m = b1 * m0 + (1.0 - b1) * g;
    vec4 v = b2 * v0 + (1.0 - b2) * g * g;
    vec4 delta = lr * (m / bc1) / (sqrt(v / bc2) + eps);
#if DECOUPLED
    vec4 pn = (p - lr * wd * p) - delta;
#else
    vec4 pn = p - delta;
#endif
#if LOSS_BOUND
    // The step's loss is NaN/Inf: keep the last good parameter and moments —
    // selected, not branched to: SwiftShader runs both sides of a branch, and an
    // early return that read M and V again made a guarded 784x256 update in Chromium
    // take 1.5-1.7x the unguarded one (bench_kernels).
    // -Inf: the previous step is undone (lib/step_guard).
    if (stepRevert()) SKIP_TEXEL;
    bool bad = stepKeep();
    pn = bad ? p : pn;
    m = bad ? m0 : m;
    v = bad ? v0 : v;
#endif
    setPN(pn);
    setMN(m);
    setVN(v);
}
