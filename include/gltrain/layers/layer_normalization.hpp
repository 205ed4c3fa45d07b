// LayerNormalization: normalizes each example's last axis (a sequence's
// features at each step, an image's channels at each pixel, a flat row) to
// mean 0 and variance 1, then scales by gamma and shifts by beta per feature.
// Unlike BatchNormalization it uses no batch statistics: training and
// inference are the same. Keras's axis -1 with center and scale (gamma and
// beta are always learned).
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/ops/layer_norm.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// Layer normalization over the last axis: (x - mean) / sqrt(var + epsilon) * gamma + beta.
struct LayerNormalization {
    // Added to the variance before its square root.
    float epsilon = 1e-3f;
    // How gamma starts (ones).
    Initializer gammaInit = Initializer::constant(1.0f);
    // How beta starts (zeros).
    Initializer betaInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "layer_normalization_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "layernormalization";
    // Layer i is named "layer_normalization_<i>".
    static constexpr const char* kDefaultName = "layer_normalization";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "LayerNormalization";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("epsilon", &LayerNormalization::epsilon, "Added to the variance (default 0.001).")
                .check(ranges::kPositive)
                .tfjs("epsilon"),
            field("gammaInitializer", &LayerNormalization::gammaInit, "Default ones.").tfjs("gamma_initializer"),
            field("betaInitializer", &LayerNormalization::betaInit, "Default zeros.").tfjs("beta_initializer"),
            field("name", &LayerNormalization::name, "Default layer_normalization_<i>."),
            trainableField(&LayerNormalization::trainable));
    }

    // gamma and beta, each [C] (the last axis).
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int C = in.channels;
        return {{"gamma", {C}, true, gammaInit, 1, C, C, C}, {"beta", {C}, true, betaInit, 1, C, C, C}};
    }

    // Its output shape: the input's.
    LayerShape shape(const ShapeContext& c) const { return {c.in, {}}; }

    // One node: the normalization with its scale and shift.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::LayerNorm{b.layer.in.channels, epsilon}, {x, b.variable("gamma"), b.variable("beta")});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
