// forward/gru_reset: one time step of a GRU's reset gates applied to the previous output, r ⊙ h(t-1), over the
// whole batch (TF.js's GRU resets h(t-1) before the candidate's recurrent product, so the candidate of a unit reads
// every unit's; forward/gru_step runs after this pass); other steps' values in a texel it draws are copied from the previous pass.
// inputs: XZ, R, H?, RHP?
// (H: the outputs after the previous step, RHP: this kernel's previous pass; unbound at the first step)
// uses: lib/gru
// defines: ACT, RACT (the gates' activation), in lib/activation's numbering
// uniforms: units, step, position (lib/gru)
// output: N x (T*U), H's layout
// formula: OUT[r, step*U + u] = RACT(XZ[r, position*3U + U + u] + sum_k H[r, (step-1)*U + k] R[k, U + u])
//                               H[r, (step-1)*U + u]; 0 at the first step
float elementAt(int r, int c) {
    int s = c / units, u = c - s * units;
    float v = 0.0;
#if H_BOUND
    if (s == step) v = gruAct(true, false, gateInput(r, position, step - 1, 1, u)) * H_at(r, (step - 1) * units + u);
#endif
#if RHP_BOUND
    if (s != step) v = RHP_at(r, c);
#endif
    return v;
}

void main() { setElements(); }
