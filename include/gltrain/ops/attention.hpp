// Kernels of multi-head attention (graph/ops/attention.hpp): the product per
// (row, head) of strided views (shaders/forward/head_matmul.glsl) and the
// softmax of each query's scores with an optional causal mask
// (shaders/forward/attention_softmax.glsl). Each output element sums its own
// dot product or group (O(k), O(keys)): attention's matrices are small.
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/head_product.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

namespace attention_detail {
inline std::string shapeOf(const Tensor& t) { return t ? t.shapeString() : std::string("empty"); }
}  // namespace attention_detail

// out[r] = p's product of the views of a[r] and b[r], for every row r (the
// views' tiling is the graph op's to check: here, the sizes).
inline Pass& recordHeadMatmul(PassList& list, const Tensor& a, const Tensor& b, const HeadProduct& p, Tensor& out) {
    const int64_t aCols = int64_t(p.heads) * p.m * p.k, bCols = int64_t(p.heads) * p.k * p.n,
                  cCols = int64_t(p.heads) * p.m * p.n;
    if (!a || !b || !out || a.cols() != aCols || b.cols() != bCols || out.cols() != cCols || b.rows() != a.rows() ||
        out.rows() != a.rows())
        throw ArgumentError("headMatmul: " + std::to_string(p.heads) + " heads of (" + std::to_string(p.m) + "x" +
                            std::to_string(p.k) + ")·(" + std::to_string(p.k) + "x" + std::to_string(p.n) +
                            ") need a N x " + std::to_string(aCols) + ", b N x " + std::to_string(bCols) +
                            " and out N x " + std::to_string(cCols) + ", got a " + attention_detail::shapeOf(a) +
                            ", b " + attention_detail::shapeOf(b) + ", out " + attention_detail::shapeOf(out));
    return list.add(Pass(a.context(), "forward/head_matmul"))
        .input("A", a)
        .input("B", b)
        .output(out)
        .uniformInt("sizes", p.heads, p.m, p.n, p.k)
        .uniformInt("aView", p.a.head, p.a.row, p.a.col)
        .uniformInt("bView", p.b.head, p.b.row, p.b.col)
        .uniformInt("cView", p.c.head, p.c.row, p.c.col)
        .uniform("scale", p.scale);
}

// Softmax over each group of `keys` scores of x (query i of `queries` in a
// head's block); causal: keys after the query get exactly 0.
inline Pass& recordAttentionSoftmax(PassList& list, const Tensor& x, int queries, int keys, bool causal, Tensor& out) {
    if (!x || !out || queries < 1 || keys < 1 || x.cols() % (int64_t(queries) * keys) != 0 || out.rows() != x.rows() ||
        out.cols() != x.cols())
        throw ArgumentError("attentionSoftmax: x must be N x (k * " + std::to_string(queries) + " * " +
                            std::to_string(keys) + ") and out its shape, got x " + attention_detail::shapeOf(x) +
                            ", out " + attention_detail::shapeOf(out));
    return list.add(Pass(x.context(), "forward/attention_softmax"))
        .input("X", x)
        .output(out)
        .uniformInt("queries", queries)
        .uniformInt("keys", keys)
        .uniformInt("causal", causal ? 1 : 0);
}

}  // namespace gltrain
