// Softmax: probabilities at the output. predict() applies softmax; training
// with the softmax cross-entropy loss consumes the logits before it. Last
// layer only.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

struct Softmax {
    std::string name;  // default "softmax_<i>"

    static constexpr const char* kType = "softmax";
    static constexpr const char* kDefaultName = "softmax";
    static constexpr const char* kTfjsClass = "Softmax";

    static constexpr auto fields() { return std::make_tuple(field("name", &Softmax::name, "Default softmax_<i>.")); }

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
};

}  // namespace gltrain
