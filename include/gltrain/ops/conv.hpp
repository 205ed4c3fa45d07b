// Convolution and pooling over NHWC image rows (layout: gltrain/window.hpp).
//
//   conv2d:                Y = act(conv(X, W) + b)          forward/conv2d
//                          (any kh x kw, strides and dilation: gltrain/window.hpp)
//   conv2dBackwardInput:   dX from dY and W                  backward/conv2d_input
//   conv2dBackwardFilter:  dW from X and dY                  backward/conv2d_filter
//   channelSum:            per-channel sums (the bias grad)  reduce/channel_sum
//   pool2d / pool2dBackward: max and average pooling         forward|backward/pool2d
//
// Path choice, by measurement (bench/conv, llvmpipe, batch 64, one run):
// every pass reads the convolution in place — an implicit GEMM, register-
// blocked over 4 samples x 4 filters (or channels) when the output's rows
// are interleaved over 4 layers (PackedRows4, what Sequential uses) and the
// channel counts allow — because that beat im2col + the 4x4-blocked matmul
// on every layer we measured: 3x3 32->64 on 28x28 3.0 vs 2.2 GFLOP/s, 5x5
// 8->16 on 12x12 2.2 vs 1.2, 5x5 1->8 on 28x28 0.7 vs 0.3 (im2col also writes
// kh*kw copies of the input). recordConv2DIm2col stays as the measured
// alternative. The filter gradient sums slices of the batch in parallel
// (reduce/sum_slices) and is 4x4-blocked when C and F are multiples of 4.
// Every kernel also has a per-lane path for any shape and layout; all are
// tested against reference/conv.hpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "gltrain/activation.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/window.hpp"

namespace gltrain {

namespace detail {
inline void requireImages(const char* op, const char* name, const Tensor& t, int rows, const Shape3& s) {
    if (!t) throw ArgumentError(std::string(op) + ": " + name + " is an empty tensor");
    if (t.cols() != s.size() || (rows >= 0 && t.rows() != rows))
        throw ArgumentError(std::string(op) + ": " + name + " is " + t.shapeString() + ", expected " +
                            (rows >= 0 ? std::to_string(rows) : std::string("N")) + "x" + std::to_string(s.size()) +
                            " (images " + s.str() + ")");
}
inline void requireShape(const char* op, const char* name, const Tensor& t, int rows, int cols) {
    if (!t) throw ArgumentError(std::string(op) + ": " + name + " is an empty tensor");
    if (t.rows() != rows || t.cols() != cols)
        throw ArgumentError(std::string(op) + ": " + name + " is " + t.shapeString() + ", expected " +
                            std::to_string(rows) + "x" + std::to_string(cols));
}
inline bool allPacked(std::initializer_list<const Tensor*> ts) {
    for (auto* t : ts)
        if (t && !isPacked(t->layout())) return false;
    return true;
}
inline Pass& windowUniforms(Pass& p, const Window& w) {
    return p.uniformInt("inHWC", w.in.height, w.in.width, w.in.channels)
        .uniformInt("outHWC", w.out.height, w.out.width, w.out.channels)
        .uniformInt("ksize", w.kh, w.kw)
        .uniformInt("stride", w.sh, w.sw)
        .uniformInt("dilation", w.dh, w.dw)
        .uniformInt("pad", w.padTop, w.padLeft);
}
inline const char* flag(bool b) { return b ? "1" : "0"; }
}  // namespace detail

// Y = act(conv(X, W) + bias), read in place (see the top). X: N x in.size(),
// W: (kh*kw*C) x F, bias: 1 x F (or null), Y: N x out.size().
inline Pass& recordConv2D(PassList& list, const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win,
                          Activation act, Tensor& y, float alpha = 0.01f) {
    const int n = x ? x.rows() : 0;
    detail::requireImages("conv2d", "X", x, -1, win.in);
    detail::requireShape("conv2d", "W", w, win.kh * win.kw * win.in.channels, win.out.channels);
    if (bias) detail::requireShape("conv2d", "bias", *bias, 1, win.out.channels);
    detail::requireImages("conv2d", "Y", y, n, win.out);
    const bool vecF = win.out.channels % 4 == 0 && detail::allPacked({&x, &w, bias, &y});
    const bool vecC = vecF && win.in.channels % 4 == 0;
    // 4 samples per fragment when the output interleaves its rows over 4 layers.
    const bool rows4 = vecF && y.layout() == Layout::PackedRows4;
    Defines d = {{"ACT", std::to_string(int(act))}, {"VEC_C", detail::flag(vecC)}};
    if (!rows4) d.push_back({"VEC_F", detail::flag(vecF)});
    Pass& p = list.add(Pass(x.context(), rows4 ? "forward/conv2d_rows4" : "forward/conv2d", d));
    p.input("X", x).input("W", w);
    if (bias) p.input("BIAS", *bias);
    p.output(y);
    if (activationUsesAlpha(act)) p.uniform("act_alpha", alpha);
    return detail::windowUniforms(p, win);
}

inline Pass& recordConv2DBackwardInput(PassList& list, const Tensor& dy, const Tensor& w, const Window& win,
                                       Tensor& dx) {
    const int n = dy ? dy.rows() : 0;
    detail::requireImages("conv2dBackwardInput", "dY", dy, -1, win.out);
    detail::requireShape("conv2dBackwardInput", "W", w, win.kh * win.kw * win.in.channels, win.out.channels);
    detail::requireImages("conv2dBackwardInput", "dX", dx, n, win.in);
    const bool vecC = win.in.channels % 4 == 0 && detail::allPacked({&dy, &w, &dx});
    const bool vecF = vecC && win.out.channels % 4 == 0;
    // 4 samples per fragment when the output interleaves its rows over 4 layers.
    const bool rows4 = vecF && dx.layout() == Layout::PackedRows4;
    Pass& p = list.add(rows4 ? Pass(dy.context(), "backward/conv2d_input_rows4")
                             : Pass(dy.context(), "backward/conv2d_input",
                                    {{"VEC_C", detail::flag(vecC)}, {"VEC_F", detail::flag(vecF)}}));
    p.input("DY", dy).input("W", w).output(dx);
    return detail::windowUniforms(p, win);
}

// The same values under another shape (rows * cols unchanged).
inline Pass& recordReshape(PassList& list, const Tensor& x, Tensor& y) {
    if (!x || !y) throw ArgumentError("reshape: an operand is an empty tensor");
    if (int64_t(x.rows()) * x.cols() != int64_t(y.rows()) * y.cols())
        throw ArgumentError("reshape: " + x.shapeString() + " and " + y.shapeString() + " hold different counts");
    const bool vec = x.cols() % 4 == 0 && y.cols() % 4 == 0 && detail::allPacked({&x, &y});
    return list.add(Pass(x.context(), "util/reshape", {{"VEC", detail::flag(vec)}})).input("X", x).output(y);
}

// The convolution as one matmul: patches = im2col(X), (N*OH*OW) x (kh*kw*C);
// Y = reshape(patches · W + b) — the alternative to forward/conv2d's in-place
// reads that bench/conv measures (see the path choice at the top).
inline void recordConv2DIm2col(PassList& list, const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win,
                               Activation act, Tensor& y, float alpha = 0.01f) {
    const int n = x ? x.rows() : 0;
    detail::requireImages("conv2d", "X", x, -1, win.in);
    detail::requireShape("conv2d", "W", w, win.kh * win.kw * win.in.channels, win.out.channels);
    detail::requireImages("conv2d", "Y", y, n, win.out);
    Context& ctx = x.context();
    const int rows = n * win.out.pixels();
    Tensor& patches = list.temp(ctx, rows, w.rows(), Layout::PackedRows4);
    Tensor& product = list.temp(ctx, rows, win.out.channels, Layout::PackedRows4);
    Pass& p =
        list.add(Pass(ctx, "util/im2col", {{"VEC_C", detail::flag(win.in.channels % 4 == 0 && isPacked(x.layout()))}}));
    p.input("X", x).output(patches);
    detail::windowUniforms(p, win);
    MatmulOptions o;
    o.bias = bias;
    o.act = act;
    o.actAlpha = alpha;
    recordMatmul(list, patches, w, product, o);
    recordReshape(list, product, y);
}

// The terms per slice of a filter gradient or channel sum (tapsPerSlice = 0,
// the default: by the renderer), and the most texels the slices of one pass
// may write together. A GPU wants many short fragments, a software renderer
// fewer, longer ones. Measured for the CNN layers (batch 64; 1->8 channels on
// 28x28, 8->16 on 12x12), with the slices added in two passes where there are
// many (sumSlices): on an H200 the 1->8 filter gradient took 0.31 ms at 64
// terms, 0.34 at 128, 0.59 at 256 and 3.97 at 2048; in Chromium on SwiftShader
// 17-22 ms at 256 against 26-36 at 64 (two runs, 2026-12-02 13:40 UTC);
// llvmpipe was 1.2-1.3x faster at 256 than at 2048 and alike from 64 to 1024.
// The 3x3 32->64 layer already has 4,608 texels a slice: more slices only
// added partials to sum (llvmpipe 205 ms at 256 terms, 175 at 2048), hence the
// cap.
constexpr int kTapsPerSliceGpu = 64, kTapsPerSliceSoftware = 256;
inline int defaultTapsPerSlice(const Context& ctx) {
    return ctx.caps().softwareRenderer ? kTapsPerSliceSoftware : kTapsPerSliceGpu;
}
constexpr long long kMaxSliceTexels = 32768;

namespace detail {
// How a sum over (sample, output pixel) is cut into slices of about
// `tapsPerSlice` terms (lib/filter_slice): whole samples, or one sample's
// bands of output rows where a sample alone has more; no more slices than
// keep `texelsPerSlice` x slices within kMaxSliceTexels.
struct Slicing {
    int samples, rows, count;  // per slice; slices in all
};
inline Slicing sliceTaps(const char* op, const Context& ctx, int n, const Shape3& out, int tapsPerSlice,
                         long long texelsPerSlice) {
    if (tapsPerSlice < 0)
        throw ArgumentError(std::string(op) + ": tapsPerSlice must be positive (or 0: the renderer's default), got " +
                            std::to_string(tapsPerSlice));
    if (tapsPerSlice == 0) tapsPerSlice = defaultTapsPerSlice(ctx);
    const long long terms = (long long)n * out.pixels(), cap = std::max(1LL, kMaxSliceTexels / texelsPerSlice);
    const int taps = int(std::min<long long>(terms, std::max<long long>(tapsPerSlice, (terms + cap - 1) / cap)));
    Slicing s{std::max(1, taps / out.pixels()), out.height, 0};
    if (out.pixels() > taps) s.rows = std::max(1, taps / out.width);
    s.count = ((n + s.samples - 1) / s.samples) * ((out.height + s.rows - 1) / s.rows);
    return s;
}
// The slicing of a per-channel sum over the rows of N x (P*C) x into `out`
// (1 x C): slices of whole rows, a row's P pixels taken as one output row.
inline Slicing sliceRows(const char* op, const Tensor& x, int channels, int tapsPerSlice, const Tensor& out) {
    return sliceTaps(op, x.context(), x.rows(), Shape3{1, x.cols() / channels, channels}, tapsPerSlice,
                     out.geometry().texelsPerRow);
}
// Where a sliced pass writes: `out` itself for one slice, else a temp of the
// slices stacked (count x out's rows, in `layout`) ...
inline Tensor& slicesOf(PassList& list, const Slicing& s, Tensor& out, Layout layout) {
    return s.count == 1 ? out : list.temp(out.context(), s.count * out.rows(), out.cols(), layout);
}
// ... which reduce/sum_slices then adds into `out`: in one pass up to
// kMaxSlicesPerSum slices, else in two (groups of about sqrt(S) slices, then
// their sums). A fragment per output texel adds the slices one after another,
// and a filter gradient has few texels: on an H200, the 1->8 5x5 layer's 655
// slices took 0.25 ms to add in one pass.
constexpr int kMaxSlicesPerSum = 32;
inline void sumSlices(PassList& list, const Tensor& partial, Tensor& out) {
    if (&partial == &out) return;
    Context& ctx = out.context();
    const int rows = out.rows(), slices = partial.rows() / rows;
    auto add = [&](const Tensor& from, Tensor& to, int group) {
        list.add(Pass(ctx, "reduce/sum_slices"))
            .input("X", from)
            .output(to)
            .uniformInt("sliceRows", rows)
            .uniformInt("group", group);
    };
    if (slices <= kMaxSlicesPerSum) return add(partial, out, slices);
    const int group = int(std::ceil(std::sqrt(double(slices)))), sums = (slices + group - 1) / group;
    Tensor& mid = list.temp(ctx, sums * rows, out.cols(), partial.layout());
    add(partial, mid, group);
    add(mid, out, sums);
}
}  // namespace detail

// dW = sum over samples of X ⋆ dY, as partial sums over slices of about
// `tapsPerSlice` (sample x output pixel) terms stacked in one texture and then
// added (reduce/sum_slices): many short fragments instead of a few long ones
// — a GPU runs thousands at once, a CPU renderer shares them out by screen
// tiles, and a browser's GPU watchdog never sees one very long loop.
inline void recordConv2DBackwardFilter(PassList& list, const Tensor& x, const Tensor& dy, const Window& win, Tensor& dw,
                                       int tapsPerSlice = 0) {
    const int n = x ? x.rows() : 0;
    detail::requireImages("conv2dBackwardFilter", "X", x, -1, win.in);
    detail::requireImages("conv2dBackwardFilter", "dY", dy, n, win.out);
    detail::requireShape("conv2dBackwardFilter", "dW", dw, win.kh * win.kw * win.in.channels, win.out.channels);
    Context& ctx = x.context();
    const detail::Slicing sl = detail::sliceTaps("conv2dBackwardFilter", ctx, n, win.out, tapsPerSlice,
                                                 (long long)dw.rows() * dw.geometry().texelsPerRow);
    Tensor& partial = detail::slicesOf(list, sl, dw, isPacked(dw.layout()) ? Layout::PackedRows4 : dw.layout());
    const bool vecF = win.out.channels % 4 == 0 && detail::allPacked({&x, &dy, &partial});
    // The 4x4-blocked kernel when 4 rows of dW are 4 channels of one tap.
    const bool rows4 = vecF && win.in.channels % 4 == 0 && partial.layout() == Layout::PackedRows4;
    Pass& p = list.add(rows4 ? Pass(ctx, "backward/conv2d_filter_rows4")
                             : Pass(ctx, "backward/conv2d_filter", {{"VEC_F", detail::flag(vecF)}}));
    p.input("X", x).input("DY", dy).output(partial).uniformInt("slicing", sl.samples, sl.rows);
    detail::windowUniforms(p, win);
    detail::sumSlices(list, partial, dw);
}

// out (1 x channels) = the sum of each channel over every row and pixel of x,
// as partial sums over slices of whole rows (about `tapsPerSlice` pixels
// each), added by reduce/sum_slices: as the filter gradient, many short
// fragments instead of one per channel texel looping over every row.
inline void recordChannelSum(PassList& list, const Tensor& x, int channels, Tensor& out, int tapsPerSlice = 0) {
    if (!x) throw ArgumentError("channelSum: x is an empty tensor");
    if (channels <= 0 || x.cols() % channels != 0)
        throw ArgumentError("channelSum: x is " + x.shapeString() + ", not a whole number of pixels of " +
                            std::to_string(channels) + " channels");
    detail::requireShape("channelSum", "out", out, 1, channels);
    const detail::Slicing sl = detail::sliceRows("channelSum", x, channels, tapsPerSlice, out);
    Tensor& partial = detail::slicesOf(list, sl, out, out.layout());
    const bool vec = channels % 4 == 0 && detail::allPacked({&x, &partial});
    Pass& p = list.add(Pass(x.context(), "reduce/channel_sum", {{"VEC_C", detail::flag(vec)}}));
    p.input("X", x).output(partial).uniformInt("channels", channels).uniformInt("perSlice", sl.samples);
    detail::sumSlices(list, partial, out);
}

inline void requirePoolWindow(const char* op, const Window& w) {
    if (w.dh != 1 || w.dw != 1)
        throw ArgumentError(std::string(op) + ": pooling windows are not dilated, got dilation " +
                            std::to_string(w.dh) + "x" + std::to_string(w.dw));
    if (w.in.channels != w.out.channels)
        throw ArgumentError(std::string(op) + ": pooling keeps the channels, but the window maps " + w.in.str() +
                            " to " + w.out.str());
}

inline Pass& recordPool2D(PassList& list, const Tensor& x, const Window& win, PoolKind kind, Tensor& y) {
    requirePoolWindow("pool2d", win);
    detail::requireImages("pool2d", "X", x, -1, win.in);
    detail::requireImages("pool2d", "Y", y, x.rows(), win.out);
    const bool vec = win.in.channels % 4 == 0 && detail::allPacked({&x, &y});
    Pass& p = list.add(Pass(x.context(), "forward/pool2d",
                            {{"MAX", detail::flag(kind == PoolKind::Max)}, {"VEC_C", detail::flag(vec)}}));
    p.input("X", x).output(y);
    return detail::windowUniforms(p, win);
}

inline Pass& recordPool2DBackward(PassList& list, const Tensor& x, const Tensor& dy, const Window& win, PoolKind kind,
                                  Tensor& dx) {
    requirePoolWindow("pool2dBackward", win);
    detail::requireImages("pool2dBackward", "X", x, -1, win.in);
    detail::requireImages("pool2dBackward", "dY", dy, x.rows(), win.out);
    detail::requireImages("pool2dBackward", "dX", dx, x.rows(), win.in);
    const bool vec = win.in.channels % 4 == 0 && detail::allPacked({&x, &dy, &dx});
    const bool disjoint = win.sh >= win.kh && win.sw >= win.kw;  // each pixel in at most one window
    Pass& p = list.add(Pass(x.context(), "backward/pool2d",
                            {{"MAX", detail::flag(kind == PoolKind::Max)},
                             {"VEC_C", detail::flag(vec)},
                             {"DISJOINT", detail::flag(disjoint)}}));
    p.input("X", x).input("DY", dy).output(dx);
    return detail::windowUniforms(p, win);
}

GLTRAIN_IMMEDIATE(conv2d, recordConv2D,
                  (const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win, Activation act, Tensor& y,
                   float alpha = 0.01f),
                  (l, x, w, bias, win, act, y, alpha))
GLTRAIN_IMMEDIATE(conv2dBackwardInput, recordConv2DBackwardInput,
                  (const Tensor& dy, const Tensor& w, const Window& win, Tensor& dx), (l, dy, w, win, dx))
GLTRAIN_IMMEDIATE(conv2dBackwardFilter, recordConv2DBackwardFilter,
                  (const Tensor& x, const Tensor& dy, const Window& win, Tensor& dw, int tapsPerSlice = 0),
                  (l, x, dy, win, dw, tapsPerSlice))
GLTRAIN_IMMEDIATE(conv2dIm2col, recordConv2DIm2col,
                  (const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win, Activation act, Tensor& y,
                   float alpha = 0.01f),
                  (l, x, w, bias, win, act, y, alpha))
GLTRAIN_IMMEDIATE(reshape, recordReshape, (const Tensor& x, Tensor& y), (l, x, y))
GLTRAIN_IMMEDIATE(channelSum, recordChannelSum, (const Tensor& x, int channels, Tensor& out, int tapsPerSlice = 0),
                  (l, x, channels, out, tapsPerSlice))
GLTRAIN_IMMEDIATE(pool2d, recordPool2D, (const Tensor& x, const Window& win, PoolKind kind, Tensor& y),
                  (l, x, win, kind, y))
GLTRAIN_IMMEDIATE(pool2dBackward, recordPool2DBackward,
                  (const Tensor& x, const Tensor& dy, const Window& win, PoolKind kind, Tensor& dx),
                  (l, x, dy, win, kind, dx))

}  // namespace gltrain
