// Images and sliding windows: the shapes Conv2D and the pooling layers share.
//
// An image batch is a matrix with one row per sample and H*W*C columns in
// NHWC order: column (y * W + x) * C + c holds channel c of pixel (y, x) —
// the layout TensorFlow uses, and the one Dense layers see after Flatten
// (which therefore costs nothing). In the packed texture layout four
// consecutive columns share a texel, so when C is a multiple of 4 a texel is
// four channels of one pixel and the kernels read a pixel's channels four at
// a time; other channel counts take the kernels' per-lane path.
//
// Output size and padding follow TensorFlow, with a window of k taps d apart
// (dilation d) spanning e = (k - 1) d + 1 pixels:
//   valid: out = (in - e) / s + 1, no padding
//   same:  out = ceil(in / s), total padding max((out - 1) s + e - in, 0),
//          of which floor(total / 2) goes before (top/left), the rest after.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <algorithm>
#include <string>

#include "gltrain/error.hpp"

namespace gltrain {

enum class Padding { Valid, Same };
inline constexpr std::array<Padding, 2> kAllPaddings = {Padding::Valid, Padding::Same};
inline const char* paddingName(Padding p) { return p == Padding::Same ? "same" : "valid"; }
// Whether `p` is one of the enumerators (an int cast to Padding may not be).
inline bool isPadding(Padding p) { return p == Padding::Valid || p == Padding::Same; }
enum class PoolKind { Max, Average };

// A size along an image's two axes, (height, width): Keras's kernel_size,
// strides and dilation_rate, which take n (for [n, n]) or [h, w].
struct Size2 {
    // Along the height (rows).
    int h = 1;
    // Along the width (columns).
    int w = 1;
    constexpr Size2() = default;
    // n x n: what a single number means (an int converts, so `Conv2D{8, 3}` is a 3x3 kernel).
    constexpr Size2(int n) : h(n), w(n) {}  // NOLINT(google-explicit-constructor)
    // h x w.
    constexpr Size2(int height, int width) : h(height), w(width) {}
    // Whether both axes are the same size (written as one number).
    constexpr bool square() const { return h == w; }
    // "3" when square, else "3x5".
    std::string str() const { return square() ? std::to_string(h) : std::to_string(h) + "x" + std::to_string(w); }
    constexpr bool operator==(const Size2& o) const { return h == o.h && w == o.w; }
    constexpr bool operator!=(const Size2& o) const { return !(*this == o); }
};

struct Shape3 {
    int height = 0, width = 0, channels = 0;
    int size() const { return height * width * channels; }
    int pixels() const { return height * width; }
    std::string str() const {
        return "[" + std::to_string(height) + ", " + std::to_string(width) + ", " + std::to_string(channels) + "]";
    }
    bool operator==(const Shape3& o) const { return height == o.height && width == o.width && channels == o.channels; }
    bool operator!=(const Shape3& o) const { return !(*this == o); }
};

// A window of kh x kw taps, dh and dw pixels apart (the dilation), sliding
// with strides (sh, sw) over an input image: the geometry of one Conv2D or
// pooling layer.
struct Window {
    static constexpr int64_t kMaxExtent = 2147483647;  // INT_MAX: sizes are ints past here
    // The product of non-negative ints, or kMaxExtent + 1 once it passes kMaxExtent:
    // factor by factor, a product <= INT_MAX times an int fits in 64 bits.
    static int64_t cappedProduct(std::initializer_list<int64_t> factors) {
        int64_t p = 1;
        for (int64_t f : factors) {
            p *= f;
            if (p > kMaxExtent) return kMaxExtent + 1;
        }
        return p;
    }

    Shape3 in, out;
    int kh = 1, kw = 1;
    int sh = 1, sw = 1;
    int dh = 1, dw = 1;  // dilation: the distance between taps
    int padTop = 0, padLeft = 0;

    // The pixels the window spans along each axis: (k - 1) d + 1.
    int64_t spanH() const { return int64_t(kh - 1) * dh + 1; }
    int64_t spanW() const { return int64_t(kw - 1) * dw + 1; }

    // `who` names the layer in errors; outChannels is the output's C (the
    // filters of a convolution, the input's channels for pooling); dh, dw the dilation.
    static Window make(const std::string& who, Shape3 in, int kh, int kw, int sh, int sw, Padding padding,
                       int outChannels, int dh = 1, int dw = 1) {
        if (in.height <= 0 || in.width <= 0 || in.channels <= 0)
            throw ArgumentError(who + ": input shape " + in.str() + " has a zero or negative size");
        if (kh <= 0 || kw <= 0)
            throw ArgumentError(who + ": window " + std::to_string(kh) + "x" + std::to_string(kw) +
                                " must be positive");
        if (sh <= 0 || sw <= 0)
            throw ArgumentError(who + ": stride " + std::to_string(sh) + "x" + std::to_string(sw) +
                                " must be positive");
        if (dh <= 0 || dw <= 0)
            throw ArgumentError(who + ": dilation " + std::to_string(dh) + "x" + std::to_string(dw) +
                                " must be positive");
        if (outChannels <= 0)
            throw ArgumentError(who + ": output channels must be positive, got " + std::to_string(outChannels));
        Window w;
        w.in = in;
        w.kh = kh;
        w.kw = kw;
        w.sh = sh;
        w.sw = sw;
        w.dh = dh;
        w.dw = dw;
        // In 64 bits: a stride, window or dilation near INT_MAX would overflow an int here.
        const int64_t eh = w.spanH(), ew = w.spanW();
        if (padding == Padding::Valid) {
            if (eh > in.height || ew > in.width)
                throw ArgumentError(who + ": a " + std::to_string(kh) + "x" + std::to_string(kw) + " window" +
                                    (dh > 1 || dw > 1
                                         ? " dilated " + std::to_string(dh) + "x" + std::to_string(dw) + " (spanning " +
                                               std::to_string(eh) + "x" + std::to_string(ew) + ")"
                                         : std::string()) +
                                    " does not fit the input " + in.str() + " with 'valid' padding");
            w.out = {int((in.height - eh) / sh + 1), int((in.width - ew) / sw + 1), outChannels};
        } else {
            const int64_t oh = (int64_t(in.height) + sh - 1) / sh, ow = (int64_t(in.width) + sw - 1) / sw;
            const int64_t padH = std::max<int64_t>((oh - 1) * sh + eh - in.height, 0);
            const int64_t padW = std::max<int64_t>((ow - 1) * sw + ew - in.width, 0);
            if (padH / 2 > kMaxExtent || padW / 2 > kMaxExtent)
                throw ArgumentError(who + ": a " + std::to_string(kh) + "x" + std::to_string(kw) +
                                    " window with stride " + std::to_string(sh) + "x" + std::to_string(sw) +
                                    " pads the input " + in.str() + " by more than " + std::to_string(kMaxExtent) +
                                    " with 'same' padding");
            w.out = {int(oh), int(ow), outChannels};
            w.padTop = int(padH / 2);
            w.padLeft = int(padW / 2);
        }
        // The output's values per example, and the window's reach, must fit an int.
        if (cappedProduct({w.out.height, w.out.width, outChannels}) > kMaxExtent)
            throw ArgumentError(who + ": its output [" + std::to_string(w.out.height) + ", " +
                                std::to_string(w.out.width) + ", " + std::to_string(outChannels) + "] is more than " +
                                std::to_string(kMaxExtent) + " values per example");
        return w;
    }

    // The input row / column that window position (oy, ox) reads at tap (ky, kx).
    int inY(int oy, int ky) const { return oy * sh - padTop + ky * dh; }
    int inX(int ox, int kx) const { return ox * sw - padLeft + kx * dw; }
    bool inside(int iy, int ix) const { return iy >= 0 && iy < in.height && ix >= 0 && ix < in.width; }
};

}  // namespace gltrain
