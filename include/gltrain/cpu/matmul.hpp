// Matrix products on the CPU: C = op(A) op(B), cache-blocked and
// register-blocked, with the bias, activation and activation-derivative
// epilogues the training step fuses (as the GPU's matmul passes do).
//
// Scheme (the classic one of GotoBLAS/BLIS, sized for one core): the K axis
// is cut into blocks of kKc; for each block the panel of B it touches is
// packed into column strips of NR floats (kKc x NR contiguous: it streams from
// L1), and for each strip of MR rows of A a packed MR x kKc sliver is made;
// the micro-kernel keeps an MR x NR tile of C in registers (MR x NR/W vectors)
// and adds one rank-1 update per k. Packing is where transposes and
// convolutions come in: a packer reads its operand however it is stored (an
// image read as im2col rows, conv.hpp), so one driver serves every product.
// After the last K block a strip of C is finished by the epilogue while it is
// still in cache.
//
// Threads: a product of at least Workspace::parallelMinWork multiply-adds is cut into
// slices of whole strips (MR rows, or NR columns where C is wider than tall),
// one per thread of the Workspace's pool, each packing its own panels; every
// element of C is still summed by one thread in the same order, so the result
// does not depend on the thread count.
//
// Widths: 4 floats (SSE2 natively, SIMD128 in WebAssembly), MR = 4, NR = 8;
// or, natively on CPUs with AVX2 + FMA, 8 floats, MR = 6, NR = 16.
// bench/cpu.cpp measured the shapes; see docs/backends.md, "The CPU backend".
//
// Rounding: every element is a float sum over k in blocks of kKc (and with
// FMA where the CPU has it), so results differ from ref::matmul's ordered sum
// by rounding only; tests/cpu_matmul_test.cpp states the tolerance.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gltrain/cpu/activation.hpp"
#include "gltrain/cpu/simd.hpp"
#include "gltrain/cpu/thread_pool.hpp"
#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"

namespace gltrain::cpu {

// Products of fewer multiply-adds (2^20) run on the calling thread alone: a
// fork and join (a condition variable's wake-up) costs tens of microseconds.
// At 2^18, W2's CNN step (bench_compare_native, 2 cores) ran slower on two
// threads than on one in three runs of four (8.4-8.6 against 7.4-7.6 ms): its
// input gradient's 13 chunks of just under 2^20 were split, a fork and join each.
constexpr double kParallelMinWork = 1048576.0;

// One thread's packed panels: an A sliver and a B panel; and its rows of a
// product that are used once made (a convolution's input gradient, conv.hpp).
struct Panels {
    std::vector<float> a, b, c;
};

// Scratch memory of the products (packed panels, one set per thread), reused
// across calls so the steady state of training allocates nothing; the kernel
// width to use: the 8-wide AVX2 kernel where the CPU has it (natively), else
// the 4-wide one (tests clear `wide` to check the portable kernel on any
// machine); and the pool whose threads share large products (null: the caller
// alone).
struct Workspace {
    std::vector<Panels> panels;   // [t]: thread t's (0: the caller)
    std::vector<float> c;         // a product's own scratch (conv.hpp)
    std::vector<int> taps;        // convolutions: the input offset of every filter row (conv.hpp)
    std::vector<float> partials;  // a product split along k: its blocks' sums but the first (gemm_detail::splitSum)
    bool wide = hasAvx2Fma();
    ThreadPool* pool = nullptr;                 // not owned
    double parallelMinWork = kParallelMinWork;  // smaller products stay on the caller (tests set 0)
};

// How each element of C is finished once its sum over k is complete:
//   z = (accumulate ? C : 0) + sum_k A B + bias[j]
//   preactivation[i, j] = z (when given: training keeps Z for the backward pass)
//   C = activation(z), then C *= derivative'(derivativeAt[i, j]) (when given)
// preactivation and derivativeAt use C's row stride.
struct Epilogue {
    bool accumulate = false;
    const float* bias = nullptr;
    float* preactivation = nullptr;
    Activation activation = Activation::Linear;
    const float* derivativeAt = nullptr;
    Activation derivative = Activation::Linear;
    float alpha = 0.01f;  // LeakyReLU slope of the activation or the derivative
};

namespace gemm_detail {

constexpr int kKc = 256;                    // k per block: an MR x kKc sliver of A stays in L1
constexpr int kNc = 256;                    // columns of B packed at once: kKc x kNc floats = 256 KiB (L2)
constexpr double kMaxPartials = 4194304.0;  // floats (16 MiB) a product split along k may keep (splitSum)

// The epilogue of one tile, applied in registers as the tile is stored —
// the piecewise-linear cases a step uses (bias, Z kept, ReLU and its
// derivative); anything else goes through finish(). Pointers are at the
// tile's origin, with C's row stride.
struct TileEpilogue {
    const float* bias = nullptr;    // the tile's columns of the bias
    float* z = nullptr;             // where Z goes
    bool relu = false;              // C = max(Z, 0) (NaN stays NaN, as cpu::scalar::activate)
    const float* reluAt = nullptr;  // C *= (reluAt > 0 ? 1 : 0), the ReLU derivative
};

// One MR x (NV*W) tile: C_tile = (add ? C_tile : 0) + sum_k a[k*MR + r] * b[k*NR + c],
// then the epilogue `te` if given. rows/cols < MR/NR: only that corner is
// read and written (through zero-padded local copies).
template <int W, int MR, int NV>
GLTRAIN_ALWAYS_INLINE void microKernel(int kc, const float* a, const float* b, float* c, int ldc, int rows, int cols,
                                       bool add, const TileEpilogue* te) {
    constexpr int NR = W * NV;
    Vec<W> acc[MR][NV];
    GLTRAIN_UNROLL
    for (int r = 0; r < MR; ++r) GLTRAIN_UNROLL
    for (int j = 0; j < NV; ++j) splat<W>(acc[r][j], 0.0f);
    for (int k = 0; k < kc; ++k) {
        Vec<W> bv[NV];
        GLTRAIN_UNROLL
        for (int j = 0; j < NV; ++j) load<W>(bv[j], b + k * NR + j * W);
        GLTRAIN_UNROLL
        for (int r = 0; r < MR; ++r) {
            // A scalar times a vector, not splat(): GCC builds an 8-wide splat
            // from inserts when splat() is inlined from code compiled without
            // AVX, which halved the AVX2 kernel's speed; this is one vbroadcastss.
            const float av = a[k * MR + r];
            GLTRAIN_UNROLL
            for (int j = 0; j < NV; ++j) acc[r][j] += av * bv[j];
        }
    }
    const bool full = rows == MR && cols == NR;
    // A tile-shaped view of an MR x NR block at p (stride ld): p itself when
    // the tile is full, else a zero-padded copy.
    float pad[3][MR * NR];
    auto view = [&](const float* p, int ld, int slot, int& stride) -> const float* {
        if (full) return stride = ld, p;
        std::fill(pad[slot], pad[slot] + MR * NR, 0.0f);
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < cols; ++j) pad[slot][r * NR + j] = p[r * ld + j];
        return stride = NR, pad[slot];
    };
    if (add) {
        int ld;
        const float* old = view(c, ldc, 0, ld);
        GLTRAIN_UNROLL
        for (int r = 0; r < MR; ++r) GLTRAIN_UNROLL
        for (int j = 0; j < NV; ++j) {
            Vec<W> v;
            load<W>(v, old + r * ld + j * W);
            acc[r][j] += v;
        }
    }
    float* out = c;  // where the tile is stored (a local copy when partial)
    int outLd = ldc;
    if (te) {
        if (te->bias) {
            float bias[NR] = {};
            for (int j = 0; j < cols; ++j) bias[j] = te->bias[j];
            GLTRAIN_UNROLL
            for (int j = 0; j < NV; ++j) {
                Vec<W> v;
                load<W>(v, bias + j * W);
                GLTRAIN_UNROLL
                for (int r = 0; r < MR; ++r) acc[r][j] += v;
            }
        }
        if (te->z) {
            float* z = full ? te->z : pad[1];
            const int ld = full ? ldc : NR;
            GLTRAIN_UNROLL
            for (int r = 0; r < MR; ++r) GLTRAIN_UNROLL
            for (int j = 0; j < NV; ++j) store<W>(z + r * ld + j * W, acc[r][j]);
            if (!full)
                for (int r = 0; r < rows; ++r)
                    for (int j = 0; j < cols; ++j) te->z[r * ldc + j] = pad[1][r * NR + j];
        }
        Vec<W> zero, one;
        splat<W>(zero, 0.0f);
        splat<W>(one, 1.0f);
        if (te->relu) GLTRAIN_UNROLL
        for (int r = 0; r < MR; ++r) GLTRAIN_UNROLL
        for (int j = 0; j < NV; ++j) select<W>(acc[r][j], acc[r][j] < zero, zero, acc[r][j]);
        if (te->reluAt) {
            int ld;
            const float* zs = view(te->reluAt, ldc, 2, ld);
            GLTRAIN_UNROLL
            for (int r = 0; r < MR; ++r) GLTRAIN_UNROLL
            for (int j = 0; j < NV; ++j) {
                Vec<W> v, d;
                load<W>(v, zs + r * ld + j * W);
                select<W>(d, v > zero, one, zero);
                acc[r][j] *= d;
            }
        }
    }
    if (!full) out = pad[0], outLd = NR;
    GLTRAIN_UNROLL
    for (int r = 0; r < MR; ++r) GLTRAIN_UNROLL
    for (int j = 0; j < NV; ++j) store<W>(out + r * outLd + j * W, acc[r][j]);
    if (!full)
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < cols; ++j) c[r * ldc + j] = pad[0][r * NR + j];
}

// The portable kernel (4-wide) and, natively, the AVX2 ones (8-wide, FMA;
// a one-vector-wide form for products of at most 8 columns, such as small
// convolutions, which the two-vector form would half waste).
struct Kernel4 {
    static constexpr int MR = 4, NR = 8;
    static void run(int kc, const float* a, const float* b, float* c, int ldc, int rows, int cols, bool add,
                    const TileEpilogue* te) {
        microKernel<4, 4, 2>(kc, a, b, c, ldc, rows, cols, add, te);
    }
};
#if GLTRAIN_HAVE_AVX2_PATH
struct Kernel8 {
    static constexpr int MR = 6, NR = 16;
    GLTRAIN_TARGET_AVX2 static void run(int kc, const float* a, const float* b, float* c, int ldc, int rows, int cols,
                                        bool add, const TileEpilogue* te) {
        microKernel<8, 6, 2>(kc, a, b, c, ldc, rows, cols, add, te);
    }
};
struct Kernel8Narrow {
    static constexpr int MR = 8, NR = 8;
    GLTRAIN_TARGET_AVX2 static void run(int kc, const float* a, const float* b, float* c, int ldc, int rows, int cols,
                                        bool add, const TileEpilogue* te) {
        microKernel<8, 8, 1>(kc, a, b, c, ldc, rows, cols, add, te);
    }
};
#endif

// Finishes rows [i0, i0 + rows) x columns [j0, j0 + cols) of C.
inline void finish(float* C, int ldc, int i0, int rows, int j0, int cols, const Epilogue& e) {
    for (int i = i0; i < i0 + rows; ++i) {
        float* c = C + size_t(i) * size_t(ldc) + j0;
        if (e.bias)
            for (int j = 0; j < cols; ++j) c[j] += e.bias[j0 + j];
        if (e.preactivation)
            std::memcpy(e.preactivation + size_t(i) * size_t(ldc) + j0, c, sizeof(float) * size_t(cols));
        activate(c, c, size_t(cols), e.activation, e.alpha);
        if (e.derivativeAt)
            multiplyDerivative(c, e.derivativeAt + size_t(i) * size_t(ldc) + j0, size_t(cols), e.derivative, e.alpha);
    }
}

template <class K, class PackA, class PackB>
void drive(int M, int N, int Kdim, const PackA& packA, const PackB& packB, float* C, int ldc, const Epilogue& e,
           Panels& panels) {
    constexpr int MR = K::MR, NR = K::NR;
    if (Kdim == 0) {  // an empty sum: C = (accumulate ? C : 0), then the epilogue
        if (!e.accumulate)
            for (int i = 0; i < M; ++i) std::fill(C + size_t(i) * size_t(ldc), C + size_t(i) * size_t(ldc) + N, 0.0f);
        finish(C, ldc, 0, M, 0, N, e);
        return;
    }
    // Bias, Z, ReLU and ReLU' happen in registers; other activations after.
    const bool fused = (e.activation == Activation::Linear || e.activation == Activation::ReLU) &&
                       (!e.derivativeAt || e.derivative == Activation::Linear || e.derivative == Activation::ReLU);
    panels.a.resize(size_t(MR) * kKc);
    panels.b.resize(size_t(kKc) * size_t((std::min(N, kNc) + NR - 1) / NR * NR));
    for (int k0 = 0; k0 < Kdim; k0 += kKc) {
        const int kc = std::min(kKc, Kdim - k0);
        const bool add = k0 > 0 || e.accumulate, last = k0 + kc >= Kdim;
        for (int j0 = 0; j0 < N; j0 += kNc) {
            const int nc = std::min(kNc, N - j0), strips = (nc + NR - 1) / NR;
            for (int s = 0; s < strips; ++s)
                packB(panels.b.data() + size_t(s) * NR * size_t(kc), j0 + s * NR, std::min(NR, nc - s * NR), k0, kc,
                      NR);
            for (int i0 = 0; i0 < M; i0 += MR) {
                const int rows = std::min(MR, M - i0);
                packA(panels.a.data(), i0, rows, k0, kc, MR);
                for (int s = 0; s < strips; ++s) {
                    const int jt = j0 + s * NR;
                    TileEpilogue te;
                    if (last && fused) {
                        te.bias = e.bias ? e.bias + jt : nullptr;
                        te.z = e.preactivation ? e.preactivation + size_t(i0) * size_t(ldc) + jt : nullptr;
                        te.relu = e.activation == Activation::ReLU;
                        te.reluAt = e.derivativeAt && e.derivative == Activation::ReLU
                                        ? e.derivativeAt + size_t(i0) * size_t(ldc) + jt
                                        : nullptr;
                    }
                    K::run(kc, panels.a.data(), panels.b.data() + size_t(s) * NR * size_t(kc),
                           C + size_t(i0) * size_t(ldc) + jt, ldc, rows, std::min(NR, nc - s * NR), add,
                           last && fused ? &te : nullptr);
                }
                if (last && !fused) finish(C, ldc, i0, rows, j0, nc, e);
            }
        }
    }
}

// A row-major matrix as an operand: element (i, k) of op(X) is
// X[i * ld + k], or X[k * ld + i] when transposed.
struct Strided {
    const float* data;
    int ld;
    bool trans;
    // Rows [i0, i0 + rows) x k [k0, k0 + kc) as dst[k * MR + r], zero past `rows`.
    // Each case reads its source in order (a run of rows at each k, or a
    // row's run of k): the sliver is small enough to take the scattered writes.
    void packRows(float* dst, int i0, int rows, int k0, int kc, int MR) const {
        if (trans) {
            for (int k = 0; k < kc; ++k) {
                const float* src = data + size_t(k0 + k) * size_t(ld) + size_t(i0);
                float* d = dst + size_t(k) * size_t(MR);
                for (int r = 0; r < rows; ++r) d[r] = src[r];
                for (int r = rows; r < MR; ++r) d[r] = 0.0f;
            }
            return;
        }
        for (int r = 0; r < MR; ++r) {
            float* d = dst + r;
            if (r >= rows) {
                for (int k = 0; k < kc; ++k) d[size_t(k) * size_t(MR)] = 0.0f;
                continue;
            }
            const float* src = data + size_t(i0 + r) * size_t(ld) + size_t(k0);
            for (int k = 0; k < kc; ++k) d[size_t(k) * size_t(MR)] = src[k];
        }
    }
};
// op(A) is M x K: packed as rows of the product.
struct PackStridedA {
    Strided s;
    void operator()(float* dst, int i0, int rows, int k0, int kc, int MR) const {
        s.packRows(dst, i0, rows, k0, kc, MR);
    }
};
// op(B) is K x N: packed as columns; B(k, j) = B[k * ld + j], or B[j * ld + k] when transposed.
struct PackStridedB {
    Strided s;  // B as stored, trans: op(B) = B^T
    void operator()(float* dst, int j0, int cols, int k0, int kc, int NR) const {
        if (!s.trans) {  // op(B)^T transposed = B itself, row k contiguous over j
            for (int k = 0; k < kc; ++k) {
                float* d = dst + size_t(k) * size_t(NR);
                std::memcpy(d, s.data + size_t(k0 + k) * size_t(s.ld) + j0, sizeof(float) * size_t(cols));
                for (int c = cols; c < NR; ++c) d[c] = 0.0f;
            }
        } else {  // op(B)^T = B, stored N x K: a plain row read
            Strided{s.data, s.ld, false}.packRows(dst, j0, cols, k0, kc, NR);
        }
    }
};

// Packers of a slice: row i of op(A) is row m0 + i; column j of op(B) is n0 + j.
template <class PackA>
struct RowsFrom {
    const PackA& p;
    int m0;
    void operator()(float* dst, int i0, int rows, int k0, int kc, int MR) const { p(dst, m0 + i0, rows, k0, kc, MR); }
};
template <class PackB>
struct ColsFrom {
    const PackB& p;
    int n0;
    void operator()(float* dst, int j0, int cols, int k0, int kc, int NR) const { p(dst, n0 + j0, cols, k0, kc, NR); }
};
// Either operand's packer for a stretch of the sum: k is k0 + k.
template <class Pack>
struct KFrom {
    const Pack& p;
    int k0;
    void operator()(float* dst, int at, int count, int k, int kc, int R) const { p(dst, at, count, k0 + k, kc, R); }
};

// Whether e only stores the sum (or adds it to C): nothing to finish per element.
inline bool plainSum(const Epilogue& e) {
    return !e.bias && !e.preactivation && !e.derivativeAt && e.activation == Activation::Linear;
}

// The largest fraction of [0, extent) that a cut into `parts` contiguous
// ranges of whole units (the last one maybe short) gives one thread, as
// split() and splitSum() cut: the packing and the useful multiply-adds go
// with the extent, not with the padded units.
inline double largestShare(int extent, int unit, int parts) {
    const int units = (extent + unit - 1) / unit;
    int most = 0;
    for (int t = 0; t < parts; ++t)
        most = std::max(most, std::min(extent, units * (t + 1) / parts * unit) - units * t / parts * unit);
    return double(most) / extent;
}

// A product with a long sum and a C too narrow to cut evenly (a convolution's
// filter gradient: F x kh*kw*C, summed over every pixel of the batch) split
// along k: thread t makes the products of a range of whole kKc blocks, block 0
// into C (added to it when accumulating) and block b into ws.partials' b-th
// M x N; then C += block 1, C += block 2, ... element by element. drive()
// adds each block's register sums to C in that order too, so the bits are
// the ones it gives on one thread.
template <class K, class PackA, class PackB>
void splitSum(int M, int N, int Kdim, const PackA& packA, const PackB& packB, float* C, int ldc, const Epilogue& e,
              Workspace& ws, int parts) {
    const int blocks = (Kdim + kKc - 1) / kKc;
    const size_t area = size_t(M) * size_t(N);
    ws.partials.resize(size_t(blocks - 1) * area);
    ws.pool->run([&](int t) {
        if (t >= parts) return;
        for (int b = blocks * t / parts; b < blocks * (t + 1) / parts; ++b) {
            const int k0 = b * kKc, kc = std::min(kKc, Kdim - k0);
            Epilogue block;
            block.accumulate = b == 0 && e.accumulate;
            float* out = b == 0 ? C : ws.partials.data() + size_t(b - 1) * area;
            drive<K>(M, N, kc, KFrom<PackA>{packA, k0}, KFrom<PackB>{packB, k0}, out, b == 0 ? ldc : N, block,
                     ws.panels[size_t(t)]);
        }
    });
    for (int i = 0; i < M; ++i) {
        float* c = C + size_t(i) * size_t(ldc);
        for (int b = 1; b < blocks; ++b) {
            const float* p = ws.partials.data() + size_t(b - 1) * area + size_t(i) * size_t(N);
            for (int j = 0; j < N; ++j) c[j] += p[j];
        }
    }
}

// drive() on the calling thread, or on slices of C across ws.pool's threads.
// Each thread packs the whole of the operand it does not slice, so C is cut
// along its longer side: rows when M >= N (B's panels are packed once per
// thread), else columns (A's slivers are). Where whole kKc blocks of the sum
// share out more evenly than the strips of C do (by more than a twentieth of
// the product: the blocks' sums go through memory and are added on one
// thread), and C only receives the sum, the sum is split instead (splitSum:
// the same bits).
template <class K, class PackA, class PackB>
void split(int M, int N, int Kdim, const PackA& packA, const PackB& packB, float* C, int ldc, const Epilogue& e,
           Workspace& ws) {
    const bool byRows = M >= N;
    const int unit = byRows ? K::MR : K::NR, extent = byRows ? M : N;
    const int pieces = (extent + unit - 1) / unit, blocks = (Kdim + kKc - 1) / kKc;
    const int threads = ws.pool ? ws.pool->size() : 1;
    const bool alone = threads == 1 || double(M) * double(N) * double(Kdim) < ws.parallelMinWork;
    const int parts = alone ? 1 : std::min(threads, pieces), sumParts = alone ? 1 : std::min(threads, blocks);
    if (ws.panels.size() < size_t(std::max(parts, sumParts))) ws.panels.resize(size_t(std::max(parts, sumParts)));
    if (sumParts > 1 && plainSum(e) && largestShare(Kdim, kKc, sumParts) + 0.05 < largestShare(extent, unit, parts) &&
        double(blocks) * M * N <= kMaxPartials)
        return splitSum<K>(M, N, Kdim, packA, packB, C, ldc, e, ws, sumParts);
    if (parts == 1) return drive<K>(M, N, Kdim, packA, packB, C, ldc, e, ws.panels[0]);
    ws.pool->run([&](int t) {
        if (t >= parts) return;
        const int lo = pieces * t / parts * unit, hi = std::min(extent, pieces * (t + 1) / parts * unit);
        Epilogue slice = e;  // bias runs along columns; Z and f' have C's shape
        if (byRows) {
            const size_t at = size_t(lo) * size_t(ldc);
            if (slice.preactivation) slice.preactivation += at;
            if (slice.derivativeAt) slice.derivativeAt += at;
            drive<K>(hi - lo, N, Kdim, RowsFrom<PackA>{packA, lo}, packB, C + at, ldc, slice, ws.panels[size_t(t)]);
        } else {
            if (slice.bias) slice.bias += lo;
            if (slice.preactivation) slice.preactivation += lo;
            if (slice.derivativeAt) slice.derivativeAt += lo;
            drive<K>(M, hi - lo, Kdim, packA, ColsFrom<PackB>{packB, lo}, C + lo, ldc, slice, ws.panels[size_t(t)]);
        }
    });
}

// run(Kernel{}) with the kernel for products of N columns: the 8-wide AVX2
// kernel where `wide` (its one-vector form up to 8 columns), else the 4-wide one.
template <class Run>
void withKernel(bool wide, int N, Run&& run) {
#if GLTRAIN_HAVE_AVX2_PATH
    if (wide && N <= 8) return run(Kernel8Narrow{});
    if (wide) return run(Kernel8{});
#else
    (void)wide, (void)N;
#endif
    run(Kernel4{});
}

}  // namespace gemm_detail

// C (M x N, row stride ldc) = op(A) op(B) finished by `e`, op(A) M x K and
// op(B) K x N produced by packers (see gemm_detail::Strided for the contract:
// packA(dst, i0, rows, k0, kc, MR) writes dst[k * MR + r] for the rows of op(A),
// packB(dst, j0, cols, k0, kc, NR) writes dst[k * NR + c] for the columns of op(B),
// both zero-filled past rows/cols).
template <class PackA, class PackB>
void gemm(int M, int N, int K, const PackA& packA, const PackB& packB, float* C, int ldc, const Epilogue& e,
          Workspace& ws) {
    if (M <= 0 || N <= 0) return;
    gemm_detail::withKernel(
        ws.wide, N, [&](auto kernel) { gemm_detail::split<decltype(kernel)>(M, N, K, packA, packB, C, ldc, e, ws); });
}

// gemm() on the calling thread alone with `panels`: for many small products
// that share the pool by products instead (cpu/attention.hpp).
template <class PackA, class PackB>
void gemmSerial(int M, int N, int K, const PackA& packA, const PackB& packB, float* C, int ldc, const Epilogue& e,
                bool wide, Panels& panels) {
    if (M <= 0 || N <= 0) return;
    gemm_detail::withKernel(
        wide, N, [&](auto kernel) { gemm_detail::drive<decltype(kernel)>(M, N, K, packA, packB, C, ldc, e, panels); });
}

// C = op(A) op(B) for row-major arrays: A is M x K (K x M when transA, row
// stride lda), B is K x N (N x K when transB, row stride ldb).
inline void matmul(int M, int N, int K, const float* A, int lda, bool transA, const float* B, int ldb, bool transB,
                   float* C, int ldc, const Epilogue& e, Workspace& ws) {
    gemm(M, N, K, gemm_detail::PackStridedA{{A, lda, transA}}, gemm_detail::PackStridedB{{B, ldb, transB}}, C, ldc, e,
         ws);
}

// The same on HostMatrix operands (tests and one-off use): shapes are checked,
// naming both. e.bias must hold op(B).cols floats; preactivation and
// derivativeAt, M x N.
inline HostMatrix matmul(const HostMatrix& A, const HostMatrix& B, bool transA = false, bool transB = false,
                         const Epilogue& e = {}) {
    const int M = transA ? A.cols : A.rows, K = transA ? A.rows : A.cols;
    const int Kb = transB ? B.cols : B.rows, N = transB ? B.rows : B.cols;
    if (K != Kb)
        throw ArgumentError("cpu::matmul: op(A) is " + std::to_string(M) + "x" + std::to_string(K) + " but op(B) is " +
                            std::to_string(Kb) + "x" + std::to_string(N) + " (inner sizes must match)");
    if (e.accumulate) throw ArgumentError("cpu::matmul: accumulate needs an existing C (use the array form)");
    HostMatrix C(M, N);
    Workspace ws;
    matmul(M, N, K, A.data.data(), A.cols, transA, B.data.data(), B.cols, transB, C.data.data(), N, e, ws);
    return C;
}

}  // namespace gltrain::cpu
