// backward/softmax: the gradient of a row softmax, from its output.
// inputs: Y, DY
// output: same shape as Y, any layout
// formula: dX[r, c] = Y[r, c] (dY[r, c] - sum_j dY[r, j] Y[r, j])
// Each fragment sums its row (O(C)): cheap at the widths of a classifier's
// outputs or an attention row.
void main() {
    int r = outTexel().y, cols = Y_shape().y;
    float dot = 0.0;
    for (int j = 0; j < cols; ++j) dot += DY_at(r, j) * Y_at(r, j);
    setOutput(Y_aligned() * (DY_aligned() - dot));
}
