// Losses and the training metric. A loss outputs the loss of each row [B, 1]
// and their mean [1], the value training minimizes; its gradient op takes the
// mean's incoming gradient (the seed: 1, or dynamic loss scaling's scale) and
// writes d(mean)/d(prediction) times it, one kernel with the loss on the GPU
// (ops/loss.hpp). Labels are class indices stored as floats, [B, 1].
#pragma once
#include <vector>

#include "gltrain/cpu/loss.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/loss.hpp"
#include "gltrain/ops/reduce.hpp"

namespace gltrain::graph {

namespace op_detail {
inline void requireLogitsAndLabels(const Shape& logits, const Shape& labels) {
    if (!logits.isBatched() || logits.rank() != 2) throw ShapeError("the logits must be [B, C], got " + logits.str());
    if (labels != Shape{kBatch, 1}) throw ShapeError("the labels must be [B, 1], got " + labels.str());
}
inline void requireSeed(const Shape& s) {
    if (s != Shape{1}) throw ShapeError("the seed (the mean loss's gradient) must be [1], got " + s.str());
}
inline cpu::PointwiseLoss cpuKind(PointwiseLoss k) {
    return k == PointwiseLoss::MeanSquaredError ? cpu::PointwiseLoss::SquaredError
                                                : cpu::PointwiseLoss::BinaryCrossEntropy;
}
inline int labelAt(const HostMatrix& labels, int r) { return int(std::lround(labels.data[size_t(r)])); }
}  // namespace op_detail

// d(mean loss)/d(logits) * seed: inputs logits, labels, seed.
struct SoftmaxCrossEntropyGrad {
    static constexpr const char* kName = "softmax_cross_entropy_grad";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireLogitsAndLabels(in[0], in[1]);
        op_detail::requireSeed(in[2]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordSoftmaxCrossEntropy(r.list(), r.in(0), r.in(1), &r.out(0), nullptr, nullptr, r.seed(2));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &labels = c.in(1);
        HostMatrix& g = c.out(0);
        for (int r = 0; r < x.rows; ++r) {
            const int y = op_detail::labelAt(labels, r);
            cpu::softmaxCrossEntropy(x.data.data() + size_t(r) * size_t(x.cols), &y, 1, x.cols,
                                     g.data.data() + size_t(r) * size_t(x.cols), x.rows);
        }
        const float seed = c.in(2).data[0];
        if (seed != 1.0f)
            for (float& v : g.data) v *= seed;
    }
    static std::vector<Example<SoftmaxCrossEntropyGrad>> examples() {
        return {{{}, {{Shape::batched({7})}, {Shape{kBatch, 1}, Fill::Labels, 7}, {Shape{1}}}}};
    }
};

// inputs logits [B, C], labels [B, 1]; outputs the rows' losses [B, 1], their mean [1].
struct SoftmaxCrossEntropy {
    static constexpr const char* kName = "softmax_cross_entropy";
    static constexpr int kInputs = 2, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0b01, kGradOutputs = 0b10;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireLogitsAndLabels(in[0], in[1]);
        return {Shape{kBatch, 1}, Shape{1}};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(SoftmaxCrossEntropyGrad{}, {g.in(0), g.in(1), g.dOut(1)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordSoftmaxCrossEntropy(r.list(), r.in(0), r.in(1), nullptr,
                                  r.wants(0) ? &r.out(0, Layout::Unpacked) : nullptr, r.wants(1) ? &r.out(1) : nullptr);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &labels = c.in(1);
        double sum = 0;
        for (int r = 0; r < x.rows; ++r) {
            const int y = op_detail::labelAt(labels, r);
            const double l =
                cpu::softmaxCrossEntropy(x.data.data() + size_t(r) * size_t(x.cols), &y, 1, x.cols, nullptr, 1).loss;
            c.out(0).data[size_t(r)] = float(l);
            sum += l;
        }
        c.out(1).data[0] = float(sum / x.rows);
    }
    static std::vector<Example<SoftmaxCrossEntropy>> examples() {
        return {{{}, {{Shape::batched({7})}, {Shape{kBatch, 1}, Fill::Labels, 7}}},
                {{}, {{Shape::batched({2})}, {Shape{kBatch, 1}, Fill::Labels, 2}}}};
    }
};

// d(mean loss)/d(prediction) * seed: inputs prediction, target, seed.
struct PointwiseLossGrad {
    static constexpr const char* kName = "pointwise_loss_grad";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    PointwiseLoss kind = PointwiseLoss::MeanSquaredError;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireSame("the prediction and the target", in[0], in[1]);
        op_detail::requireSeed(in[2]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        if (kind == PointwiseLoss::MeanSquaredError)
            recordMse(r.list(), r.in(0), r.in(1), &r.out(0), nullptr, nullptr, r.seed(2));
        else recordBinaryCrossEntropyWithLogits(r.list(), r.in(0), r.in(1), &r.out(0), nullptr, nullptr, r.seed(2));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        HostMatrix& g = c.out(0);
        cpu::pointwiseLoss(op_detail::cpuKind(kind), x.data.data(), c.in(1).data.data(), x.rows, x.cols, g.data.data(),
                           x.rows);
        const float seed = c.in(2).data[0];
        if (seed != 1.0f)
            for (float& v : g.data) v *= seed;
    }
    static std::vector<Example<PointwiseLossGrad>> examples() {
        return {{{PointwiseLoss::MeanSquaredError}, {{Shape::batched({5})}, {Shape::batched({5})}, {Shape{1}}}},
                {{PointwiseLoss::BinaryCrossEntropyWithLogits},
                 {{Shape::batched({3})}, {Shape::batched({3}), Fill::Unit}, {Shape{1}}}}};
    }
};

// Mean squared error or binary cross-entropy on logits, each row's mean and
// the mean of all: inputs prediction, target (same shape).
struct PointwiseLossOp {
    static constexpr const char* kName = "pointwise_loss";
    static constexpr int kInputs = 2, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0b01, kGradOutputs = 0b10;
    PointwiseLoss kind = PointwiseLoss::MeanSquaredError;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("the prediction", in[0]);
        op_detail::requireSame("the prediction and the target", in[0], in[1]);
        return {Shape{kBatch, 1}, Shape{1}};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(PointwiseLossGrad{kind}, {g.in(0), g.in(1), g.dOut(1)}));
    }
    template <class R>
    void gpu(R& r) const {
        Tensor* rows = r.wants(0) ? &r.out(0, Layout::Unpacked) : nullptr;
        Tensor* mean = r.wants(1) ? &r.out(1) : nullptr;
        if (kind == PointwiseLoss::MeanSquaredError) recordMse(r.list(), r.in(0), r.in(1), nullptr, rows, mean);
        else recordBinaryCrossEntropyWithLogits(r.list(), r.in(0), r.in(1), nullptr, rows, mean);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &t = c.in(1);
        double sum = 0;
        for (int r = 0; r < x.rows; ++r) {
            const size_t at = size_t(r) * size_t(x.cols);
            const double l = cpu::pointwiseLoss(op_detail::cpuKind(kind), x.data.data() + at, t.data.data() + at, 1,
                                                x.cols, nullptr, 1)
                                 .loss;
            c.out(0).data[size_t(r)] = float(l);
            sum += l;
        }
        c.out(1).data[0] = float(sum / x.rows);
    }
    static std::vector<Example<PointwiseLossOp>> examples() {
        return {{{PointwiseLoss::MeanSquaredError}, {{Shape::batched({5})}, {Shape::batched({5})}}},
                {{PointwiseLoss::MeanSquaredError}, {{Shape::batched({2, 3})}, {Shape::batched({2, 3})}}},
                {{PointwiseLoss::BinaryCrossEntropyWithLogits},
                 {{Shape::batched({3})}, {Shape::batched({3}), Fill::Unit}}}};
    }
};

// A running count of the rows whose largest logit is the label's (ties: the
// lowest index): inputs logits, labels, the count so far [1]; output it plus this batch's.
struct CorrectCount {
    static constexpr const char* kName = "correct_count";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireLogitsAndLabels(in[0], in[1]);
        if (in[2] != Shape{1}) throw ShapeError("the running count must be [1], got " + in[2].str());
        return {Shape{1}};
    }
    template <class R>
    void gpu(R& r) const {
        ReduceOptions total;
        total.accumulate = &r.in(2);
        recordCorrectCount(r.list(), r.in(0), r.in(1), r.out(0), total);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &labels = c.in(1);
        int correct = 0;
        for (int r = 0; r < x.rows; ++r) {
            const float* row = x.data.data() + size_t(r) * size_t(x.cols);
            int arg = 0;
            for (int j = 1; j < x.cols; ++j) arg = row[j] > row[arg] ? j : arg;
            correct += arg == op_detail::labelAt(labels, r);
        }
        c.out(0).data[0] = c.in(2).data[0] + float(correct);
    }
    static std::vector<Example<CorrectCount>> examples() {
        return {{{}, {{Shape::batched({6})}, {Shape{kBatch, 1}, Fill::Labels, 6}, {Shape{1}, Fill::Labels, 100}}}};
    }
};

}  // namespace gltrain::graph
