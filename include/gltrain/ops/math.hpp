// Kernels of the math ops that compose losses and metrics (graph/ops/math.hpp):
// a row's value over the whole row, the gradient of a row's max and that of a
// batch mean. The
// element-wise functions run through forward/unary and forward/binary
// (ops/elementwise.hpp); the row sums and the batch mean through ops/reduce.hpp.
#pragma once
#include "gltrain/ops/elementwise.hpp"

namespace gltrain {

// out[r, c] = d[r, 0]: d is N x 1, out N x C (any layouts).
inline Pass& recordRowBroadcast(PassList& list, const Tensor& d, Tensor& out) {
    if (!d || d.cols() != 1 || !out || out.rows() != d.rows())
        throw ArgumentError("rowBroadcast: d must be N x 1 and out N x C, got d " +
                            (d ? d.shapeString() : std::string("empty")) + ", out " +
                            (out ? out.shapeString() : std::string("empty")));
    return list.add(Pass(d.context(), "forward/row_broadcast")).input("D", d).output(out);
}

// out[r, 0] = seed[0, 0] / N for the N rows of out: the gradient of their mean.
inline Pass& recordBatchMeanGrad(PassList& list, const Tensor& seed, Tensor& out) {
    if (!seed || seed.rows() != 1 || seed.cols() != 1 || !out || out.cols() != 1)
        throw ArgumentError("batchMeanGrad: the seed must be 1 x 1 and out N x 1, got seed " +
                            (seed ? seed.shapeString() : std::string("empty")) + ", out " +
                            (out ? out.shapeString() : std::string("empty")));
    Pass& p = list.add(Pass(seed.context(), "loss/batch_mean_grad")).input("S", seed).output(out);
    p.uniform("invCount", float(1.0 / double(out.rows())));
    return p;
}

// g[r, c] = d[r, 0] where x[r, c] == y[r, 0] (y: the rows' max), else 0: the max's gradient.
inline Pass& recordRowMaxGrad(PassList& list, const Tensor& d, const Tensor& x, const Tensor& y, Tensor& g) {
    if (!d || !x || !y || !g || d.cols() != 1 || y.cols() != 1 || d.rows() != x.rows() || y.rows() != x.rows() ||
        g.rows() != x.rows() || g.cols() != x.cols())
        throw ArgumentError("rowMaxGrad: d and y must be N x 1 and g shaped like x (N x C)");
    return list.add(Pass(x.context(), "backward/row_max")).input("D", d).input("X", x).input("Y", y).output(g);
}

}  // namespace gltrain
