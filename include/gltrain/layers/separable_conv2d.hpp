// SeparableConv2D: a depthwise convolution (each channel with its own
// depthMultiplier filters, no bias) then a pointwise 1x1 convolution to
// `filters` channels, with the bias and the activation fused into the
// pointwise pass (Keras's SeparableConv2D). Saved as TensorFlow does:
// "depthwise_kernel" [kh, kw, C, M], "pointwise_kernel" [1, 1, C*M, filters], "bias" [filters].
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/depthwise_conv2d.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// A depthwise then a pointwise (1x1) convolution over NHWC images, bias and activation fused into the second.
struct SeparableConv2D {
    // Output channels (the pointwise convolution's filters).
    int filters = 0;
    // The depthwise window, kh x kw (3: 3x3).
    Size2 kernelSize = 3;
    // The step between windows, (sh, sw).
    Size2 stride = 1;
    // 'valid' (no padding) or 'same' (as TensorFlow: the odd pixel after).
    Padding padding = Padding::Valid;
    // The activation fused into the pointwise pass.
    Activation activation = Activation::Linear;
    // LeakyReLU's slope for negative inputs.
    float alpha = 0.01f;
    // Depthwise filters per input channel.
    int depthMultiplier = 1;
    Initializer depthwiseInit{};  // Glorot uniform over fan-in kh*kw*C, fan-out kh*kw*M (Keras's)
    Initializer pointwiseInit{};  // Glorot uniform over fan-in C*M, fan-out filters
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "separable_conv2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // The distance between the depthwise window's taps, (dh, dw).
    Size2 dilationRate = 1;

    // Model config / JavaScript "type".
    static constexpr const char* kType = "separableconv2d";
    // Layer i is named "separable_conv2d_<i>".
    static constexpr const char* kDefaultName = "separable_conv2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "SeparableConv2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("filters", &SeparableConv2D::filters, "Output channels.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("filters"),
            field("kernelSize", &SeparableConv2D::kernelSize, "n (n x n) or [height, width] (default 3).")
                .check(ranges::kPositiveInt)
                .tfjs("kernel_size"),
            field("stride", &SeparableConv2D::stride, "n or [height, width] (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("strides"),
            field("dilationRate", &SeparableConv2D::dilationRate,
                  "n or [height, width]: pixels between taps (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("dilation_rate"),
            field("depthMultiplier", &SeparableConv2D::depthMultiplier, "Depthwise filters per channel (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("depth_multiplier"),
            field("padding", &SeparableConv2D::padding, "Default valid.").tfjs("padding"),
            field("activation", &SeparableConv2D::activation, "Fused (default linear).").tfjs("activation"),
            field("alpha", &SeparableConv2D::alpha, "LeakyReLU slope (default 0.01)."),
            field("depthwiseInitializer", &SeparableConv2D::depthwiseInit, "Default glorot_uniform.")
                .tfjs("depthwise_initializer"),
            field("pointwiseInitializer", &SeparableConv2D::pointwiseInit, "Default glorot_uniform.")
                .tfjs("pointwise_initializer"),
            field("biasInitializer", &SeparableConv2D::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &SeparableConv2D::name, "Default separable_conv2d_<i>."),
            trainableField(&SeparableConv2D::trainable));
    }

    // depthwise_kernel [kh, kw, C, M], pointwise_kernel [1, 1, C*M, filters] and bias [filters].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const LayerVariable d = layer_detail::depthwiseKernel(kernelSize, in.channels, depthMultiplier, depthwiseInit);
        const int64_t CM = int64_t(in.channels) * depthMultiplier, F = filters;
        const int cm = LayerVariable::capped(CM);
        return {d,
                {"pointwise_kernel", {1, 1, CM, F}, true, pointwiseInit, cm, filters, cm, filters},
                {"bias", {F}, true, biasInit, 1, filters, cm, filters}};
    }

    // Its output and the depthwise window (whose output has C*M channels).
    LayerShape shape(const ShapeContext& c) const {
        const Window w = layer_detail::depthwiseWindow(c, kernelSize, stride, dilationRate, padding, depthMultiplier);
        c.fits("filters", {w.out.channels, filters},
               "a pointwise kernel of " + std::to_string(w.out.channels) + " channels x " + std::to_string(filters) +
                   " filters");
        c.fits("filters", {w.out.height, w.out.width, filters},
               "an output of " + ShapeContext::size(w.out.height, w.out.width) + " x " + std::to_string(filters) +
                   " filters per example");
        return {{w.out.height, w.out.width, filters}, w};
    }

    // depthwise(x), then conv 1x1 + bias, activated: the pointwise pass fuses the bias and activation.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const Window& dw = b.layer.window;
        const graph::ValueId d =
            b.add(graph::DepthwiseConv{dw}, {graph::asImage(b, x, b.layer.in), b.variable("depthwise_kernel")});
        const Window pw = Window::make(b.layer.name, dw.out, 1, 1, 1, 1, Padding::Valid, filters);
        const graph::ValueId y = b.add(graph::Conv{pw}, {d, b.variable("pointwise_kernel")});
        return graph::activated(b, b.add(graph::BiasAdd{}, {y, b.variable("bias")}), activation, alpha);
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
