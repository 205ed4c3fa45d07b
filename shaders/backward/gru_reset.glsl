// backward/gru_reset: one time step of a GRU's backward pass: the gradient of the reset gate's input, through
// the candidate's recurrent product (whose input gradients backward/gru_step has just written); every other value
// is copied from that pass.
// inputs: XZ, R, H, DZP
// uses: lib/gru
// defines: ACT, RACT as forward/gru_step
// uniforms: units, step, position (lib/gru)
// output: N x (T*3U), indexed by input step; DZP N x (T*3U), H N x (T*U)
// formula: with d = DZP[r, position*3U + 2U + j] (the candidate's input gradients) and h' = H[r, (step-1)*U + u]:
//          OUT[r, position*3U + U + u] = (sum_j d_j R[u, 2U + j]) h' RACT'(XZ[r, position*3U + U + u]
//                                        + sum_k H[r, (step-1)*U + k] R[k, U + u]); 0 at step 0 (h' = 0)
float elementAt(int r, int col) {
    int p = col / (3 * units), rest = col - p * 3 * units, g = rest / units, u = rest - g * units;
    if (p != position || g != 1) return DZP_at(r, col);
    if (step == 0) return 0.0;
    return backProduct(r, position, 2 * units, units, u) * H_at(r, (step - 1) * units + u) *
           gruAct(true, true, gateInput(r, position, step - 1, 1, u));
}

void main() { setElements(); }
