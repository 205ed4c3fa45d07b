// lib/gru: what a GRU's step kernels share. The gates z, r, h lie side by side in XZ [N, T*3U] (x·W + b by input
// step) and R [U, 3U] (the recurrent kernel); H [N, T*U] holds the outputs by step (optional in the forward
// kernels: unbound at the first step, whose h(t-1) is zero), RH r ⊙ h(t-1) by step, DZP the gate inputs'
// gradients [N, T*3U] by input step. A kernel declares the inputs it reads: XZ and R always.
// uses: lib/activation, lib/elements
// uniforms: units, step, position (the input step this step reads)
uniform int units;
uniform int step;
uniform int position;

// The pre-activation of gate g (0: z, 1: r) of unit u, row r, at input step p: XZ plus h(hs)·R, hs < 0: XZ alone.
float gateInput(int r, int p, int hs, int g, int u) {
    float z = XZ_at(r, p * 3 * units + g * units + u);
#ifdef H_BOUND
#if H_BOUND
    if (hs >= 0)
        for (int k = 0; k < units; ++k) z += H_at(r, hs * units + k) * R_at(k, g * units + u);
#endif
#endif
    return z;
}

#ifdef RH_BOUND
// The candidate's pre-activation of unit u, row r, at this step: XZ plus (r ⊙ h(t-1))·R (none at the first step).
float candidateInput(int r, int u) {
    float c = XZ_at(r, position * 3 * units + 2 * units + u);
    if (step > 0)
        for (int k = 0; k < units; ++k) c += RH_at(r, step * units + k) * R_at(k, 2 * units + u);
    return c;
}
#endif

#ifdef DZP_BOUND
// sum over m in [from, from + count) of DZP[r, p*3U + m] R[u, m]: what the gate inputs of input step p, columns
// from .. from + count, give back to unit u of the previous output.
float backProduct(int r, int p, int from, int count, int u) {
    float sum = 0.0;
#if DZP_BOUND
    for (int m = from; m < from + count; ++m) sum += DZP_at(r, p * 3 * units + m) * R_at(u, m);
#endif
    return sum;
}
#endif

// A gate's activation (`recurrent`: RACT, else ACT) at x, or (`derivative`) its slope there.
float gruAct(bool recurrent, bool derivative, float x) {
    vec4 v = vec4(x);
    if (recurrent) return derivative ? act_df_kind(RACT, v, act_alpha).x : act_f_kind(RACT, v, act_alpha).x;
    return derivative ? act_df_kind(ACT, v, act_alpha).x : act_f_kind(ACT, v, act_alpha).x;
}
