// Dropout: zeroes a fraction of the values while training (scaling the rest
// up); the identity in evaluate/predict.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

// Dropout: in training, zeroes each value with probability `rate` and scales the rest by 1 / (1 - rate); identity
// in inference.
struct Dropout {
    float rate = 0.5f;      // fraction dropped while training; identity in evaluate/predict
    std::string name;       // default "dropout_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "dropout";
    // Layer i is named "dropout_<i>".
    static constexpr const char* kDefaultName = "dropout";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Dropout";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(field("rate", &Dropout::rate, "Fraction dropped while training (default 0.5).")
                                   .check(ranges::kUnitIntervalOpen)
                                   .tfjs("rate"),
                               field("name", &Dropout::name, "Default dropout_<i>."),
                               trainableField(&Dropout::trainable));
    }

    // Its output shape: the input's.
    LayerShape shape(const ShapeContext& c) const { return {c.in, {}}; }

    // Inverted dropout: x times a mask of 0 and 1 / (1 - rate); nothing at inference.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        if (!b.training || rate <= 0.0f) return x;
        return b.add(graph::Mul{}, {x, b.add(graph::DropoutMask{rate, b.maskSeed()}, {x})});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
