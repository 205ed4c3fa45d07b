// Depthwise 2-D convolution on the CPU over NHWC image rows (gltrain/window.hpp;
// formulas in reference/conv.hpp): input channel c has its own M filters,
// output channel c*M + m; W is (kh*kw*C) x M. Direct loops over output pixels
// and in-image taps, each tap a run over the C*M contiguous outputs and
// weights: a depthwise layer does kh*kw multiply-adds per output value, too
// few for cpu::gemm's packing to pay back.
#pragma once
#include <algorithm>
#include <cstddef>

#include "gltrain/window.hpp"

namespace gltrain::cpu {

namespace depthwise_detail {
// f(image, oy, ox, xPixel, tap) for every in-bounds tap of every output pixel:
// xPixel is the input pixel's offset in image `image`'s row, tap = ky*kw + kx.
template <class F>
void forEachTap(int n, const Window& w, F f) {
    for (int b = 0; b < n; ++b)
        for (int oy = 0; oy < w.out.height; ++oy)
            for (int ox = 0; ox < w.out.width; ++ox)
                for (int ky = 0; ky < w.kh; ++ky) {
                    const int iy = w.inY(oy, ky);
                    if (iy < 0 || iy >= w.in.height) continue;
                    for (int kx = 0; kx < w.kw; ++kx) {
                        const int ix = w.inX(ox, kx);
                        if (ix < 0 || ix >= w.in.width) continue;
                        f(b, oy, ox, (iy * w.in.width + ix) * w.in.channels, ky * w.kw + kx);
                    }
                }
}
}  // namespace depthwise_detail

// Y (n x OH*OW*C*M) = depthwise conv(X (n x H*W*C), W (kh*kw*C x M)).
inline void depthwiseConv2d(const float* X, int n, const Window& w, const float* W, float* Y) {
    const int C = w.in.channels, OC = w.out.channels, M = OC / C;
    std::fill(Y, Y + size_t(n) * size_t(w.out.size()), 0.0f);
    depthwise_detail::forEachTap(n, w, [&](int b, int oy, int ox, int xp, int tap) {
        const float* x = X + size_t(b) * size_t(w.in.size()) + size_t(xp);
        const float* wt = W + size_t(tap) * size_t(C) * size_t(M);
        float* y = Y + size_t(b) * size_t(w.out.size()) + size_t(oy * w.out.width + ox) * size_t(OC);
        for (int c = 0; c < C; ++c)
            for (int m = 0; m < M; ++m) y[c * M + m] += x[c] * wt[c * M + m];
    });
}

// dX (n x H*W*C): each tap that read X[.., c] adds sum_m dY[.., c*M + m] W[tap*C + c, m].
inline void depthwiseConv2dBackwardInput(const float* dY, const float* W, int n, const Window& w, float* dX) {
    const int C = w.in.channels, OC = w.out.channels, M = OC / C;
    std::fill(dX, dX + size_t(n) * size_t(w.in.size()), 0.0f);
    depthwise_detail::forEachTap(n, w, [&](int b, int oy, int ox, int xp, int tap) {
        float* dx = dX + size_t(b) * size_t(w.in.size()) + size_t(xp);
        const float* wt = W + size_t(tap) * size_t(C) * size_t(M);
        const float* dy = dY + size_t(b) * size_t(w.out.size()) + size_t(oy * w.out.width + ox) * size_t(OC);
        for (int c = 0; c < C; ++c) {
            float s = 0.0f;
            for (int m = 0; m < M; ++m) s += dy[c * M + m] * wt[c * M + m];
            dx[c] += s;
        }
    });
}

// dW (kh*kw*C x M) = sum over samples and output pixels of X[.., c] dY[.., c*M + m].
inline void depthwiseConv2dBackwardFilter(const float* X, const float* dY, int n, const Window& w, float* dW) {
    const int C = w.in.channels, OC = w.out.channels, M = OC / C;
    std::fill(dW, dW + size_t(w.kh) * size_t(w.kw) * size_t(OC), 0.0f);
    depthwise_detail::forEachTap(n, w, [&](int b, int oy, int ox, int xp, int tap) {
        const float* x = X + size_t(b) * size_t(w.in.size()) + size_t(xp);
        const float* dy = dY + size_t(b) * size_t(w.out.size()) + size_t(oy * w.out.width + ox) * size_t(OC);
        float* dw = dW + size_t(tap) * size_t(OC);
        for (int c = 0; c < C; ++c)
            for (int m = 0; m < M; ++m) dw[c * M + m] += x[c] * dy[c * M + m];
    });
}

}  // namespace gltrain::cpu
