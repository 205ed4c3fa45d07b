// Counter-based random fills on the GPU: uniform, normal, inverted dropout
// mask. Element (r, c) is a pure function of (seed, step, r * cols + c) —
// the generator of include/gltrain/random.hpp, reproduced in
// shaders/lib/random.glsl — so the result does not depend on the layout or
// paging of `out`, and the CPU reference can check it:
//   uniformFill  bit for bit equal to ref::uniformFill<float>
//   dropoutMask  bit for bit equal to ref::dropoutMask<float>
//   normalFill   equal to ref::normalFill<float> up to the GPU's log/cos/sqrt
//                (a few 1e-6 absolute for |z| < 6; see tests/kernels_random_test.cpp)
//
// Each record* returns the recorded Pass so a training loop can draw fresh
// numbers on every replay without recording again:
//   Pass& mask = recordDropoutMask(step, m, seed, 0, 0.5f);
//   for (int s = 0; ...; ++s) { mask.uniformInt("step", s); step.run(); }
// `step` is an int uniform: values must be in [0, 2^24] — Pass stores uniform
// values as floats, so larger ones would be rounded (seeds are passed in two
// 16-bit halves and may be any uint32).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "gltrain/pass_list.hpp"

namespace gltrain {

namespace random_detail {
inline void checkRandomStep(const char* op, uint32_t step) {
    if (step > (1u << 24))
        throw ArgumentError(std::string(op) + ": step " + std::to_string(step) +
                            " is above 2^24 (Pass stores uniforms as floats: it would be rounded)");
}
inline Pass& recordRandom(PassList& list, const char* op, int dist, Tensor& out, uint32_t seed, uint32_t step, float a,
                          float b) {
    if (!out) throw ArgumentError(std::string(op) + ": out is an empty tensor");
    checkRandomStep(op, step);
    Pass& p = list.add(Pass(out.context(), "util/random_fill", {{"DIST", std::to_string(dist)}}));
    p.output(out)
        .uniformInt("rng_seed", int(seed & 0xFFFFu), int(seed >> 16))
        .uniformInt("step", int(step))
        .uniform("a", a)
        .uniform("b", b);
    if (dist == 0) p.uniformInt("opaque", 0);
    return p;
}
}  // namespace random_detail

// out(r, c) = lo + (hi - lo) * u, u = uniform01(seed, step, r * cols + c) in [0, 1) on the grid k 2^-24.
inline Pass& recordUniformFill(PassList& list, Tensor& out, uint32_t seed, uint32_t step, float lo, float hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi))
        throw ArgumentError("uniformFill: bounds [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            ") must be finite");
    return random_detail::recordRandom(list, "uniformFill", 0, out, seed, step, lo, hi);
}
// out(r, c) = mean + stddev * z, z standard normal by Box-Muller from the uniforms at 2i and 2i + 1.
inline Pass& recordNormalFill(PassList& list, Tensor& out, uint32_t seed, uint32_t step, float mean, float stddev) {
    if (!std::isfinite(mean) || !(stddev >= 0.0f) || !std::isfinite(stddev))
        throw ArgumentError("normalFill: mean " + std::to_string(mean) + " and stddev " + std::to_string(stddev) +
                            " must be finite, stddev >= 0");
    return random_detail::recordRandom(list, "normalFill", 1, out, seed, step, mean, stddev);
}
// Inverted dropout: out(r, c) = u >= rate ? 1 / (1 - rate) : 0 (so E[out] = 1); rate in [0, 1).
inline Pass& recordDropoutMask(PassList& list, Tensor& out, uint32_t seed, uint32_t step, float rate) {
    if (!(rate >= 0.0f && rate < 1.0f))
        throw ArgumentError("dropoutMask: rate is " + std::to_string(rate) + " (must be in [0, 1))");
    const float keep = 1.0f / (1.0f - rate);  // as the reference computes it, in float
    return random_detail::recordRandom(list, "dropoutMask", 2, out, seed, step, rate, keep);
}

GLTRAIN_IMMEDIATE(uniformFill, recordUniformFill, (Tensor & out, uint32_t seed, uint32_t step, float lo, float hi),
                  (l, out, seed, step, lo, hi))
GLTRAIN_IMMEDIATE(normalFill, recordNormalFill, (Tensor & out, uint32_t seed, uint32_t step, float mean, float stddev),
                  (l, out, seed, step, mean, stddev))
GLTRAIN_IMMEDIATE(dropoutMask, recordDropoutMask, (Tensor & out, uint32_t seed, uint32_t step, float rate),
                  (l, out, seed, step, rate))

}  // namespace gltrain
