// The kernel of the metrics' per-row statistics (graph/ops/metric.hpp's
// MetricRows): shaders/loss/metric_rows.glsl. Their sums over an epoch are
// ops/reduce.hpp's column sums with a running total.
#pragma once
#include <string>

#include "gltrain/metric_spec.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain {

// The kernel's METRIC define for `kind` (-1: no per-row statistics of its own);
// sparse categorical accuracy per token (MetricSpec::steps) is 6.
inline int metricRowsKernel(MetricKind kind, int steps = 0) {
    if (steps > 0) return kind == MetricKind::SparseCategoricalAccuracy ? 6 : -1;
    switch (kind) {
        case MetricKind::BinaryAccuracy: return 0;
        case MetricKind::CategoricalAccuracy: return 1;
        case MetricKind::SparseCategoricalAccuracy: return 2;
        case MetricKind::Precision: return 3;
        case MetricKind::Recall: return 4;
        case MetricKind::Auc: return 5;
        default: return -1;
    }
}

// out (N x metricSumsPerRow(m)) = each row's statistics of metric m for
// predictions p (N x C) against targets t (N x C; N x 1 labels for sparse accuracy;
// N x steps per token, p then N x steps * classes).
inline Pass& recordMetricRows(PassList& list, const MetricSpec& m, const Tensor& p, const Tensor& t, Tensor& out) {
    const int kernel = metricRowsKernel(m.kind, m.steps);
    if (kernel < 0) throw ArgumentError("metricRows: metric " + metricName(m) + " has no per-row statistics");
    const int targetCols = m.steps > 0 ? m.steps : m.kind == MetricKind::SparseCategoricalAccuracy ? 1 : p.cols();
    if (!p || !t || !out || t.rows() != p.rows() || out.rows() != p.rows() || out.cols() != metricSumsPerRow(m) ||
        t.cols() != targetCols || (m.steps > 0 && p.cols() % m.steps != 0))
        throw ArgumentError("metricRows: expected p N x C, t N x C (N x 1 labels; N x steps per token) and out N x " +
                            std::to_string(metricSumsPerRow(m)) + ", got p " + (p ? p.shapeString() : "empty") +
                            ", t " + (t ? t.shapeString() : "empty") + ", out " + (out ? out.shapeString() : "empty"));
    Pass& pass = list.add(Pass(p.context(), "loss/metric_rows", {{"METRIC", std::to_string(kernel)}}));
    pass.input("P", p).input("T", t).output(out);
    pass.uniform("threshold", m.threshold);
    pass.uniformInt("thresholds", m.thresholds);
    pass.uniformInt("steps", m.steps);
    return pass;
}

}  // namespace gltrain
