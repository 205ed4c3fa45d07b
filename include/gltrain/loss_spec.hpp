// A loss as a model is compiled with: which loss (LossKind) and its
// parameters (delta, labelSmoothing, fromLogits). Declared once here — the
// names, the parameters and their checks — and read by CompileOptions, the
// model graph (graph/loss_graph.hpp), both engines, the model files, the CLI
// and the JavaScript bindings.
#pragma once
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

namespace gltrain {

namespace graph {
class Graph;
}

enum class LossKind {
    SoftmaxCrossEntropy,      // class labels [B, 1] against the logits (Keras's sparse categorical cross-entropy)
    MeanSquaredError,         // mean over a row of (prediction - target)^2
    BinaryCrossEntropy,       // mean over a row, on logits (fromLogits, the default here) or probabilities
    CategoricalCrossEntropy,  // one-hot or probability rows against the logits: -sum t log softmax(z)
    MeanAbsoluteError,        // mean over a row of |prediction - target|
    Huber,                    // mean over a row of Huber's loss of prediction - target (delta)
    KlDivergence,             // sum over a row of t log(t / p), both clipped to [1e-7, 1] (Keras's)
    CategoricalHinge,         // max(0, 1 + max((1 - t) p) - sum t p) (Keras's)
    SequenceCrossEntropy,     // a class id [B, steps] per step of a sequence against its logits (-1: masked)
    Custom                    // each row's loss built from graph ops by LossSpec::custom
};
// The names a model config, the CLI and the JavaScript API accept for each
// loss, in the order they are listed: gltrain's first, then Keras's. Keras's
// binary_crossentropy is on probabilities (its from_logits=False default);
// binary_cross_entropy keeps meaning the loss on logits.
struct LossName {
    // The name.
    const char* name;
    // The loss it names.
    LossKind kind;
    // The loss's fromLogits when named so (binary cross-entropy).
    bool fromLogits = true;
};
inline constexpr std::array<LossName, 16> kLossNames = {{
    {"softmax_cross_entropy", LossKind::SoftmaxCrossEntropy},
    {"mse", LossKind::MeanSquaredError},
    {"mean_squared_error", LossKind::MeanSquaredError},
    {"binary_cross_entropy", LossKind::BinaryCrossEntropy},
    {"sparse_categorical_crossentropy", LossKind::SoftmaxCrossEntropy},
    {"categorical_crossentropy", LossKind::CategoricalCrossEntropy},
    {"binary_crossentropy", LossKind::BinaryCrossEntropy, false},
    {"mae", LossKind::MeanAbsoluteError},
    {"mean_absolute_error", LossKind::MeanAbsoluteError},
    {"huber", LossKind::Huber},
    {"huber_loss", LossKind::Huber},
    {"kl_divergence", LossKind::KlDivergence},
    {"kld", LossKind::KlDivergence},
    {"kullback_leibler_divergence", LossKind::KlDivergence},
    {"categorical_hinge", LossKind::CategoricalHinge},
    {"sequence_softmax_cross_entropy", LossKind::SequenceCrossEntropy},
}};

// The loss of a model's output.
struct LossSpec {
    // Which loss.
    LossKind kind = LossKind::SoftmaxCrossEntropy;
    // Huber: where the loss turns from quadratic to linear (> 0).
    float delta = 1.0f;
    // Cross-entropies: targets t become t (1 - s) + s / K (K: the classes; 2 for binary), in [0, 1).
    float labelSmoothing = 0.0f;
    // Binary cross-entropy: true on logits, false on probabilities (clipped to [1e-7, 1 - 1e-7]).
    bool fromLogits = true;
    // Custom: builds each row's loss [B, 1] from graph ops (graph/ops/) on the prediction (the
    // model's output as rows [B, C]) and the target (the same shape), and returns its value;
    // autodiff gives its gradient, and both engines run it.
    std::function<int(graph::Graph& g, int prediction, int target)> custom;
    // Custom: its name, for errors.
    std::string customName = "custom";
    // Softmax cross-entropy.
    LossSpec() = default;
    // The loss `k` with its default parameters (implicit: a LossKind is such a loss).
    LossSpec(LossKind k) : kind(k) {}  // NOLINT(google-explicit-constructor)
    // Whether its targets are class indices ([B, 1]) rather than values shaped like the prediction.
    bool labels() const { return kind == LossKind::SoftmaxCrossEntropy; }
    // Whether it reads the logits before a final Softmax (the cross-entropies on logits, and mse
    // as it always has) rather than the model's output.
    bool readsLogits() const {
        return kind == LossKind::SoftmaxCrossEntropy || kind == LossKind::CategoricalCrossEntropy ||
               kind == LossKind::SequenceCrossEntropy || kind == LossKind::MeanSquaredError ||
               (kind == LossKind::BinaryCrossEntropy && fromLogits);
    }
    // Whether a final Softmax layer may end a model trained with it: the softmax cross-entropies
    // (which read the logits before it) and the losses on the model's output.
    bool allowsFinalSoftmax() const {
        return kind == LossKind::SoftmaxCrossEntropy || kind == LossKind::CategoricalCrossEntropy ||
               kind == LossKind::SequenceCrossEntropy || !readsLogits();
    }
};

// The loss's first name (gltrain's).
inline const char* lossName(LossKind k) {
    if (k == LossKind::Custom) return "custom";
    for (const LossName& n : kLossNames)
        if (n.kind == k) return n.name;
    return "?";
}
// Every name, comma-separated (for errors).
inline std::string lossNameList() {
    std::string s;
    for (const LossName& n : kLossNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
    return s;
}
// Whether `name` (lower case) names a loss; then *out is that loss with its defaults.
inline bool lossByName(const std::string& name, LossSpec* out) {
    for (const LossName& n : kLossNames)
        if (name == n.name) {
            *out = LossSpec(n.kind);
            out->fromLogits = n.fromLogits;
            return true;
        }
    return false;
}
// The parameters `kind` takes, as model files and JavaScript name them (for errors: "delta", or "none").
inline std::string lossParameters(LossKind k) {
    switch (k) {
        case LossKind::Huber: return "delta";
        case LossKind::SoftmaxCrossEntropy:
        case LossKind::CategoricalCrossEntropy: return "labelSmoothing";
        case LossKind::BinaryCrossEntropy: return "labelSmoothing, fromLogits";
        default: return "none";
    }
}
// What is wrong with a loss's parameters, naming the field ("" when nothing is).
inline std::string lossProblem(const LossSpec& l) {
    char value[48];
    if (l.kind == LossKind::Custom && !l.custom) return "loss " + l.customName + ": no function builds it (custom)";
    if (!(std::isfinite(l.delta) && l.delta > 0.0f)) {
        std::snprintf(value, sizeof value, "%g", double(l.delta));
        return std::string("loss ") + lossName(l.kind) + ": delta must be > 0, got " + value;
    }
    if (!(l.labelSmoothing >= 0.0f && l.labelSmoothing < 1.0f)) {
        std::snprintf(value, sizeof value, "%g", double(l.labelSmoothing));
        return std::string("loss ") + lossName(l.kind) + ": labelSmoothing must be in [0, 1), got " + value;
    }
    if (l.delta != 1.0f && l.kind != LossKind::Huber)
        return std::string("loss ") + lossName(l.kind) + " has no delta (only huber has)";
    if (l.labelSmoothing != 0.0f && lossParameters(l.kind).find("labelSmoothing") == std::string::npos)
        return std::string("loss ") + lossName(l.kind) + " has no labelSmoothing (the cross-entropies have)";
    if (!l.fromLogits && l.kind != LossKind::BinaryCrossEntropy)
        return std::string("loss ") + lossName(l.kind) + " has no fromLogits (only binary cross-entropy has)";
    return "";
}

}  // namespace gltrain
