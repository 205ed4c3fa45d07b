// backward/gru_step: one time step of a GRU's backward pass: the gradients of the update gate's and the
// candidate's inputs from the step's whole output gradient (backward/gru_dh); the reset gate's slot is left zero
// for backward/gru_reset, and other steps' values in a texel it draws are copied from the previous pass.
// inputs: XZ, R, H, RH, DHT, DZP?
// (DZP: DZ after the later step's passes; unbound at the last step)
// uses: lib/gru
// defines: ACT, RACT as forward/gru_step
// uniforms: units, step, position (lib/gru)
// output: N x (T*3U), indexed by input step; H, RH, DHT N x (T*U)
// formula: z, c the update gate's and the candidate's inputs as forward/gru_step, h' = H[r, (step-1)*U + u]
//          (0 at step 0), g = DHT[r, step*U + u]:
//          OUT[r, position*3U + u] = g (h' - ACT(c)) RACT'(z);  OUT[r, position*3U + 2U + u] = g (1 - RACT(z)) ACT'(c)
float elementAt(int r, int col) {
    int p = col / (3 * units), rest = col - p * 3 * units, g = rest / units, u = rest - g * units;
#if DZP_BOUND
    if (p != position) return DZP_at(r, col);
#endif
    if (p != position || g == 1) return 0.0;
    float total = DHT_at(r, step * units + u), previous = step > 0 ? H_at(r, (step - 1) * units + u) : 0.0;
    float z = gateInput(r, position, step - 1, 0, u), c = candidateInput(r, u);
    if (g == 0) return total * (previous - gruAct(false, false, c)) * gruAct(true, true, z);
    return total * (1.0 - gruAct(true, false, z)) * gruAct(false, true, c);
}

void main() { setElements(); }
