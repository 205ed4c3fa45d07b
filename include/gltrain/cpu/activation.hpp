// Activations over float arrays for the CPU backend, with the switch hoisted
// out of the loop so that the piecewise-linear ones (ReLU, LeakyReLU, linear)
// vectorise. Both functions work in place (y == z, g updated where it lies).
//
// The formulas are the kernels' (shaders/lib/activation.glsl), in float; the
// test oracle (reference/activations.hpp) has its own in double, which
// tests/cpu_ops_test.cpp checks these against. tanh is cpu::tanhApprox, whose
// loops vectorise (tanh and GELU have loops of their own below).
#pragma once
#include <cmath>
#include <cstddef>

#include "gltrain/activation.hpp"
#include "gltrain/cpu/fast_math.hpp"

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

// Over float or Vec<4> (cpu::mapLanes).
template <class T>
GLTRAIN_ALWAYS_INLINE T gelu(T z) {
    const T u = kGeluK * (z + kGeluC * z * z * z);
    return 0.5f * z * (1.0f + tanhApprox(u));
}

// Once tanh saturates the second term is dropped, so a huge |z|, whose z^2
// overflows, gives 0 or 1 instead of 0 * inf. Over float or Vec<4>.
template <class T>
GLTRAIN_ALWAYS_INLINE T geluDerivative(T z) {
    const T t = tanhApprox(kGeluK * (z + kGeluC * z * z * z));
    const T sech2 = 1.0f - t * t;
    const T first = 0.5f * (1.0f + t);
    const T both = first + 0.5f * z * sech2 * kGeluK * (1.0f + kGelu3C * z * z);
    return fast_math_detail::pick(sech2 == T{}, first, both);
}

// SELU's constants (Klambauer et al. 2017).
inline constexpr float kSeluAlpha = float(1.6732632423543772848170429916717);
inline constexpr float kSeluScale = float(1.0507009873554804934193349852946);

// ELU: alpha (e^z - 1) below 0, expm1 keeping the small values near 0.
inline float elu(float z, float alpha) { return z > 0.0f ? z : alpha * std::expm1(z); }

// Phi(z) = erfc(-z / sqrt 2) / 2, without the cancellation of 1 + erf for z << 0.
inline float normalCdf(float z) { return 0.5f * std::erfc(-z * float(0.70710678118654752440)); }

inline float swishDerivative(float z) {
    const float s = sigmoid(z);
    return s * (1.0f + z * (1.0f - s));
}

inline float mishDerivative(float z) {
    const float t = tanhApprox(softplus(z));
    return t + z * (1.0f - t * t) * sigmoid(z);
}

// f(z). alpha is LeakyReLU's negative slope or ELU's alpha, ignored by the others.
inline float activate(float z, Activation act, float alpha) {
    switch (act) {
        case Activation::Linear: return z;
        case Activation::ReLU: return z < 0.0f ? 0.0f : z;
        case Activation::LeakyReLU: return z < 0.0f ? alpha * z : z;
        case Activation::Sigmoid: return sigmoid(z);
        case Activation::Tanh: return tanhApprox(z);
        case Activation::GELU: return gelu(z);
        case Activation::Softplus: return softplus(z);
        case Activation::ELU: return elu(z, alpha);
        case Activation::SELU: return kSeluScale * elu(z, kSeluAlpha);
        case Activation::ReLU6: return z < 0.0f ? 0.0f : z > 6.0f ? 6.0f : z;
        case Activation::Swish: return z * sigmoid(z);
        case Activation::Mish: return z * tanhApprox(softplus(z));
        case Activation::HardSigmoid: {
            const float y = 0.2f * z + 0.5f;
            return y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
        }
        case Activation::Softsign: return z / (1.0f + std::abs(z));
        case Activation::GELUExact: return z * normalCdf(z);
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
            const float t = tanhApprox(z);
            return 1.0f - t * t;
        }
        case Activation::GELU: return geluDerivative(z);
        case Activation::Softplus: return sigmoid(z);
        case Activation::ELU: return z > 0.0f ? 1.0f : alpha * std::exp(z);
        case Activation::SELU: return kSeluScale * (z > 0.0f ? 1.0f : kSeluAlpha * std::exp(z));
        case Activation::ReLU6: return z > 0.0f && z < 6.0f ? 1.0f : 0.0f;
        case Activation::Swish: return swishDerivative(z);
        case Activation::Mish: return mishDerivative(z);
        case Activation::HardSigmoid: return z > -2.5f && z < 2.5f ? 0.2f : 0.0f;
        case Activation::Softsign: {
            const float d = 1.0f / (1.0f + std::abs(z));
            return d * d;
        }
        case Activation::GELUExact: return normalCdf(z) + z * float(0.39894228040143267794) * std::exp(-0.5f * z * z);
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
        case Activation::Tanh: return mapLanes(y, z, n, [](auto v) { return tanhApprox(v); });
        case Activation::GELU: return mapLanes(y, z, n, [](auto v) { return scalar::gelu(v); });
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
        case Activation::Tanh:
            return multiplyLanes(g, z, n, [](auto v) {
                const auto t = tanhApprox(v);
                return 1.0f - t * t;
            });
        case Activation::GELU: return multiplyLanes(g, z, n, [](auto v) { return scalar::geluDerivative(v); });
        default:
            for (size_t i = 0; i < n; ++i) g[i] *= scalar::derivative(z[i], act, alpha);
    }
}

}  // namespace gltrain::cpu
