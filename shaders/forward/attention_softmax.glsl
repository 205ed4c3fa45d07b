// forward/attention_softmax: the softmax of each query's scores over the keys:
// groups of `keys` consecutive values, query i = (group index) % queries;
// causal: key j > i is masked (probability exactly 0).
// inputs: X
// uniforms: queries, keys, causal (0 or 1)
// uses: lib/elements
// output: same shape as X, any layout
// formula: Y[r, c] = j > n ? 0 : exp(X[r, c] - m) / sum_{j' <= n} exp(X[r, b + j'] - m), b = c - j, j = c % keys,
//          n = causal ? (c / keys) % queries : keys - 1, m = max_{j' <= n} X[r, b + j']
// Each element sums its own group (O(keys)).
uniform int queries;
uniform int keys;
uniform int causal;

float elementAt(int r, int c) {
    int j = c % keys, base = c - j;
    int last = causal == 1 ? min((c / keys) % queries, keys - 1) : keys - 1;
    if (j > last) return 0.0;
    float m = X_at(r, base);
    for (int k = 1; k <= last; ++k) m = max(m, X_at(r, base + k));
    float s = 0.0;
    for (int k = 0; k <= last; ++k) s += exp(X_at(r, base + k) - m);
    return exp(X_at(r, c) - m) / s;
}

void main() { setElements(); }
