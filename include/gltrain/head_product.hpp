// A matrix product per (example, head) whose operands are strided views of
// each example's row: what multi-head attention multiplies (the GPU kernel in
// ops/attention.hpp, the CPU one in cpu/head_matmul.hpp, the graph op in
// graph/ops/attention.hpp). Queries [T, H*dk] are the view {dk, H*dk, 1} (head
// h: columns h*dk ..), their transposes {dk, 1, H*dk}, scores [H, Tq, Tk] the
// view {Tq*Tk, Tk, 1}; so heads are never split apart or put back.
#pragma once
#include <cstdint>

namespace gltrain {

// Element (i, j) of head h of a matrix in a row: at h*head + i*row + j*col.
struct HeadView {
    int head = 0, row = 0, col = 1;
    // The transposed matrices: element (j, i) where this has (i, j).
    HeadView transposed() const { return {head, col, row}; }
    // Where element (i, j) of head h lies.
    int64_t at(int h, int i, int j) const { return int64_t(h) * head + int64_t(i) * row + int64_t(j) * col; }
};

// C[h] = scale * A[h]·B[h] for each head h: A[h] m x k, B[h] k x n, C[h] m x n.
struct HeadProduct {
    int heads = 1, m = 1, n = 1, k = 1;
    HeadView a, b, c;
    float scale = 1.0f;
    // The product that makes A's gradient from (dC, B): dA = scale dC·Bᵀ, written where A was.
    HeadProduct gradA() const { return {heads, m, k, n, c, b.transposed(), a, scale}; }
    // The product that makes B's gradient from (A, dC): dB = scale Aᵀ·dC, written where B was.
    HeadProduct gradB() const { return {heads, k, n, m, a.transposed(), c, b, scale}; }
};

}  // namespace gltrain
