// forward/activation: Y = f(Z), element-wise.
// inputs: Z
// uses: lib/activation
// defines: ACT (see lib/activation)
// output: same shape as Z, any layout
// formula: Y[r, c] = f(Z[r, c])
void main() {
    setOutput(act_f(Z_aligned()));
}
