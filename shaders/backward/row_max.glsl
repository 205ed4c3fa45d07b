// backward/row_max: the gradient of each row's max, to the elements equal to it.
// inputs: D, X, Y
// output: same shape as X (N x C), any layout; D (the max's incoming gradient) and Y (the max) are N x 1
// formula: G[r, c] = X[r, c] == Y[r, 0] ? D[r, 0] : 0 (ties: each of them)
void main() {
    int r = outTexel().y;
    setOutput(vec4(equal(X_aligned(), vec4(Y_at(r, 0)))) * D_at(r, 0));
}
