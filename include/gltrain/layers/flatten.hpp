// Flatten: [H, W, C] -> [H*W*C]. No pass: image rows are stored flat, in
// Keras's NHWC order (gltrain/window.hpp).
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

struct Flatten {
    std::string name;  // default "flatten_<i>"

    static constexpr const char* kType = "flatten";
    static constexpr const char* kDefaultName = "flatten";
    static constexpr const char* kTfjsClass = "Flatten";

    static constexpr auto fields() { return std::make_tuple(field("name", &Flatten::name, "Default flatten_<i>.")); }

    LayerShape shape(const ShapeContext& c) const { return {{1, 1, c.in.size()}, {}}; }

    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const { return graph::asFlat(b, x); }
};

}  // namespace gltrain
