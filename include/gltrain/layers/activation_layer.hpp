// ActivationLayer: an activation on its own (one the layer before could not
// fuse). TF.js's LeakyReLU and ReLU layers import as one (tfjs_layers.hpp).
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

// A layer applying an activation function element-wise (model config "activation").
struct ActivationLayer {
    // The activation function.
    Activation activation = Activation::ReLU;
    // LeakyReLU's slope for negative inputs.
    float alpha = 0.01f;
    std::string name;       // default "activation_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // ELU's alpha: negative inputs saturate at -eluAlpha. Last, so that the
    // positional initialisers written before it ({units, activation, alpha, ...}) still hold.
    float eluAlpha = 1.0f;

    // Model config / JavaScript "type".
    static constexpr const char* kType = "activation";
    // Layer i is named "activation_<i>".
    static constexpr const char* kDefaultName = "activation";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Activation";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(field("activation", &ActivationLayer::activation, "The function.").mustGive(),
                               field("alpha", &ActivationLayer::alpha, "LeakyReLU slope (default 0.01)."),
                               field("eluAlpha", &ActivationLayer::eluAlpha,
                                     "ELU's alpha: negative inputs saturate at -eluAlpha (default 1)."),
                               field("name", &ActivationLayer::name, "Default activation_<i>."),
                               trainableField(&ActivationLayer::trainable));
    }

    // Its output shape: the input's.
    LayerShape shape(const ShapeContext& c) const { return {c.in, {}}; }

    // Adds its nodes to the model's graph.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Activate{activation, activationAlpha(activation, alpha, eluAlpha)}, {x});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
