// Counter-based random numbers that a GLSL ES 3.00 shader reproduces bit for
// bit with 32-bit uint arithmetic: every value is a pure function of
// (seed, step, index), so a kernel can draw element `index` of a matrix
// without state, and the CPU can check it. index is the row-major element
// index r * cols + c; step distinguishes successive draws (e.g. the training
// step), seed distinguishes streams (e.g. one per layer).
//
// The GLSL twin (all uint arithmetic wraps mod 2^32, as in C++):
//   uint pcg(uint v) { uint s = v * 747796405u + 2891336453u;
//                      uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
//                      return (w >> 22u) ^ w; }
//   uint hash3(uint seed, uint step, uint index) { return pcg(index ^ pcg(step ^ pcg(seed))); }
//   float uniform01(...) { return float(hash3(...) >> 8u) * exp2(-24.0); }
//
// Uniforms keep the top 24 bits, so float(h >> 8) and the scaling by 2^-24
// are exact in fp32: uniform01 is identical on CPU and GPU. Normals go
// through log/sqrt/cos, whose GPU precision is implementation-defined, so
// they agree to a few ulps, not bit for bit.
//
// Production code draws from gltrain/random.hpp; pcg and hash3 here are the
// oracle's own copy, so that the tests check that one (tests/random_test.cpp).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

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

// Uniform in [0, 1) on the grid k * 2^-24, k = 0 .. 2^24 - 1. Exact in fp32,
// so it is the same number whether T is float or double.
template <class T = float>
T uniform01(uint32_t seed, uint32_t step, uint32_t index) {
    return T(float(hash3(seed, step, index) >> 8) * 0x1p-24f);
}

// Standard normal by Box-Muller from the uniforms at 2*index and 2*index+1
// (2*index wraps mod 2^32, as a GLSL uint does):
//   u1 = (float(h(2i) >> 8) + 0.5) * 2^-24    in (0, 1]: log(u1) is finite
//   u2 =  float(h(2i+1) >> 8)      * 2^-24    in [0, 1)
//   z  = sqrt(-2 ln u1) * cos(2 pi u2)
// u1 and u2 are computed in fp32 exactly like the GLSL (the + 0.5 rounds to
// nearest-even once h >> 8 >= 2^23, and can give u1 = 1, i.e. z = 0); the
// transform then runs in T.
template <class T = float>
T normal(uint32_t seed, uint32_t step, uint32_t index) {
    const float u1 = (float(hash3(seed, step, 2u * index) >> 8) + 0.5f) * 0x1p-24f;
    const float u2 = float(hash3(seed, step, 2u * index + 1u) >> 8) * 0x1p-24f;
    const T twoPi = T(6.283185307179586476925286766559);
    return std::sqrt(T(-2) * std::log(T(u1))) * std::cos(twoPi * T(u2));
}

// X(r, c) = lo + (hi - lo) * uniform01(seed, step, r * cols + c), in [lo, hi)
// up to the rounding of that expression (the GLSL must use the same
// expression, not mix(), to match bit for bit).
template <class T>
HostMatrixT<T> uniformFill(int rows, int cols, uint32_t seed, uint32_t step, detail::NonDeduced<T> lo,
                           detail::NonDeduced<T> hi) {
    HostMatrixT<T> X(rows, cols);
    for (size_t i = 0; i < X.data.size(); ++i) X.data[i] = lo + (hi - lo) * uniform01<T>(seed, step, uint32_t(i));
    return X;
}

// X(r, c) = mean + std * normal(seed, step, r * cols + c).
template <class T>
HostMatrixT<T> normalFill(int rows, int cols, uint32_t seed, uint32_t step, detail::NonDeduced<T> mean,
                          detail::NonDeduced<T> stddev) {
    HostMatrixT<T> X(rows, cols);
    for (size_t i = 0; i < X.data.size(); ++i) X.data[i] = mean + stddev * normal<T>(seed, step, uint32_t(i));
    return X;
}

// Inverted dropout: M(r, c) = uniform01(seed, step, r * cols + c) >= rate ? 1 / (1 - rate) : 0,
// so E[M] = 1 and the forward pass needs no rescaling at inference.
// The comparison is done in T; rate must be in [0, 1) (ArgumentError otherwise).
template <class T>
HostMatrixT<T> dropoutMask(int rows, int cols, uint32_t seed, uint32_t step, detail::NonDeduced<T> rate) {
    if (!(rate >= T(0) && rate < T(1)))
        detail::fail("dropoutMask", "rate is " + std::to_string(rate) + " (must be in [0, 1))");
    const T keep = T(1) / (T(1) - rate);
    HostMatrixT<T> M(rows, cols);
    for (size_t i = 0; i < M.data.size(); ++i) M.data[i] = uniform01<T>(seed, step, uint32_t(i)) >= rate ? keep : T(0);
    return M;
}

}  // namespace gltrain::ref
