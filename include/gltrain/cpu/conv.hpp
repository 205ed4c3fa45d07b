// 2-D convolution on the CPU over NHWC image rows (gltrain/window.hpp;
// formulas in reference/conv.hpp), as products through cpu::gemm whose
// packers read the image in place — im2col without the im2col matrix:
//   forward        Y (pixels x F)  = im2col(X) (pixels x kh*kw*C) W, bias and activation fused
//   filter grad    dW (kh*kw*C x F) = im2col(X)^T dY
//   input grad     dX = col2im(dY W^T), in chunks of pixels (the one
//                  materialised matrix: chunk x kh*kw*C floats, then scatter-added)
// A "pixel" here is one output position (n, oy, ox) of the batch.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/window.hpp"

namespace gltrain::cpu {

namespace conv_detail {

// The input offset of tap (ky, kx, c) of output pixel p, or -1 where the tap
// falls into the padding.
struct Taps {
    const Window& w;
    int pixelsPerImage() const { return w.out.pixels(); }
    // Column of X (within image n's row, in floats) that pixel p's tap k reads.
    long offset(int p, int k) const {
        const int C = w.in.channels;
        const int n = p / pixelsPerImage(), q = p % pixelsPerImage();
        const int oy = q / w.out.width, ox = q % w.out.width;
        const int tap = k / C, c = k % C;
        const int iy = w.inY(oy, tap / w.kw), ix = w.inX(ox, tap % w.kw);
        if (!w.inside(iy, ix)) return -1;
        return long(n) * w.in.size() + (long(iy) * w.in.width + ix) * C + c;
    }
};

// op(A) = im2col(X): rows are output pixels, k runs over (ky, kx, c).
struct PackIm2colRows {
    const float* X;
    const Window& w;
    void operator()(float* dst, int i0, int rows, int k0, int kc, int MR) const {
        const int C = w.in.channels, P = w.out.pixels();
        for (int r = 0; r < MR; ++r) {
            if (r >= rows) {
                for (int k = 0; k < kc; ++k) dst[size_t(k) * size_t(MR) + size_t(r)] = 0.0f;
                continue;
            }
            const int p = i0 + r, n = p / P, q = p % P;
            const int oy = q / w.out.width, ox = q % w.out.width;
            const float* img = X + size_t(n) * size_t(w.in.size());
            // Walk k = (tap, c) from k0 with counters instead of dividing per element.
            int tap = k0 / C, c = k0 % C;
            for (int k = 0; k < kc;) {
                const int iy = w.inY(oy, tap / w.kw), ix = w.inX(ox, tap % w.kw);
                const int run = std::min(C - c, kc - k);  // the rest of this tap's channels
                float* d = dst + size_t(k) * size_t(MR) + size_t(r);
                if (w.inside(iy, ix)) {
                    const float* s = img + (size_t(iy) * size_t(w.in.width) + size_t(ix)) * size_t(C) + size_t(c);
                    for (int j = 0; j < run; ++j) d[size_t(j) * size_t(MR)] = s[j];
                } else {
                    for (int j = 0; j < run; ++j) d[size_t(j) * size_t(MR)] = 0.0f;
                }
                k += run;
                c = 0;
                ++tap;
            }
        }
    }
};

// op(A) = im2col(X)^T: rows are k = (ky, kx, c), the sum runs over pixels.
struct PackIm2colCols {
    const float* X;
    const Window& w;
    void operator()(float* dst, int i0, int rows, int k0, int kc, int MR) const {
        const int C = w.in.channels, P = w.out.pixels();
        int dy[16], dx[16], ch[16];  // MR <= 16
        for (int r = 0; r < rows; ++r) {
            const int tap = (i0 + r) / C;
            dy[r] = tap / w.kw;
            dx[r] = tap % w.kw;
            ch[r] = (i0 + r) % C;
        }
        for (int k = 0; k < kc; ++k) {
            const int p = k0 + k, n = p / P, q = p % P;
            const int oy = q / w.out.width, ox = q % w.out.width;
            const float* img = X + size_t(n) * size_t(w.in.size());
            float* d = dst + size_t(k) * size_t(MR);
            for (int r = 0; r < rows; ++r) {
                const int iy = w.inY(oy, dy[r]), ix = w.inX(ox, dx[r]);
                d[r] = w.inside(iy, ix) ? img[(size_t(iy) * size_t(w.in.width) + size_t(ix)) * size_t(C) + size_t(ch[r])]
                                        : 0.0f;
            }
            for (int r = rows; r < MR; ++r) d[r] = 0.0f;
        }
    }
};

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
    gemm(n * w.out.pixels(), F, K, conv_detail::PackIm2colRows{X, w},
         gemm_detail::PackStridedB{{W, F, false}}, Y, F, e, ws);
}

// dW (kh*kw*C x F) = sum over pixels of im2col(X)^T dY.
inline void conv2dBackwardFilter(const float* X, const float* dY, int n, const Window& w, float* dW, Workspace& ws) {
    const int K = w.kh * w.kw * w.in.channels, F = w.out.channels;
    gemm(K, F, n * w.out.pixels(), conv_detail::PackIm2colCols{X, w}, gemm_detail::PackStridedB{{dY, F, false}}, dW,
         F, Epilogue{}, ws);
}

// dX (n x H*W*C) = col2im(dY W^T): each output pixel's row of dY W^T is added
// to the input taps it read. ws.c holds one chunk of those rows.
inline void conv2dBackwardInput(const float* dY, const float* W, int n, const Window& w, float* dX, Workspace& ws) {
    const int K = w.kh * w.kw * w.in.channels, F = w.out.channels, C = w.in.channels;
    const int pixels = n * w.out.pixels();
    std::fill(dX, dX + size_t(n) * size_t(w.in.size()), 0.0f);
    const int chunk = std::max(1, std::min(pixels, (1 << 16) / std::max(1, K)));  // <= 256 KiB of rows
    ws.c.resize(size_t(chunk) * size_t(K));
    std::vector<float>& cols = ws.c;
    const conv_detail::Taps taps{w};
    for (int p0 = 0; p0 < pixels; p0 += chunk) {
        const int m = std::min(chunk, pixels - p0);
        // dCols = dY[p0 .. p0 + m) W^T (W is K x F, read transposed); the product packs
        // into ws.a and ws.b, the rows land in ws.c.
        matmul(m, K, F, dY + size_t(p0) * size_t(F), F, false, W, F, true, cols.data(), K, Epilogue{}, ws);
        for (int i = 0; i < m; ++i) {
            const float* row = cols.data() + size_t(i) * size_t(K);
            for (int tap = 0; tap < w.kh * w.kw; ++tap) {
                const long at = taps.offset(p0 + i, tap * C);
                if (at < 0) continue;
                float* d = dX + at;
                const float* s = row + size_t(tap) * size_t(C);
                for (int c = 0; c < C; ++c) d[c] += s[c];
            }
        }
    }
}

// s[c] = sum over rows and pixels of X[.., c] (C channels interleaved, NHWC):
// a convolution's bias gradient (and a dense layer's with C = cols).
// Accumulated in double: a batch of images sums tens of thousands of terms.
inline void channelSum(const float* X, int rows, int cols, int C, float* s, std::vector<double>& acc) {
    acc.assign(size_t(C), 0.0);
    const size_t total = size_t(rows) * size_t(cols);
    for (size_t i = 0; i < total; i += size_t(C))
        for (int c = 0; c < C; ++c) acc[size_t(c)] += X[i + size_t(c)];
    for (int c = 0; c < C; ++c) s[c] = float(acc[size_t(c)]);
}

}  // namespace gltrain::cpu
