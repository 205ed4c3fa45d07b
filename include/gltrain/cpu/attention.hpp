// Multi-head attention on the CPU (graph/ops/attention.hpp): the products per
// (example, head) of strided views of rows (head_product.hpp) through the
// blocked matmul's driver (cpu/matmul.hpp), and the softmax of each query's
// scores with an optional causal mask.
//
// Threads: a batch's products are many and small (a head's 64 x 64 x 32), too
// small to split, so each runs whole on one thread and the pool's threads take
// contiguous runs of them; every element is summed by one thread in one order,
// so the result does not depend on the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/head_product.hpp"

namespace gltrain::cpu {

namespace attention_detail {
// A packer (cpu::gemm's contract) of the matrix whose element (i, k) is
// data[i * row + k * col], times `scale`: op(A) as given, or op(B) as its
// transpose (B's columns are the rows it packs).
struct ViewPacker {
    const float* data;
    int row, col;
    float scale;
    // Rows [i0, i0 + rows) x k [k0, k0 + kc) as dst[k * MR + r], zero past `rows`.
    void operator()(float* dst, int i0, int rows, int k0, int kc, int MR) const {
        for (int k = 0; k < kc; ++k) {
            float* d = dst + size_t(k) * size_t(MR);
            const float* src = data + std::ptrdiff_t(k0 + k) * col + std::ptrdiff_t(i0) * row;
            if (row == 1 && scale == 1.0f) {
                std::memcpy(d, src, sizeof(float) * size_t(rows));
            } else {
                for (int r = 0; r < rows; ++r) d[r] = scale * src[std::ptrdiff_t(r) * row];
            }
            for (int r = rows; r < MR; ++r) d[r] = 0.0f;
        }
    }
};
}  // namespace attention_detail

// C = p's products for each of `rows` rows: A, B and C row-major with aCols,
// bCols and cCols values a row, each matrix a view of its row. A C view whose
// columns are not adjacent is made by the transposed product (Cᵀ = Bᵀ·Aᵀ),
// or, for views of neither kind, in scratch and scattered (on one thread).
inline void headMatmul(int rows, const HeadProduct& p, const float* A, int aCols, const float* B, int bCols, float* C,
                       int cCols, Workspace& ws) {
    using attention_detail::ViewPacker;
    const bool swap = !(p.n == 1 || p.c.col == 1) && (p.m == 1 || p.c.row == 1);
    const int M = swap ? p.n : p.m, N = swap ? p.m : p.n;
    const float *X = swap ? B : A, *Y = swap ? A : B;
    const int xCols = swap ? bCols : aCols, yCols = swap ? aCols : bCols;
    const HeadView xv = swap ? p.b.transposed() : p.a, yv = swap ? p.a.transposed() : p.b,
                   cv = swap ? p.c.transposed() : p.c;
    const bool direct = N == 1 || cv.col == 1;
    const int ldc = !direct || M == 1 ? N : cv.row;
    const int count = rows * p.heads;
    int parts = ws.pool && direct ? std::min(ws.pool->size(), count) : 1;
    if (double(count) * M * N * p.k < ws.parallelMinWork) parts = 1;
    if (ws.panels.size() < size_t(parts)) ws.panels.resize(size_t(parts));
    if (!direct && ws.c.size() < size_t(M) * size_t(N)) ws.c.resize(size_t(M) * size_t(N));
    auto part = [&](int t) {
        for (int at = int(int64_t(count) * t / parts), end = int(int64_t(count) * (t + 1) / parts); at < end; ++at) {
            const int r = at / p.heads, h = at % p.heads;
            const ViewPacker packA{X + size_t(r) * size_t(xCols) + size_t(h) * size_t(xv.head), xv.row, xv.col,
                                   p.scale};
            const ViewPacker packB{Y + size_t(r) * size_t(yCols) + size_t(h) * size_t(yv.head), yv.col, yv.row, 1.0f};
            float* out = C + size_t(r) * size_t(cCols);
            gemmSerial(M, N, p.k, packA, packB, direct ? out + size_t(h) * size_t(cv.head) : ws.c.data(), ldc,
                       Epilogue{}, ws.wide, ws.panels[size_t(t)]);
            if (!direct)
                for (int i = 0; i < M; ++i)
                    for (int j = 0; j < N; ++j) out[cv.at(h, i, j)] = ws.c[size_t(i) * size_t(N) + size_t(j)];
        }
    };
    if (parts == 1) return part(0);
    ws.pool->run([&](int t) {
        if (t < parts) part(t);
    });
}

// y = the softmax of each group of `keys` values of x (n values; query i =
// group index % queries); causal: keys after the query get exactly 0.
inline void attentionSoftmax(const float* x, size_t n, int queries, int keys, bool causal, float* y) {
    for (size_t base = 0, g = 0; base < n; base += size_t(keys), ++g) {
        const int last = causal ? std::min(int(g % size_t(queries)), keys - 1) : keys - 1;
        const float* xg = x + base;
        float* yg = y + base;
        float m = xg[0];
        for (int j = 1; j <= last; ++j) m = std::max(m, xg[j]);
        float s = 0.0f;
        for (int j = 0; j <= last; ++j) s += yg[j] = std::exp(xg[j] - m);
        for (int j = 0; j <= last; ++j) yg[j] /= s;
        for (int j = last + 1; j < keys; ++j) yg[j] = 0.0f;
    }
}

}  // namespace gltrain::cpu
