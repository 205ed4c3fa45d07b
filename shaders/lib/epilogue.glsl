// lib/epilogue: a matmul's fused epilogue on the output texel's values, for
// kernels that "use" it (after lib/activation and lib/bias) with inputs BIAS?, Z?.
// defines: ACT, DACT (1: multiply by f'(Z), the backward epilogue; ACT then names f)
// formula: c (+ BIAS[0, col]); then f(.), or * f'(Z[row, col]) if DACT
vec4 epilogue(vec4 c) {
#if BIAS_BOUND
    c += biasRow();
#endif
#if DACT
    return c * act_df(Z_aligned());
#else
    return act_f(c);
#endif
}
