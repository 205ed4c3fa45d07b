// Softmax cross-entropy at every step of a sequence: logits [B, T*V] (a
// sequence [B, 1, T, V] as rows: V classes per step), target ids [B, T]
// (floats holding integers). A negative target masks its step: it adds
// nothing to the loss or the gradient (padding, or a prompt not to learn).
// The mean training minimizes is over the counted steps of the whole batch —
// nats per token, what a language model reports; each row's loss is the mean
// over its own counted steps (0 with none). A target that is not an integer
// below V makes the loss NaN, which the step's NaN guard reports.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gltrain/cpu/fast_math.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/sequence_loss.hpp"

namespace gltrain::graph {

namespace op_detail {
// V, the classes per step, from logits [B, T*V] and targets [B, T].
inline int sequenceClasses(const Shape& logits, const Shape& targets) {
    if (!targets.isBatched() || targets.rank() != 2)
        throw ShapeError("the targets must be [B, steps], got " + targets.str());
    if (!logits.isBatched() || logits.rank() != 2 || logits.cols() % targets.cols() != 0 ||
        logits.cols() / targets.cols() < 2)
        throw ShapeError("the logits must be [B, steps * classes] with at least 2 classes for the targets " +
                         targets.str() + ", got " + logits.str());
    return int(logits.cols() / targets.cols());
}
// Each step's loss of row r (logits x, V classes per step) added to sum where its target counts; the count.
inline int sequenceRowLoss(const float* x, const float* targets, int steps, int V, double& sum) {
    int count = 0;
    for (int t = 0; t < steps; ++t) {
        const float label = targets[t];
        if (label < 0.0f) continue;
        ++count;
        if (!(label < float(V) && label == std::floor(label))) {
            sum = std::numeric_limits<double>::quiet_NaN();
            continue;
        }
        const float* z = x + size_t(t) * size_t(V);
        const float m = *std::max_element(z, z + V);
        sum += double(m) + std::log(cpu::sumExp(z, size_t(V), m)) - double(z[int(label)]);
    }
    return count;
}
}  // namespace op_detail

// d(mean loss)/d(logits) * seed: inputs logits [B, T*V], targets [B, T], seed [1].
struct SequenceCrossEntropyGrad {
    static constexpr const char* kName = "sequence_cross_entropy_grad";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        op_detail::sequenceClasses(in[0], in[1]);
        if (in[2] != Shape{1}) throw ShapeError("the seed (the mean loss's gradient) must be [1], got " + in[2].str());
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordSequenceCrossEntropyGrad(r.list(), r.in(0), r.in(1), r.in(0).cols() / r.in(1).cols(), r.seed(2),
                                       r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &y = c.in(1);
        HostMatrix& g = c.out(0);
        const int T = y.cols, V = x.cols / T;
        long count = 0;
        for (float label : y.data) count += label >= 0.0f;
        const double scale = double(c.in(2).data[0]) / double(std::max(count, 1L));
        for (int r = 0; r < x.rows; ++r)
            for (int t = 0; t < T; ++t) {
                const float label = y.data[size_t(r) * size_t(T) + size_t(t)];
                const float* z = x.data.data() + size_t(r) * size_t(x.cols) + size_t(t) * size_t(V);
                float* d = g.data.data() + size_t(r) * size_t(x.cols) + size_t(t) * size_t(V);
                if (label < 0.0f) {
                    std::fill_n(d, V, 0.0f);
                    continue;
                }
                const float m = *std::max_element(z, z + V);
                cpu::mapLanes(d, z, size_t(V), [m](auto v) { return cpu::expApprox(v - m); });
                double s = 0;
                for (int j = 0; j < V; ++j) s += d[j];
                for (int j = 0; j < V; ++j) d[j] = float((d[j] / s - (float(j) == label ? 1.0 : 0.0)) * scale);
            }
    }
    static std::vector<Example<SequenceCrossEntropyGrad>> examples() {
        return {{{}, {{Shape::batched({15})}, {Shape::batched({3}), Fill::MaskedLabels, 5}, {Shape{1}}}}};
    }
};

// inputs logits [B, T*V], targets [B, T]; outputs each row's loss [B, 1] and the mean over counted steps [1].
struct SequenceCrossEntropy {
    static constexpr const char* kName = "sequence_cross_entropy";
    static constexpr int kInputs = 2, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0b01, kGradOutputs = 0b10;
    Shapes shapes(const Shapes& in) const {
        op_detail::sequenceClasses(in[0], in[1]);
        return {Shape{kBatch, 1}, Shape{1}};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(SequenceCrossEntropyGrad{}, {g.in(0), g.in(1), g.dOut(1)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordSequenceCrossEntropy(r.list(), r.in(0), r.in(1), r.in(0).cols() / r.in(1).cols(),
                                   r.wants(0) ? &r.out(0, Layout::Unpacked) : nullptr,
                                   r.wants(1) ? &r.out(1) : nullptr);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &y = c.in(1);
        const int T = y.cols, V = x.cols / T;
        double total = 0;
        long count = 0;
        for (int r = 0; r < x.rows; ++r) {
            double sum = 0;
            const int n = op_detail::sequenceRowLoss(x.data.data() + size_t(r) * size_t(x.cols),
                                                     y.data.data() + size_t(r) * size_t(T), T, V, sum);
            c.out(0).data[size_t(r)] = n ? float(sum / n) : 0.0f;
            total += sum;
            count += n;
        }
        c.out(1).data[0] = count ? float(total / double(count)) : 0.0f;
    }
    // 3 steps of 5 classes, some masked; 4 steps of 2 classes.
    static std::vector<Example<SequenceCrossEntropy>> examples() {
        return {{{}, {{Shape::batched({15})}, {Shape::batched({3}), Fill::MaskedLabels, 5}}},
                {{}, {{Shape::batched({8})}, {Shape::batched({4}), Fill::Labels, 2}}}};
    }
};

}  // namespace gltrain::graph
