// Max and average pooling over NHWC image rows (gltrain/window.hpp): the
// reference for forward/pool2d and backward/pool2d.
//
// Max: the largest in-bounds value of the window (padding never wins); its
// gradient goes to the first maximum in row-major window order (ky, then kx),
// so ties resolve the same way on every renderer.
// Average: the mean of the in-bounds values (padding is not counted, as in
// TensorFlow); its gradient is dY / count to each of them.
// Global average pooling is average pooling with the window = the image.
#pragma once
#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/conv.hpp"

namespace gltrain::ref {

namespace detail {
// The in-bounds taps of window (oy, ox): calls f(iy, ix) in row-major order.
template <class F>
void forEachWindowTap(const Window& w, int oy, int ox, F f) {
    for (int ky = 0; ky < w.kh; ++ky)
        for (int kx = 0; kx < w.kw; ++kx) {
            int iy = w.inY(oy, ky), ix = w.inX(ox, kx);
            if (w.inside(iy, ix)) f(iy, ix);
        }
}
inline void requirePoolWindow(const char* fn, const Window& w) {
    if (w.in.channels != w.out.channels)
        fail(fn, "pooling keeps the channels, but the window maps " + w.in.str() + " to " + w.out.str());
}
}  // namespace detail

template <class T>
HostMatrixT<T> pool2d(const HostMatrixT<T>& X, const Window& w, PoolKind kind) {
    detail::requireImages("pool2d", "X", X, w.in);
    detail::requirePoolWindow("pool2d", w);
    const int C = w.in.channels;
    HostMatrixT<T> Y(X.rows, w.out.size());
    for (int n = 0; n < X.rows; ++n)
        for (int oy = 0; oy < w.out.height; ++oy)
            for (int ox = 0; ox < w.out.width; ++ox)
                for (int c = 0; c < C; ++c) {
                    T best = T(0), sum = T(0);
                    int count = 0;
                    detail::forEachWindowTap(w, oy, ox, [&](int iy, int ix) {
                        T v = X(n, (iy * w.in.width + ix) * C + c);
                        best = count == 0 || v > best ? v : best;
                        sum += v;
                        ++count;
                    });
                    // Every window holds at least one in-bounds tap (Window::make guarantees it).
                    Y(n, (oy * w.out.width + ox) * C + c) = kind == PoolKind::Max ? best : sum / T(count);
                }
    return Y;
}

template <class T>
HostMatrixT<T> pool2dBackward(const HostMatrixT<T>& X, const HostMatrixT<T>& dY, const Window& w, PoolKind kind) {
    detail::requireImages("pool2dBackward", "X", X, w.in);
    detail::requireImages("pool2dBackward", "dY", dY, w.out);
    detail::requirePoolWindow("pool2dBackward", w);
    if (X.rows != dY.rows)
        detail::fail("pool2dBackward",
                     "X has " + std::to_string(X.rows) + " rows but dY has " + std::to_string(dY.rows));
    const int C = w.in.channels;
    HostMatrixT<T> dX(X.rows, w.in.size());
    for (int n = 0; n < X.rows; ++n)
        for (int oy = 0; oy < w.out.height; ++oy)
            for (int ox = 0; ox < w.out.width; ++ox)
                for (int c = 0; c < C; ++c) {
                    const T g = dY(n, (oy * w.out.width + ox) * C + c);
                    int count = 0, arg = -1;
                    T best = T(0);
                    detail::forEachWindowTap(w, oy, ox, [&](int iy, int ix) {
                        int j = (iy * w.in.width + ix) * C + c;
                        if (count == 0 || X(n, j) > best) {
                            best = X(n, j);
                            arg = j;
                        }
                        ++count;
                    });
                    if (kind == PoolKind::Max) {
                        dX(n, arg) += g;
                    } else {
                        detail::forEachWindowTap(
                            w, oy, ox, [&](int iy, int ix) { dX(n, (iy * w.in.width + ix) * C + c) += g / T(count); });
                    }
                }
    return dX;
}

}  // namespace gltrain::ref
