// SIMD vectors of floats for the CPU backend's kernels, written once with the
// GCC/Clang vector extensions: `Vec<4>` compiles to SSE natively (x86-64's
// baseline) and to WebAssembly SIMD128 under em++ -msimd128; `Vec<8>` is used
// only inside functions marked GLTRAIN_TARGET_AVX2 (AVX2 + FMA, chosen at run
// time by hasAvx2Fma()), so the library still runs on any x86-64.
// Loads and stores go through memcpy: no alignment is assumed, and compilers
// turn it into one unaligned vector load or store.
#pragma once
#include <cmath>
#include <cstring>

namespace gltrain::cpu {

template <int W>
struct VecOf;
template <>
struct VecOf<4> {
    typedef float type __attribute__((vector_size(16)));
};
template <>
struct VecOf<8> {
    typedef float type __attribute__((vector_size(32)));
};
template <int W>
using Vec = typename VecOf<W>::type;

#define GLTRAIN_ALWAYS_INLINE inline __attribute__((always_inline))
// Full unrolling of the register-blocked loops (both GCC and Clang read it).
#define GLTRAIN_UNROLL _Pragma("GCC unroll 16")

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
#define GLTRAIN_HAVE_AVX2_PATH 1
#define GLTRAIN_TARGET_AVX2 __attribute__((target("avx2,fma")))
// Whether this CPU runs the 8-wide kernels (a property of the machine, asked once).
inline bool hasAvx2Fma() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}
#else
#define GLTRAIN_HAVE_AVX2_PATH 0
inline bool hasAvx2Fma() { return false; }
#endif

// Results come back through a reference: a function compiled without AVX
// that returned an 8-wide vector by value would draw GCC's ABI warning.
template <int W>
GLTRAIN_ALWAYS_INLINE void load(Vec<W>& v, const float* p) {
    std::memcpy(&v, p, sizeof v);
}
template <int W>
GLTRAIN_ALWAYS_INLINE void store(float* p, const Vec<W>& v) {
    std::memcpy(p, &v, sizeof v);
}
// out = mask ? a : b, lane by lane, for a mask from a comparison of two vectors
// (all bits set where true): bit operations, as every target has them.
template <int W>
using Mask = decltype(Vec<W>{} < Vec<W>{});
template <int W>
GLTRAIN_ALWAYS_INLINE void select(Vec<W>& out, const Mask<W>& m, const Vec<W>& a, const Vec<W>& b) {
    out = (Vec<W>)(((Mask<W>)a & m) | ((Mask<W>)b & ~m));
}
// Spelled out: a loop over the lanes is not always unrolled (Clang left one
// storing lane by lane through memory, 100x slower in WebAssembly).
template <int W>
GLTRAIN_ALWAYS_INLINE void splat(Vec<W>& v, float x) {
    if constexpr (W == 4) v = Vec<4>{x, x, x, x};
    else v = Vec<8>{x, x, x, x, x, x, x, x};
}

// The square root, correctly rounded (the same bits as std::sqrt) for a float
// or lane by lane. Written out because std::sqrt in a loop keeps GCC from
// vectorising it where math functions set errno (its default natively): the
// optimizer updates ran 4x slower for it (cpu/optimizer.hpp).
inline float squareRoot(float x) { return std::sqrt(x); }
GLTRAIN_ALWAYS_INLINE Vec<4> squareRoot(const Vec<4>& x) {
#if defined(__EMSCRIPTEN__)
    return __builtin_wasm_sqrt_f32x4(x);
#elif defined(__x86_64__)
    return __builtin_ia32_sqrtps(x);
#else
    return Vec<4>{std::sqrt(x[0]), std::sqrt(x[1]), std::sqrt(x[2]), std::sqrt(x[3])};
#endif
}

}  // namespace gltrain::cpu
