// backward/recurrent_kernel: the gradient of an LSTM's or a GRU's recurrent kernel, each step's previous output
// times its gate gradients, summed over the batch and the steps; a GRU's candidate columns take the step's
// r ⊙ h(t-1) (RH) in place of the previous output.
// inputs: H, DZ, RH?
// uses: lib/elements
// uniforms: units, gates (4: LSTM, 3: GRU), reverse (1: the layer went backwards, so step s read input step T-1-s)
// output: U x gates*U, any layout; H, RH N x (T*U) by step, DZ N x (T*gates*U) by input step
// formula: OUT[k, m] = sum_r sum_{s >= 1} X[r, s, k] DZ[r, p(s)*gates*U + m], p(s) = reverse ? T-1-s : s,
//          X[r, s, k] = RH[r, s*U + k] where RH is bound and m >= 2U, else H[r, (s-1)*U + k]
uniform int units;
uniform int gates;
uniform int reverse;

float elementAt(int k, int m) {
    int rows = H_shape().x, steps = H_shape().y / units;
    bool candidate = false;
#if RH_BOUND
    candidate = m >= 2 * units;
#endif
    float sum = 0.0;
    for (int r = 0; r < rows; ++r)
        for (int s = 1; s < steps; ++s) {
            int p = reverse == 1 ? steps - 1 - s : s;
            float x = H_at(r, (s - 1) * units + k);
#if RH_BOUND
            if (candidate) x = RH_at(r, s * units + k);
#endif
            sum += x * DZ_at(r, p * gates * units + m);
        }
    return sum;
}

void main() { setElements(); }
