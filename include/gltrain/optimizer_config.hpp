// The optimizers gltrain knows and their hyper-parameters: plain data shared
// by the GPU's update passes (ops/optimizer.hpp) and the CPU backend
// (cpu/optimizer.hpp). The formulas are in reference/optimizer.hpp.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/error.hpp"

namespace gltrain {

enum class OptimizerKind { SGD, Momentum, Nesterov, Adam, AdamW, RMSProp };
// Every optimizer, in the order the model config and the JavaScript API list them.
inline constexpr std::array<OptimizerKind, 6> kAllOptimizers = {OptimizerKind::SGD,      OptimizerKind::Momentum,
                                                                OptimizerKind::Nesterov, OptimizerKind::Adam,
                                                                OptimizerKind::AdamW,    OptimizerKind::RMSProp};

inline const char* optimizerName(OptimizerKind k) {
    switch (k) {
        case OptimizerKind::SGD: return "sgd";
        case OptimizerKind::Momentum: return "momentum";
        case OptimizerKind::Nesterov: return "nesterov";
        case OptimizerKind::Adam: return "adam";
        case OptimizerKind::AdamW: return "adamw";
        case OptimizerKind::RMSProp: return "rmsprop";
    }
    return "unknown";
}

// An optimizer and its hyper-parameters (CompileOptions::optimizer).
struct OptimizerConfig {
    // SGD, momentum, Nesterov, Adam, AdamW or RMSProp.
    OptimizerKind kind = OptimizerKind::Adam;
    // The learning rate (before the schedule).
    float lr = 1e-3f;
    // L2 weight decay (decoupled for AdamW), of the parameters decays() names.
    float weightDecay = 0.0f;
    // Which parameters weightDecay applies to besides the default (every kernel), as
    // PyTorch's parameter groups and Keras's exclude_from_weight_decay say it:
    // layer names ("dense_2": all its parameters) or variables ("embedding_0/embeddings"),
    // '*' matching any run of characters ("*/bias"). Compile refuses a pattern
    // that matches no parameter, and one in both lists.
    std::vector<std::string> decayInclude, decayExclude;
    float momentum = 0.9f;                            // momentum / Nesterov mu; RMSProp momentum (0: none)
    float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-7f;  // Adam (eps: TF.js / Keras default)
    float rho = 0.9f;                                 // RMSProp

    // State slots per parameter (m, v, ...), each a PingPong shaped like the parameter.
    int stateSlots() const {
        switch (kind) {
            case OptimizerKind::SGD: return 0;
            case OptimizerKind::Momentum:
            case OptimizerKind::Nesterov: return 1;
            case OptimizerKind::Adam:
            case OptimizerKind::AdamW: return 2;
            case OptimizerKind::RMSProp: return momentum != 0.0f ? 2 : 1;
        }
        return 0;
    }

    // Whether state slot i holds a running mean of squared gradients (Adam's v,
    // RMSProp's mean square): never negative, so a checkpoint with a negative one
    // is refused at load (its square root would poison the next step).
    bool slotIsSquare(int i) const {
        return ((kind == OptimizerKind::Adam || kind == OptimizerKind::AdamW) && i == 1) ||
               (kind == OptimizerKind::RMSProp && i == 0);
    }

    // Whether weight decay applies to parameter `variable` ("kernel") of layer `layer`:
    // decayExclude wins, then decayInclude, then the default: the weight matrices
    // Keras names kernels ("kernel", "recurrent_kernel", "depthwise_kernel", ...),
    // not biases, normalizations' gamma and beta, or embedding tables (as GPT-2's
    // and nanoGPT's AdamW groups).
    bool decays(const std::string& layer, const std::string& variable) const {
        if (matchesAny(decayExclude, layer, variable)) return false;
        if (matchesAny(decayInclude, layer, variable)) return true;
        const std::string kernel = "kernel";
        return variable.size() >= kernel.size() &&
               variable.compare(variable.size() - kernel.size(), kernel.size(), kernel) == 0;
    }
    // Whether one of `patterns` names the layer or its variable "layer/variable".
    static bool matchesAny(const std::vector<std::string>& patterns, const std::string& layer,
                           const std::string& variable) {
        for (const std::string& p : patterns)
            if (globMatch(p, layer) || globMatch(p, layer + "/" + variable)) return true;
        return false;
    }
    // Whether `text` is `pattern`, each '*' in it standing for any run of characters.
    static bool globMatch(const std::string& pattern, const std::string& text) {
        size_t p = 0, t = 0, star = std::string::npos, resume = 0;
        while (t < text.size()) {
            if (p < pattern.size() && pattern[p] == '*') {
                star = p++;
                resume = t;
            } else if (p < pattern.size() && pattern[p] == text[t]) {
                ++p;
                ++t;
            } else if (star != std::string::npos) {
                p = star + 1;
                t = ++resume;
            } else {
                return false;
            }
        }
        while (p < pattern.size() && pattern[p] == '*') ++p;
        return p == pattern.size();
    }

    // A copy that decays nothing: the update of a parameter decays() leaves out.
    OptimizerConfig withoutDecay() const {
        OptimizerConfig c = *this;
        c.weightDecay = 0.0f;
        return c;
    }

    // Throws ArgumentError naming a hyper-parameter out of its range.
    void validate() const {
        auto bad = [](const std::string& what) { throw ArgumentError("optimizer: " + what); };
        if (std::string(optimizerName(kind)) == "unknown")
            bad("unknown kind " + std::to_string(int(kind)) + " (not a gltrain::OptimizerKind)");
        if (!(lr > 0.0f) || !std::isfinite(lr))
            bad("learning rate must be positive and finite, got " + std::to_string(lr));
        if (!(weightDecay >= 0.0f) || !std::isfinite(weightDecay)) bad("weightDecay must be >= 0");
        if (!(momentum >= 0.0f && momentum < 1.0f)) bad("momentum must be in [0, 1), got " + std::to_string(momentum));
        if (!(beta1 >= 0.0f && beta1 < 1.0f)) bad("beta1 must be in [0, 1), got " + std::to_string(beta1));
        if (!(beta2 >= 0.0f && beta2 < 1.0f)) bad("beta2 must be in [0, 1), got " + std::to_string(beta2));
        if (!(eps > 0.0f) || !std::isfinite(eps)) bad("eps must be positive and finite, got " + std::to_string(eps));
        if (!(rho >= 0.0f && rho < 1.0f)) bad("rho must be in [0, 1), got " + std::to_string(rho));
        for (const std::string& p : decayInclude) {
            if (p.empty()) bad("decayInclude holds an empty pattern");
            if (std::find(decayExclude.begin(), decayExclude.end(), p) != decayExclude.end())
                bad("'" + p + "' is in both decayInclude and decayExclude");
        }
        for (const std::string& p : decayExclude)
            if (p.empty()) bad("decayExclude holds an empty pattern");
    }
};

}  // namespace gltrain
