// Kernels of learned position embeddings (graph/ops/position_embedding.hpp):
// a sequence plus the first rows of a table, one row per step, and the
// table's gradient: each of its first rows the sum over the batch of its
// step's gradient, the rows past the sequence zero.
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

namespace position_detail {
inline std::string shapeOf(const Tensor& t) { return t ? t.shapeString() : std::string("empty"); }
// x (or dy) N x (T*F) with T <= table rows and F = table columns.
inline void requireSteps(const char* fn, const Tensor& x, const Tensor& table) {
    if (!x || !table || table.cols() < 1 || x.cols() % table.cols() != 0 || x.cols() / table.cols() > table.rows())
        throw ArgumentError(std::string(fn) + ": x must be N x (T*F) and the table L x F with T <= L, got x " +
                            shapeOf(x) + ", table " + shapeOf(table));
}
}  // namespace position_detail

// out[r, t*F + f] = x[r, t*F + f] + table[t, f].
inline Pass& recordPositionAdd(PassList& list, const Tensor& x, const Tensor& table, Tensor& out) {
    position_detail::requireSteps("positionAdd", x, table);
    if (!out || out.rows() != x.rows() || out.cols() != x.cols())
        throw ArgumentError("positionAdd: out must be " + x.shapeString() + ", got " + position_detail::shapeOf(out));
    return list.add(Pass(x.context(), "forward/position_add"))
        .input("X", x)
        .input("TABLE", table)
        .output(out)
        .uniformInt("features", table.cols());
}

// grad[t, f] = sum over r of dy[r, t*F + f] (rows in order) for t < T, 0 after.
inline Pass& recordPositionAddGrad(PassList& list, const Tensor& dy, Tensor& grad) {
    position_detail::requireSteps("positionAddGrad", dy, grad);
    return list.add(Pass(dy.context(), "backward/position_add"))
        .input("DY", dy)
        .output(grad)
        .uniformInt("features", grad.cols());
}

}  // namespace gltrain
