// Activations over float arrays for the CPU backend, with the switch hoisted
// out of the loop so that the piecewise-linear ones (ReLU, LeakyReLU, linear)
// vectorise. Both functions work in place (y == z, g updated where it lies).
//
// The formulas are the kernels' (shaders/lib/activation.glsl), in float; the
// test oracle (reference/activations.hpp) has its own in double, which
// tests/cpu_ops_test.cpp checks these against.
#pragma once
#include <cmath>
#include <cstddef>

#include "gltrain/activation.hpp"

namespace gltrain::cpu {

namespace scalar {

// sqrt(2/pi) and the cubic coefficient of the GELU tanh approximation.
inline constexpr float kGeluK = float(0.7978845608028654);
inline constexpr float kGeluC = float(0.044715);
inline constexpr float kGelu3C = float(3 * 0.044715);

// Logistic sigmoid, split on the sign so exp() never overflows.
inline float sigmoid(float z) {
    if (z >= 0.0f) return 1.0f / (1.0f + std::exp(-z));
    const float e = std::exp(z);  // NaN lands here and stays NaN
    return e / (1.0f + e);
}

// log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no overflow for large z.
inline float softplus(float z) {
    const float pos = z < 0.0f ? 0.0f : z;  // NaN propagates through z
    return pos + std::log1p(std::exp(-std::abs(z)));
}

inline float gelu(float z) {
    const float u = kGeluK * (z + kGeluC * z * z * z);
    return 0.5f * z * (1.0f + std::tanh(u));
}

// Once tanh saturates the second term is dropped, so a huge |z|, whose z^2
// overflows, gives 0 or 1 instead of 0 * inf.
inline float geluDerivative(float z) {
    const float t = std::tanh(kGeluK * (z + kGeluC * z * z * z));
    const float sech2 = 1.0f - t * t;
    const float first = 0.5f * (1.0f + t);
    if (sech2 == 0.0f) return first;
    return first + 0.5f * z * sech2 * kGeluK * (1.0f + kGelu3C * z * z);
}

// f(z). alpha is the LeakyReLU negative slope and ignored by the others.
inline float activate(float z, Activation act, float alpha) {
    switch (act) {
        case Activation::Linear: return z;
        case Activation::ReLU: return z < 0.0f ? 0.0f : z;
        case Activation::LeakyReLU: return z < 0.0f ? alpha * z : z;
        case Activation::Sigmoid: return sigmoid(z);
        case Activation::Tanh: return std::tanh(z);
        case Activation::GELU: return gelu(z);
        case Activation::Softplus: return softplus(z);
    }
    return z;
}

// f'(z), from the pre-activation z.
inline float derivative(float z, Activation act, float alpha) {
    switch (act) {
        case Activation::Linear: return 1.0f;
        case Activation::ReLU: return z > 0.0f ? 1.0f : 0.0f;
        case Activation::LeakyReLU: return z > 0.0f ? 1.0f : alpha;
        case Activation::Sigmoid: {
            const float s = sigmoid(z);
            return s * (1.0f - s);
        }
        case Activation::Tanh: {
            const float t = std::tanh(z);
            return 1.0f - t * t;
        }
        case Activation::GELU: return geluDerivative(z);
        case Activation::Softplus: return sigmoid(z);
    }
    return 1.0f;
}

}  // namespace scalar

// y[i] = f(z[i]).
inline void activate(float* y, const float* z, size_t n, Activation act, float alpha) {
    switch (act) {
        case Activation::Linear:
            if (y != z)
                for (size_t i = 0; i < n; ++i) y[i] = z[i];
            return;
        case Activation::ReLU:
            for (size_t i = 0; i < n; ++i) y[i] = z[i] < 0.0f ? 0.0f : z[i];
            return;
        case Activation::LeakyReLU:
            for (size_t i = 0; i < n; ++i) y[i] = z[i] < 0.0f ? alpha * z[i] : z[i];
            return;
        default:
            for (size_t i = 0; i < n; ++i) y[i] = scalar::activate(z[i], act, alpha);
    }
}

// g[i] *= f'(z[i]), z the pre-activation: dZ = dY ⊙ f'(Z).
inline void multiplyDerivative(float* g, const float* z, size_t n, Activation act, float alpha) {
    switch (act) {
        case Activation::Linear: return;
        case Activation::ReLU:
            for (size_t i = 0; i < n; ++i) g[i] *= z[i] > 0.0f ? 1.0f : 0.0f;
            return;
        case Activation::LeakyReLU:
            for (size_t i = 0; i < n; ++i) g[i] *= z[i] > 0.0f ? 1.0f : alpha;
            return;
        default:
            for (size_t i = 0; i < n; ++i) g[i] *= scalar::derivative(z[i], act, alpha);
    }
}

}  // namespace gltrain::cpu
