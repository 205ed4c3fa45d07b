// Flatten: [H, W, C] -> [H*W*C]. No pass: image rows are stored flat, in
// Keras's NHWC order (gltrain/window.hpp).
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

// Flattens [H, W, C] images to rows of H*W*C values (NHWC order); moves no data.
struct Flatten {
    std::string name;       // default "flatten_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "flatten";
    // Layer i is named "flatten_<i>".
    static constexpr const char* kDefaultName = "flatten";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Flatten";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(field("name", &Flatten::name, "Default flatten_<i>."),
                               trainableField(&Flatten::trainable));
    }

    // Its output shape: [1, 1, H*W*C].
    LayerShape shape(const ShapeContext& c) const { return {{1, 1, c.in.size()}, {}}; }

    // Adds its nodes to the model's graph (a reshape).
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const { return graph::asFlat(b, x); }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
