// exp and tanh for the CPU backend's element-wise loops. The C library's tanhf
// and expf are scalar calls: on the reference character transformer (issue 39)
// tanhf alone, inside GELU and its derivative, took a fifth of a CPU training
// step. These are written once over T = float or Vec<4> (SSE natively,
// SIMD128 in WebAssembly), with explicit selects: GCC will not if-convert the
// scalar form into a vector loop under -ftrapping-math. mapLanes() runs one
// over an array, four at a time, and the tail one at a time by the same formulas.
//
// Accuracy (checked over every float in the ranges; tests/cpu_ops_test.cpp
// samples it): expApprox within 1 ulp of exp on [-87, 88], tanhApprox within
// 1 ulp of tanh everywhere. Both are Cephes's (S. Moshier) single-precision
// algorithms: exp by n = round(x / ln 2) and a degree-6 polynomial of the
// remainder, tanh by an odd polynomial below 0.625 and 1 - 2 / (e^2|x| + 1)
// above. NaN stays NaN; exp underflows to 0 and overflows to infinity.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gltrain/cpu/simd.hpp"

namespace gltrain::cpu {

namespace fast_math_detail {
using Vec4i = int32_t __attribute__((vector_size(16)));
// m ? a : b, for a scalar or lane by lane.
inline float pick(bool m, float a, float b) { return m ? a : b; }
inline Vec<4> pick(Mask<4> m, Vec<4> a, Vec<4> b) {
    Vec<4> out;
    select<4>(out, m, a, b);
    return out;
}
// c as a T.
template <class T>
T constant(float c) {
    if constexpr (std::is_same_v<T, float>) return c;
    else return Vec<4>{c, c, c, c};
}
// 2^n for an integral n in [-126, 127].
inline float exp2Integral(float n) {
    const int32_t bits = (int32_t(n) + 127) * (int32_t(1) << 23);
    float out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}
inline Vec<4> exp2Integral(Vec<4> n) { return (Vec<4>)((__builtin_convertvector(n, Vec4i) + 127) << 23); }
}  // namespace fast_math_detail

// e^x.
template <class T>
GLTRAIN_ALWAYS_INLINE T expApprox(T x) {
    using namespace fast_math_detail;
    const T kMax = constant<T>(88.3762626647949f), kMin = constant<T>(-87.3365447504019f);
    const T kRound = constant<T>(12582912.0f);  // 1.5 * 2^23: adding and taking it away rounds to an integer
    // Clamped (NaN to 0) so that the conversion to int is always defined.
    const T c = pick(x > kMax, kMax, pick(x < kMin, kMin, pick(x == x, x, T{})));
    const T n = (c * 1.44269504088896341f + kRound) - kRound;
    const T r = (c - n * 0.693359375f) - n * -2.12194440e-4f;  // ln 2 in two parts: r is exact
    T p = constant<T>(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const T e = (p * r * r + r + 1.0f) * exp2Integral(n);
    return pick(x > kMax, constant<T>(std::numeric_limits<float>::infinity()), pick(x < kMin, T{}, pick(x == x, e, x)));
}

// tanh(x).
template <class T>
GLTRAIN_ALWAYS_INLINE T tanhApprox(T x) {
    using namespace fast_math_detail;
    const T a = pick(x < T{}, -x, x);
    // Beyond 9.01, tanh rounds to 1: clamped, e^2a stays finite.
    const T clamped = pick(a > constant<T>(9.5f), constant<T>(9.5f), a);
    const T big = 1.0f - 2.0f / (expApprox(clamped + clamped) + 1.0f);
    const T z = x * x;
    const T small =
        ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
         3.33332819422e-1f) *
            z * x +
        x;
    // NaN: a > 0.625 is false, and small is NaN.
    return pick(a > constant<T>(0.625f), pick(x < T{}, -big, big), small);
}

// y[i] = f(z[i]) for f written over float and Vec<4> (y may be z).
template <class F>
void mapLanes(float* y, const float* z, size_t n, F f) {
    const size_t whole = n - n % 4;
    for (size_t i = 0; i < whole; i += 4) {
        Vec<4> v;
        load<4>(v, z + i);
        store<4>(y + i, f(v));
    }
    for (size_t i = whole; i < n; ++i) y[i] = f(z[i]);
}

// g[i] *= f(z[i]), likewise.
template <class F>
void multiplyLanes(float* g, const float* z, size_t n, F f) {
    const size_t whole = n - n % 4;
    for (size_t i = 0; i < whole; i += 4) {
        Vec<4> v, w;
        load<4>(v, z + i);
        load<4>(w, g + i);
        store<4>(g + i, w * f(v));
    }
    for (size_t i = whole; i < n; ++i) g[i] *= f(z[i]);
}

// The sum of e^(z[i] - m), in double (a large vocabulary's softmax sums
// tens of thousands of terms): the denominator of a softmax of maximum m.
inline double sumExp(const float* z, size_t n, float m) {
    const size_t whole = n - n % 4;
    double s = 0;
    for (size_t i = 0; i < whole; i += 4) {
        Vec<4> v;
        load<4>(v, z + i);
        const Vec<4> e = expApprox(v - m);
        s += (double(e[0]) + double(e[1])) + (double(e[2]) + double(e[3]));
    }
    for (size_t i = whole; i < n; ++i) s += double(expApprox(z[i] - m));
    return s;
}

}  // namespace gltrain::cpu
