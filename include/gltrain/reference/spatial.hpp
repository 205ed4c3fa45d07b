// Moving values within each row, by index, one element at a time: the
// reference for the spatial ops (graph/ops/spatial.hpp) — axes permuted,
// images padded and cropped, and resized by whole factors (nearest, or
// bilinear as TF.js's resizeBilinear with neither aligned corners nor
// half-pixel centres) with the resize's adjoint as its gradient.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "gltrain/host_matrix.hpp"
#include "gltrain/interpolation.hpp"
#include "gltrain/margins.hpp"
#include "gltrain/window.hpp"

namespace gltrain::ref {

// Each row's axes `dims` permuted: output axis k is input axis perm[k].
template <class T>
HostMatrixT<T> permuteAxes(const HostMatrixT<T>& x, const std::vector<int64_t>& dims, const std::vector<int>& perm) {
    const size_t n = dims.size();
    std::vector<int64_t> outDims(n);
    for (size_t k = 0; k < n; ++k) outDims[k] = dims[size_t(perm[k])];
    HostMatrixT<T> y(x.rows, x.cols);
    std::vector<int64_t> in(n), out(n);
    for (int r = 0; r < x.rows; ++r)
        for (int c = 0; c < x.cols; ++c) {
            // c's index in x, then where it goes.
            int64_t rest = c;
            for (size_t k = n; k-- > 0;) in[k] = rest % dims[k], rest /= dims[k];
            for (size_t k = 0; k < n; ++k) out[k] = in[size_t(perm[k])];
            int64_t o = 0;
            for (size_t k = 0; k < n; ++k) o = o * outDims[k] + out[k];
            y(r, int(o)) = x(r, c);
        }
    return y;
}

// Value (y, x, c) of row r of an NHWC image `s`, or 0 outside it.
template <class T>
T pixelOrZero(const HostMatrixT<T>& m, int r, const Shape3& s, int y, int x, int c) {
    if (y < 0 || y >= s.height || x < 0 || x >= s.width) return T(0);
    return m(r, (y * s.width + x) * s.channels + c);
}

// Each image inside zeros: top rows above, bottom below, left and right columns beside.
template <class T>
HostMatrixT<T> padImages(const HostMatrixT<T>& x, const Shape3& in, const Margins& m) {
    const Shape3 out{in.height + m.top + m.bottom, in.width + m.left + m.right, in.channels};
    HostMatrixT<T> y(x.rows, out.size());
    for (int r = 0; r < x.rows; ++r)
        for (int oy = 0; oy < out.height; ++oy)
            for (int ox = 0; ox < out.width; ++ox)
                for (int c = 0; c < out.channels; ++c)
                    y(r, (oy * out.width + ox) * out.channels + c) = pixelOrZero(x, r, in, oy - m.top, ox - m.left, c);
    return y;
}
// Each image without its margins.
template <class T>
HostMatrixT<T> cropImages(const HostMatrixT<T>& x, const Shape3& in, const Margins& m) {
    const Shape3 out{in.height - m.top - m.bottom, in.width - m.left - m.right, in.channels};
    HostMatrixT<T> y(x.rows, out.size());
    for (int r = 0; r < x.rows; ++r)
        for (int oy = 0; oy < out.height; ++oy)
            for (int ox = 0; ox < out.width; ++ox)
                for (int c = 0; c < out.channels; ++c)
                    y(r, (oy * out.width + ox) * out.channels + c) =
                        x(r, ((oy + m.top) * in.width + ox + m.left) * in.channels + c);
    return y;
}

// Along one axis of `in` values resized to `out`: the two input coordinates
// output coordinate o reads and their weights (nearest: one, weight 1).
struct ResizeTaps {
    int lo = 0, hi = 0;
    double wLo = 1, wHi = 0;
};
inline ResizeTaps resizeTaps(Interpolation how, int o, int factor, int in, int out) {
    if (how == Interpolation::Nearest) return {o / factor, o / factor, 1, 0};
    const double src = double(in) / double(out) * o;  // TF.js: scale * o, corners not aligned
    const double lo = std::max(0.0, std::floor(src));
    const int hi = std::min(in - 1, int(std::ceil(src)));
    return {int(lo), hi, 1 - (src - lo), src - lo};
}

// Each image resized by whole factors (size.h, size.w).
template <class T>
HostMatrixT<T> upsampleImages(const HostMatrixT<T>& x, const Shape3& in, Size2 size, Interpolation how) {
    const Shape3 out{in.height * size.h, in.width * size.w, in.channels};
    HostMatrixT<T> y(x.rows, out.size());
    for (int r = 0; r < x.rows; ++r)
        for (int oy = 0; oy < out.height; ++oy)
            for (int ox = 0; ox < out.width; ++ox) {
                const ResizeTaps ty = resizeTaps(how, oy, size.h, in.height, out.height);
                const ResizeTaps tx = resizeTaps(how, ox, size.w, in.width, out.width);
                for (int c = 0; c < in.channels; ++c) {
                    const auto at = [&](int iy, int ix) { return x(r, (iy * in.width + ix) * in.channels + c); };
                    y(r, (oy * out.width + ox) * out.channels + c) =
                        T(ty.wLo * tx.wLo) * at(ty.lo, tx.lo) + T(ty.wLo * tx.wHi) * at(ty.lo, tx.hi) +
                        T(ty.wHi * tx.wLo) * at(ty.hi, tx.lo) + T(ty.wHi * tx.wHi) * at(ty.hi, tx.hi);
                }
            }
    return y;
}
// The adjoint of upsampleImages: each output gradient back to the pixels it read, by their weights.
template <class T>
HostMatrixT<T> upsampleImagesBackward(const HostMatrixT<T>& dy, const Shape3& in, Size2 size, Interpolation how) {
    const Shape3 out{in.height * size.h, in.width * size.w, in.channels};
    HostMatrixT<T> dx(dy.rows, in.size());
    for (int r = 0; r < dy.rows; ++r)
        for (int oy = 0; oy < out.height; ++oy)
            for (int ox = 0; ox < out.width; ++ox) {
                const ResizeTaps ty = resizeTaps(how, oy, size.h, in.height, out.height);
                const ResizeTaps tx = resizeTaps(how, ox, size.w, in.width, out.width);
                for (int c = 0; c < in.channels; ++c) {
                    const T g = dy(r, (oy * out.width + ox) * out.channels + c);
                    const auto at = [&](int iy, int ix) -> T& { return dx(r, (iy * in.width + ix) * in.channels + c); };
                    at(ty.lo, tx.lo) += T(ty.wLo * tx.wLo) * g;
                    at(ty.lo, tx.hi) += T(ty.wLo * tx.wHi) * g;
                    at(ty.hi, tx.lo) += T(ty.wHi * tx.wLo) * g;
                    at(ty.hi, tx.hi) += T(ty.wHi * tx.wHi) * g;
                }
            }
    return dx;
}

}  // namespace gltrain::ref
