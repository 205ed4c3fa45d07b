// forward/gru_step: one time step of a GRU over the whole batch, TF.js's gate order (z, r, h) with the reset gate
// applied before the candidate's recurrent product (forward/gru_reset's RH); other steps' values in a texel it draws are copied
// from the previous step's outputs.
// inputs: XZ, R, RH, H?
// (H: the outputs after the previous step; unbound at the first step, whose state is zero)
// uses: lib/gru
// defines: ACT (the candidate's activation), RACT (the gates'), in lib/activation's numbering
// uniforms: units, step, position (lib/gru)
// output: N x (T*U)
// formula: z = RACT(XZ[r, position*3U + u] + sum_k H[r, (step-1)*U + k] R[k, u]);
//          c = ACT(XZ[r, position*3U + 2U + u] + sum_k RH[r, step*U + k] R[k, 2U + u]);
//          OUT[r, step*U + u] = z H[r, (step-1)*U + u] + (1 - z) c
float elementAt(int r, int c) {
    int s = c / units, u = c - s * units;
    float previous = 0.0;
#if H_BOUND
    if (s != step) return H_at(r, c);
    previous = H_at(r, (step - 1) * units + u);
#endif
    if (s != step) return 0.0;
    float z = gruAct(true, false, gateInput(r, position, step - 1, 0, u));
    return z * previous + (1.0 - z) * gruAct(false, false, candidateInput(r, u));
}

void main() { setElements(); }
