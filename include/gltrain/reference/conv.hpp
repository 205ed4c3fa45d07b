// 2-D convolution over NHWC image rows (see gltrain/window.hpp): the
// reference for forward/conv2d and its backward kernels.
//
// X: N x (H*W*C); W: (kh*kw*C) x F, row (ky*kw + kx)*C + c, column f — the
// HWIO filter of TensorFlow flattened; b: 1 x F; Y: N x (OH*OW*F).
//   Y[n, oy, ox, f] = b[f] + sum_{ky, kx, c} X[n, iy, ix, c] W[(ky, kx, c), f]
//   with iy = oy*sh - padTop + ky, ix = ox*sw - padLeft + kx (outside: zero).
#pragma once
#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"
#include "gltrain/window.hpp"

namespace gltrain::ref {

namespace detail {
template <class T>
void requireImages(const char* fn, const char* name, const HostMatrixT<T>& m, const Shape3& s) {
    if (m.cols != s.size())
        fail(fn, std::string(name) + " is " + shape(m) + " but its images are " + s.str() + " (" +
                     std::to_string(s.size()) + " columns)");
}
template <class T>
void requireFilter(const char* fn, const HostMatrixT<T>& W, const Window& w) {
    if (W.rows != w.kh * w.kw * w.in.channels || W.cols != w.out.channels)
        fail(fn, "W is " + shape(W) + ", expected " + std::to_string(w.kh * w.kw * w.in.channels) + "x" +
                     std::to_string(w.out.channels) + " (kh*kw*C x F)");
}
}  // namespace detail

// Calls f(n, oy, ox, ky, kx, xBase, yBase, wRow) for every in-bounds tap:
// xBase = the input column of channel 0, yBase = the output column of filter 0,
// wRow = the filter row of channel 0.
template <class F>
void forEachTap(int n, const Window& w, F f) {
    for (int b = 0; b < n; ++b)
        for (int oy = 0; oy < w.out.height; ++oy)
            for (int ox = 0; ox < w.out.width; ++ox)
                for (int ky = 0; ky < w.kh; ++ky)
                    for (int kx = 0; kx < w.kw; ++kx) {
                        int iy = w.inY(oy, ky), ix = w.inX(ox, kx);
                        if (!w.inside(iy, ix)) continue;
                        f(b, (iy * w.in.width + ix) * w.in.channels, (oy * w.out.width + ox) * w.out.channels,
                          (ky * w.kw + kx) * w.in.channels);
                    }
}

template <class T>
HostMatrixT<T> conv2d(const HostMatrixT<T>& X, const HostMatrixT<T>& W, const HostMatrixT<T>& b, const Window& w) {
    detail::requireImages("conv2d", "X", X, w.in);
    detail::requireFilter("conv2d", W, w);
    if (b.rows != 1 || b.cols != w.out.channels)
        detail::fail("conv2d", "b is " + detail::shape(b) + ", expected 1x" + std::to_string(w.out.channels));
    const int C = w.in.channels, F = w.out.channels;
    HostMatrixT<T> Y(X.rows, w.out.size());
    for (int n = 0; n < X.rows; ++n)
        for (int p = 0; p < w.out.pixels(); ++p)
            for (int f = 0; f < F; ++f) Y(n, p * F + f) = b(0, f);
    forEachTap(X.rows, w, [&](int n, int xb, int yb, int wr) {
        for (int c = 0; c < C; ++c)
            for (int f = 0; f < F; ++f) Y(n, yb + f) += X(n, xb + c) * W(wr + c, f);
    });
    return Y;
}

// dX[n, iy, ix, c] = sum over the taps that read it of dY[n, oy, ox, f] W[(ky, kx, c), f].
template <class T>
HostMatrixT<T> conv2dBackwardInput(const HostMatrixT<T>& dY, const HostMatrixT<T>& W, const Window& w) {
    detail::requireImages("conv2dBackwardInput", "dY", dY, w.out);
    detail::requireFilter("conv2dBackwardInput", W, w);
    const int C = w.in.channels, F = w.out.channels;
    HostMatrixT<T> dX(dY.rows, w.in.size());
    forEachTap(dY.rows, w, [&](int n, int xb, int yb, int wr) {
        for (int c = 0; c < C; ++c)
            for (int f = 0; f < F; ++f) dX(n, xb + c) += dY(n, yb + f) * W(wr + c, f);
    });
    return dX;
}

// dW[(ky, kx, c), f] = sum_{n, oy, ox} X[n, iy, ix, c] dY[n, oy, ox, f].
template <class T>
HostMatrixT<T> conv2dBackwardFilter(const HostMatrixT<T>& X, const HostMatrixT<T>& dY, const Window& w) {
    detail::requireImages("conv2dBackwardFilter", "X", X, w.in);
    detail::requireImages("conv2dBackwardFilter", "dY", dY, w.out);
    if (X.rows != dY.rows)
        detail::fail("conv2dBackwardFilter",
                     "X has " + std::to_string(X.rows) + " rows but dY has " + std::to_string(dY.rows));
    const int C = w.in.channels, F = w.out.channels;
    HostMatrixT<T> dW(w.kh * w.kw * C, F);
    forEachTap(X.rows, w, [&](int n, int xb, int yb, int wr) {
        for (int c = 0; c < C; ++c)
            for (int f = 0; f < F; ++f) dW(wr + c, f) += X(n, xb + c) * dY(n, yb + f);
    });
    return dW;
}

// ---- depthwise convolution: each input channel c convolved with its own M
// filters, output channel c*M + m (TensorFlow's order). W: (kh*kw*C) x M, row
// (ky*kw + kx)*C + c — the [kh, kw, C, M] depthwise kernel flattened; the
// window's out.channels is C*M.
//   Y[n, oy, ox, c*M + m] = sum_{ky, kx} X[n, iy, ix, c] W[(ky, kx, c), m]
namespace detail {
template <class T>
int depthwiseMultiplier(const char* fn, const HostMatrixT<T>& W, const Window& w) {
    const int C = w.in.channels;
    if (W.rows != w.kh * w.kw * C || W.cols <= 0 || w.out.channels != C * W.cols)
        fail(fn, "W is " + shape(W) + ", expected " + std::to_string(w.kh * w.kw * C) + "xM with M*" +
                     std::to_string(C) + " = " + std::to_string(w.out.channels) + " output channels");
    return W.cols;
}
}  // namespace detail

template <class T>
HostMatrixT<T> depthwiseConv2d(const HostMatrixT<T>& X, const HostMatrixT<T>& W, const Window& w) {
    detail::requireImages("depthwiseConv2d", "X", X, w.in);
    const int M = detail::depthwiseMultiplier("depthwiseConv2d", W, w), C = w.in.channels;
    HostMatrixT<T> Y(X.rows, w.out.size());
    forEachTap(X.rows, w, [&](int n, int xb, int yb, int wr) {
        for (int c = 0; c < C; ++c)
            for (int m = 0; m < M; ++m) Y(n, yb + c * M + m) += X(n, xb + c) * W(wr + c, m);
    });
    return Y;
}

// dX[n, iy, ix, c] = sum over the taps that read it, and m, of dY[n, oy, ox, c*M + m] W[(ky, kx, c), m].
template <class T>
HostMatrixT<T> depthwiseConv2dBackwardInput(const HostMatrixT<T>& dY, const HostMatrixT<T>& W, const Window& w) {
    detail::requireImages("depthwiseConv2dBackwardInput", "dY", dY, w.out);
    const int M = detail::depthwiseMultiplier("depthwiseConv2dBackwardInput", W, w), C = w.in.channels;
    HostMatrixT<T> dX(dY.rows, w.in.size());
    forEachTap(dY.rows, w, [&](int n, int xb, int yb, int wr) {
        for (int c = 0; c < C; ++c)
            for (int m = 0; m < M; ++m) dX(n, xb + c) += dY(n, yb + c * M + m) * W(wr + c, m);
    });
    return dX;
}

// dW[(ky, kx, c), m] = sum_{n, oy, ox} X[n, iy, ix, c] dY[n, oy, ox, c*M + m]; M = out.channels / C.
template <class T>
HostMatrixT<T> depthwiseConv2dBackwardFilter(const HostMatrixT<T>& X, const HostMatrixT<T>& dY, const Window& w) {
    detail::requireImages("depthwiseConv2dBackwardFilter", "X", X, w.in);
    detail::requireImages("depthwiseConv2dBackwardFilter", "dY", dY, w.out);
    const int C = w.in.channels, M = w.out.channels / C;
    if (M * C != w.out.channels)
        detail::fail("depthwiseConv2dBackwardFilter", "the output's channels are not a multiple of the input's");
    HostMatrixT<T> dW(w.kh * w.kw * C, M);
    forEachTap(X.rows, w, [&](int n, int xb, int yb, int wr) {
        for (int c = 0; c < C; ++c)
            for (int m = 0; m < M; ++m) dW(wr + c, m) += X(n, xb + c) * dY(n, yb + c * M + m);
    });
    return dW;
}

// Per-channel sums over every row and pixel: the bias gradient of a
// convolution (channels = F) and the sums batch normalization needs.
template <class T>
HostMatrixT<T> channelSum(const HostMatrixT<T>& X, int channels) {
    if (channels <= 0 || X.cols % channels != 0)
        detail::fail("channelSum", "X is " + detail::shape(X) + ", not a whole number of pixels of " +
                                       std::to_string(channels) + " channels");
    HostMatrixT<T> s(1, channels);
    for (int n = 0; n < X.rows; ++n)
        for (int j = 0; j < X.cols; ++j) s(0, j % channels) += X(n, j);
    return s;
}

}  // namespace gltrain::ref
