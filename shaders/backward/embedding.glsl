// backward/embedding: the table's gradient, a scatter-add each element gathers (for a vocabulary
// too large for ops/embedding.hpp's one-hot product).
// inputs: IDS, DY
// uniforms: dim (D)
// output: V x D, any layout; IDS is N x T (token ids as floats), DY N x (T*D)
// formula: G[v, d] = sum over r, then t, of DY[r, t*D + d] where IDS[r, t] == v
// Each element scans every token (O(N*T)) in one fixed order: the sum has the
// same bits on every run, and no blending or atomics are needed.
uniform int dim;

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    float row = float(t.y);
    ivec2 ids = IDS_shape();
    vec4 sum = vec4(0.0);
    for (int r = 0; r < ids.x; ++r) {
        for (int s = 0; s < ids.y; ++s) {
            if (IDS_at(r, s) != row) continue;
            for (int i = 0; i < lanes; ++i) {
                int c = t.x * lanes + i;
                if (c < cols) sum[i] += DY_at(r, s * dim + c);
            }
        }
    }
    setOutput(sum);
}
