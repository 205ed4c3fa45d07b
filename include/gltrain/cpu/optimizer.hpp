// Optimizer updates on the CPU: one fused loop per parameter that reads the
// parameter, its gradient and its state and writes their next values (in place,
// or into other arrays: the training step keeps the state before it) — the
// formulas of shaders/update/*.glsl and reference/optimizer.hpp, in float,
// with the gradient scaled by `gscale` (clip by global norm) first. Each
// formula is written once over float and Vec<4> (SSE natively, SIMD128 in
// WebAssembly): W1's Adam update took 0.89 ms natively as a scalar loop that
// GCC would not vectorise (std::sqrt may set errno), 0.22 ms four at a time.
// Skipping the update of a step whose loss is NaN/Inf is the caller's: it
// simply does not call these.
#pragma once
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "gltrain/cpu/simd.hpp"
#include "gltrain/optimizer_config.hpp"

namespace gltrain::cpu {

namespace optimizer_detail {
// fn(i, T{}) for i in [first, end): four elements at a time as T = Vec<4>,
// then the tail one at a time as T = float, by the same formulas (the same
// bits either way: each is a correctly rounded operation lane by lane).
template <class F>
GLTRAIN_ALWAYS_INLINE void lanes(size_t first, size_t end, const F& fn) {
    size_t i = first;
    for (; i + 4 <= end; i += 4) fn(i, Vec<4>{});
    for (; i < end; ++i) fn(i, 0.0f);
}
template <class T>
GLTRAIN_ALWAYS_INLINE T at(const float* a, size_t i) {
    if constexpr (std::is_same_v<T, float>) return a[i];
    else {
        T v;
        load<4>(v, a + i);
        return v;
    }
}
template <class T>
GLTRAIN_ALWAYS_INLINE void put(float* a, size_t i, const T& v) {
    if constexpr (std::is_same_v<T, float>) a[i] = v;
    else store<4>(a + i, v);
}
}  // namespace optimizer_detail

// Elements [first, end) of p0 -> p, g; state0 -> state: config.stateSlots()
// arrays (Adam: m, v; momentum: v; RMSProp: s and, with momentum, b); an array
// and its next value may be one array (in place). Each element is computed
// alone, so a parameter's elements may be updated in parts (on several
// threads). t >= 1 is the step number (Adam's bias corrections), lr this
// step's learning rate.
inline void optimizerUpdate(const OptimizerConfig& o, const float* p0, float* p, const float* g,
                            const float* const* state0, float* const* state, size_t first, size_t end, float gscale,
                            int t, float lr) {
    using optimizer_detail::at, optimizer_detail::put, optimizer_detail::lanes;
    const float wd = o.weightDecay;
    switch (o.kind) {
        case OptimizerKind::SGD:
            lanes(first, end, [&](size_t i, auto zero) {
                using T = decltype(zero);
                const T pi = at<T>(p0, i);
                put(p, i, pi - lr * (at<T>(g, i) * gscale + wd * pi));
            });
            return;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov: {
            const float* v0 = state0[0];
            float* v = state[0];
            const float mu = o.momentum;
            const bool nesterov = o.kind == OptimizerKind::Nesterov;
            lanes(first, end, [&](size_t i, auto zero) {
                using T = decltype(zero);
                const T pi = at<T>(p0, i);
                const T gi = at<T>(g, i) * gscale + wd * pi;
                const T vi = mu * at<T>(v0, i) + gi;
                put(v, i, vi);
                put(p, i, pi - lr * (nesterov ? gi + mu * vi : vi));
            });
            return;
        }
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW: {
            const float *m0 = state0[0], *v0 = state0[1];
            float *m = state[0], *v = state[1];
            const float b1 = o.beta1, b2 = o.beta2, eps = o.eps;
            const float bc1 = 1.0f - std::pow(b1, float(t)), bc2 = 1.0f - std::pow(b2, float(t));
            const bool decoupled = o.kind == OptimizerKind::AdamW;
            lanes(first, end, [&](size_t i, auto zero) {
                using T = decltype(zero);
                const T pi = at<T>(p0, i);
                const T gi = at<T>(g, i) * gscale + (decoupled ? T{} : wd * pi);
                const T mi = b1 * at<T>(m0, i) + (1.0f - b1) * gi;
                const T vi = b2 * at<T>(v0, i) + (1.0f - b2) * gi * gi;
                put(m, i, mi);
                put(v, i, vi);
                const T delta = lr * (mi / bc1) / (squareRoot(vi / bc2) + eps);
                put(p, i, (decoupled ? pi - lr * wd * pi : pi) - delta);
            });
            return;
        }
        case OptimizerKind::RMSProp: {
            const float* s0 = state0[0];
            const bool withMomentum = o.stateSlots() > 1;
            const float* b0 = withMomentum ? state0[1] : nullptr;
            float* s = state[0];
            float* b = withMomentum ? state[1] : nullptr;
            const float rho = o.rho, eps = o.eps, mu = o.momentum;
            lanes(first, end, [&](size_t i, auto zero) {
                using T = decltype(zero);
                const T pi = at<T>(p0, i);
                const T gi = at<T>(g, i) * gscale + wd * pi;
                const T si = rho * at<T>(s0, i) + (1.0f - rho) * gi * gi;
                put(s, i, si);
                const T step = gi / (squareRoot(si) + eps);
                if (b) {
                    const T bi = mu * at<T>(b0, i) + step;
                    put(b, i, bi);
                    put(p, i, pi - lr * bi);
                } else {
                    put(p, i, pi - lr * step);
                }
            });
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
