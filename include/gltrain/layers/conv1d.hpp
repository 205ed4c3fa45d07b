// Conv1D and the 1-D pooling layers over sequences [steps, channels]. Rows
// are NHWC, so a sequence is an image of height 1, [1, steps, channels]: these
// layers are Conv2D's and pooling's ops on a 1 x k window. Conv1D's kernel is
// saved as Keras's [k, C, filters].
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
// Fails unless the input is a sequence [steps, channels]: an image of height 1.
inline void needSequence(const ShapeContext& c) {
    if (c.flatModelInput || c.in.height != 1)
        c.fail("needs a sequence [steps, channels] (an image of height 1) but " + c.received() +
               " (build the model with Sequential(ctx, Shape3{1, steps, channels}))");
}
}  // namespace layer_detail

// A 1-D convolution over sequences [steps, channels], bias and activation fused; kernel saved as [k, C, filters].
struct Conv1D {
    // Number of filters: the output's channels.
    int filters = 0;
    // The window's length.
    int kernelSize = 3;
    // The step between windows.
    int stride = 1;
    // 'valid' (no padding) or 'same' (as TensorFlow: the odd step after).
    Padding padding = Padding::Valid;
    // The activation fused into the convolution's pass.
    Activation activation = Activation::Linear;
    // LeakyReLU's slope for negative inputs.
    float alpha = 0.01f;
    Initializer kernelInit{};  // Glorot uniform over fan-in k*C, fan-out k*filters
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "conv1d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // The distance between a window's taps.
    int dilationRate = 1;

    // Model config / JavaScript "type".
    static constexpr const char* kType = "conv1d";
    // Layer i is named "conv1d_<i>".
    static constexpr const char* kDefaultName = "conv1d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Conv1D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("filters", &Conv1D::filters, "Output channels.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("filters"),
            field("kernelSize", &Conv1D::kernelSize, "Window length (default 3).")
                .check(ranges::kPositiveInt)
                .tfjs("kernel_size", TfjsForm::Single),
            field("stride", &Conv1D::stride, "Default 1.")
                .check(ranges::kPositiveInt)
                .tfjs("strides", TfjsForm::Single),
            field("dilationRate", &Conv1D::dilationRate, "Steps between taps (default 1).")
                .check(ranges::kPositiveInt)
                .tfjs("dilation_rate", TfjsForm::Single),
            field("padding", &Conv1D::padding, "Default valid.").tfjs("padding"),
            field("activation", &Conv1D::activation, "Fused (default linear).").tfjs("activation"),
            field("alpha", &Conv1D::alpha, "LeakyReLU slope (default 0.01)."),
            field("kernelInitializer", &Conv1D::kernelInit, "Default glorot_uniform.").tfjs("kernel_initializer"),
            field("biasInitializer", &Conv1D::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &Conv1D::name, "Default conv1d_<i>."), trainableField(&Conv1D::trainable));
    }

    // kernel [k, C, filters] and bias [filters].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int64_t k = kernelSize, C = in.channels, F = filters;
        const int fanIn = LayerVariable::capped(k * C), fanOut = LayerVariable::capped(k * F);
        return {{"kernel", {k, C, F}, true, kernelInit, fanIn, filters, fanIn, fanOut},
                {"bias", {F}, true, biasInit, 1, filters, fanIn, fanOut}};
    }

    // Its output and its 1 x k window.
    LayerShape shape(const ShapeContext& c) const {
        layer_detail::needSequence(c);
        // Conv2D's checks in 64 bits on a 1 x k window (layers/shape.hpp), sizes first (as Conv2D).
        const Window w = c.convWindow({1, kernelSize}, {1, stride}, {1, dilationRate}, padding, filters);
        if (stride > 1 && dilationRate > 1)
            c.fail("stride " + std::to_string(stride) + " and dilationRate " + std::to_string(dilationRate) +
                   " both exceed 1 (TensorFlow allows one or the other)");
        return {w.out, w};
    }

    // conv(x, kernel) + bias, activated: Conv2D's nodes on a 1 x k window.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::ValueId y =
            b.add(graph::Conv{b.layer.window}, {graph::asImage(b, x, b.layer.in), b.variable("kernel")});
        return graph::activated(b, b.add(graph::BiasAdd{}, {y, b.variable("bias")}), activation, alpha);
    }

    GLTRAIN_LAYER_CALLS
};

template <PoolKind Kind>
// Max or average pooling over windows of sequences [steps, channels] (MaxPooling1D, AveragePooling1D).
struct Pool1D {
    // Whether this is max pooling (else average).
    static constexpr bool kMax = Kind == PoolKind::Max;

    // The window's length.
    int poolSize = 2;
    int stride = 0;  // 0: poolSize
    // 'valid' or 'same' (average pooling does not count padding).
    Padding padding = Padding::Valid;
    std::string name;       // default "max_pool1d_<i>" / "average_pool1d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = kMax ? "maxpool1d" : "averagepool1d";
    // Layer i is named "max_pool1d_<i>" or "average_pool1d_<i>".
    static constexpr const char* kDefaultName = kMax ? "max_pool1d" : "average_pool1d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = kMax ? "MaxPooling1D" : "AveragePooling1D";
    static constexpr const char* kTfjsAlias = kMax ? "MaxPool1D" : "AvgPool1D";  // Keras's other name for the class

    static constexpr auto fields() {
        return std::make_tuple(
            field("poolSize", &Pool1D::poolSize, "Default 2.")
                .check(ranges::kPositiveInt)
                .tfjs("pool_size", TfjsForm::Single),
            // TF.js's strides default to the pool size too, but as that size: tfjs_layers.hpp maps 0.
            field("stride", &Pool1D::stride, "0 or omitted: poolSize.").check(ranges::kNonNegativeInt),
            field("padding", &Pool1D::padding, "Default valid.").tfjs("padding"),
            field("name", &Pool1D::name, kMax ? "Default max_pool1d_<i>." : "Default average_pool1d_<i>."),
            trainableField(&Pool1D::trainable));
    }

    // Its output shape and window.
    LayerShape shape(const ShapeContext& c) const {
        layer_detail::needSequence(c);
        const Window w = c.window("poolSize", {1, poolSize}, {1, stride ? stride : poolSize}, padding, c.in.channels);
        return {w.out, w};
    }

    // Pooling2D's node on a 1 x k window.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Pool{b.layer.window, Kind}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

using MaxPool1D = Pool1D<PoolKind::Max>;
using AveragePool1D = Pool1D<PoolKind::Average>;

}  // namespace gltrain
