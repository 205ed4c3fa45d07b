// forward/matmul: C = op(A) · op(B) over k in [k0, k1), with optional epilogues.
// inputs: A, B, CPREV?, BIAS?, Z?
// uses: lib/activation, lib/matmul, lib/bias, lib/epilogue
// defines: TRANS_A (C = Aᵀ·B, A stored K x M), TRANS_B (C = A·Bᵀ, B stored N x K),
//          ACT (forward activation applied last), DACT (1: multiply by f'(Z), the
//          fused backward epilogue; ACT then names f)
// uniforms: k0, k1 — the slice of the reduction this pass computes (K-split)
// output: M x N; one output texel per fragment (4 columns of one row when packed)
// formula: C[r, c] = CPREV[r, c] + sum_{k0 <= k < k1} op(A)[r, k] op(B)[k, c]
//          (+ BIAS[0, c]; then f(.) if ACT; then * f'(Z[r, c]) if DACT)
void main() {
    vec4 c = product();
#if CPREV_BOUND
    c += CPREV_aligned();
#endif
    setOutput(epilogue(c));
}
