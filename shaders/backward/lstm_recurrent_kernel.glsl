// backward/lstm_recurrent_kernel: the gradient of an LSTM's recurrent kernel, each step's previous output
// times its gate gradients, summed over the batch and the steps.
// inputs: H, DZ
// uniforms: units, reverse (1: the LSTM went backwards, so step s read input step T-1-s)
// output: U x 4U, any layout; H N x (T*U) by step, DZ N x (T*4U) by input step
// formula: OUT[k, m] = sum_r sum_{s >= 1} H[r, (s-1)*U + k] DZ[r, p(s)*4U + m], p(s) = reverse ? T-1-s : s
uniform int units;
uniform int reverse;

float sumAt(int k, int m) {
    int rows = H_shape().x, steps = H_shape().y / units;
    float sum = 0.0;
    for (int r = 0; r < rows; ++r)
        for (int s = 1; s < steps; ++s) {
            int p = reverse == 1 ? steps - 1 - s : s;
            sum += H_at(r, (s - 1) * units + k) * DZ_at(r, p * 4 * units + m);
        }
    return sum;
}

#if OUT_PACKED && DZ_PACKED
// OUT's texel x of row k (columns 4x .. 4x+3; 4U is a multiple of 4): one DZ texel holds the 4 columns' terms,
// so a term costs 2 fetches for 4 values where sumAt's cost 2 for one.
vec4 sumTexel(int k, int x) {
    int rows = H_shape().x, steps = H_shape().y / units;
    vec4 sum = vec4(0.0);
    for (int r = 0; r < rows; ++r)
        for (int s = 1; s < steps; ++s) {
            int p = reverse == 1 ? steps - 1 - s : s;
            sum += H_at(r, (s - 1) * units + k) * DZ_texel(p * units + x, r);
        }
    return sum;
}
#endif

void main() {
    ivec2 t = outTexel();
#if OUT_PACKED && DZ_PACKED
    setOutput(sumTexel(t.y, t.x));
#else
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = sumAt(t.y, c);
    }
    setOutput(v);
#endif
}
