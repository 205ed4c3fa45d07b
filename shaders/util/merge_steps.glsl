// util/merge_steps: a sequence whose steps were written alternately into two tensors (a recurrent loop's
// passes, each drawing only its own step's columns) put together: block b of `width` columns comes from
// ODD when b + flip is odd, else from EVEN. A lane is selected, never combined, so what the other tensor
// holds there (never written) does not matter.
// inputs: EVEN, ODD
// uniforms: width, flip
// output: N x (T*width), the inputs' shape, any layout
// formula: Y[r, c] = ((c / width + flip) odd ? ODD : EVEN)[r, c]
uniform int width;
uniform int flip;

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 v = vec4(0.0);
    for (int i = 0; i < lanes; ++i) {
        int c = t.x * lanes + i;
        if (c >= cols) break;
        v[i] = ((c / width + flip) & 1) == 1 ? ODD_at(t.y, c) : EVEN_at(t.y, c);
    }
    setOutput(v);
}
