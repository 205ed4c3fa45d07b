// lib/elements: for kernels of one value per output element, any layout: the
// kernel defines `float elementAt(int r, int c)` (the value at row r, column
// c) and its main() calls setElements().
float elementAt(int r, int c);

// Each lane of the output texel: elementAt(row, column), zero past the last column.
void setElements() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int l = 0; l < lanes; ++l) {
        int c = t.x * lanes + l;
        if (c >= cols) break;
        v[l] = elementAt(t.y, c);
    }
    setOutput(v);
}
