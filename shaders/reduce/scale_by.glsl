// reduce/scale_by: every element times a scalar that lives on the GPU.
// inputs: X, S
// output: same shape as X, any layout; S is 1 x 1
// formula: Y[r, c] = X[r, c] * S[0, 0]
void main() {
    setOutput(X_aligned() * S_at(0, 0));
}
