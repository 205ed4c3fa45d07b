// forward/head_matmul: a matrix product per (row, head) of strided views of
// the rows (gltrain/head_product.hpp): element (i, j) of head h of a view
// {head, row, col} is column h*head + i*row + j*col of its tensor's row.
// inputs: A, B
// uniforms: sizes (heads, m, n, k), aView, bView, cView (head, row, col strides), scale
// uses: lib/elements
// output: rows x (heads*m*n), any layout; the C view tiles it (a permutation of its axes)
// formula: C[r, c] = scale sum_p A[r, aView.(h, i, p)] B[r, bView.(p, j)], (h, i, j) the place of c in cView
uniform ivec4 sizes;
uniform ivec3 aView;
uniform ivec3 bView;
uniform ivec3 cView;
uniform float scale;

// The coordinate along an axis of `size` elements `stride` apart of column c (any stride where size is 1).
int coord(int c, int stride, int size) { return size == 1 ? 0 : (c / stride) % size; }

float elementAt(int r, int c) {
    int h = coord(c, cView.x, sizes.x), i = coord(c, cView.y, sizes.y), j = coord(c, cView.z, sizes.z);
    int a = h * aView.x + i * aView.y, b = h * bView.x + j * bView.z;
    float s = 0.0;
    for (int p = 0; p < sizes.w; ++p) s += A_at(r, a + p * aView.z) * B_at(r, b + p * bView.y);
    return scale * s;
}

void main() { setElements(); }
