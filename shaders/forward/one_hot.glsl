// forward/one_hot: each token id as a row of `classes` values, 1 at the id and 0 elsewhere.
// inputs: IDS
// uniforms: classes (V)
// uses: lib/elements
// output: N x (T*V), any layout; IDS is N x T ids as floats
// formula: O[r, tV + v] = IDS[r, t] == v ? 1 : 0 (an id that is not an integer in [0, V): a zero row)
uniform int classes;

float elementAt(int r, int c) {
    int step = c / classes;
    return IDS_at(r, step) == float(c - step * classes) ? 1.0 : 0.0;
}

void main() { setElements(); }
