// loss/sequence_xent_grad: d(mean loss)/d(logits) of loss/sequence_xent_sums' mean, times the seed.
// inputs: X, Y, STATS, COUNT, SCALE?
// uniforms: classes (V)
// uses: lib/elements
// output: N x (T*V), any layout; Y is N x T target ids, STATS N x 2T each step's (max, sum of exp)
//         (loss/sequence_xent_stats), COUNT 1 x 1 (the counted steps), SCALE 1 x 1 (the seed; absent: 1)
// formula: G[r, tV + v] = (softmax(X[r, tV ..])[v] - (v == Y[r, t])) * SCALE / COUNT; 0 where Y[r, t] < 0
uniform int classes;

float elementAt(int r, int c) {
    int t = c / classes, v = c - t * classes;
    float label = Y_at(r, t);
    if (label < 0.0) return 0.0;
    float p = exp(X_at(r, c) - STATS_at(r, 2 * t)) / STATS_at(r, 2 * t + 1);
#if SCALE_BOUND
    float seed = SCALE_at(0, 0);
#else
    float seed = 1.0;
#endif
    return (p - (float(v) == label ? 1.0 : 0.0)) * seed / max(COUNT_at(0, 0), 1.0);
}

void main() { setElements(); }
