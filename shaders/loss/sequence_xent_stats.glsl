// loss/sequence_xent_stats: each step's softmax statistics, computed once for the
// passes that read them (the loss sums and the gradient), not once per element.
// inputs: X
// uniforms: classes (V)
// uses: lib/elements
// output: N x 2T, any layout; X is N x (T*V) logits
// formula: S[r, 2t] = max_v X[r, tV + v], S[r, 2t + 1] = sum_v exp(X[r, tV + v] - S[r, 2t])
uniform int classes;

float elementAt(int r, int c) {
    int base = (c / 2) * classes;
    float m = X_at(r, base);
    for (int j = 1; j < classes; ++j) m = max(m, X_at(r, base + j));
    if (c % 2 == 0) return m;
    float s = 0.0;
    for (int j = 0; j < classes; ++j) s += exp(X_at(r, base + j) - m);
    return s;
}

void main() { setElements(); }
