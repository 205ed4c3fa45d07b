// util/gather_rows: a batch of rows picked from a dataset that lives on the GPU.
// inputs: SRC, IDX
// uniforms: offset — the batch's first position in IDX
// output: B x C (C = SRC's columns), any layout; IDX is N x 1 holding row numbers as floats
// formula: OUT[r, c] = SRC[IDX[min(offset + r, N - 1), 0], c] (a training step's chunk of
//          batches may reach past the data at an epoch's end: those rows repeat the last)
// The dataset is uploaded once; an epoch's shuffle is a new IDX (N floats), so
// no step uploads data.
uniform int offset;
void main() {
    ivec2 t = outTexel();
    int src = int(IDX_at(min(offset + t.y, IDX_shape().x - 1), 0) + 0.5);
#if SRC_PACKED == OUT_PACKED
    setOutput(SRC_texel(t.x, src));
#elif OUT_PACKED
    int c = t.x * 4, last = SRC_geom.y - 1;
    setOutput(vec4(SRC_at(src, c), SRC_at(src, min(c + 1, last)), SRC_at(src, min(c + 2, last)),
                   SRC_at(src, min(c + 3, last))));
#else
    setOutput(vec4(SRC_at(src, t.x)));
#endif
}
