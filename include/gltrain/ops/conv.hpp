// Convolution and pooling over NHWC image rows (layout: gltrain/window.hpp).
//
//   conv2d:                Y = act(conv(X, W) + b)          forward/conv2d
//   conv2dBackwardInput:   dX from dY and W                  backward/conv2d_input
//   conv2dBackwardFilter:  dW from X and dY                  backward/conv2d_filter
//   channelSum:            per-channel sums (the bias grad)  reduce/channel_sum
//   pool2d / pool2dBackward: max and average pooling         forward|backward/pool2d
//
// Path choice: the kernels read the convolution in place (an implicit GEMM),
// never materialising im2col. Each has a vectorised path taken when channel
// counts are multiples of 4 (a texel is then 4 channels of one pixel) and a
// per-lane path for any other shape; both are tested against reference/conv.hpp.
// Why not im2col + the blocked matmul: bench/conv measures both (see
// README, "Convolution paths").
#pragma once
#include <algorithm>
#include <string>

#include "gltrain/activation.hpp"
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
        .uniformInt("pad", w.padTop, w.padLeft);
}
inline const char* flag(bool b) { return b ? "1" : "0"; }
}  // namespace detail

// Y = act(conv(X, W) + bias). X: N x in.size(), W: (kh*kw*C) x F, bias: 1 x F
// (or null), Y: N x out.size().
inline Pass& recordConv2D(PassList& list, const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win,
                          Activation act, Tensor& y, float alpha = 0.01f) {
    const int n = x ? x.rows() : 0;
    detail::requireImages("conv2d", "X", x, -1, win.in);
    detail::requireShape("conv2d", "W", w, win.kh * win.kw * win.in.channels, win.out.channels);
    if (bias) detail::requireShape("conv2d", "bias", *bias, 1, win.out.channels);
    detail::requireImages("conv2d", "Y", y, n, win.out);
    const bool vecF = win.out.channels % 4 == 0 && detail::allPacked({&x, &w, bias, &y});
    const bool vecC = vecF && win.in.channels % 4 == 0;
    Pass& p = list.add(Pass(x.context(), "forward/conv2d",
                            {{"ACT", std::to_string(int(act))}, {"VEC_F", detail::flag(vecF)}, {"VEC_C", detail::flag(vecC)}}));
    p.input("X", x).input("W", w);
    if (bias) p.input("BIAS", *bias);
    p.output(y);
    if (act == Activation::LeakyReLU) p.uniform("act_alpha", alpha);
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
    Pass& p = list.add(Pass(dy.context(), "backward/conv2d_input", {{"VEC_C", detail::flag(vecC)}, {"VEC_F", detail::flag(vecF)}}));
    p.input("DY", dy).input("W", w).output(dx);
    return detail::windowUniforms(p, win);
}

// dW = sum over samples of X ⋆ dY. The samples are split into passes of about
// `tapsPerPass` (sample x output pixel) iterations each, accumulating through
// CPREV, so no fragment runs one very long loop (a browser's GPU watchdog).
inline void recordConv2DBackwardFilter(PassList& list, const Tensor& x, const Tensor& dy, const Window& win, Tensor& dw,
                                       int tapsPerPass = 16384) {
    const int n = x ? x.rows() : 0;
    detail::requireImages("conv2dBackwardFilter", "X", x, -1, win.in);
    detail::requireImages("conv2dBackwardFilter", "dY", dy, n, win.out);
    detail::requireShape("conv2dBackwardFilter", "dW", dw, win.kh * win.kw * win.in.channels, win.out.channels);
    if (tapsPerPass <= 0) throw ArgumentError("conv2dBackwardFilter: tapsPerPass must be positive");
    Context& ctx = x.context();
    const bool vecF = win.out.channels % 4 == 0 && detail::allPacked({&x, &dy, &dw});
    const int perPass = std::max(1, tapsPerPass / win.out.pixels());
    const int passes = (n + perPass - 1) / perPass;
    Tensor* partial[2] = {nullptr, nullptr};
    if (passes > 1) partial[0] = &list.temp(ctx, dw.rows(), dw.cols(), dw.layout());
    if (passes > 2) partial[1] = &list.temp(ctx, dw.rows(), dw.cols(), dw.layout());
    for (int i = 0; i < passes; ++i) {
        Pass& p = list.add(Pass(ctx, "backward/conv2d_filter", {{"VEC_F", detail::flag(vecF)}}));
        p.input("X", x).input("DY", dy);
        if (i > 0) p.input("CPREV", *partial[(i - 1) % 2]);
        p.output(i == passes - 1 ? dw : *partial[i % 2]);
        p.uniformInt("n0", i * perPass).uniformInt("n1", std::min(n, (i + 1) * perPass));
        detail::windowUniforms(p, win);
    }
}

// out (1 x channels) = the sum of each channel over every row and pixel of x.
inline Pass& recordChannelSum(PassList& list, const Tensor& x, int channels, Tensor& out) {
    if (!x) throw ArgumentError("channelSum: x is an empty tensor");
    if (channels <= 0 || x.cols() % channels != 0)
        throw ArgumentError("channelSum: x is " + x.shapeString() + ", not a whole number of pixels of " +
                            std::to_string(channels) + " channels");
    detail::requireShape("channelSum", "out", out, 1, channels);
    const bool vec = channels % 4 == 0 && detail::allPacked({&x, &out});
    Pass& p = list.add(Pass(x.context(), "reduce/channel_sum", {{"VEC_C", detail::flag(vec)}}));
    return p.input("X", x).output(out).uniformInt("channels", channels);
}

inline void requirePoolWindow(const char* op, const Window& w) {
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
    Pass& p = list.add(Pass(x.context(), "backward/pool2d", {{"MAX", detail::flag(kind == PoolKind::Max)}}));
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
                  (const Tensor& x, const Tensor& dy, const Window& win, Tensor& dw, int tapsPerPass = 16384),
                  (l, x, dy, win, dw, tapsPerPass))
GLTRAIN_IMMEDIATE(channelSum, recordChannelSum, (const Tensor& x, int channels, Tensor& out), (l, x, channels, out))
GLTRAIN_IMMEDIATE(pool2d, recordPool2D, (const Tensor& x, const Window& win, PoolKind kind, Tensor& y),
                  (l, x, win, kind, y))
GLTRAIN_IMMEDIATE(pool2dBackward, recordPool2DBackward,
                  (const Tensor& x, const Tensor& dy, const Window& win, PoolKind kind, Tensor& dx),
                  (l, x, dy, win, kind, dx))

}  // namespace gltrain
