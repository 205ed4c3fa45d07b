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
    Linear,     // f(x) = x
    ReLU,       // f(x) = max(x, 0)
    LeakyReLU,  // f(x) = x > 0 ? x : alpha * x
    Sigmoid,    // f(x) = 1 / (1 + exp(-x))
    Tanh,       // f(x) = tanh(x)
    GELU,       // tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Softplus,   // f(x) = log(1 + exp(x)), evaluated as max(x, 0) + log1p(exp(-|x|))
};

// Every activation, in declaration order; handy for exhaustive tests and UIs.
inline constexpr std::array<Activation, 7> kAllActivations = {
    Activation::Linear, Activation::ReLU, Activation::LeakyReLU, Activation::Sigmoid,
    Activation::Tanh,   Activation::GELU, Activation::Softplus};

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
    }
    return "unknown";
}

// Whether `a` is one of the enumerators (an int cast to Activation may not be).
inline bool isActivation(Activation a) {
    for (Activation k : kAllActivations)
        if (a == k) return true;
    return false;
}

// ArgumentError naming `op` unless `a` is a known activation and, for
// LeakyReLU, its slope is finite (a NaN slope would turn every negative input
// into NaN on the GPU, where nothing can throw).
inline void requireActivation(const std::string& op, Activation a, float alpha = 0.01f) {
    if (!isActivation(a))
        throw ArgumentError(op + ": unknown activation " + std::to_string(int(a)) + " (not a gltrain::Activation)");
    if (a == Activation::LeakyReLU && !std::isfinite(alpha))
        throw ArgumentError(op + ": the LeakyReLU slope alpha must be finite, got " + std::to_string(alpha));
}

// Parses a canonical name, ignoring case ("ReLU", "GELU" and "Leaky_ReLU" are
// accepted). Anything else throws ArgumentError listing the valid names, so a
// typo in a model file says what would have worked.
inline Activation parseActivation(const std::string& name) {
    std::string lower(name);
    for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    std::string valid;
    for (Activation a : kAllActivations) {
        if (lower == activationName(a)) return a;
        valid += (valid.empty() ? "" : ", ") + std::string(activationName(a));
    }
    throw ArgumentError("parseActivation: unknown activation '" + name + "' (valid names: " + valid + ")");
}

}  // namespace gltrain
