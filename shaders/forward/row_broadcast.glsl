// forward/row_broadcast: each row's one value over the whole row.
// inputs: D
// output: N x C, any layout; D is N x 1
// formula: Y[r, c] = D[r, 0]
void main() {
    setOutput(vec4(D_at(outTexel().y, 0)));
}
