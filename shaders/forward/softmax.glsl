// forward/softmax: row-wise softmax from the row statistics (forward/softmax_stats).
// inputs: X, STATS
// output: same shape as X, any layout
// formula: Y[r, c] = exp(X[r, c] - m_r) / s_r, (m_r, s_r) = STATS[r, 0..1]
// Max-subtracted: no overflow for logits of any finite magnitude; a row with
// NaN or +inf is NaN throughout (STATS holds NaN there).
void main() {
    int r = outTexel().y;
    float m = STATS_at(r, 0), s = STATS_at(r, 1);
    setOutput(exp(X_aligned() - m) / s);
}
