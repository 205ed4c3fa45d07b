// GlobalAveragePooling2D and GlobalMaxPooling2D: the mean, or the largest
// value, of each channel over the whole image, [H, W, C] -> [C] — one layer
// with the pooling kind as a parameter (as Pool2D), so the two cannot drift.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

template <PoolKind Kind>
// The mean or the largest value of each channel over the image: [H, W, C] to [C].
struct GlobalPool2D {
    // Whether this is max pooling (else average).
    static constexpr bool kMax = Kind == PoolKind::Max;

    std::string name;       // default "global_max_pooling2d_<i>" / "global_average_pooling2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = kMax ? "globalmaxpooling2d" : "globalaveragepooling2d";
    // Layer i is named "global_max_pooling2d_<i>" or "global_average_pooling2d_<i>".
    static constexpr const char* kDefaultName = kMax ? "global_max_pooling2d" : "global_average_pooling2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = kMax ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D";
    // Another TF.js class name it imports from.
    static constexpr const char* kTfjsAlias = kMax ? "GlobalMaxPool2D" : "GlobalAvgPool2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("name", &GlobalPool2D::name,
                  kMax ? "Default global_max_pooling2d_<i>." : "Default global_average_pooling2d_<i>."),
            trainableField(&GlobalPool2D::trainable));
    }

    // The whole image: [H, W, C] -> [1, 1, C].
    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        const Window w = Window::make(c.who(), c.in, c.in.height, c.in.width, 1, 1, Padding::Valid, c.in.channels);
        return {w.out, w};
    }

    // A pool whose window is the whole image.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Pool{b.layer.window, Kind}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

using GlobalMaxPooling2D = GlobalPool2D<PoolKind::Max>;
using GlobalAveragePooling2D = GlobalPool2D<PoolKind::Average>;

}  // namespace gltrain
