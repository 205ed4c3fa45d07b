// Conv2D: a 2-D convolution over NHWC images. The kernel (kh, kw, C, filters)
// is saved as TensorFlow's HWIO and stored as a (kh*kw*C) x filters matrix;
// the bias and the activation are fused. Kernel size, strides and dilation
// take n or [h, w] (Keras's kernel_size, strides, dilation_rate); as in
// TensorFlow, strides and dilation may not both exceed 1 along the axes.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// A 2-D convolution over NHWC images, with bias and activation fused; kernel saved as [kh, kw, C, filters].
struct Conv2D {
    // Number of filters: the output's channels.
    int filters = 0;
    Size2 kernelSize = 3;  // kh x kw (3: 3x3)
    // The step between windows, (sh, sw).
    Size2 stride = 1;
    // 'valid' (no padding) or 'same' (as TensorFlow: the odd pixel after).
    Padding padding = Padding::Valid;
    // The activation fused into the convolution's pass.
    Activation activation = Activation::Linear;
    // LeakyReLU's slope for negative inputs.
    float alpha = 0.01f;
    Initializer kernelInit{};  // Glorot uniform over fan-in kh*kw*C, fan-out kh*kw*filters
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "conv2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // The distance between a window's taps, (dh, dw): 1 is a plain convolution.
    // (Last, so that positional initializers written before it still fill the fields above.)
    Size2 dilationRate = 1;
    // ELU's alpha: negative inputs saturate at -eluAlpha. Last, so that the
    // positional initialisers written before it ({units, activation, alpha, ...}) still hold.
    float eluAlpha = 1.0f;

    // Model config / JavaScript "type".
    static constexpr const char* kType = "conv2d";
    // Layer i is named "conv2d_<i>".
    static constexpr const char* kDefaultName = "conv2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Conv2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("filters", &Conv2D::filters, "Output channels.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("filters"),
            field("kernelSize", &Conv2D::kernelSize, "n (n x n) or [height, width] (default 3).")
                .check(ranges::kPositiveInt)
                .tfjs("kernel_size"),
            field("stride", &Conv2D::stride, "n or [height, width] (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("strides"),
            field("dilationRate", &Conv2D::dilationRate, "n or [height, width]: pixels between taps (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("dilation_rate"),
            field("padding", &Conv2D::padding, "Default valid.").tfjs("padding"),
            field("activation", &Conv2D::activation, "Fused (default linear).").tfjs("activation"),
            field("alpha", &Conv2D::alpha, "LeakyReLU slope (default 0.01)."),
            field("eluAlpha", &Conv2D::eluAlpha, "ELU's alpha: negative inputs saturate at -eluAlpha (default 1)."),
            field("kernelInitializer", &Conv2D::kernelInit, "Default glorot_uniform.").tfjs("kernel_initializer"),
            field("biasInitializer", &Conv2D::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &Conv2D::name, "Default conv2d_<i>."), trainableField(&Conv2D::trainable));
    }

    // kernel [kh, kw, C, filters] and bias [filters].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int64_t kh = kernelSize.h, kw = kernelSize.w, C = in.channels, F = filters;
        const int fanIn = LayerVariable::capped(kh * kw * C), fanOut = LayerVariable::capped(kh * kw * F);
        return {{"kernel", {kh, kw, C, F}, true, kernelInit, fanIn, filters, fanIn, fanOut},
                {"bias", {F}, true, biasInit, 1, filters, fanIn, fanOut}};
    }

    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        // The fan-in, fan-out and kernel in 64 bits: kernelSize 2000000000 overflowed an
        // int in the initializer's fan-in before. Sizes first: the model-file parser stops
        // at any other error, and every size after it must have been checked.
        const Window w = c.convWindow(kernelSize, stride, dilationRate, padding, filters);
        if ((stride.h > 1 && dilationRate.h > 1) || (stride.w > 1 && dilationRate.w > 1))
            c.fail("stride " + stride.str() + " and dilationRate " + dilationRate.str() +
                   " both exceed 1 along an axis (TensorFlow allows one or the other)");
        return {w.out, w};
    }

    // conv(x, kernel) + bias, activated: one forward/conv2d pass (graph/gpu_plan.hpp).
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::ValueId y =
            b.add(graph::Conv{b.layer.window}, {graph::asImage(b, x, b.layer.in), b.variable("kernel")});
        return graph::activated(b, b.add(graph::BiasAdd{}, {y, b.variable("bias")}), activation,
                                activationAlpha(activation, alpha, eluAlpha));
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
