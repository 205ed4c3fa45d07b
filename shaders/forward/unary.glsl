// forward/unary: an element-wise unary op, Y = OP(X).
// inputs: X
// defines: OP(x) — a vec4 expression of x and the uniforms alpha, beta,
//          e.g. (alpha * (x)) for scale
// output: same shape as X, any layout
// formula: Y[r, c] = OP(X[r, c])
uniform float alpha;
uniform float beta;
void main() {
    vec4 x = X_aligned();
    setOutput(OP(x));
}
