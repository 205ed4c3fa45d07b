// ActivationLayer: an activation on its own (one the layer before could not
// fuse). TF.js's LeakyReLU and ReLU layers import as one (tfjs_layers.hpp).
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

struct ActivationLayer {
    Activation activation = Activation::ReLU;
    float alpha = 0.01f;
    std::string name;  // default "activation_<i>"

    static constexpr const char* kType = "activation";
    static constexpr const char* kDefaultName = "activation";
    static constexpr const char* kTfjsClass = "Activation";

    static constexpr auto fields() {
        return std::make_tuple(field("activation", &ActivationLayer::activation, "The function.").mustGive(),
                               field("alpha", &ActivationLayer::alpha, "LeakyReLU slope (default 0.01)."),
                               field("name", &ActivationLayer::name, "Default activation_<i>."));
    }

    LayerShape shape(const ShapeContext& c) const { return {c.in, {}}; }

    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Activate{activation, alpha}, {x});
    }
};

}  // namespace gltrain
