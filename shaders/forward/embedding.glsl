// forward/embedding: each token's row of the table.
// inputs: IDS, TABLE
// uniforms: dim (D, the table's columns), vocab (V, its rows)
// output: N x (T*D), any layout; IDS is N x T (token ids as floats), TABLE V x D
// formula: Y[r, t*D + d] = TABLE[IDS[r, t], d]; an id that is not an integer in [0, V): 0
uniform int dim;
uniform int vocab;

float lookup(int r, int c) {
    int t = c / dim;
    float id = IDS_at(r, t);
    int row = int(floor(id));
    if (id != float(row) || row < 0 || row >= vocab) return 0.0;
    return TABLE_at(row, c - t * dim);
}

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = lookup(t.y, c);
    }
    setOutput(v);
}
