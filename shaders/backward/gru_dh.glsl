// backward/gru_dh: one time step of a GRU's backward pass (backpropagation through time), from the last step to
// the first: the whole gradient of the step's output, its own and what flows back from the later step through
// that step's update gate, its gate inputs and its reset product; other steps' values in a texel it draws are copied.
// inputs: XZ, R, H, DH, DZP?, DHTP?
// (DZP: DZ after the later step's passes, DHTP: this kernel's previous pass; unbound at the last step)
// uses: lib/gru
// defines: ACT, RACT as forward/gru_step
// uniforms: units, step, position (lib/gru), nextPosition (the input step of step + 1)
// output: N x (T*U), one layout; H, DH N x (T*U)
// formula: with z', r' step + 1's update and reset gates (from XZ at nextPosition, H at step and R) and
//          d = DZP[r, nextPosition*3U + m]:
//          OUT[r, step*U + u] = DH[r, step*U + u] + z' DHTP[r, (step+1)*U + u] + sum_{m < 2U} d_m R[u, m]
//                               + r' sum_{m >= 2U} d_m R[u, m]
uniform int nextPosition;

float elementAt(int r, int c) {
    int s = c / units, u = c - s * units;
#if DHTP_BOUND
    if (s != step) return DHTP_at(r, c);
#endif
    if (s != step) return 0.0;
    float total = DH_at(r, c);
#if DZP_BOUND
    float z = gruAct(true, false, gateInput(r, nextPosition, step, 0, u));
    float reset = gruAct(true, false, gateInput(r, nextPosition, step, 1, u));
    total += z * DHTP_at(r, c + units) + backProduct(r, nextPosition, 0, 2 * units, u) +
             reset * backProduct(r, nextPosition, 2 * units, units, u);
#endif
    return total;
}

void main() { setElements(); }
