// reduce/sum_slices: adds the slices of a stacked partial result — S blocks
// of R rows each (e.g. backward/conv2d_filter's per-sample-group sums).
// inputs: X
// output: R x C; X is (S*R) x C, any layouts
// formula: Y[r, c] = sum_{0 <= s < S} X[s*R + r, c]
void main() {
    ivec2 t = outTexel();
    int R = outShape().x, S = X_shape().x / R;
    vec4 acc = vec4(0.0);
#if X_PACKED == OUT_PACKED
    for (int s = 0; s < S; ++s) acc += X_texel(t.x, s * R + t.y);
#else
    for (int s = 0; s < S; ++s) acc.x += X_at(s * R + t.y, t.x);
#endif
    setOutput(acc);
}
