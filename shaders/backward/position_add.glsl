// backward/position_add: the table's gradient of forward/position_add: each
// of its first T rows the sum over the batch of its step's gradient (rows in
// order), the rows past the sequence zero.
// inputs: DY
// uniforms: features (F)
// output: L x F, any layout; DY is N x (T*F), T <= L
// formula: G[t, f] = t < T ? sum_r DY[r, t*F + f] : 0, T = DY's columns / F
uniform int features;

void main() {
    ivec2 t = outTexel();
    ivec2 dy = DY_shape();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int l = 0; l < lanes; ++l) {
        int f = t.x * lanes + l, c = t.y * features + f;
        if (f >= cols || c >= dy.y) break;
        float s = 0.0;
        for (int r = 0; r < dy.x; ++r) s += DY_at(r, c);
        v[l] = s;
    }
    setOutput(v);
}
