// Matrix products and the fused dense layer.
//
//   C = A·B, C = Aᵀ·B (the weight gradient Xᵀ·dZ), C = A·Bᵀ (the input
//   gradient dZ·Wᵀ) — the transposes are read from the stored operands, never
//   materialised — with optional epilogues fused into the last pass: + bias,
//   activation f, or (backward) * f'(Z).
//
// Long reductions are split into passes of at most `maxKPerPass` k each that
// accumulate through a pair of temporaries (CPREV): one long loop in a
// fragment can trip a browser's GPU watchdog, and on our renderers the split
// is faster (see MatmulOptions::maxKPerPass).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "gltrain/activation.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain {

// Which compute-shader matmul runs (where compute kernels run): Auto chooses
// by the product's size (detail::largeComputeTile); Small and Large force one
// (tests, benchmarks).
enum class ComputeTile { Auto, Small, Large };

struct MatmulOptions {
    bool transA = false;           // C = Aᵀ·B (A stored K x M)
    bool transB = false;           // C = A·Bᵀ (B stored N x K)
    const Tensor* bias = nullptr;  // 1 x N, added after the product
    Activation act = Activation::Linear;
    float actAlpha = 0.01f;         // LeakyReLU slope or ELU alpha
    const Tensor* dactZ = nullptr;  // backward epilogue: C *= f'(Z), Z is M x N, f = act
    // K-split threshold (a multiple of 4) of the fragment kernels; the compute
    // kernel runs all of K in one dispatch. Measured (bench/kernels, llvmpipe,
    // 256 x 4096 x 256 blocked): 1 pass 1.7 GFLOP/s, 2 passes 2.5, 4 passes
    // 2.9, 8 passes of 512 3.5 — shorter loops keep a CPU renderer's working
    // set in cache, and a GPU pays ~nothing for the extra passes.
    int maxKPerPass = 512;
    ComputeTile computeTile = ComputeTile::Auto;
};

namespace detail {
// The K-split: passes of at most o.maxKPerPass k each accumulate through a
// pair of temporaries shaped like `like` (CPREV); the last pass runs
// `lastKernel` (with `lastDefines` besides the matmul's), whose extra inputs
// and outputs `bindLast` binds.
template <class BindLast>
void recordMatmulSlices(PassList& list, const Tensor& a, const Tensor& b, const Tensor& like, const MatmulOptions& o,
                        const char* lastKernel, BindLast bindLast, const char* sliceKernel = "forward/matmul",
                        const Defines& lastDefines = {}) {
    Context& ctx = a.context();
    const int k = o.transA ? a.rows() : a.cols();
    const int passes = (k + o.maxKPerPass - 1) / o.maxKPerPass;
    Tensor* partial[2] = {nullptr, nullptr};
    if (passes > 1) partial[0] = &list.temp(ctx, like.rows(), like.cols(), like.layout());
    if (passes > 2) partial[1] = &list.temp(ctx, like.rows(), like.cols(), like.layout());
    for (int i = 0; i < passes; ++i) {
        const bool last = i == passes - 1;
        Defines d = {{"TRANS_A", o.transA ? "1" : "0"},
                     {"TRANS_B", o.transB ? "1" : "0"},
                     {"ACT", last ? std::to_string(int(o.act)) : "0"},
                     {"DACT", last && o.dactZ ? "1" : "0"}};
        if (last) d.insert(d.end(), lastDefines.begin(), lastDefines.end());
        Pass& p = list.add(Pass(ctx, last ? lastKernel : sliceKernel, d));
        p.input("A", a).input("B", b);
        if (i > 0) p.input("CPREV", *partial[(i - 1) % 2]);
        if (last) bindLast(p);
        else p.output(*partial[i % 2]);
        p.uniformInt("k0", i * o.maxKPerPass).uniformInt("k1", std::min(k, (i + 1) * o.maxKPerPass));
        if (last && activationUsesAlpha(o.act)) p.uniform("act_alpha", o.actAlpha);
    }
}
}  // namespace detail

namespace detail {
// C = op(A)·op(B)'s shapes, given as (rows, cols): also checked for the
// JavaScript Tensors a CPU-backend Context keeps in host memory.
inline void validateMatmulShapes(std::pair<int, int> a, std::pair<int, int> b, std::pair<int, int> c, bool transA,
                                 bool transB) {
    auto str = [](std::pair<int, int> s) { return std::to_string(s.first) + "x" + std::to_string(s.second); };
    const int m = transA ? a.second : a.first, ka = transA ? a.first : a.second;
    const int kb = transB ? b.second : b.first, n = transB ? b.first : b.second;
    const std::string desc = std::string(transA ? "Aᵀ" : "A") + " (A is " + str(a) + ") · " + (transB ? "Bᵀ" : "B") +
                             " (B is " + str(b) + ")";
    if (ka != kb) throw ArgumentError("matmul: inner dimensions differ: " + desc);
    if (c.first != m || c.second != n)
        throw ArgumentError("matmul: C is " + str(c) + ", expected " + std::to_string(m) + "x" + std::to_string(n) +
                            " for " + desc);
}

inline void validateMatmul(const Tensor& a, const Tensor& b, const Tensor& c, const MatmulOptions& o) {
    if (!a || !b || !c) throw ArgumentError("matmul: an operand is an empty tensor");
    validateMatmulShapes({a.rows(), a.cols()}, {b.rows(), b.cols()}, {c.rows(), c.cols()}, o.transA, o.transB);
    const int m = o.transA ? a.cols() : a.rows();
    const int n = o.transB ? b.rows() : b.cols();
    if (o.bias && (o.bias->rows() != 1 || o.bias->cols() != n))
        throw ArgumentError("matmul: bias is " + o.bias->shapeString() + ", expected 1x" + std::to_string(n));
    if (o.dactZ && (o.dactZ->rows() != m || o.dactZ->cols() != n))
        throw ArgumentError("matmul: Z (for f'(Z)) is " + o.dactZ->shapeString() + ", expected " + std::to_string(m) +
                            "x" + std::to_string(n));
    if (o.maxKPerPass < 4 || o.maxKPerPass % 4)
        throw ArgumentError("matmul: maxKPerPass must be a positive multiple of 4");
    requireActivation("matmul", o.act, o.actAlpha);
    requireSameContext("matmul", "A", a, "B", b);
    requireSameContext("matmul", "A", a, "C", c);
    if (o.bias) requireSameContext("matmul", "A", a, "bias", *o.bias);
    if (o.dactZ) requireSameContext("matmul", "A", a, "Z", *o.dactZ);
    // Pass::run refuses this too, but the transform-feedback kernel writes a
    // staging tensor first, so no single pass would see it.
    const std::pair<const char*, const Tensor*> inputs[] = {{"A", &a}, {"B", &b}, {"bias", o.bias}, {"Z", o.dactZ}};
    for (auto& [name, t] : inputs)
        if (t && t->texture() == c.texture())
            throw ArgumentError(std::string("matmul: an output is also input '") + name +
                                "' (C shares its texture); write the product to another tensor");
}
}  // namespace detail

namespace detail {
// The transform-feedback matmul's block (forward/matmul_feedback's "// block:
// BLOCK_ROWS x 2": rows x column texels): 12 rows where a vertex can output and
// capture 24 vec4s (SwiftShader: 32), else the 8 (16 vec4s) every OpenGL ES 3.0
// device can (llvmpipe's limit).
constexpr int kFeedbackBlockTexels = 2;
inline int feedbackBlockRows(const Context& ctx) {
    return ctx.caps().maxFeedbackComponents >= 12 * kFeedbackBlockTexels * 4 ? 12 : 8;
}

// The most K one feedback draw runs (about the longest loop the fragment
// kernels' default split runs in 2 passes); a longer K runs in equal slices,
// one draw each, summed into the staging tensor (recordMatmulFeedback). Before
// the split, K past this left feedback for the one-texel fragment kernel (C
// keeps feedback's Packed layout, which the block kernel cannot write): in
// Chromium on SwiftShader N = 1040 ran 0.77 GFLOP/s against 2.37 at N = 1024.
constexpr int kFeedbackMaxK = 1024;

// K per feedback draw: equal slices of at most kFeedbackMaxK, each a multiple
// of 8 (the kernel's loop steps 8 k; Aᵀ·B 4, A·Bᵀ reads whole texels).
inline int feedbackSliceK(int k) {
    const int draws = (k + kFeedbackMaxK - 1) / kFeedbackMaxK;
    return ((k + draws - 1) / draws + 7) / 8 * 8;
}

// The staging tensor the feedback kernel writes for C: one texel row per block
// row (ceil(M / R)), holding that row's blocks one after another.
struct FeedbackStaging {
    int blockRows;   // R
    int rows, cols;  // cols in values: blocks per row x R rows x 2 texels x 4
};
inline FeedbackStaging feedbackStaging(const Tensor& c) {
    const int r = feedbackBlockRows(c.context());
    const int blocksPerRow = (c.geometry().texelsPerRow + kFeedbackBlockTexels - 1) / kFeedbackBlockTexels;
    return {r, (c.rows() + r - 1) / r, blocksPerRow * r * kFeedbackBlockTexels * 4};
}

// Whether C's staging tensor fits the texture size (a row per block row).
inline bool feedbackStagingFits(const Tensor& c) {
    const FeedbackStaging staging = feedbackStaging(c);
    const int maxSize = c.context().maxTextureSize();
    return staging.cols / 4 <= maxSize && staging.rows <= maxSize;
}

// Where the feedback kernel can run: the context chose it, one operand at most
// transposed, and the staging tensor within the texture size (any K: slices of
// feedbackSliceK). It runs for any size when C is not row-interleaved (the
// block kernel cannot write it, and the one-texel kernel is slower: in
// Chromium on SwiftShader, packed N = 128 / 256 ran 2.5 / 2.9 GFLOP/s one
// texel a fragment against 2.8-3.0 / 3.9-6.8 by feedback; at 100 x 100 x 100
// both ran 1.05-1.11 GFLOP/s, bench/sweep), else from
// ContextOptions::feedbackMinWork multiply-adds on (below, the block kernel's
// one pass beats feedback's two).
inline bool feedbackFits(const Tensor& a, const Tensor& c, const MatmulOptions& o) {
    Context& ctx = c.context();
    if (!ctx.caps().feedbackKernels || (o.transA && o.transB)) return false;
    const int k = o.transA ? a.rows() : a.cols();
    const double work = double(c.rows()) * c.cols() * k;
    const bool blockable = rowPhases(c.layout()) > 1;
    return (!blockable || work >= ctx.options().feedbackMinWork) && feedbackStagingFits(c);
}

// C = op(A)·op(B) by forward/matmul_feedback into a staging tensor, then
// forward/matmul_epilogue: C's layout, bias and activation.
inline void recordMatmulFeedback(PassList& list, const Tensor& a, const Tensor& b, Tensor& c, const MatmulOptions& o) {
    Context& ctx = c.context();
    const FeedbackStaging size = feedbackStaging(c);
    const int k = o.transA ? a.rows() : a.cols(), sliceK = feedbackSliceK(k);
    // One draw per K slice; from the second on, each adds its part to the sum
    // so far (two sums taking turns, one part reused).
    Tensor* part = nullptr;
    Tensor* sums[2] = {nullptr, nullptr};
    const Tensor* sum = nullptr;
    for (int k0 = 0, i = 0; k0 < k; k0 += sliceK, ++i) {
        Tensor*& out = i == 0 ? sums[0] : part;
        if (!out) out = &list.temp(ctx, size.rows, size.cols, Layout::Packed);
        Pass& p = list.add(Pass(ctx, "forward/matmul_feedback",
                                {{"TRANS_A", o.transA ? "1" : "0"},
                                 {"TRANS_B", o.transB ? "1" : "0"},
                                 {"BLOCK_ROWS", std::to_string(size.blockRows)}}));
        p.input("A", a).input("B", b).output(*out).uniformInt("c_shape", c.rows(), c.geometry().texelsPerRow);
        p.uniformInt("k_range", k0, std::min(k, k0 + sliceK));
        if (i == 0) {
            sum = out;
            continue;
        }
        Tensor*& next = sums[i % 2];
        if (!next) next = &list.temp(ctx, size.rows, size.cols, Layout::Packed);
        recordAdd(list, *sum, *part, *next);
        sum = next;
    }
    const Tensor& staging = *sum;
    Pass& e = list.add(Pass(ctx, "forward/matmul_epilogue",
                            {{"FBR", std::to_string(size.blockRows)},
                             {"FBC", std::to_string(kFeedbackBlockTexels)},
                             {"ACT", std::to_string(int(o.act))},
                             {"DACT", o.dactZ ? "1" : "0"}}));
    e.input("P", staging).output(c);
    if (o.bias) e.input("BIAS", *o.bias);
    if (o.dactZ) e.input("Z", *o.dactZ);
    if (activationUsesAlpha(o.act)) e.uniform("act_alpha", o.actAlpha);
}
}  // namespace detail

namespace detail {
// The compute matmul's choice of tile: forward/matmul_tiled_large (128 x 128
// tiles, 8 x 8 per thread) where the product has at least this many of its
// tiles, forward/matmul_tiled (64 x 64, 4 x 4 per thread) below. The large
// tile does 4x the work per shared-memory read but makes a quarter of the
// workgroups: with fewer than about one per SM (an H100/H200 has 132) most of
// the GPU would idle, and the small tile's 4x as many workgroups win.
// Measured on an H100 (bench/GPU.md, 2026-12-06, `bench_kernels --compute-only`,
// both tiles forced): square 2048 / 4096 26.2 / 27.4 TFLOP/s large against 20.2 /
// 21.8 small, dW 2048 x 512 x 2048 29.1 against 26.8; where the rule keeps the
// small tile it is ahead (the big MLP's 512 x 2048 products 12.8-14.6 against
// 8.4-9.3, 1024^2 13.6 against 9.1).
constexpr int kLargeTileMinWorkgroups = 128;
inline bool largeComputeTile(int rows, int cols) {
    return int64_t((rows + 127) / 128) * ((cols + 127) / 128) >= kLargeTileMinWorkgroups;
}
}  // namespace detail

// The layout the register-blocked kernel writes: rows interleaved over 8
// layers (8x4 blocks) where the device has 8 draw buffers, else over 4 (4x4).
inline Layout blockLayout(const Context& ctx, int rows) {
    if (rows < 4) return Layout::Packed;
    return rows >= 8 && ctx.caps().maxDrawBuffers >= 8 ? Layout::PackedRows8 : Layout::PackedRows4;
}

// Kernels, specialised first: the compute-shader kernels (128x128 tiles for
// large products, 64x64 otherwise: detail::largeComputeTile; all of K in one
// dispatch) where the context runs compute kernels
// (Capabilities::computeKernels: native OpenGL ES 3.1 on a hardware GPU, or
// ContextOptions::compute = on) and every operand is packed (any row layout);
// the transform-feedback kernel and its epilogue pass where the context chose
// them (Capabilities::feedbackKernels: SwiftShader), every operand is packed,
// not both are transposed, the staging row fits and either C is Packed or the
// product has at least ContextOptions::feedbackMinWork multiply-adds;
// the register-blocked kernel (4x4 or 8x4 blocks) when C is PackedRows4 or
// PackedRows8 and every operand is packed (and not both transposed); the
// one-texel-per-fragment kernel, which handles any layouts, otherwise — but
// where feedback was chosen and does not fit, the block kernel writes a
// row-interleaved temporary that a copy lays out as C.
inline void recordMatmul(PassList& list, const Tensor& a, const Tensor& b, Tensor& c, const MatmulOptions& o = {}) {
    detail::validateMatmul(a, b, c, o);
    const bool allPacked = isPacked(a.layout()) && isPacked(b.layout()) && isPacked(c.layout()) &&
                           (!o.bias || isPacked(o.bias->layout())) && (!o.dactZ || isPacked(o.dactZ->layout()));
    // (One workgroup per tile; ES 3.1 promises 65535 workgroups per dimension.)
    const bool fitsDispatch = (c.rows() + 63) / 64 <= 65535 && (c.cols() + 63) / 64 <= 65535;
    if (c.context().caps().computeKernels && allPacked && fitsDispatch) {
        Defines d = {{"TRANS_A", o.transA ? "1" : "0"},
                     {"TRANS_B", o.transB ? "1" : "0"},
                     {"ACT", std::to_string(int(o.act))},
                     {"DACT", o.dactZ ? "1" : "0"}};
        const bool large = o.computeTile == ComputeTile::Auto ? detail::largeComputeTile(c.rows(), c.cols())
                                                              : o.computeTile == ComputeTile::Large;
        Pass& p = list.add(Pass(c.context(), large ? "forward/matmul_tiled_large" : "forward/matmul_tiled", d));
        p.input("A", a).input("B", b).output(c);
        if (o.bias) p.input("BIAS", *o.bias);
        if (o.dactZ) p.input("Z", *o.dactZ);
        if (activationUsesAlpha(o.act)) p.uniform("act_alpha", o.actAlpha);
        return;
    }
    if (detail::feedbackFits(a, c, o) && allPacked) {
        detail::recordMatmulFeedback(list, a, b, c, o);
        return;
    }
    const bool blockable = allPacked && !(o.transA && o.transB);
    auto recordBlocked = [&](Tensor& out) {
        detail::recordMatmulSlices(
            list, a, b, out, o, "forward/matmul_block",
            [&](Pass& p) {
                if (o.bias) p.input("BIAS", *o.bias);
                if (o.dactZ) p.input("Z", *o.dactZ);
                p.output(out);
            },
            "forward/matmul_block");
    };
    if (blockable && rowPhases(c.layout()) > 1) {
        recordBlocked(c);
        return;
    }
    // Where feedback was chosen but does not fit (a staging row past the
    // texture size), C has feedback's Packed layout: the block kernel into a
    // row-interleaved temporary and a copy beat the one-texel kernel (in
    // Chromium on SwiftShader, the block kernel ran N = 1536 at 1.75 GFLOP/s,
    // the one-texel kernel 0.81; bench/MATMUL_SWEEP.md times this path at
    // 3000 x 300 x 3000).
    if (blockable && c.context().caps().feedbackKernels && !detail::feedbackStagingFits(c) && c.rows() >= 4) {
        Tensor& t = list.temp(c.context(), c.rows(), c.cols(), blockLayout(c.context(), c.rows()));
        recordBlocked(t);
        recordUnary(list, "matmul", "(x)", t, c);
        return;
    }
    detail::recordMatmulSlices(list, a, b, c, o, "forward/matmul", [&](Pass& p) {
        if (o.bias) p.input("BIAS", *o.bias);
        if (o.dactZ) p.input("Z", *o.dactZ);
        p.output(c);
    });
}

// The layout a tensor made to be multiplied gets (the JavaScript Tensor, the
// benchmarks): Packed where the transform-feedback kernel runs matmul (it
// reads a TEXTURE_2D faster than row-interleaved layers: in Chromium on
// SwiftShader, N = 1024 ran 8.7 GFLOP/s from packed operands against 5.7 from
// PackedRows8, bench_kernels), else blockLayout.
inline Layout matmulLayout(const Context& ctx, int rows) {
    return ctx.caps().feedbackKernels ? Layout::Packed : blockLayout(ctx, rows);
}

GLTRAIN_IMMEDIATE(matmul, recordMatmul, (const Tensor& a, const Tensor& b, Tensor& c, const MatmulOptions& o = {}),
                  (l, a, b, c, o))

// The fused dense forward: Y = f(X·W + b), one pass (per K slice).
inline void recordDense(PassList& l, const Tensor& x, const Tensor& w, const Tensor& b, Activation act, Tensor& y,
                        float alpha = 0.01f) {
    MatmulOptions o;
    o.bias = &b;
    o.act = act;
    o.actAlpha = alpha;
    recordMatmul(l, x, w, y, o);
}
GLTRAIN_IMMEDIATE(dense, recordDense,
                  (const Tensor& x, const Tensor& w, const Tensor& b, Activation act, Tensor& y, float alpha = 0.01f),
                  (l, x, w, b, act, y, alpha))

}  // namespace gltrain

namespace gltrain {
// A dense layer's forward while training: Z = X·W + b and Y = f(Z) in one
// pass (two render targets), so the backward pass has f'(Z) at hand.
inline void recordDenseTrain(PassList& l, const Tensor& x, const Tensor& w, const Tensor& b, Activation act, Tensor& z,
                             Tensor& y, float alpha = 0.01f) {
    if (!y || y.rows() != z.rows() || y.cols() != z.cols() || y.layout() != z.layout())
        throw ArgumentError("denseTrain: Y must match Z (" + z.shapeString() + ")");
    detail::requireSameContext("denseTrain", "Z", z, "Y", y);
    MatmulOptions o;
    o.bias = &b;
    o.act = act;
    o.actAlpha = alpha;
    detail::validateMatmul(x, w, z, o);
    detail::recordMatmulSlices(
        l, x, w, z, o, "forward/dense_train", [&](Pass& p) { p.input("BIAS", b).output("Z", z).output("Y", y); },
        "forward/matmul");
}
}  // namespace gltrain
