// Kernels of the Embedding layer (graph/ops/embedding.hpp): the lookup of each
// token's row of a table, and the gradient of the table, a scatter-add that
// each table element gathers in a fixed order (so every run gives the same
// bits, with no atomics or blending). Token ids arrive as floats; an id that
// is not an integer in [0, rows) reads as a zero row, and adds to no row.
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

namespace embedding_detail {
inline std::string shapeOf(const Tensor& t) { return t ? t.shapeString() : std::string("empty"); }
}  // namespace embedding_detail

// out[r, t*D + d] = table[ids[r, t], d]: ids N x T, table V x D, out N x (T*D), any layouts.
inline Pass& recordEmbedding(PassList& list, const Tensor& ids, const Tensor& table, Tensor& out) {
    if (!ids || !table || !out || out.rows() != ids.rows() || int64_t(out.cols()) != int64_t(ids.cols()) * table.cols())
        throw ArgumentError("embedding: ids must be N x T, the table V x D and out N x (T*D), got ids " +
                            embedding_detail::shapeOf(ids) + ", table " + embedding_detail::shapeOf(table) + ", out " +
                            embedding_detail::shapeOf(out));
    return list.add(Pass(ids.context(), "forward/embedding"))
        .input("IDS", ids)
        .input("TABLE", table)
        .output(out)
        .uniformInt("dim", table.cols())
        .uniformInt("vocab", table.rows());
}

// grad[v, d] = sum over (r, t) with ids[r, t] == v of dy[r, t*D + d], summed
// in the order of r then t: ids N x T, dy N x (T*D), grad V x D.
inline Pass& recordEmbeddingGrad(PassList& list, const Tensor& ids, const Tensor& dy, Tensor& grad) {
    if (!ids || !dy || !grad || dy.rows() != ids.rows() || int64_t(dy.cols()) != int64_t(ids.cols()) * grad.cols())
        throw ArgumentError("embeddingGrad: ids must be N x T, dy N x (T*D) and the gradient V x D, got ids " +
                            embedding_detail::shapeOf(ids) + ", dy " + embedding_detail::shapeOf(dy) + ", gradient " +
                            embedding_detail::shapeOf(grad));
    return list.add(Pass(ids.context(), "backward/embedding"))
        .input("IDS", ids)
        .input("DY", dy)
        .output(grad)
        .uniformInt("dim", grad.cols());
}

}  // namespace gltrain
