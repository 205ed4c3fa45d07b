// Activation: the element-wise nonlinearities gltrain knows, by enum and by
// name. Shared by the GPU kernels and the CPU reference (ref::activate), so a
// model description can name an activation once and both sides agree.
#pragma once
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "gltrain/error.hpp"

namespace gltrain {

enum class Activation {
    Linear,       // f(x) = x
    ReLU,         // f(x) = max(x, 0)
    LeakyReLU,    // f(x) = x > 0 ? x : alpha * x
    Sigmoid,      // f(x) = 1 / (1 + exp(-x))
    Tanh,         // f(x) = tanh(x)
    GELU,         // tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Softplus,     // f(x) = log(1 + exp(x)), evaluated as max(x, 0) + log1p(exp(-|x|))
    ELU,          // f(x) = x > 0 ? x : alpha * (exp(x) - 1)
    SELU,         // f(x) = scale * (x > 0 ? x : a * (exp(x) - 1)), Klambauer et al.'s constants
    ReLU6,        // f(x) = min(max(x, 0), 6)
    Swish,        // f(x) = x * sigmoid(x), also called SiLU
    Mish,         // f(x) = x * tanh(softplus(x))
    HardSigmoid,  // f(x) = clip(0.2 x + 0.5, 0, 1), TF.js's and Keras 2's definition
    Softsign,     // f(x) = x / (1 + |x|)
    GELUExact,    // f(x) = x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), the erf form
};

// Every activation, in declaration order; handy for exhaustive tests and UIs.
inline constexpr std::array<Activation, 15> kAllActivations = {
    Activation::Linear, Activation::ReLU,     Activation::LeakyReLU,   Activation::Sigmoid,  Activation::Tanh,
    Activation::GELU,   Activation::Softplus, Activation::ELU,         Activation::SELU,     Activation::ReLU6,
    Activation::Swish,  Activation::Mish,     Activation::HardSigmoid, Activation::Softsign, Activation::GELUExact};

// The canonical lower-case name ("leaky_relu"), the inverse of parseActivation.
inline const char* activationName(Activation a) {
    switch (a) {
        case Activation::Linear: return "linear";
        case Activation::ReLU: return "relu";
        case Activation::LeakyReLU: return "leaky_relu";
        case Activation::Sigmoid: return "sigmoid";
        case Activation::Tanh: return "tanh";
        case Activation::GELU: return "gelu";
        case Activation::Softplus: return "softplus";
        case Activation::ELU: return "elu";
        case Activation::SELU: return "selu";
        case Activation::ReLU6: return "relu6";
        case Activation::Swish: return "swish";
        case Activation::Mish: return "mish";
        case Activation::HardSigmoid: return "hard_sigmoid";
        case Activation::Softsign: return "softsign";
        case Activation::GELUExact: return "gelu_exact";
    }
    return "unknown";
}

// Whether `a` reads the activation parameter alpha: LeakyReLU's negative
// slope, ELU's saturation value. The kernels take it as a uniform only then.
inline bool activationUsesAlpha(Activation a) { return a == Activation::LeakyReLU || a == Activation::ELU; }

// The alpha a layer's activation reads: LeakyReLU's slope `leakyAlpha`, ELU's
// `eluAlpha` (two fields, since their defaults, 0.01 and Keras's 1, differ).
inline float activationAlpha(Activation a, float leakyAlpha, float eluAlpha) {
    return a == Activation::ELU ? eluAlpha : leakyAlpha;
}

// Whether `a` is one of the enumerators (an int cast to Activation may not be).
inline bool isActivation(Activation a) {
    for (Activation k : kAllActivations)
        if (a == k) return true;
    return false;
}

// ArgumentError naming `op` unless `a` is a known activation and, for
// LeakyReLU and ELU, its alpha is finite (a NaN slope would turn every negative
// input into NaN on the GPU, where nothing can throw).
inline void requireActivation(const std::string& op, Activation a, float alpha = 0.01f) {
    if (!isActivation(a))
        throw ArgumentError(op + ": unknown activation " + std::to_string(int(a)) + " (not a gltrain::Activation)");
    if (activationUsesAlpha(a) && !std::isfinite(alpha))
        throw ArgumentError(op + ": the " + (a == Activation::ELU ? "ELU" : "LeakyReLU") +
                            " alpha must be finite, got " + std::to_string(alpha));
}

// Other names an activation goes by, accepted wherever a name is read (model
// files, JavaScript); the canonical name is the one written back.
struct ActivationAlias {
    const char* name;  // lower case
    // The activation the name stands for.
    Activation activation;
};
// "silu" is PyTorch's and Keras 3's name for swish.
inline constexpr std::array<ActivationAlias, 1> kActivationAliases = {{{"silu", Activation::Swish}}};

// The activation a canonical name or an alias names, ignoring case; false if none.
inline bool findActivation(const std::string& name, Activation& out) {
    std::string lower(name);
    for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    for (Activation a : kAllActivations)
        if (lower == activationName(a)) return out = a, true;
    for (const ActivationAlias& alias : kActivationAliases)
        if (lower == alias.name) return out = alias.activation, true;
    return false;
}

// The canonical names and the aliases, comma-separated, for messages.
inline std::string activationNameList() {
    std::string valid;
    for (Activation a : kAllActivations) valid += (valid.empty() ? "" : ", ") + std::string(activationName(a));
    for (const ActivationAlias& alias : kActivationAliases) valid += ", " + std::string(alias.name);
    return valid;
}

// Parses a canonical name or an alias, ignoring case ("ReLU", "GELU" and
// "Leaky_ReLU" are accepted). Anything else throws ArgumentError listing the
// valid names, so a typo in a model file says what would have worked.
inline Activation parseActivation(const std::string& name) {
    Activation a{};
    if (findActivation(name, a)) return a;
    throw ArgumentError("parseActivation: unknown activation '" + name + "' (valid names: " + activationNameList() +
                        ")");
}

}  // namespace gltrain
