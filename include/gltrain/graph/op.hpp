// What every op of the graph declares (one struct per op, in one header per
// op family under graph/ops/, listed once in graph/op_table.hpp):
//
//   static constexpr const char* kName;      for errors and printing
//   static constexpr int kInputs, kOutputs;
//   static constexpr unsigned kGradInputs;   inputs it gives gradients for (bit i = input i)
//   static constexpr unsigned kGradOutputs;  outputs a gradient may flow back from; 0: not
//                                            differentiable (backward kernels, metrics, masks)
//   Shapes shapes(const Shapes& in) const;   output shapes, or ShapeError
//   template <class G> void grad(G&) const;  (differentiable ops) adds the nodes that make
//                                            the input gradients (graph/autodiff.hpp)
//   template <class R> void gpu(R&) const;   records its passes (graph/gpu_plan.hpp)
//   template <class Ctx> void cpu(Ctx&) const; computes it with gltrain/cpu kernels (graph/cpu_plan.hpp)
//   static std::vector<Example<Op>> examples();  odd shapes the op table's tests run it on
//
// Its oracle, in double, is `ref::run(op, inputs)` in gltrain/reference/graph_ops.hpp
// (production code never includes the oracle). Attributes are plain fields.
#pragma once
#include <string>
#include <vector>

#include "gltrain/graph/shape.hpp"

namespace gltrain::graph {

using Shapes = std::vector<Shape>;

// How a test fills an op's input: normal values, class labels (in [0, classes)),
// values in [0, 1] (binary targets), positive values (variances), or class
// labels where -1 (a masked step of a sequence loss) is as likely as each class.
enum class Fill { Normal, Labels, Unit, Positive, MaskedLabels };
struct InputSpec {
    Shape shape;
    Fill fill = Fill::Normal;
    int classes = 0;  // Fill::Labels
};
template <class Op>
struct Example {
    Op op;
    std::vector<InputSpec> inputs;
};

namespace op_detail {
inline std::string dimStr(int64_t d) { return d == kBatch ? std::string("B") : std::to_string(d); }
inline void requireSame(const char* what, const Shape& a, const Shape& b) {
    if (a != b) throw ShapeError(std::string(what) + ": " + a.str() + " and " + b.str() + " differ");
}
inline void requireBatched(const char* what, const Shape& s) {
    if (!s.isBatched()) throw ShapeError(std::string(what) + " must have a batch dimension, got " + s.str());
}
// A [B, ..., C] value and a [C] vector over its last dimension (channels).
inline void requireChannelVector(const char* what, const Shape& x, const Shape& v) {
    if (v.rank() != 1 || v.dims[0] != x.last())
        throw ShapeError(std::string(what) + " must be [" + std::to_string(x.last()) + "] (the last dimension of " +
                         x.str() + "), got " + v.str());
}
}  // namespace op_detail

}  // namespace gltrain::graph
