// Max and average pooling on the CPU over NHWC image rows (formulas and tie
// rules in reference/pooling.hpp). Max pooling records, per output, the input
// column its maximum came from (the first maximum in row-major window order,
// padding never wins), so the backward pass is one scatter. The images of a
// batch are split over a Workspace's threads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gltrain/cpu/parallel_for.hpp"
#include "gltrain/window.hpp"

namespace gltrain::cpu {

// Y (n x OH*OW*C) = pool(X); for PoolKind::Max, argmax (n x OH*OW*C, required)
// gets the column of X within its image that each output came from.
// The channel loops are written as selects, so they vectorise.
inline void pool2d(const float* X, int n, const Window& w, PoolKind kind, float* Y, int32_t* argmax, Workspace& ws) {
    const int C = w.in.channels, inSize = w.in.size(), outSize = w.out.size();
    const bool max = kind == PoolKind::Max;
    forParts(ws, size_t(n), 16.0 * outSize * w.kh * w.kw, [&](size_t first, size_t end) {
        for (size_t b = first; b < end; ++b) {
            const float* x = X + size_t(b) * size_t(inSize);
            for (int oy = 0; oy < w.out.height; ++oy)
                for (int ox = 0; ox < w.out.width; ++ox) {
                    const size_t o = size_t(b) * size_t(outSize) + size_t((oy * w.out.width + ox) * C);
                    float* yo = Y + o;
                    int32_t* ao = max ? argmax + o : nullptr;
                    int count = 0;
                    for (int ky = 0; ky < w.kh; ++ky)
                        for (int kx = 0; kx < w.kw; ++kx) {
                            const int iy = w.inY(oy, ky), ix = w.inX(ox, kx);
                            if (!w.inside(iy, ix)) continue;
                            const int base = (iy * w.in.width + ix) * C;
                            const float* xi = x + base;
                            if (count++ == 0) {
                                for (int c = 0; c < C; ++c) yo[c] = xi[c];
                                if (max)
                                    for (int c = 0; c < C; ++c) ao[c] = base + c;
                            } else if (max) {
                                for (int c = 0; c < C; ++c) {
                                    const bool gt = xi[c] > yo[c];  // strict: the first maximum stays
                                    yo[c] = gt ? xi[c] : yo[c];
                                    ao[c] = gt ? base + c : ao[c];
                                }
                            } else {
                                for (int c = 0; c < C; ++c) yo[c] += xi[c];
                            }
                        }
                    if (!max)
                        for (int c = 0; c < C; ++c) yo[c] /= float(count);
                }
        }
    });
}

// dX (n x H*W*C) from dY: max pooling sends each gradient to its recorded
// input; average pooling spreads dY / count over the window's in-bounds taps.
inline void pool2dBackward(const float* dY, const int32_t* argmax, int n, const Window& w, PoolKind kind, float* dX,
                           Workspace& ws) {
    const int C = w.in.channels, inSize = w.in.size(), outSize = w.out.size();
    forParts(ws, size_t(n), 16.0 * (inSize + outSize * w.kh * w.kw), [&](size_t first, size_t end) {
        std::fill(dX + first * size_t(inSize), dX + end * size_t(inSize), 0.0f);
        for (size_t b = first; b < end; ++b) {
            const float* g = dY + size_t(b) * size_t(outSize);
            float* dx = dX + size_t(b) * size_t(inSize);
            if (kind == PoolKind::Max) {
                const int32_t* arg = argmax + size_t(b) * size_t(outSize);
                for (int i = 0; i < outSize; ++i) dx[arg[i]] += g[i];
                continue;
            }
            for (int oy = 0; oy < w.out.height; ++oy)
                for (int ox = 0; ox < w.out.width; ++ox) {
                    int count = 0;
                    for (int ky = 0; ky < w.kh; ++ky)
                        for (int kx = 0; kx < w.kw; ++kx) count += w.inside(w.inY(oy, ky), w.inX(ox, kx));
                    const float* go = g + (oy * w.out.width + ox) * C;
                    for (int ky = 0; ky < w.kh; ++ky)
                        for (int kx = 0; kx < w.kw; ++kx) {
                            const int iy = w.inY(oy, ky), ix = w.inX(ox, kx);
                            if (!w.inside(iy, ix)) continue;
                            float* d = dx + (iy * w.in.width + ix) * C;
                            for (int c = 0; c < C; ++c) d[c] += go[c] / float(count);
                        }
                }
        }
    });
}

}  // namespace gltrain::cpu
