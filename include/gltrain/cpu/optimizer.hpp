// Optimizer updates on the CPU: one fused loop per parameter that reads the
// parameter, its gradient and its state and writes them in place — the
// formulas of shaders/update/*.glsl and reference/optimizer.hpp, in float,
// with the gradient scaled by `gscale` (clip by global norm) first.
// Skipping the update of a step whose loss is NaN/Inf is the caller's: it
// simply does not call these.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "gltrain/optimizer_config.hpp"

namespace gltrain::cpu {

// p, g: n floats; state: config.stateSlots() arrays of n floats (Adam: m, v;
// momentum: v; RMSProp: s and, with momentum, b). t >= 1 is the step number
// (Adam's bias corrections), lr this step's learning rate.
inline void optimizerUpdate(const OptimizerConfig& o, float* p, const float* g, const std::vector<float*>& state,
                            size_t n, float gscale, int t, float lr) {
    const float wd = o.weightDecay;
    switch (o.kind) {
        case OptimizerKind::SGD:
            for (size_t i = 0; i < n; ++i) p[i] = p[i] - lr * (g[i] * gscale + wd * p[i]);
            return;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov: {
            float* v = state[0];
            const float mu = o.momentum;
            const bool nesterov = o.kind == OptimizerKind::Nesterov;
            for (size_t i = 0; i < n; ++i) {
                const float gi = g[i] * gscale + wd * p[i];
                v[i] = mu * v[i] + gi;
                p[i] = p[i] - lr * (nesterov ? gi + mu * v[i] : v[i]);
            }
            return;
        }
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW: {
            float *m = state[0], *v = state[1];
            const float b1 = o.beta1, b2 = o.beta2, eps = o.eps;
            const float bc1 = 1.0f - std::pow(b1, float(t)), bc2 = 1.0f - std::pow(b2, float(t));
            const bool decoupled = o.kind == OptimizerKind::AdamW;
            for (size_t i = 0; i < n; ++i) {
                const float gi = g[i] * gscale + (decoupled ? 0.0f : wd * p[i]);
                m[i] = b1 * m[i] + (1.0f - b1) * gi;
                v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
                const float delta = lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
                p[i] = (decoupled ? p[i] - lr * wd * p[i] : p[i]) - delta;
            }
            return;
        }
        case OptimizerKind::RMSProp: {
            float* s = state[0];
            float* b = state.size() > 1 ? state[1] : nullptr;
            const float rho = o.rho, eps = o.eps, mu = o.momentum;
            for (size_t i = 0; i < n; ++i) {
                const float gi = g[i] * gscale + wd * p[i];
                s[i] = rho * s[i] + (1.0f - rho) * gi * gi;
                const float step = gi / (std::sqrt(s[i]) + eps);
                if (b) {
                    b[i] = mu * b[i] + step;
                    p[i] = p[i] - lr * b[i];
                } else {
                    p[i] = p[i] - lr * step;
                }
            }
            return;
        }
    }
}

// The factor clip-by-global-norm multiplies every gradient by:
// maxNorm / norm when norm > maxNorm, else 1 (a NaN norm leaves them as they are).
// norm = sqrt(sum of g^2 over every gradient), summed in double.
inline float clipFactor(const std::vector<std::pair<const float*, size_t>>& grads, float maxNorm) {
    double s = 0;
    for (auto& [g, n] : grads)
        for (size_t i = 0; i < n; ++i) s += double(g[i]) * double(g[i]);
    const float norm = float(std::sqrt(s));
    return !std::isnan(norm) && norm > maxNorm ? maxNorm / norm : 1.0f;
}

}  // namespace gltrain::cpu
