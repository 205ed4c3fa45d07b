// util/merge_steps: a sequence whose steps were written alternately into two tensors (a recurrent loop's
// passes, each drawing only its own step's columns) put together: block b of `width` columns comes from
// ODD when b + flip is odd, else from EVEN. A lane is selected, never combined, so what the other tensor
// holds there (never written) does not matter.
// inputs: EVEN, ODD
// uniforms: width, flip
// uses: lib/elements
// output: N x (T*width), the inputs' shape, any layout
// formula: Y[r, c] = ((c / width + flip) odd ? ODD : EVEN)[r, c]
uniform int width;
uniform int flip;

float elementAt(int r, int c) { return ((c / width + flip) & 1) == 1 ? ODD_at(r, c) : EVEN_at(r, c); }

void main() { setElements(); }
