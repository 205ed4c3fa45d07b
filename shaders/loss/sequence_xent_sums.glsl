// loss/sequence_xent_sums: each row's summed softmax cross-entropy over its steps, and how many steps count.
// inputs: X, Y, STATS
// uniforms: classes (V)
// output: N x 2, packed: (sum, count) in one texel per row; X is N x (T*V) logits, Y N x T target ids,
//         STATS N x 2T each step's (max, sum of exp) (loss/sequence_xent_stats)
// formula: S[r] = (sum over t with Y[r, t] >= 0 of lse(X[r, tV .. tV + V - 1]) - X[r, tV + Y[r, t]], that count)
//          a negative target is masked: it counts for nothing; one not an integer below V gives NaN
uniform int classes;

void main() {
    int r = outTexel().y;
    int steps = Y_shape().y;
    float sum = 0.0, count = 0.0;
    for (int t = 0; t < steps; ++t) {
        float label = Y_at(r, t);
        if (label < 0.0) continue;
        int base = t * classes;
        if (label >= float(classes) || label != floor(label)) {
            sum += uintBitsToFloat(0x7fc00000u);
            count += 1.0;
            continue;
        }
        sum += STATS_at(r, 2 * t) + log(STATS_at(r, 2 * t + 1)) - X_at(r, base + int(label));
        count += 1.0;
    }
    setOutput(vec4(sum, count, 0.0, 0.0));
}
