// The metrics' ops (gltrain/metric_spec.hpp): each row's statistics, and their
// running sum over an epoch — no gradient, read once at the epoch's end.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gltrain/graph/op.hpp"
#include "gltrain/metric_spec.hpp"
#include "gltrain/ops/metric_rows.hpp"
#include "gltrain/ops/reduce.hpp"

namespace gltrain::graph {

namespace metric_detail {
// The first largest value's index (NaN never wins), as the kernel and ref::argmaxRows.
inline int argmax(const float* row, int n) {
    float best = -std::numeric_limits<float>::infinity();
    int arg = 0;
    for (int c = 0; c < n; ++c)
        if (row[c] > best) {
            best = row[c];
            arg = c;
        }
    return arg;
}
}  // namespace metric_detail

// Each row's statistics of a metric (metric_spec.hpp's metricSumsPerRow):
// inputs the predictions [B, ...] and the targets (the same shape; class labels
// [B, 1] for sparse categorical accuracy, [B, steps] per token); output [B, K].
struct MetricRows {
    static constexpr const char* kName = "metric_rows";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    MetricKind kind = MetricKind::BinaryAccuracy;  // one with per-row statistics (ops/metric_rows.hpp)
    float threshold = 0.5f;
    int thresholds = 200;
    int steps = 0;  // sparse categorical accuracy per token: the predictions' steps (MetricSpec::steps)

    MetricSpec spec() const {
        MetricSpec m(kind);
        m.threshold = threshold;
        m.thresholds = thresholds;
        m.steps = steps;
        return m;
    }
    Shapes shapes(const Shapes& in) const {
        if (metricRowsKernel(kind) < 0) throw ShapeError("metric_rows: metric " + metricName(spec()) + " has none");
        const std::string problem = metricProblem(spec());
        if (!problem.empty()) throw ShapeError(problem);
        op_detail::requireBatched("the predictions", in[0]);
        if (steps > 0) {
            if (kind != MetricKind::SparseCategoricalAccuracy)
                throw ShapeError("metric_rows: only sparse categorical accuracy counts per step");
            if (in[0].rank() != 2 || in[0].dims[1] % steps != 0)
                throw ShapeError("the predictions must be [B, steps * classes] for " + std::to_string(steps) +
                                 " steps, got " + in[0].str());
            if (in[1] != Shape{kBatch, steps})
                throw ShapeError("the labels must be [B, " + std::to_string(steps) + "], got " + in[1].str());
        } else if (kind == MetricKind::SparseCategoricalAccuracy) {
            if (in[1] != Shape{kBatch, 1}) throw ShapeError("the labels must be [B, 1], got " + in[1].str());
        } else {
            op_detail::requireSame("the predictions and the targets", in[0], in[1]);
        }
        return {Shape::batched({metricSumsPerRow(spec())})};
    }
    template <class R>
    void gpu(R& r) const {
        recordMetricRows(r.list(), spec(), r.in(0), r.in(1), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &p = c.in(0), &t = c.in(1);
        HostMatrix& out = c.out(0);
        const int C = p.cols, K = out.cols;
        for (int r = 0; r < p.rows; ++r) {
            const float* pr = p.data.data() + size_t(r) * size_t(C);
            const float* tr = t.data.data() + size_t(r) * size_t(t.cols);
            float* o = out.data.data() + size_t(r) * size_t(K);
            if (steps > 0) {  // per token: (steps right, steps counted), a negative id masking its step
                const int V = C / steps;
                o[0] = o[1] = 0;
                for (int s = 0; s < steps; ++s) {
                    if (!(tr[s] >= 0.0f)) continue;
                    o[0] += float(float(metric_detail::argmax(pr + size_t(s) * size_t(V), V)) == tr[s]);
                    o[1] += 1.0f;
                }
                continue;
            }
            switch (kind) {
                case MetricKind::BinaryAccuracy: {
                    float agree = 0;
                    for (int j = 0; j < C; ++j) agree += float((pr[j] > threshold) == (tr[j] > 0.5f));
                    o[0] = agree / float(C);
                    break;
                }
                case MetricKind::CategoricalAccuracy:
                    o[0] = float(metric_detail::argmax(pr, C) == metric_detail::argmax(tr, C));
                    break;
                case MetricKind::SparseCategoricalAccuracy:
                    o[0] = float(float(metric_detail::argmax(pr, C)) == tr[0]);
                    break;
                case MetricKind::Precision:
                case MetricKind::Recall:
                    o[0] = o[1] = 0;
                    for (int j = 0; j < C; ++j) {
                        const bool predicted = pr[j] > threshold, actual = tr[j] > 0.5f;
                        o[0] += float(predicted && actual);
                        o[1] += float(kind == MetricKind::Precision ? predicted : actual);
                    }
                    break;
                default:  // Auc
                    for (int i = 0; i < thresholds; ++i) {
                        const float at = aucThreshold(i, thresholds);
                        float tp = 0, fp = 0;
                        for (int j = 0; j < C; ++j)
                            if (pr[j] > at) (tr[j] > 0.5f ? tp : fp) += 1.0f;
                        o[2 * i] = tp;
                        o[2 * i + 1] = fp;
                    }
            }
        }
    }
    static std::vector<Example<MetricRows>> examples() {
        const Shape odd = Shape::batched({5}), wide = Shape::batched({2, 3});
        return {{{MetricKind::BinaryAccuracy, 0.4f}, {{odd, Fill::Unit}, {odd, Fill::Unit}}},
                {{MetricKind::CategoricalAccuracy}, {{wide}, {wide, Fill::Unit}}},
                {{MetricKind::SparseCategoricalAccuracy}, {{odd}, {Shape{kBatch, 1}, Fill::Labels, 5}}},
                {{MetricKind::SparseCategoricalAccuracy, 0.5f, 200, 3},
                 {{Shape::batched({12})}, {Shape{kBatch, 3}, Fill::MaskedLabels, 4}}},
                {{MetricKind::Precision, 0.55f}, {{odd, Fill::Unit}, {odd, Fill::Unit}}},
                {{MetricKind::Recall}, {{wide, Fill::Unit}, {wide, Fill::Unit}}},
                {{MetricKind::Auc, 0.5f, 7}, {{Shape::batched({3}), Fill::Unit}, {Shape::batched({3}), Fill::Unit}}}};
    }
};

// A running sum over batches: inputs the rows' values [B, K] and the sum so far
// [K]; output the sum so far plus the column sums (an epoch's metric totals).
struct RunningSum {
    static constexpr const char* kName = "running_sum";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        if (!in[0].isBatched() || in[0].rank() != 2)
            throw ShapeError("running_sum's values must be [B, K], got " + in[0].str());
        if (in[1] != Shape{in[0].dims[1]})
            throw ShapeError("running_sum's total must be [" + std::to_string(in[0].dims[1]) + "], got " + in[1].str());
        return {in[1]};
    }
    template <class R>
    void gpu(R& r) const {
        ReduceOptions o;
        o.accumulate = &r.in(1);
        recordReduce(r.list(), r.in(0), ReduceOp::Sum, ReduceAxis::Cols, r.out(0), o);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        for (int j = 0; j < x.cols; ++j) {
            double s = 0;
            for (int r = 0; r < x.rows; ++r) s += x.data[size_t(r) * size_t(x.cols) + size_t(j)];
            c.out(0).data[size_t(j)] = float(double(c.in(1).data[size_t(j)]) + s);
        }
    }
    static std::vector<Example<RunningSum>> examples() {
        return {{{}, {{Shape::batched({1})}, {Shape{1}, Fill::Positive}}}, {{}, {{Shape::batched({6})}, {Shape{6}}}}};
    }
};

}  // namespace gltrain::graph
