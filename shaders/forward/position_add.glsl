// forward/position_add: a sequence plus the first rows of a table of learned
// position embeddings, row t at step t.
// inputs: X, TABLE
// uniforms: features (F, the table's columns)
// uses: lib/elements
// output: same shape as X (N x (T*F)), any layout; TABLE is L x F, L >= T
// formula: Y[r, c] = X[r, c] + TABLE[c / F, c % F]
uniform int features;

float elementAt(int r, int c) { return X_at(r, c) + TABLE_at(c / features, c % features); }

void main() { setElements(); }
