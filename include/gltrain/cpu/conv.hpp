// 2-D convolution on the CPU over NHWC image rows (gltrain/window.hpp;
// formulas in reference/conv.hpp), as products through cpu::gemm whose
// packers read the image in place — im2col without the im2col matrix:
//   forward        Y (pixels x F) = im2col(X) (pixels x kh*kw*C) W, bias and activation fused
//   filter grad    dW^T (F x kh*kw*C) = dY^T im2col(X), then transposed (F and kh*kw*C are small)
//   input grad     dX = col2im(dY W^T), in chunks of pixels (the one
//                  materialised matrix: chunk x kh*kw*C floats, then scatter-added)
// A "pixel" is one output position (n, oy, ox) of the batch; a "filter row"
// k = (ky * kw + kx) * C + c indexes im2col's columns and W's rows.
// Packers gather through a table of the input offset of every filter row
// (Workspace::taps), so a window that lies inside the image costs one load
// per value; windows that cross the border check each tap.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/cpu/parallel_for.hpp"
#include "gltrain/window.hpp"

namespace gltrain::cpu {

namespace conv_detail {

// Where output pixel p's window starts in the input, and whether all of it is inside.
struct PixelWindow {
    const float* image;  // image n's row
    long origin;         // offset of input pixel (iy0, ix0), channel 0 (may be outside)
    int iy0, ix0;
    bool inside;
};

struct Geometry {
    const Window& w;
    const int* taps;  // K entries: (ky * dh * in.width + kx * dw) * C + c
    int kOf(int k, int* ky, int* kx) const {
        const int tap = k / w.in.channels;
        *ky = tap / w.kw;
        *kx = tap % w.kw;
        return k % w.in.channels;
    }
    // Output pixel p as (image, row, column); next() steps to p + 1 without dividing.
    struct Pixel {
        int n, oy, ox;
    };
    Pixel pixel(int p) const {
        const int P = w.out.pixels(), q = p % P;
        return {p / P, q / w.out.width, q % w.out.width};
    }
    void next(Pixel& px) const {
        if (++px.ox < w.out.width) return;
        px.ox = 0;
        if (++px.oy < w.out.height) return;
        px.oy = 0;
        ++px.n;
    }
    PixelWindow at(const float* X, const Pixel& px) const {
        PixelWindow pw;
        pw.image = X + size_t(px.n) * size_t(w.in.size());
        pw.iy0 = w.inY(px.oy, 0);
        pw.ix0 = w.inX(px.ox, 0);
        pw.origin = (long(pw.iy0) * w.in.width + pw.ix0) * w.in.channels;
        pw.inside = pw.iy0 >= 0 && pw.ix0 >= 0 && pw.iy0 + w.spanH() <= w.in.height && pw.ix0 + w.spanW() <= w.in.width;
        return pw;
    }
    // im2col(p, k) for a window that crosses the border.
    float edge(const PixelWindow& pw, int k) const {
        int ky, kx;
        kOf(k, &ky, &kx);
        return w.inside(pw.iy0 + ky * w.dh, pw.ix0 + kx * w.dw) ? pw.image[pw.origin + taps[k]] : 0.0f;
    }
};

inline const int* tapOffsets(const Window& w, Workspace& ws) {
    const int C = w.in.channels, K = w.kh * w.kw * C;
    ws.taps.resize(size_t(K));
    for (int k = 0; k < K; ++k) {
        const int tap = k / C;
        ws.taps[size_t(k)] = ((tap / w.kw) * w.dh * w.in.width + (tap % w.kw) * w.dw) * C + k % C;
    }
    return ws.taps.data();
}

// op(A) = im2col(X): rows are output pixels, k runs over filter rows.
struct PackIm2colRows {
    const float* X;
    Geometry g;
    void operator()(float* dst, int i0, int rows, int k0, int kc, int MR) const {
        Geometry::Pixel px = g.pixel(i0);
        for (int r = 0; r < MR; ++r, g.next(px)) {
            float* d = dst + r;
            if (r >= rows) {
                for (int k = 0; k < kc; ++k) d[size_t(k) * size_t(MR)] = 0.0f;
                continue;
            }
            const PixelWindow pw = g.at(X, px);
            if (pw.inside) {
                const float* base = pw.image + pw.origin;
                for (int k = 0; k < kc; ++k) d[size_t(k) * size_t(MR)] = base[g.taps[k0 + k]];
            } else
                for (int k = 0; k < kc; ++k) d[size_t(k) * size_t(MR)] = g.edge(pw, k0 + k);
        }
    }
};

// op(B) = im2col(X) with the sum over pixels: B(k = pixel, j = filter row).
struct PackIm2colCols {
    const float* X;
    Geometry g;
    void operator()(float* dst, int j0, int cols, int k0, int kc, int NR) const {
        Geometry::Pixel px = g.pixel(k0);
        for (int k = 0; k < kc; ++k, g.next(px)) {
            float* d = dst + size_t(k) * size_t(NR);
            const PixelWindow pw = g.at(X, px);
            if (pw.inside) {
                const float* base = pw.image + pw.origin;
                for (int c = 0; c < cols; ++c) d[c] = base[g.taps[j0 + c]];
            } else
                for (int c = 0; c < cols; ++c) d[c] = g.edge(pw, j0 + c);
            for (int c = cols; c < NR; ++c) d[c] = 0.0f;
        }
    }
};

// Whether im2col(X) is X itself, [pixels, C]: a 1x1 window at stride 1 with
// no padding (Dense at each step of a sequence, pointwise convolutions). The
// products then read X through the plain strided packers, and the input
// gradient is one product into dX, without the gather of taps or the scatter.
inline bool pointwise(const Window& w) {
    return w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.padTop == 0 && w.padLeft == 0 &&
           w.in.height == w.out.height && w.in.width == w.out.width;
}

}  // namespace conv_detail

// Y (n x OH*OW*F) = conv(X (n x H*W*C), W (kh*kw*C x F)) + bias, activation
// fused; Z (optional) receives the pre-activation.
inline void conv2d(const float* X, int n, const Window& w, const float* W, const float* bias, Activation act,
                   float alpha, float* Y, float* Z, Workspace& ws) {
    Epilogue e;
    e.bias = bias;
    e.activation = act;
    e.alpha = alpha;
    e.preactivation = Z;
    const int K = w.kh * w.kw * w.in.channels, F = w.out.channels;
    if (conv_detail::pointwise(w)) return matmul(n * w.out.pixels(), F, K, X, K, false, W, F, false, Y, F, e, ws);
    const conv_detail::Geometry g{w, conv_detail::tapOffsets(w, ws)};
    gemm(n * w.out.pixels(), F, K, conv_detail::PackIm2colRows{X, g}, gemm_detail::PackStridedB{{W, F, false}}, Y, F, e,
         ws);
}

// dW (kh*kw*C x F) = sum over pixels of im2col(X)^T dY, computed as
// dW^T = dY^T im2col(X) (the packers then read rows of dY and runs of the
// image) into ws.c and transposed.
inline void conv2dBackwardFilter(const float* X, const float* dY, int n, const Window& w, float* dW, Workspace& ws) {
    const int K = w.kh * w.kw * w.in.channels, F = w.out.channels;
    if (conv_detail::pointwise(w))  // dW = X^T dY directly
        return matmul(K, F, n * w.out.pixels(), X, K, true, dY, F, false, dW, F, Epilogue{}, ws);
    const conv_detail::Geometry g{w, conv_detail::tapOffsets(w, ws)};
    ws.c.resize(size_t(F) * size_t(K));
    gemm(F, K, n * w.out.pixels(), gemm_detail::PackStridedA{{dY, F, true}}, conv_detail::PackIm2colCols{X, g},
         ws.c.data(), K, Epilogue{}, ws);
    for (int f = 0; f < F; ++f)
        for (int k = 0; k < K; ++k) dW[size_t(k) * size_t(F) + size_t(f)] = ws.c[size_t(f) * size_t(K) + size_t(k)];
}

// dX (n x H*W*C) = col2im(dY W^T): each output pixel's row of dY W^T is added
// to the input values its window read. The images are split over ws's
// threads (their gradients do not overlap; each adds its pixels in order), each
// thread making its rows of dY W^T a chunk at a time in its Panels::c; one
// image alone (or a small batch) splits the chunks' products instead.
inline void conv2dBackwardInput(const float* dY, const float* W, int n, const Window& w, float* dX, Workspace& ws) {
    const int K = w.kh * w.kw * w.in.channels, F = w.out.channels;
    const int pixels = n * w.out.pixels();
    if (conv_detail::pointwise(w)) return matmul(pixels, K, F, dY, F, false, W, F, true, dX, K, Epilogue{}, ws);
    const conv_detail::Geometry g{w, conv_detail::tapOffsets(w, ws)};
    const double workPerImage = double(w.out.pixels()) * K * (F + 8.0);  // the product, then the scatter
    const bool byImages = partsOf(ws, size_t(n), workPerImage) > 1;
    forParts(ws, size_t(n), workPerImage, [&](size_t firstImage, size_t endImage, int t) {
        std::fill(dX + firstImage * size_t(w.in.size()), dX + endImage * size_t(w.in.size()), 0.0f);
        const int first = int(firstImage) * w.out.pixels(), end = int(endImage) * w.out.pixels();
        const int chunk = std::max(1, std::min(end - first, (1 << 16) / std::max(1, K)));  // <= 256 KiB of rows
        Panels& mine = ws.panels[size_t(t)];
        mine.c.resize(size_t(chunk) * size_t(K));
        for (int p0 = first; p0 < end; p0 += chunk) {
            const int m = std::min(chunk, end - p0);
            // Rows dY[p0 .. p0 + m) W^T (W is K x F, read transposed).
            const gemm_detail::PackStridedA a{{dY + size_t(p0) * size_t(F), F, false}};
            const gemm_detail::PackStridedB b{{W, F, true}};
            if (byImages) gemmSerial(m, K, F, a, b, mine.c.data(), K, Epilogue{}, ws.wide, mine);
            else gemm(m, K, F, a, b, mine.c.data(), K, Epilogue{}, ws);
            conv_detail::Geometry::Pixel px = g.pixel(p0);
            for (int i = 0; i < m; ++i, g.next(px)) {
                const float* row = mine.c.data() + size_t(i) * size_t(K);
                const conv_detail::PixelWindow pw = g.at(dX, px);
                float* image = const_cast<float*>(pw.image);  // dX's own row: g.at only locates it
                if (pw.inside) {
                    float* base = image + pw.origin;
                    for (int k = 0; k < K; ++k) base[g.taps[k]] += row[k];
                } else {
                    for (int k = 0; k < K; ++k) {
                        int ky, kx;
                        g.kOf(k, &ky, &kx);
                        if (w.inside(pw.iy0 + ky * w.dh, pw.ix0 + kx * w.dw)) image[pw.origin + g.taps[k]] += row[k];
                    }
                }
            }
        }
    });
}

// s[c] = sum over rows and pixels of X[.., c] (C channels interleaved, NHWC):
// a convolution's bias gradient (and a dense layer's, with C = cols). Each
// row sums in float (vectorised), the rows in double: a batch of images sums
// tens of thousands of terms. The channels are split over ws's threads.
// `acc` and `rowSum` are scratch.
inline void channelSum(const float* X, int rows, int cols, int C, float* s, std::vector<double>& acc,
                       std::vector<float>& rowSum, Workspace& ws) {
    acc.assign(size_t(C), 0.0);
    rowSum.resize(size_t(C));
    forParts(ws, size_t(C), 16.0 * rows * (cols / C), [&](size_t c0, size_t c1) {
        float* rs = rowSum.data();
        for (int r = 0; r < rows; ++r) {
            const float* x = X + size_t(r) * size_t(cols);
            std::fill(rs + c0, rs + c1, 0.0f);
            for (int j = 0; j < cols; j += C)
                for (size_t c = c0; c < c1; ++c) rs[c] += x[size_t(j) + c];
            for (size_t c = c0; c < c1; ++c) acc[c] += rs[c];
        }
        for (size_t c = c0; c < c1; ++c) s[c] = float(acc[c]);
    });
}

}  // namespace gltrain::cpu
