// loss/sequence_xent_reduce: the rows' losses, the mean over every counted step, or that count.
// inputs: S
// defines: WHAT 0: each row's mean over its counted steps (N x 1, 0 for none); 1: the sum over
//          every row divided by every counted step (1 x 1, 0 for none); 2: that count (1 x 1)
// output: N x 1 or 1 x 1, any layout; S is N x 2 (sum, count) per row (loss/sequence_xent_sums)
void main() {
#if WHAT == 0
    vec4 s = S_texel(0, outTexel().y);
    setOutput(vec4(s.y > 0.0 ? s.x / s.y : 0.0));
#else
    float sum = 0.0, count = 0.0;
    int rows = S_shape().x;
    for (int r = 0; r < rows; ++r) {
        vec4 s = S_texel(0, r);
        sum += s.x;
        count += s.y;
    }
#if WHAT == 1
    setOutput(vec4(count > 0.0 ? sum / count : 0.0));
#else
    setOutput(vec4(count));
#endif
#endif
}
