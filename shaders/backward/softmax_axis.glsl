// backward/softmax_axis: the gradient of forward/softmax_axis, from its output.
// inputs: Y, DY
// uniforms: count, stride
// output: same shape as Y, any layout
// formula: dX[r, c] = Y[r, c] (dY[r, c] - sum_j dY[r, b + j stride] Y[r, b + j stride]), b as in the forward
uniform int count;
uniform int stride;

float gradAt(int r, int c) {
    int base = c - ((c / stride) % count) * stride;
    float dot = 0.0;
    for (int j = 0; j < count; ++j) dot += DY_at(r, base + j * stride) * Y_at(r, base + j * stride);
    return Y_at(r, c) * (DY_at(r, c) - dot);
}

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = gradAt(t.y, c);
    }
    setOutput(v);
}
