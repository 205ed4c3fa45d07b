// forward/bias_add: row-broadcast add, Y = X + b.
// inputs: X, BIAS
// uses: lib/bias
// output: same shape as X (N x C), any layout; BIAS is 1 x C
// formula: Y[r, c] = X[r, c] + b[0, c]
void main() {
    setOutput(X_aligned() + biasRow());
}
