// reduce/sum_slices: adds the slices of a stacked partial result — S blocks
// of R rows each (e.g. backward/conv2d_filter's per-sample-group sums) — in
// groups of G: output block j is the sum of input blocks [j*G, j*G + G).
// With G = S it is the whole sum; a long sum takes two passes (a first one
// with G about sqrt(S)), so no fragment reads more than a few dozen slices
// one after another (a GPU runs only R*C of them at once).
// inputs: X
// uniforms: sliceRows (R), group (G)
// output: ceil(S/G)*R x C; X is (S*R) x C, any layouts
// formula: Y[j*R + r, c] = sum_{j*G <= s < min(S, j*G + G)} X[s*R + r, c]
uniform int sliceRows, group;

void main() {
    ivec2 t = outTexel();
    int S = X_shape().x / sliceRows, j = t.y / sliceRows, r = t.y - j * sliceRows;
    int s0 = j * group, s1 = min(S, s0 + group);
    vec4 acc = vec4(0.0);
#if X_PACKED == OUT_PACKED
    for (int s = s0; s < s1; ++s) acc += X_texel(t.x, s * sliceRows + r);
#else
    for (int s = s0; s < s1; ++s) acc.x += X_at(s * sliceRows + r, t.x);
#endif
    setOutput(acc);
}
