// Conv2DTranspose: the transpose of a convolution (Keras's Conv2DTranspose),
// upsampling an image by the strides. Its output is the input gradient of the
// convolution that maps the output's shape back to the input's — the same
// kernels — so its kernel is that convolution's filter, which Keras saves as
// [kh, kw, filters, C] (filters before the input's channels). Output sizes as
// Keras: 'valid' in*s + max(k - s, 0), 'same' in*s.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// A transposed convolution over NHWC images; kernel saved as [kh, kw, filters, C].
struct Conv2DTranspose {
    // Number of filters: the output's channels.
    int filters = 0;
    // kh x kw (3: 3x3).
    Size2 kernelSize = 3;
    // The upsampling factor, (sh, sw).
    Size2 stride = 1;
    // 'valid' (output in*s + max(k - s, 0)) or 'same' (output in*s).
    Padding padding = Padding::Valid;
    // The activation after the bias.
    Activation activation = Activation::Linear;
    // LeakyReLU's slope for negative inputs.
    float alpha = 0.01f;
    Initializer kernelInit{};  // Glorot uniform over fan-in kh*kw*filters, fan-out kh*kw*C (Keras's)
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "conv2d_transpose_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "conv2dtranspose";
    // Layer i is named "conv2d_transpose_<i>".
    static constexpr const char* kDefaultName = "conv2d_transpose";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Conv2DTranspose";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("filters", &Conv2DTranspose::filters, "Output channels.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("filters"),
            field("kernelSize", &Conv2DTranspose::kernelSize, "n (n x n) or [height, width] (default 3).")
                .check(ranges::kPositiveInt)
                .tfjs("kernel_size"),
            field("stride", &Conv2DTranspose::stride, "n or [height, width]: the upsampling (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("strides"),
            field("padding", &Conv2DTranspose::padding, "Default valid.").tfjs("padding"),
            field("activation", &Conv2DTranspose::activation, "After the bias (default linear).").tfjs("activation"),
            field("alpha", &Conv2DTranspose::alpha, "LeakyReLU slope (default 0.01)."),
            field("kernelInitializer", &Conv2DTranspose::kernelInit, "Default glorot_uniform.")
                .tfjs("kernel_initializer"),
            field("biasInitializer", &Conv2DTranspose::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &Conv2DTranspose::name, "Default conv2d_transpose_<i>."),
            trainableField(&Conv2DTranspose::trainable));
    }

    // kernel [kh, kw, filters, C] and bias [filters].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int64_t kh = kernelSize.h, kw = kernelSize.w, C = in.channels, F = filters;
        const int rows = LayerVariable::capped(kh * kw * F), fanIn = rows, fanOut = LayerVariable::capped(kh * kw * C);
        return {{"kernel", {kh, kw, F, C}, true, kernelInit, rows, in.channels, fanIn, fanOut},
                {"bias", {F}, true, biasInit, 1, filters, fanIn, fanOut}};
    }

    // Its output, and the window of the convolution from the output back to the input.
    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        // In 64 bits (layers/shape.hpp): the window, its fans and kernel, the upsampled image.
        const std::string win = ShapeContext::size(kernelSize.h, kernelSize.w);
        const int64_t C = c.in.channels, F = filters;
        c.fits("kernelSize", {kernelSize.h, kernelSize.w}, "a " + win + " window");
        c.fits("kernelSize", {kernelSize.h, kernelSize.w, F},
               "a fan-in of " + win + " x " + std::to_string(F) + " filters");
        c.fits("kernelSize", {kernelSize.h, kernelSize.w, C},
               "a fan-out of " + win + " x " + std::to_string(C) + " channels");
        c.fits("filters", {kernelSize.h, kernelSize.w, C, F},
               "a kernel of " + win + " x " + std::to_string(F) + " filters x " + std::to_string(C) + " channels");
        auto side = [&](int in, int k, int s) {
            return int64_t(in) * s + (padding == Padding::Valid ? std::max<int64_t>(int64_t(k) - s, 0) : 0);
        };
        const int64_t oh = side(c.in.height, kernelSize.h, stride.h), ow = side(c.in.width, kernelSize.w, stride.w);
        c.fits("stride", {std::max(oh, ow) + std::max(stride.h, stride.w)}, "the upsampled image's side");
        c.fits("filters", {oh, ow, F},
               "an output of " + ShapeContext::size(oh, ow) + " x " + std::to_string(F) + " filters per example");
        const Shape3 out{int(oh), int(ow), filters};
        const Window w =
            Window::make(c.who(), out, kernelSize.h, kernelSize.w, stride.h, stride.w, padding, c.in.channels);
        return {out, w};
    }

    // The transpose of conv(window) applied to x, + bias, activated.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const Window& w = b.layer.window;
        const graph::ValueId y =
            b.add(graph::ConvTranspose{w}, {graph::asImage(b, x, b.layer.in), b.variable("kernel")});
        return graph::activated(b, b.add(graph::BiasAdd{}, {y, b.variable("bias")}), activation, alpha);
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
