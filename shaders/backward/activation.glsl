// backward/activation: dZ = dY * f'(Z), element-wise.
// inputs: DY, Z
// uses: lib/activation
// defines: ACT (see lib/activation)
// output: same shape as Z, any layout
// formula: dZ[r, c] = dY[r, c] * f'(Z[r, c])   (Z is the pre-activation)
void main() {
    setOutput(DY_aligned() * act_df(Z_aligned()));
}
