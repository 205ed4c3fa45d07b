// A metric as a model is compiled with (Keras's `metrics`): which figure, its
// parameters, the sums each batch adds to the epoch's and how the figure is
// made from them. Declared once here — names, parameters, checks, directions —
// and read by CompileOptions, the model graph (graph/model_graph.hpp), both
// engines, the model files, the CLI and the JavaScript bindings.
//
// Every metric is a running sum over an epoch's (or an evaluation's) rows:
// each row adds a few statistics (a hit; a true positive and a predicted
// positive; per threshold, true and false positives), and the figure is read
// from the totals once, at the epoch's end — exact over the whole epoch,
// however it was batched, and with no read-back per step.
#pragma once
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gltrain/loss_spec.hpp"

namespace gltrain {

enum class MetricKind {
    Accuracy,                   // the accuracy the output's loss implies (as Keras's "accuracy"), resolved at compile
    BinaryAccuracy,             // elements whose (prediction > threshold) matches (target > 0.5)
    CategoricalAccuracy,        // rows whose largest prediction is where the target row is largest
    SparseCategoricalAccuracy,  // rows whose largest prediction is at the class label
    Precision,                  // true positives / predicted positives (prediction > threshold; target > 0.5)
    Recall,                     // true positives / actual positives
    Auc,                        // area under the ROC curve, from `thresholds` thresholds (Keras's AUC)
    Loss                        // a loss's mean (mae, mse, a custom expression...), on the model's output
};
// The names model files, the CLI and the JavaScript API accept for each metric
// (besides every loss name of kLossNames, which names that loss as a metric).
struct MetricName {
    // The name.
    const char* name;
    // The metric it names.
    MetricKind kind;
};
inline constexpr std::array<MetricName, 8> kMetricNames = {{
    {"accuracy", MetricKind::Accuracy},
    {"acc", MetricKind::Accuracy},
    {"binary_accuracy", MetricKind::BinaryAccuracy},
    {"categorical_accuracy", MetricKind::CategoricalAccuracy},
    {"sparse_categorical_accuracy", MetricKind::SparseCategoricalAccuracy},
    {"precision", MetricKind::Precision},
    {"recall", MetricKind::Recall},
    {"auc", MetricKind::Auc},
}};

// A metric of a model's outputs.
struct MetricSpec {
    // Which metric.
    MetricKind kind = MetricKind::Accuracy;
    // BinaryAccuracy, Precision, Recall: a prediction above it counts as positive.
    float threshold = 0.5f;
    // Auc: how many thresholds the curve is sampled at (>= 3), Keras's default 200.
    int thresholds = 200;
    // Loss: the loss whose mean over the rows it reports (a named loss or a custom expression).
    LossSpec loss{};
    // A sequence output's steps (set at compile; 0: none). SparseCategoricalAccuracy and
    // the sequence loss are then per token: over the steps counted (a negative id masks
    // its step, as the sequence loss does), the steps whose largest logit is at their
    // class id, or the mean of the steps' losses.
    int steps = 0;
    // The name history and callbacks know it by (empty: the name it was asked by).
    std::string name;

    // Accuracy (resolved at compile from the output's loss).
    MetricSpec() = default;
    // The metric `k` with its defaults (implicit: a MetricKind is such a metric).
    MetricSpec(MetricKind k) : kind(k) {}  // NOLINT(google-explicit-constructor)
    // A loss's mean as a metric.
    static MetricSpec ofLoss(const LossSpec& l, std::string name) {
        MetricSpec m(MetricKind::Loss);
        m.loss = l;
        m.name = std::move(name);
        return m;
    }
};

// The metric's first name (for Loss: its loss's).
inline std::string metricKindName(const MetricSpec& m) {
    if (m.kind == MetricKind::Loss) return m.loss.kind == LossKind::Custom ? m.loss.customName : lossName(m.loss.kind);
    for (const MetricName& n : kMetricNames)
        if (n.kind == m.kind) return n.name;
    return "?";
}
// The name it is reported by.
inline std::string metricName(const MetricSpec& m) { return m.name.empty() ? metricKindName(m) : m.name; }
// Every metric name, comma-separated (for errors), then "any loss name".
inline std::string metricNameList() {
    std::string s;
    for (const MetricName& n : kMetricNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
    return s + ", or a loss name (" + lossNameList() + ")";
}
// Whether `name` (lower case) names a metric or a loss; then *out is that metric, named so.
inline bool metricByName(const std::string& name, MetricSpec* out) {
    for (const MetricName& n : kMetricNames)
        if (name == n.name) {
            *out = MetricSpec(n.kind);
            out->name = name == "acc" ? "accuracy" : name;
            return true;
        }
    LossSpec l;
    if (!lossByName(name, &l)) return false;
    *out = MetricSpec::ofLoss(l, name);
    return true;
}
// What is wrong with a metric's parameters, naming the field ("" when nothing is).
inline std::string metricProblem(const MetricSpec& m) {
    char value[48];
    const std::string what = "metric " + metricName(m);
    if (!(std::isfinite(m.threshold))) {
        std::snprintf(value, sizeof value, "%g", double(m.threshold));
        return what + ": threshold must be finite, got " + value;
    }
    if (m.kind == MetricKind::Auc && (m.thresholds < 3 || m.thresholds > 10000))
        return what + ": thresholds must be in [3, 10000], got " + std::to_string(m.thresholds);
    if (m.kind == MetricKind::Loss) {
        const std::string p = lossProblem(m.loss);
        if (!p.empty()) return what + ": " + p;
    }
    if (m.name.find_first_of(" \t\n\"") != std::string::npos) return what + ": a name has no spaces or quotes";
    return "";
}
// `m` for an output trained with `loss`, `width` values per row (a sequence
// output: `steps` steps of width / steps classes): Accuracy becomes the
// accuracy that loss implies (as Keras resolves "accuracy": class labels ->
// sparse categorical, binary cross-entropy or one column -> binary, else
// categorical; a class id per step -> sparse categorical per token). Returns
// what does not fit ("" when it does).
inline std::string resolveMetric(MetricSpec& m, const LossSpec& loss, int width, int steps = 1) {
    if (loss.kind == LossKind::SequenceCrossEntropy) {
        if (m.kind == MetricKind::Accuracy || m.kind == MetricKind::SparseCategoricalAccuracy) {
            m.kind = MetricKind::SparseCategoricalAccuracy;
            m.steps = steps;
            return "";
        }
        if (m.kind == MetricKind::Loss && m.loss.kind == LossKind::SequenceCrossEntropy) {
            m.steps = steps;
            return "";
        }
        return "metric " + metricName(m) + ": an output trained with " + lossName(loss.kind) +
               " (a class id per step) has accuracy per token (accuracy, sparse_categorical_accuracy) and " +
               lossName(loss.kind) + " as metrics";
    }
    if (m.kind == MetricKind::Loss && m.loss.kind == LossKind::SequenceCrossEntropy)
        return "metric " + metricName(m) + " compares a class id per step, but the output is trained with " +
               lossName(loss.kind);
    if (m.kind == MetricKind::Accuracy)
        m.kind = loss.labels()                                             ? MetricKind::SparseCategoricalAccuracy
                 : loss.kind == LossKind::BinaryCrossEntropy || width == 1 ? MetricKind::BinaryAccuracy
                                                                           : MetricKind::CategoricalAccuracy;
    const bool wantsLabels =
        m.kind == MetricKind::SparseCategoricalAccuracy || (m.kind == MetricKind::Loss && m.loss.labels());
    if (wantsLabels && !loss.labels())
        return "metric " + metricName(m) + " compares class labels, but the output's targets are values (loss " +
               lossName(loss.kind) + ")";
    if (!wantsLabels && loss.labels())
        return "metric " + metricName(m) +
               " compares values shaped like the output, but the output's targets are class labels (loss " +
               lossName(loss.kind) + ")";
    return "";
}
// Whether a larger value is better (accuracies, precision, recall, AUC) or a
// smaller one (losses), for callbacks that watch it.
inline bool metricHigherIsBetter(const MetricSpec& m) { return m.kind != MetricKind::Loss; }
// Keras's thresholds for AUC: -epsilon, then i / (T - 1) for i in 1..T-2, then 1 + epsilon,
// so the first counts every prediction positive and the last none.
inline float aucThreshold(int i, int count) {
    constexpr float kEpsilon = 1e-7f;
    return i == 0 ? -kEpsilon : i == count - 1 ? 1.0f + kEpsilon : float(double(i) / double(count - 1));
}
// How many sums each row adds: a hit or a value (1); true positives and
// predicted or actual positives (2); per threshold, true and false positives (2T).
inline int metricSumsPerRow(const MetricSpec& m) {
    if (m.steps > 0) return 2;  // tokens right (or their losses' sum), tokens counted
    switch (m.kind) {
        case MetricKind::Precision:
        case MetricKind::Recall: return 2;
        case MetricKind::Auc: return 2 * m.thresholds;
        default: return 1;
    }
}
// The figure from the epoch's sums (metricSumsPerRow of them) over `rows` rows.
// Ratios of no rows are 0, as Keras's divide_no_nan makes them.
inline double metricValue(const MetricSpec& m, const double* sums, long rows) {
    auto ratio = [](double a, double b) { return b == 0.0 ? 0.0 : a / b; };
    if (m.steps > 0) return ratio(sums[0], sums[1]);
    switch (m.kind) {
        case MetricKind::Precision:
        case MetricKind::Recall: return ratio(sums[0], sums[1]);
        case MetricKind::Auc: {
            // sums: (true positives, false positives) per threshold; at the first threshold
            // every prediction is positive, so those are all positives and all negatives.
            // The ROC curve's area by the trapezoid rule (Keras's "interpolation" for ROC).
            const int T = m.thresholds;
            const double P = sums[0], N = sums[1];
            double area = 0;
            for (int i = 0; i + 1 < T; ++i) {
                const double tpr0 = ratio(sums[2 * i], P), tpr1 = ratio(sums[2 * i + 2], P);
                const double fpr0 = ratio(sums[2 * i + 1], N), fpr1 = ratio(sums[2 * i + 3], N);
                area += (fpr0 - fpr1) * (tpr0 + tpr1) / 2.0;
            }
            return area;
        }
        default: return ratio(sums[0], double(rows));
    }
}

}  // namespace gltrain
