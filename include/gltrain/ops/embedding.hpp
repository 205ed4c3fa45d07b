// Kernels of the Embedding layer (graph/ops/embedding.hpp): the lookup of each
// token's row of a table, and the gradient of the table, a scatter-add summed
// in a fixed order (so every run gives the same bits, with no atomics or
// blending). Token ids arrive as floats; an id that is not an integer in
// [0, rows) reads as a zero row, and adds to no row.
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/ops/conv.hpp"
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

// Past this many one-hot values (N x T x V) the table's gradient scans the
// tokens instead of multiplying their one-hot rows: 64 MB of them.
constexpr int64_t kEmbeddingOneHotLimit = int64_t(1) << 24;

// grad[v, d] = sum over (r, t) with ids[r, t] == v of dy[r, t*D + d]: ids N x T, dy N x (T*D), grad V x D.
// A small vocabulary's gradient is the product onehot(ids)^T dy, the filter
// gradient of a 1x1 convolution over the T steps (recordConv2DBackwardFilter:
// short blocked fragments, summed in slices in a fixed order): 307 -> 38 ms on
// llvmpipe for 256 x 128 and 32 x 64 tokens. A vocabulary whose one-hot rows
// pass oneHotLimit (a paged table of 70000 rows) scans instead: each table
// element sums its tokens in the order of r then t, with no memory but the
// gradient's.
inline void recordEmbeddingGrad(PassList& list, const Tensor& ids, const Tensor& dy, Tensor& grad,
                                int64_t oneHotLimit = kEmbeddingOneHotLimit) {
    if (!ids || !dy || !grad || dy.rows() != ids.rows() || int64_t(dy.cols()) != int64_t(ids.cols()) * grad.cols())
        throw ArgumentError("embeddingGrad: ids must be N x T, dy N x (T*D) and the gradient V x D, got ids " +
                            embedding_detail::shapeOf(ids) + ", dy " + embedding_detail::shapeOf(dy) + ", gradient " +
                            embedding_detail::shapeOf(grad));
    Context& ctx = ids.context();
    if (int64_t(ids.rows()) * ids.cols() * grad.rows() <= oneHotLimit) {
        Tensor& oneHot = list.temp(ctx, ids.rows(), ids.cols() * grad.rows(), Layout::Packed);
        list.add(Pass(ctx, "forward/one_hot")).input("IDS", ids).output(oneHot).uniformInt("classes", grad.rows());
        Window w;
        w.in = {1, ids.cols(), grad.rows()};
        w.out = {1, ids.cols(), grad.cols()};
        recordConv2DBackwardFilter(list, oneHot, dy, w, grad);
        return;
    }
    list.add(Pass(ctx, "backward/embedding"))
        .input("IDS", ids)
        .input("DY", dy)
        .output(grad)
        .uniformInt("dim", grad.cols());
}

}  // namespace gltrain
