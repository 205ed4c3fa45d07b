// Counter-based random numbers that a GLSL ES 3.00 shader reproduces bit for
// bit with 32-bit uint arithmetic (shaders/lib/random.glsl): every value is a
// pure function of (seed, step, index), so a kernel, the CPU backend and the
// initializers draw element `index` of a matrix without state. index is the
// row-major element index r * cols + c; step distinguishes successive draws
// (e.g. the training step), seed distinguishes streams (e.g. one per layer).
//
// The test oracle (reference/random.hpp) keeps its own copy of these few lines
// so that it checks this one; both are pinned to the same known values
// (tests/random_test.cpp).
#pragma once
#include <cstdint>

namespace gltrain {

// PCG-RXS-M-XS 32-bit output permutation of one LCG step: a good 32-bit
// integer hash (Jarzynski & Olano, "Hash Functions for GPU Rendering", 2020).
inline constexpr uint32_t pcg(uint32_t v) {
    const uint32_t s = v * 747796405u + 2891336453u;
    const uint32_t w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

inline constexpr uint32_t hash3(uint32_t seed, uint32_t step, uint32_t index) {
    return pcg(index ^ pcg(step ^ pcg(seed)));
}

// Uniform in [0, 1) on the grid k * 2^-24, k = 0 .. 2^24 - 1: the top 24 bits
// of the hash, so the conversion and the scaling are exact in fp32.
inline float uniform01(uint32_t seed, uint32_t step, uint32_t index) {
    return float(hash3(seed, step, index) >> 8) * 0x1p-24f;
}

}  // namespace gltrain
