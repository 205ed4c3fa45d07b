// GlobalMaxPooling2D: the largest value of each channel over the image, [H, W, C] -> [C].
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

// The largest value of each channel over the image: [H, W, C] to [C].
struct GlobalMaxPooling2D {
    std::string name;       // default "global_max_pooling2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "globalmaxpooling2d";
    // Layer i is named "global_max_pooling2d_<i>".
    static constexpr const char* kDefaultName = "global_max_pooling2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "GlobalMaxPooling2D";
    // Another TF.js class name it imports from.
    static constexpr const char* kTfjsAlias = "GlobalMaxPool2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(field("name", &GlobalMaxPooling2D::name, "Default global_max_pooling2d_<i>."),
                               trainableField(&GlobalMaxPooling2D::trainable));
    }

    // The whole image: [H, W, C] -> [1, 1, C].
    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        const Window w = Window::make(c.who(), c.in, c.in.height, c.in.width, 1, 1, Padding::Valid, c.in.channels);
        return {w.out, w};
    }

    // A max pool whose window is the whole image.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Pool{b.layer.window, PoolKind::Max}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
