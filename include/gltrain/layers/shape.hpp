// What a layer's `shape` (tfjs-layers' computeOutputShape) sees at compile:
// its input, where that came from, and where the layer stands in the model;
// it returns its output and, for the windowed layers, the window. Errors name
// the layer and what it received, as compile's always did.
//
// Sizes are counted in 64 bits before anything narrows them to an int
// (ShapeContext::fits, ::window): every output row, window and parameter
// tensor must fit an int, so no tensor holds more than 2^31 - 1 values and
// the library's int arithmetic on them cannot overflow. Such an error is a
// SizeError naming the field that made the number too large, which the
// model-file parser reports with its JSON path ("layers[1].kernelSize").
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/window.hpp"

namespace gltrain {

// A layer's output shape as compile infers it, and its window (Conv2D, pooling).
struct LayerShape {
    // The output shape.
    Shape3 out;
    Window window;  // Conv2D and pooling
};

// A layer's sizes that do not fit an int: `field` made them too large.
struct SizeError : ArgumentError {
    // `message` in full; `field` ("kernelSize") and `detail` ("the layer's sizes overflow: ...") for other voices.
    SizeError(const std::string& message, std::string field, std::string detail)
        : ArgumentError(message), field(std::move(field)), detail(std::move(detail)) {}
    // The field that made the sizes too large ("kernelSize").
    std::string field;
    // What overflowed, without the layer: "the layer's sizes overflow: a 3x3 window ...".
    std::string detail;
};

// What a layer's shape function is given: its input and where it came from, for messages.
struct ShapeContext {
    // The input shape (a merge layer's first input).
    Shape3 in;
    std::string name;                // the layer's
    std::string from;                // "the model input" or the name of the layer `in` comes from
    std::vector<Shape3> ins;         // every input, in order (one for most layers; a merge layer's several)
    std::vector<std::string> froms;  // where each of `ins` comes from
    bool flatModelInput = false;     // the first layer reads rows of a flat model input
    bool last = false;               // the model's last layer
    bool softmaxLoss = false;        // compiled with a loss a final Softmax may feed (LossSpec::allowsFinalSoftmax)

    // "compile: layer <name>", the start of its errors.
    std::string who() const { return "compile: layer " + name; }
    // Throws ArgumentError naming the layer.
    [[noreturn]] void fail(const std::string& what) const { throw ArgumentError(who() + ": " + what); }
    // "receives [batch, ...] from <where>", for errors.
    std::string received() const { return "receives " + shown(in) + " from " + from; }
    // "[batch, 7]" or "[batch, 28, 28, 1]".
    static std::string shown(const Shape3& s) {
        return s.height == 1 && s.width == 1 ? "[batch, " + std::to_string(s.channels) + "]"
                                             : "[batch, " + s.str().substr(1);
    }
    // "[batch, 8] from dense_1 and [batch, 9] from dense_2", for a merge layer's errors.
    std::string receivedAll() const {
        std::string r = "receives ";
        for (size_t i = 0; i < ins.size(); ++i)
            r += (i == 0 ? "" : i + 1 == ins.size() ? " and " : ", ") + shown(ins[i]) + " from " + froms[i];
        return r;
    }
    // Fails unless the input is an image.
    void needImage() const {
        if (flatModelInput)
            fail("needs image input [height, width, channels] but " + received() +
                 " (build the model with Sequential(ctx, Shape3{h, w, c}))");
    }
    // A pooling window over the input (stride 0: the pool size), keeping the channels.
    LayerShape pooled(int size, int stride, Padding padding) const {
        needImage();
        const Window w = window("poolSize", size, stride ? stride : size, padding, in.channels);
        return {w.out, w};
    }

    // ---- sizes, in 64 bits (see the top of this file) ----

    // "3x5": a window's or image's size in messages.
    static std::string size(int64_t h, int64_t w) { return std::to_string(h) + "x" + std::to_string(w); }
    // Fails with a SizeError blaming `field` unless the product of `factors`
    // (`what`: "a kernel of 10 inputs x 3 units") fits an int.
    void fits(const char* field, std::initializer_list<int64_t> factors, const std::string& what) const {
        int64_t n = 1;
        bool over = false;  // past int64: said as "more than"
        for (int64_t f : factors) over = over || __builtin_mul_overflow(n, f, &n);
        if (!over && n <= Window::kMaxExtent) return;
        uint64_t bytes = 0;
        const bool bytesOver = over || __builtin_mul_overflow(uint64_t(n), uint64_t(4), &bytes);
        tooLarge(field, what + " is " + (over ? "more than " + std::to_string(INT64_MAX) : std::to_string(n)) +
                            " values" + (bytesOver ? "" : " (" + std::to_string(bytes) + " bytes as floats)") +
                            ", more than the " + std::to_string(Window::kMaxExtent) + " values a tensor can hold");
    }
    // Throws the SizeError of `what`, blaming `field`.
    [[noreturn]] void tooLarge(const char* field, const std::string& what) const {
        const std::string detail = "the layer's sizes overflow: " + what;
        throw SizeError(who() + ": " + field + ": " + detail, field, detail);
    }
    // A k window dilated d spans an int (blaming dilationRate); with 'valid'
    // padding it must fit the input (else Window::make's error). The checks a
    // windowed layer makes before its kernel's, whose sizes only mean
    // something for a window that fits.
    void span(Size2 k, Size2 d, Padding padding) const {
        const int64_t eh = int64_t(k.h - 1) * d.h + 1, ew = int64_t(k.w - 1) * d.w + 1;
        fits("dilationRate", {std::max(eh, ew)},
             "the span of a " + size(k.h, k.w) + " window dilated " + d.str() + ",");
        if (padding == Padding::Valid && (eh > in.height || ew > in.width))
            Window::make(who(), in, k.h, k.w, 1, 1, padding, in.channels, d.h, d.w);  // throws: it does not fit
    }
    // A k window (dilated d) sliding with stride s over the input, checked
    // before Window::make narrows anything: its taps (blaming `field`), the
    // extent 'same' padding covers (blaming the stride, or `field` where the
    // window is larger), and, with an `outField`, its output of `outChannels`
    // <noun> per example (blaming outField).
    Window window(const char* field, Size2 k, Size2 s, Padding padding, int64_t outChannels, Size2 d = 1,
                  const char* outField = nullptr, const char* noun = "filters") const {
        span(k, d, padding);
        const std::string win = size(k.h, k.w);
        fits(field, {k.h, k.w}, "a " + win + " window");
        const int64_t eh = int64_t(k.h - 1) * d.h + 1, ew = int64_t(k.w - 1) * d.w + 1;
        int64_t oh, ow;
        if (padding == Padding::Valid) {
            oh = (in.height - eh) / s.h + 1, ow = (in.width - ew) / s.w + 1;
        } else {
            oh = (int64_t(in.height) + s.h - 1) / s.h, ow = (int64_t(in.width) + s.w - 1) / s.w;
            const int64_t covered = std::max((oh - 1) * s.h + eh, (ow - 1) * s.w + ew);
            // Window::make computes in + s - 1 left to right: in + s must fit.
            if (int64_t(in.height) + s.h > Window::kMaxExtent || int64_t(in.width) + s.w > Window::kMaxExtent ||
                covered > Window::kMaxExtent)
                tooLarge(std::max(s.h, s.w) > std::max(k.h, k.w) ? "stride" : field,
                         "a " + win + " window with stride " + s.str() + " and 'same' padding over a " +
                             size(in.height, in.width) + " image spans more than " +
                             std::to_string(Window::kMaxExtent) + " pixels");
        }
        if (outField)
            fits(outField, {oh, ow, outChannels},
                 "an output of " + size(oh, ow) + " x " + std::to_string(outChannels) + " " + noun + " per example");
        return Window::make(who(), in, k.h, k.w, s.h, s.w, padding, int(outChannels), d.h, d.w);
    }
    // A convolution's window and kernel (Conv2D's and Conv1D's, k x C x
    // filters): the window's taps, fan-in, fan-out and kernel, then its output.
    Window convWindow(Size2 k, Size2 s, Size2 d, Padding padding, int filters) const {
        span(k, d, padding);
        const std::string win = size(k.h, k.w);
        const int64_t C = in.channels, F = filters;
        fits("kernelSize", {k.h, k.w}, "a " + win + " window");
        fits("kernelSize", {k.h, k.w, C}, "a fan-in of " + win + " x " + std::to_string(C) + " channels");
        fits("kernelSize", {k.h, k.w, F}, "a fan-out of " + win + " x " + std::to_string(F) + " filters");
        fits("filters", {k.h, k.w, C, F},
             "a kernel of " + win + " x " + std::to_string(C) + " channels x " + std::to_string(F) + " filters");
        return window("kernelSize", k, s, padding, F, d, "filters");
    }
};

}  // namespace gltrain
