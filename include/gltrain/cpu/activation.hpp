// Activations over float arrays for the CPU backend: the formulas of
// ref::scalar (reference/activations.hpp), with the switch hoisted out of the
// loop so that the piecewise-linear ones (ReLU, LeakyReLU, linear) vectorise.
// Both functions work in place (y == z, g updated where it lies).
#pragma once
#include <cstddef>

#include "gltrain/activation.hpp"
#include "gltrain/reference/activations.hpp"

namespace gltrain::cpu {

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
            for (size_t i = 0; i < n; ++i) y[i] = ref::scalar::activate(z[i], act, alpha);
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
            for (size_t i = 0; i < n; ++i) g[i] *= ref::scalar::derivative(z[i], act, alpha);
    }
}

}  // namespace gltrain::cpu
