// Dense: a fully connected layer, out = activation(in x kernel + bias), with
// the bias and the activation fused into the matmul pass. Takes a flat input,
// or a sequence [steps, features] (an image of height 1, as Conv1D's), which
// it maps position by position on its last axis as Keras does: a 1x1
// convolution, whose filter [features, units] is Dense's kernel — so the
// B x (steps * features) rows are read in place, no reshape to B * steps rows.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// A fully connected layer, y = f(x·K + b), with bias and activation fused into the product.
struct Dense {
    // Output size.
    int units = 0;
    Activation activation = Activation::Linear;  // fused into the matmul pass
    float alpha = 0.01f;                         // LeakyReLU slope
    Initializer kernelInit{};                    // Glorot uniform
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    int inputDim = 0;       // optional: checked against the previous layer when the model is built
    std::string name;       // default "dense_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // ELU's alpha: negative inputs saturate at -eluAlpha. Last, so that the
    // positional initialisers written before it ({units, activation, alpha, ...}) still hold.
    float eluAlpha = 1.0f;

    static constexpr const char* kType = "dense";         // model config / JavaScript "type"
    static constexpr const char* kDefaultName = "dense";  // layer i is named "dense_<i>"
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Dense";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("units", &Dense::units, "Output size.").check(ranges::kPositiveInt).mustGive().tfjs("units"),
            field("activation", &Dense::activation, "Fused into the matmul pass (default linear).").tfjs("activation"),
            field("alpha", &Dense::alpha, "LeakyReLU slope (default 0.01)."),
            field("eluAlpha", &Dense::eluAlpha, "ELU's alpha: negative inputs saturate at -eluAlpha (default 1)."),
            field("kernelInitializer", &Dense::kernelInit, "Default glorot_uniform.").tfjs("kernel_initializer"),
            field("biasInitializer", &Dense::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("inputDim", &Dense::inputDim, "Checked against the previous layer's output size at compile().")
                .check(ranges::kPositiveInt),
            field("name", &Dense::name, "Default dense_<i>."), trainableField(&Dense::trainable));
    }

    // kernel [in, units] and bias [units]; `in` is the features of a sequence's position.
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int n = in.height == 1 ? in.channels : in.size();
        return {{"kernel", {n, units}, true, kernelInit, n, units, n, units},
                {"bias", {units}, true, biasInit, 1, units, n, units}};
    }

    // [units], or [steps, units] on a sequence with its 1x1 window.
    LayerShape shape(const ShapeContext& c) const {
        if (c.in.height != 1)
            c.fail("needs a flat input or a sequence [steps, features] but " + c.received() + "; add a Flatten layer");
        // Counted in 64 bits: inputs x units overflowed an int (undefined behaviour) before.
        // Sizes first: the model-file parser stops at any other error.
        c.fits("units", {c.in.channels, units},
               "a kernel of " + std::to_string(c.in.channels) + " inputs x " + std::to_string(units) + " units");
        if (inputDim > 0 && inputDim != c.in.channels)
            c.fail("expects input of size " + std::to_string(inputDim) + " but " + c.received());
        if (c.in.width == 1) return {{1, 1, units}, {}};
        c.fits("units", {c.in.width, units},
               "an output of " + std::to_string(c.in.width) + " steps x " + std::to_string(units) + " units");
        const Window w = Window::make(c.who(), c.in, 1, 1, 1, 1, Padding::Valid, units);
        return {w.out, w};
    }

    // x·kernel + bias, activated: one pass with the product's epilogue (graph/gpu_plan.hpp);
    // on a sequence, the 1x1 convolution's pass with its epilogue.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::ValueId y =
            b.layer.in.width == 1
                ? b.add(graph::MatMul{}, {graph::asFlat(b, x), b.variable("kernel")})
                : b.add(graph::Conv{b.layer.window}, {graph::asImage(b, x, b.layer.in), b.variable("kernel")});
        return graph::activated(b, b.add(graph::BiasAdd{}, {y, b.variable("bias")}), activation,
                                activationAlpha(activation, alpha, eluAlpha));
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
