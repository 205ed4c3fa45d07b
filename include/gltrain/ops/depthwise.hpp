// Depthwise convolution over NHWC image rows (gltrain/window.hpp; formulas in
// reference/conv.hpp): each input channel c convolved with its own M filters
// into output channels c*M + m, TensorFlow's order. W is (kh*kw*C) x M, the
// [kh, kw, C, M] depthwise kernel flattened.
//
//   depthwiseConv2d:                Y from X and W     forward/depthwise_conv2d
//   depthwiseConv2dBackwardInput:   dX from dY and W   backward/depthwise_input
//   depthwiseConv2dBackwardFilter:  dW from X and dY   backward/depthwise_filter (+ reduce/sum_slices)
//
// One lane per output value in any layout: a depthwise layer does kh*kw
// multiply-adds per output (a full convolution kh*kw*C), so the register
// blocking that pays for forward/conv2d has little to share here.
#pragma once
#include <string>

#include "gltrain/ops/conv.hpp"

namespace gltrain {

namespace detail {
// The depthwise multiplier M of a window (out.channels = C * M), checked against W (kh*kw*C x M).
inline int depthwiseMultiplier(const char* op, const Window& win, const Tensor& w) {
    const int C = win.in.channels, M = win.out.channels / C;
    if (M * C != win.out.channels)
        throw ArgumentError(std::string(op) + ": the window's " + std::to_string(win.out.channels) +
                            " output channels are not a multiple of its " + std::to_string(C) + " input channels");
    requireShape(op, "W", w, win.kh * win.kw * C, M);
    return M;
}
}  // namespace detail

// Y (N x out.size()) = depthwise conv(X (N x in.size()), W (kh*kw*C x M)).
inline Pass& recordDepthwiseConv2D(PassList& list, const Tensor& x, const Tensor& w, const Window& win, Tensor& y) {
    detail::requireImages("depthwiseConv2d", "X", x, -1, win.in);
    detail::depthwiseMultiplier("depthwiseConv2d", win, w);
    detail::requireImages("depthwiseConv2d", "Y", y, x.rows(), win.out);
    Pass& p = list.add(Pass(x.context(), "forward/depthwise_conv2d"));
    p.input("X", x).input("W", w).output(y);
    return detail::windowUniforms(p, win);
}

inline Pass& recordDepthwiseConv2DBackwardInput(PassList& list, const Tensor& dy, const Tensor& w, const Window& win,
                                                Tensor& dx) {
    detail::requireImages("depthwiseConv2dBackwardInput", "dY", dy, -1, win.out);
    detail::depthwiseMultiplier("depthwiseConv2dBackwardInput", win, w);
    detail::requireImages("depthwiseConv2dBackwardInput", "dX", dx, dy.rows(), win.in);
    Pass& p = list.add(Pass(dy.context(), "backward/depthwise_input"));
    p.input("DY", dy).input("W", w).output(dx);
    return detail::windowUniforms(p, win);
}

// dW as partial sums over slices of about `tapsPerSlice` (sample x output
// pixel) terms, then added, as recordConv2DBackwardFilter.
inline void recordDepthwiseConv2DBackwardFilter(PassList& list, const Tensor& x, const Tensor& dy, const Window& win,
                                                Tensor& dw, int tapsPerSlice = 0) {
    detail::requireImages("depthwiseConv2dBackwardFilter", "X", x, -1, win.in);
    detail::requireImages("depthwiseConv2dBackwardFilter", "dY", dy, x.rows(), win.out);
    detail::depthwiseMultiplier("depthwiseConv2dBackwardFilter", win, dw);
    Context& ctx = x.context();
    const detail::Slicing sl = detail::sliceTaps("depthwiseConv2dBackwardFilter", ctx, x.rows(), win.out, tapsPerSlice,
                                                 (long long)dw.rows() * dw.geometry().texelsPerRow);
    Tensor& partial = detail::slicesOf(list, sl, dw, dw.layout());
    Pass& p = list.add(Pass(ctx, "backward/depthwise_filter"));
    p.input("X", x).input("DY", dy).output(partial).uniformInt("slicing", sl.samples, sl.rows);
    detail::windowUniforms(p, win);
    detail::sumSlices(list, partial, dw);
}

GLTRAIN_IMMEDIATE(depthwiseConv2d, recordDepthwiseConv2D,
                  (const Tensor& x, const Tensor& w, const Window& win, Tensor& y), (l, x, w, win, y))
GLTRAIN_IMMEDIATE(depthwiseConv2dBackwardInput, recordDepthwiseConv2DBackwardInput,
                  (const Tensor& dy, const Tensor& w, const Window& win, Tensor& dx), (l, dy, w, win, dx))
GLTRAIN_IMMEDIATE(depthwiseConv2dBackwardFilter, recordDepthwiseConv2DBackwardFilter,
                  (const Tensor& x, const Tensor& dy, const Window& win, Tensor& dw, int tapsPerSlice = 0),
                  (l, x, dy, win, dw, tapsPerSlice))

}  // namespace gltrain
