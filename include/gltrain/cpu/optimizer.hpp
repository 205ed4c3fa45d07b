// Optimizer updates on the CPU: one fused loop per parameter that reads the
// parameter, its gradient and its state and writes their next values (in place,
// or into other arrays: the training step keeps the state before it) — the
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

// Elements [first, end) of p0 -> p, g; state0 -> state: config.stateSlots()
// arrays (Adam: m, v; momentum: v; RMSProp: s and, with momentum, b); an array
// and its next value may be one array (in place). Each element is computed
// alone, so a parameter's elements may be updated in parts (on several
// threads). t >= 1 is the step number (Adam's bias corrections), lr this
// step's learning rate.
inline void optimizerUpdate(const OptimizerConfig& o, const float* p0, float* p, const float* g,
                            const float* const* state0, float* const* state, size_t first, size_t end, float gscale,
                            int t, float lr) {
    const float wd = o.weightDecay;
    switch (o.kind) {
        case OptimizerKind::SGD:
            for (size_t i = first; i < end; ++i) p[i] = p0[i] - lr * (g[i] * gscale + wd * p0[i]);
            return;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov: {
            const float* v0 = state0[0];
            float* v = state[0];
            const float mu = o.momentum;
            const bool nesterov = o.kind == OptimizerKind::Nesterov;
            for (size_t i = first; i < end; ++i) {
                const float gi = g[i] * gscale + wd * p0[i];
                const float vi = mu * v0[i] + gi;
                v[i] = vi;
                p[i] = p0[i] - lr * (nesterov ? gi + mu * vi : vi);
            }
            return;
        }
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW: {
            const float *m0 = state0[0], *v0 = state0[1];
            float *m = state[0], *v = state[1];
            const float b1 = o.beta1, b2 = o.beta2, eps = o.eps;
            const float bc1 = 1.0f - std::pow(b1, float(t)), bc2 = 1.0f - std::pow(b2, float(t));
            const bool decoupled = o.kind == OptimizerKind::AdamW;
            for (size_t i = first; i < end; ++i) {
                const float pi = p0[i];
                const float gi = g[i] * gscale + (decoupled ? 0.0f : wd * pi);
                const float mi = b1 * m0[i] + (1.0f - b1) * gi;
                const float vi = b2 * v0[i] + (1.0f - b2) * gi * gi;
                m[i] = mi;
                v[i] = vi;
                const float delta = lr * (mi / bc1) / (std::sqrt(vi / bc2) + eps);
                p[i] = (decoupled ? pi - lr * wd * pi : pi) - delta;
            }
            return;
        }
        case OptimizerKind::RMSProp: {
            const float* s0 = state0[0];
            const bool withMomentum = o.stateSlots() > 1;
            const float* b0 = withMomentum ? state0[1] : nullptr;
            float* s = state[0];
            float* b = withMomentum ? state[1] : nullptr;
            const float rho = o.rho, eps = o.eps, mu = o.momentum;
            for (size_t i = first; i < end; ++i) {
                const float gi = g[i] * gscale + wd * p0[i];
                const float si = rho * s0[i] + (1.0f - rho) * gi * gi;
                s[i] = si;
                const float step = gi / (std::sqrt(si) + eps);
                if (b) {
                    const float bi = mu * b0[i] + step;
                    b[i] = bi;
                    p[i] = p0[i] - lr * bi;
                } else {
                    p[i] = p0[i] - lr * step;
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
