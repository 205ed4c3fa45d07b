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
// Output size and padding follow TensorFlow:
//   valid: out = (in - k) / s + 1, no padding
//   same:  out = ceil(in / s), total padding max((out - 1) s + k - in, 0),
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

// A window of kh x kw sliding with strides (sh, sw) over an input image:
// the geometry of one Conv2D or pooling layer.
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
    int padTop = 0, padLeft = 0;

    // `who` names the layer in errors; outChannels is the output's C (the
    // filters of a convolution, the input's channels for pooling).
    static Window make(const std::string& who, Shape3 in, int kh, int kw, int sh, int sw, Padding padding,
                       int outChannels) {
        if (in.height <= 0 || in.width <= 0 || in.channels <= 0)
            throw ArgumentError(who + ": input shape " + in.str() + " has a zero or negative size");
        if (kh <= 0 || kw <= 0)
            throw ArgumentError(who + ": window " + std::to_string(kh) + "x" + std::to_string(kw) +
                                " must be positive");
        if (sh <= 0 || sw <= 0)
            throw ArgumentError(who + ": stride " + std::to_string(sh) + "x" + std::to_string(sw) +
                                " must be positive");
        if (outChannels <= 0)
            throw ArgumentError(who + ": output channels must be positive, got " + std::to_string(outChannels));
        Window w;
        w.in = in;
        w.kh = kh;
        w.kw = kw;
        w.sh = sh;
        w.sw = sw;
        if (padding == Padding::Valid) {
            if (kh > in.height || kw > in.width)
                throw ArgumentError(who + ": a " + std::to_string(kh) + "x" + std::to_string(kw) +
                                    " window does not fit the input " + in.str() + " with 'valid' padding");
            w.out = {(in.height - kh) / sh + 1, (in.width - kw) / sw + 1, outChannels};
        } else {
            // In 64 bits: a stride or window near INT_MAX would overflow an int here.
            const int64_t oh = (int64_t(in.height) + sh - 1) / sh, ow = (int64_t(in.width) + sw - 1) / sw;
            const int64_t padH = std::max<int64_t>((oh - 1) * sh + kh - in.height, 0);
            const int64_t padW = std::max<int64_t>((ow - 1) * sw + kw - in.width, 0);
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

    // The input row / column that window position (oy, ox) reads at offset (ky, kx).
    int inY(int oy, int ky) const { return oy * sh - padTop + ky; }
    int inX(int ox, int kx) const { return ox * sw - padLeft + kx; }
    bool inside(int iy, int ix) const { return iy >= 0 && iy < in.height && ix >= 0 && ix < in.width; }
};

}  // namespace gltrain
