// DepthwiseConv2D: each input channel convolved with its own depthMultiplier
// filters (Keras's DepthwiseConv2D): output channel c*M + m, the bias and the
// activation after it. The kernel is saved as TensorFlow's [kh, kw, C, M]
// ("depthwise_kernel") and stored as a (kh*kw*C) x M matrix.
#pragma once
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

namespace layer_detail {
// The window of a depthwise convolution with `outChannels` = C*M, after
// Keras's checks (TensorFlow: strides and dilation may not both exceed 1).
inline Window depthwiseWindow(const ShapeContext& c, Size2 kernel, Size2 stride, Size2 dilation, Padding padding,
                              int multiplier) {
    c.needImage();
    // In 64 bits (layers/shape.hpp): the window, C*M channels, the kernel and the output;
    // sizes first (as Conv2D).
    c.span(kernel, dilation, padding);
    const int64_t C = c.in.channels, M = multiplier;
    c.fits("kernelSize", {kernel.h, kernel.w}, "a " + ShapeContext::size(kernel.h, kernel.w) + " window");
    c.fits("depthMultiplier", {C, M}, "an output of " + std::to_string(C) + " channels x " + std::to_string(M));
    c.fits("depthMultiplier", {kernel.h, kernel.w, C, M},
           "a depthwise kernel of " + ShapeContext::size(kernel.h, kernel.w) + " x " + std::to_string(C) +
               " channels x " + std::to_string(M));
    const Window w = c.window("kernelSize", kernel, stride, padding, C * M, dilation, "depthMultiplier", "channels");
    if ((stride.h > 1 && dilation.h > 1) || (stride.w > 1 && dilation.w > 1))
        c.fail("stride " + stride.str() + " and dilationRate " + dilation.str() +
               " both exceed 1 along an axis (TensorFlow allows one or the other)");
    return w;
}
// The [kh, kw, C, M] depthwise kernel, with Keras's fans (kh*kw*C in, kh*kw*M out).
inline LayerVariable depthwiseKernel(Size2 kernel, int channels, int multiplier, const Initializer& init) {
    const int64_t kh = kernel.h, kw = kernel.w, C = channels, M = multiplier;
    const int rows = LayerVariable::capped(kh * kw * C);
    return {"depthwise_kernel", {kh, kw, C, M}, true, init, rows, multiplier, rows, LayerVariable::capped(kh * kw * M)};
}
}  // namespace layer_detail

// Each channel of an NHWC image convolved with its own filters; kernel saved as [kh, kw, C, depthMultiplier].
struct DepthwiseConv2D {
    // kh x kw (3: 3x3).
    Size2 kernelSize = 3;
    // The filters per input channel: the output has C * depthMultiplier channels.
    int depthMultiplier = 1;
    // The step between windows, (sh, sw).
    Size2 stride = 1;
    // 'valid' (no padding) or 'same' (as TensorFlow: the odd pixel after).
    Padding padding = Padding::Valid;
    // The activation after the bias.
    Activation activation = Activation::Linear;
    // LeakyReLU's slope for negative inputs.
    float alpha = 0.01f;
    Initializer depthwiseInit{};  // Glorot uniform over fan-in kh*kw*C, fan-out kh*kw*M (Keras's)
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "depthwise_conv2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // The distance between a window's taps, (dh, dw).
    Size2 dilationRate = 1;

    // Model config / JavaScript "type".
    static constexpr const char* kType = "depthwiseconv2d";
    // Layer i is named "depthwise_conv2d_<i>".
    static constexpr const char* kDefaultName = "depthwise_conv2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "DepthwiseConv2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("kernelSize", &DepthwiseConv2D::kernelSize, "n (n x n) or [height, width] (default 3).")
                .check(ranges::kPositiveInt)
                .tfjs("kernel_size"),
            field("depthMultiplier", &DepthwiseConv2D::depthMultiplier, "Filters per input channel (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("depth_multiplier"),
            field("stride", &DepthwiseConv2D::stride, "n or [height, width] (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("strides"),
            field("dilationRate", &DepthwiseConv2D::dilationRate,
                  "n or [height, width]: pixels between taps (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("dilation_rate"),
            field("padding", &DepthwiseConv2D::padding, "Default valid.").tfjs("padding"),
            field("activation", &DepthwiseConv2D::activation, "After the bias (default linear).").tfjs("activation"),
            field("alpha", &DepthwiseConv2D::alpha, "LeakyReLU slope (default 0.01)."),
            field("depthwiseInitializer", &DepthwiseConv2D::depthwiseInit, "Default glorot_uniform.")
                .tfjs("depthwise_initializer"),
            field("biasInitializer", &DepthwiseConv2D::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &DepthwiseConv2D::name, "Default depthwise_conv2d_<i>."),
            trainableField(&DepthwiseConv2D::trainable));
    }

    // depthwise_kernel [kh, kw, C, M] and bias [C*M].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const LayerVariable k = layer_detail::depthwiseKernel(kernelSize, in.channels, depthMultiplier, depthwiseInit);
        const int out = LayerVariable::capped(int64_t(in.channels) * depthMultiplier);
        return {k, {"bias", {int64_t(in.channels) * depthMultiplier}, true, biasInit, 1, out, k.fanIn, k.fanOut}};
    }

    // Its output (C * depthMultiplier channels) and its window.
    LayerShape shape(const ShapeContext& c) const {
        const Window w = layer_detail::depthwiseWindow(c, kernelSize, stride, dilationRate, padding, depthMultiplier);
        return {w.out, w};
    }

    // depthwise(x, kernel) + bias, activated.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::ValueId y = b.add(graph::DepthwiseConv{b.layer.window},
                                       {graph::asImage(b, x, b.layer.in), b.variable("depthwise_kernel")});
        return graph::activated(b, b.add(graph::BiasAdd{}, {y, b.variable("bias")}), activation, alpha);
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
