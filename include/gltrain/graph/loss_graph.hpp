// The loss of one model output as graph nodes: the rows' losses and their
// mean (what training minimizes). The model graph (graph/model_graph.hpp)
// calls it once per output. Today's losses
// (softmax cross-entropy, mse, binary cross-entropy on logits) are the fused
// ops of graph/ops/loss.hpp, one kernel with their gradient; the others are
// composed of the math ops (graph/ops/math.hpp), autodiff giving their
// gradients, as Keras 3 writes them (its epsilon 1e-7 included).
#pragma once
#include <string>

#include "gltrain/graph/graph.hpp"
#include "gltrain/graph/op_table.hpp"
#include "gltrain/loss_spec.hpp"

namespace gltrain::graph {

// What addLoss adds: values of the graph.
struct LossNodes {
    // Each row's loss [B, 1] and their mean [1].
    ValueId rows = kNoValue, mean = kNoValue;
};

// The shape of the target the loss compares `prediction` with: class indices
// [B, 1], or values shaped like the prediction.
inline Shape lossTargetShape(const LossSpec& loss, const Shape& prediction) {
    return loss.labels() ? Shape{kBatch, 1} : prediction;
}

namespace loss_detail {
// Keras's fuzz factor: probabilities are clipped to [kEpsilon, 1 - kEpsilon] before a log.
constexpr float kEpsilon = 1e-7f;

// Nodes of one loss, each named `name`.
struct Nodes {
    Graph& g;
    std::string name;
    ValueId fn(MathFn f, ValueId x, float a = 0.0f, float b = 0.0f) { return g.add1(Unary{f, a, b}, {x}, name); }
    ValueId sub(ValueId a, ValueId b) { return g.add1(Sub{}, {a, b}, name); }
    ValueId add(ValueId a, ValueId b) { return g.add1(Add{}, {a, b}, name); }
    ValueId mul(ValueId a, ValueId b) { return g.add1(Mul{}, {a, b}, name); }
    ValueId scale(ValueId x, float s) { return g.add1(Scale{s}, {x}, name); }
    ValueId rowSum(ValueId x) { return g.add1(RowSum{}, {x}, name); }
    ValueId rowMean(ValueId x) { return scale(rowSum(x), float(1.0 / double(g.shape(x).cols()))); }
    ValueId rowMax(ValueId x) { return g.add1(RowMax{}, {x}, name); }
    // [B, 1] over the rows of x's shape.
    ValueId broadcast(ValueId rows, ValueId like) { return g.add1(RowBroadcast{g.shape(like)}, {rows}, name); }
    // log softmax(z) of each row, shifted by the row's max so exp cannot overflow.
    ValueId logSoftmax(ValueId z) {
        const ValueId shifted = sub(z, broadcast(rowMax(z), z));
        return sub(shifted, broadcast(fn(MathFn::Log, rowSum(fn(MathFn::Exp, shifted))), z));
    }
    // t (1 - s) + s / k: label smoothing over k classes.
    ValueId smoothed(ValueId t, float s, int64_t k) {
        return s == 0.0f ? t : fn(MathFn::Affine, t, 1.0f - s, float(double(s) / double(k)));
    }
};
}  // namespace loss_detail

// Adds the nodes of `loss` on the prediction (rows [B, C]: the logits before a
// final Softmax where loss.readsLogits(), else the model's output) against the
// target (lossTargetShape); `name` names the nodes.
inline LossNodes addLoss(Graph& g, const LossSpec& loss, ValueId prediction, ValueId target,
                         const std::string& name = "loss") {
    using loss_detail::kEpsilon;
    LossNodes n;
    loss_detail::Nodes b{g, name};
    const int64_t classes = g.shape(prediction).cols();
    const float s = loss.labelSmoothing;
    auto fused = [&](std::vector<ValueId> out) {
        n.rows = out[0];
        n.mean = out[1];
    };
    switch (loss.kind) {
        case LossKind::SoftmaxCrossEntropy:
            fused(g.add(SoftmaxCrossEntropy{}, {prediction, target}, name));
            if (s != 0.0f) {  // (1 - s) CE(label) + s mean_j(-log softmax_j): the smoothed one-hot's loss
                const ValueId uniform = b.scale(b.rowMean(b.logSoftmax(prediction)), -s);
                n.rows = b.add(b.scale(n.rows, 1.0f - s), uniform);
                n.mean = b.add(b.scale(n.mean, 1.0f - s), g.add1(BatchMean{}, {uniform}, name));
            }
            return n;
        case LossKind::MeanSquaredError:
            fused(g.add(PointwiseLossOp{PointwiseLoss::MeanSquaredError}, {prediction, target}, name));
            return n;
        case LossKind::SequenceCrossEntropy:  // its mean is over the counted steps, not the rows' mean
            fused(g.add(SequenceCrossEntropy{}, {prediction, target}, name));
            return n;
        case LossKind::BinaryCrossEntropy:
            if (loss.fromLogits) {
                fused(g.add(PointwiseLossOp{PointwiseLoss::BinaryCrossEntropyWithLogits},
                            {prediction, b.smoothed(target, s, 2)}, name));
                return n;
            } else {  // -(t log p + (1 - t) log(1 - p)), p clipped
                const ValueId t = b.smoothed(target, s, 2);
                const ValueId p = b.fn(MathFn::Clip, prediction, kEpsilon, 1.0f - kEpsilon);
                const ValueId e = b.add(b.mul(t, b.fn(MathFn::Log, p)),
                                        b.mul(b.fn(MathFn::Affine, t, -1.0f, 1.0f),
                                              b.fn(MathFn::Log, b.fn(MathFn::Affine, p, -1.0f, 1.0f))));
                n.rows = b.scale(b.rowSum(e), float(-1.0 / double(classes)));
            }
            break;
        case LossKind::CategoricalCrossEntropy:  // -sum t log softmax(z)
            n.rows = b.scale(b.rowSum(b.mul(b.smoothed(target, s, classes), b.logSoftmax(prediction))), -1.0f);
            break;
        case LossKind::MeanAbsoluteError: n.rows = b.rowMean(b.fn(MathFn::Abs, b.sub(prediction, target))); break;
        case LossKind::Huber: n.rows = b.rowMean(b.fn(MathFn::Huber, b.sub(prediction, target), loss.delta)); break;
        case LossKind::KlDivergence: {  // sum t log(t / p), both clipped to [eps, 1]
            const ValueId t = b.fn(MathFn::Clip, target, kEpsilon, 1.0f);
            const ValueId p = b.fn(MathFn::Clip, prediction, kEpsilon, 1.0f);
            n.rows = b.rowSum(b.mul(t, b.sub(b.fn(MathFn::Log, t), b.fn(MathFn::Log, p))));
            break;
        }
        case LossKind::CategoricalHinge: {  // max(0, 1 + max((1 - t) p) - sum t p)
            const ValueId neg = b.rowMax(b.mul(b.fn(MathFn::Affine, target, -1.0f, 1.0f), prediction));
            const ValueId pos = b.rowSum(b.mul(target, prediction));
            n.rows = b.fn(MathFn::Relu, b.fn(MathFn::Affine, b.sub(neg, pos), 1.0f, 1.0f));
            break;
        }
        case LossKind::Custom: {
            if (!loss.custom) throw ArgumentError("loss " + loss.customName + ": no function builds it (custom)");
            n.rows = ValueId(loss.custom(g, prediction, target));
            if (n.rows < 0 || n.rows >= g.values() || g.shape(n.rows) != Shape{kBatch, 1})
                throw ArgumentError("loss " + loss.customName + " must give one loss per row, [B, 1], but gives " +
                                    (n.rows < 0 || n.rows >= g.values() ? std::string("no value of the graph")
                                                                        : g.shape(n.rows).str()) +
                                    " (reduce each row: its mean or sum over the last axis)");
            break;
        }
    }
    n.mean = g.add1(BatchMean{}, {n.rows}, name);
    return n;
}

// Builds `loss` on a bare prediction of `width` columns and drops it: a
// custom loss's errors (not one value per row, a bad op) come at compile.
inline void checkLoss(const LossSpec& loss, int64_t width) {
    Graph g;
    const ValueId prediction = g.input("prediction", Shape::batched({width}));
    addLoss(g, loss, prediction, g.input("target", lossTargetShape(loss, g.shape(prediction))));
}

}  // namespace gltrain::graph
