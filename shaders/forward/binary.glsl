// forward/binary: an element-wise binary op, C = OP(A, B).
// inputs: A, B
// defines: OP(a, b) — a vec4 expression, e.g. ((a) + (b)), ((a) * (b)),
//          (alpha * (a) + (b)) with uniform alpha (axpy)
// output: same shape as A and B; any layouts (X_aligned() lines them up)
// formula: C[r, c] = OP(A[r, c], B[r, c])
uniform float alpha;
void main() {
    vec4 a = A_aligned();
    vec4 b = B_aligned();
    setOutput(OP(a, b));
}
