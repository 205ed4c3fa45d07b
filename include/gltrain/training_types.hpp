// The plain data a model takes and gives back — compile and fit options,
// targets, per-step and per-epoch reports, evaluations — and the order in
// which an epoch visits the training rows. Shared by the model
// (model/model.hpp), its fit loop and both engines (engine/).
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/loss_spec.hpp"
#include "gltrain/metric_spec.hpp"
#include "gltrain/ops/loss_scale.hpp"
#include "gltrain/optimizer_config.hpp"
#include "gltrain/random.hpp"
#include "gltrain/schedule.hpp"

namespace gltrain {

enum class NanPolicy {
    Stop,   // throw TrainingError naming the step; the last good weights are kept: those that gave
            // the last finite loss (the step that made weights giving a NaN loss is undone too)
    Skip,   // skip the updates of bad steps and go on
    Ignore  // apply them anyway
};

struct TrainingError : Error {
    using Error::Error;
};

// What compile() is given: loss, optimizer, schedule, clipping, seed, NaN policy and the engine's choices.
struct CompileOptions {
    // The loss and its parameters (of every output, unless `losses` says otherwise; a LossKind
    // converts: the loss with its defaults).
    LossSpec loss{};
    // A model of several outputs: each output's loss, in the model's output order (empty: `loss` for each).
    std::vector<LossSpec> losses;
    // A model of several outputs: each output's weight in the loss training minimizes (empty: 1 each).
    std::vector<float> lossWeights;
    // Figures reported each epoch and by evaluate (Keras's metrics), of every output, by name in
    // history (several outputs: "<output layer>_<name>"). Softmax cross-entropy's accuracy is
    // reported without asking, as "accuracy".
    std::vector<MetricSpec> metrics;
    OptimizerConfig optimizer{};  // Adam 1e-3
    Schedule schedule{};          // constant
    float clipNorm = 0.0f;        // > 0: clip gradients by their global L2 norm
    uint32_t seed = 1;            // initialisers, shuffling, dropout
    // What a non-finite loss does: stop, skip the step, or ignore it.
    NanPolicy onNaN = NanPolicy::Stop;
    LossScaling lossScaling{};  // dynamic loss scaling: by default on for the half-float backend only
    // Small dense models (ops/mlp.hpp, docs/performance.md "Small dense models"): the largest
    // recomputed step, in multiply-adds over all update fragments, trained with
    // one pass per parameter; 0: always the general step. The default is where
    // the recomputed step stopped winning in Chromium on SwiftShader
    // (bench_kernels --small-dense; natively on llvmpipe it wins up to ~1M).
    int64_t smallDenseStepMacs = int64_t(1) << 17;
};

// Targets: class labels (softmax cross-entropy) or values (MSE, BCE; also
// one-hot rows for softmax cross-entropy, turned into labels).
struct Targets {
    // Class indices, one per row (softmax cross-entropy).
    std::vector<int> labels;
    // Target values, one row per input row (MSE, BCE; or one-hot rows).
    HostMatrix values;
    Targets() = default;
    // Class labels.
    Targets(std::vector<int> l) : labels(std::move(l)) {}
    // Target values.
    Targets(HostMatrix v) : values(std::move(v)) {}
    // The number of rows.
    size_t rows() const { return labels.empty() ? size_t(values.rows) : labels.size(); }
    // Whether these are class labels.
    bool isLabels() const { return !labels.empty(); }
};

// Rows [r0, r0 + n) of y as class labels: labels as given, one-hot (or
// score) rows as their argmax.
inline std::vector<int> targetLabels(const Targets& y, int r0, int n) {
    std::vector<int> out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        if (y.isLabels()) {
            out[size_t(i)] = y.labels[size_t(r0 + i)];
            continue;
        }
        int best = 0;
        for (int c = 1; c < y.values.cols; ++c)
            if (y.values(r0 + i, c) > y.values(r0 + i, best)) best = c;
        out[size_t(i)] = best;
    }
    return out;
}

// Whether a watched figure improves upward or downward (auto: losses
// downward, accuracies and the metrics that are better larger upward).
enum class MonitorMode { Auto, Min, Max };
// The epoch figure a callback watches, by Keras's name: "loss", "accuracy", a
// metric's name (CompileOptions::metrics), or any of them after "val_".
struct Monitor {
    // "loss", "accuracy", a metric's name, or one of those after "val_".
    std::string name = "val_loss";
    // An improvement is more than this.
    float minDelta = 0.0f;
    // Which way improves (Auto: as the figure says; the model resolves it when a fit begins).
    MonitorMode mode = MonitorMode::Auto;
    // Whether it is a validation figure (the fit needs validation data).
    bool validation() const { return name.rfind("val_", 0) == 0; }
    // The name without "val_".
    std::string figure() const { return validation() ? name.substr(4) : name; }
    // Whether larger is better (Auto: only the accuracy; metrics are resolved to Min or Max).
    bool higherIsBetter() const {
        return mode == MonitorMode::Max || (mode == MonitorMode::Auto && figure() == "accuracy");
    }
};
// Stops a fit after `patience` epochs without improvement (0: off); with
// restoreBest the model ends in its state at the best epoch (weights,
// optimizer state and step), as Keras's restore_best_weights.
struct EarlyStopping {
    // Epochs without improvement before the fit stops (0: off).
    int patience = 0;
    // What improves.
    Monitor monitor{};
    // End in the best epoch's state.
    bool restoreBest = false;
};
// Multiplies the learning rate by `factor` after `patience` epochs without
// improvement (0: off), not below minLr; the rate stays so after the fit.
struct ReduceLrOnPlateau {
    // Epochs without improvement before the rate is reduced (0: off).
    int patience = 0;
    // What improves.
    Monitor monitor{};
    // The rate is multiplied by this, in (0, 1).
    float factor = 0.1f;
    // The rate goes no lower.
    float minLr = 0.0f;
};
// Keeps the checkpoint of the best epoch so far (Model::bestCheckpoint(); the
// CLI's --save-best writes it as it improves).
struct KeepBest {
    // Whether to keep it.
    bool enabled = false;
    // What improves.
    Monitor monitor{};
};

// What fit() is given: epochs, batch size, shuffling, validation, loss reads and snapshots.
struct FitOptions {
    // Epochs to train.
    int epochs = 1;
    // > 0: train until the global step reaches `steps` instead, over as many
    // epochs as that takes, the last one cut short (Hugging Face's max_steps):
    // a language model's schedule counts steps, not passes over its windows.
    long steps = 0;
    // Rows per step.
    int batchSize = 32;
    bool shuffle = true;  // reshuffled every epoch from (seed, epoch)
    // An epoch's last rows that do not fill a batch train as one short step (as
    // Keras and tfjs do; a batchSize above the row count makes one step of all
    // rows); true leaves them out of that epoch (tf.data's drop_remainder).
    bool dropRemainder = false;
    float validationSplit = 0.0f;  // the last fraction of x held out (as Keras does)
    // Validation rows, evaluated at each epoch's end (null: none).
    const HostMatrix* validationX = nullptr;
    // Validation targets for validationX.
    const Targets* validationY = nullptr;
    int lossEvery = 1;       // read the loss every N steps (0: only at epoch ends)
    bool asyncLoss = false;  // read it through a fence instead of stalling
    // Every N steps the weights, optimizer state and step are read back through
    // a fence (no stall) into a host-side snapshot; if the GL context is lost,
    // training resumes from it (0: only the snapshots at the fit's start and end).
    int snapshotEvery = 100;
    // Callbacks on the epochs' figures: Keras's EarlyStopping...
    EarlyStopping earlyStopping{};
    // ...ReduceLROnPlateau...
    ReduceLrOnPlateau reduceLrOnPlateau{};
    // ...and ModelCheckpoint with save_best_only.
    KeepBest keepBest{};
};

// The rows of x an epoch trains on: all but the last floor(rows * validationSplit).
inline int trainingRows(int rows, const FitOptions& f) {
    return rows - (f.validationSplit > 0.0f ? int(std::floor(double(rows) * f.validationSplit)) : 0);
}
// The rows of the short batch that ends an epoch of n training rows (0: none,
// the batches divide n or dropRemainder leaves the rest out).
inline int shortBatchRows(int n, const FitOptions& f) { return f.dropRemainder ? 0 : n % f.batchSize; }
// The steps of an epoch of n training rows: the full batches and the short one.
inline long stepsPerEpoch(int n, const FitOptions& f) { return n / f.batchSize + (shortBatchRows(n, f) ? 1 : 0); }
// The global step a fit over n training rows ends at: `steps`, or the end of its last epoch.
inline long fitEndStep(int n, const FitOptions& f) {
    return f.steps > 0 ? f.steps : long(f.epochs) * stepsPerEpoch(n, f);
}

// What onStep is told after each step.
struct StepInfo {
    long step = 0;                                         // global step (1-based after the step ran)
    int epoch = 0;                                         // 0-based
    float loss = std::numeric_limits<float>::quiet_NaN();  // NaN unless a loss arrived this step
    // Whether a loss arrived this step.
    bool lossRead = false;
    long lossStep = 0;  // the step that loss belongs to (earlier than `step` with asyncLoss)
    // Throughput and time since the fit began.
    double samplesPerSecond = 0, elapsedSeconds = 0;
};
// What onEpoch is told (and history() keeps) after each epoch.
struct EpochInfo {
    // 0-based.
    int epoch = 0;
    // loss: mean of the losses read, each weighted by its step's rows; accuracy: over
    // the epoch's rows (classification only)
    float loss = 0, accuracy = 0;
    // Validation loss and accuracy (NaN without validation data).
    float valLoss = std::numeric_limits<float>::quiet_NaN(), valAccuracy = std::numeric_limits<float>::quiet_NaN();
    // The compiled metrics by name, over the epoch's rows, and with validation data the
    // same figures on it as "val_<name>".
    std::map<std::string, float> metrics;
    // The epoch's time and throughput.
    double seconds = 0, samplesPerSecond = 0;
    // The global step at the epoch's end.
    long step = 0;
};
// An epoch's figure as a Monitor names it (NaN when the epoch has none).
inline float monitored(const EpochInfo& e, const Monitor& m) {
    if (m.name == "loss") return e.loss;
    if (m.name == "accuracy") return e.accuracy;
    if (m.name == "val_loss") return e.valLoss;
    if (m.name == "val_accuracy") return e.valAccuracy;
    const auto it = e.metrics.find(m.name);
    return it == e.metrics.end() ? std::numeric_limits<float>::quiet_NaN() : it->second;
}
// Whether `value` improves on `best` (NaN: no best yet) by more than minDelta.
inline bool improves(const Monitor& m, float value, float best) {
    if (!std::isfinite(value)) return false;
    if (std::isnan(best)) return true;
    return m.higherIsBetter() ? value > best + m.minDelta : value < best - m.minDelta;
}

// The fit's callbacks.
struct Callbacks {
    // Called after every step.
    std::function<void(const StepInfo&)> onStep;
    // Called after every epoch.
    std::function<void(const EpochInfo&)> onEpoch;
};
// What evaluate() returns.
struct Evaluation {
    // Mean loss, and accuracy (NaN for regression).
    float loss = 0, accuracy = std::numeric_limits<float>::quiet_NaN();
    // The compiled metrics, by name.
    std::map<std::string, float> metrics;
};

// The rows an epoch visits, in order: 0 .. n-1, or (shuffle) a Fisher-Yates
// permutation drawn from the counter hash of (seed, epoch), so the order is
// the same natively, in the browser and on either backend.
inline std::vector<int> epochOrder(int n, uint32_t seed, int epoch, bool shuffle) {
    std::vector<int> order(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) order[size_t(i)] = i;
    if (shuffle)
        for (int i = n - 1; i > 0; --i) {
            const uint32_t j = hash3(seed ^ 0x5eed5eedu, uint32_t(epoch), uint32_t(i)) % uint32_t(i + 1);
            std::swap(order[size_t(i)], order[j]);
        }
    return order;
}

}  // namespace gltrain
