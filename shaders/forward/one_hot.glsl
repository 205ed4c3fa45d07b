// forward/one_hot: each token id as a row of `classes` values, 1 at the id and 0 elsewhere.
// inputs: IDS
// uniforms: classes (V)
// output: N x (T*V), any layout; IDS is N x T ids as floats
// formula: O[r, tV + v] = IDS[r, t] == v ? 1 : 0 (an id that is not an integer in [0, V): a zero row)
uniform int classes;

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        int step = c / classes;
        v[i] = IDS_at(t.y, step) == float(c - step * classes) ? 1.0 : 0.0;
    }
    setOutput(v);
}
