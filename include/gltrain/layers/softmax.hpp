// Softmax: probabilities at the output. predict() applies softmax; training
// with the softmax cross-entropy loss consumes the logits before it. Last
// layer only.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

// Softmax over the last dimension, as the last layer (training reads the logits before it).
struct Softmax {
    std::string name;       // default "softmax_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "softmax";
    // Layer i is named "softmax_<i>".
    static constexpr const char* kDefaultName = "softmax";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Softmax";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("name", &Softmax::name, "Default softmax_<i>."),
            field(
                "trainable", &Softmax::trainable,
                "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics (default true).")
                .tfjs("trainable"));
    }

    // Its output shape: the input's; only as the last layer.
    LayerShape shape(const ShapeContext& c) const {
        if (!c.last) c.fail("Softmax must be the last layer");
        if (!c.softmaxLoss) c.fail("a Softmax output needs the softmax cross-entropy loss");
        return {c.in, {}};
    }

    // Training's loss reads the logits before it (softmax cross-entropy fuses the two).
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        b.logits = x;
        return b.training ? x : b.add(graph::SoftmaxRows{}, {graph::asFlat(b, x)});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
