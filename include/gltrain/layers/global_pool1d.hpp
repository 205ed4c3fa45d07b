// GlobalAveragePooling1D and GlobalMaxPooling1D: the mean, or the largest
// value, of each feature over a sequence's steps, [steps, features] ->
// [features]. A sequence is an image of height 1 (layers/conv1d.hpp), so this
// is the 2-D layers' pool with the whole sequence as its window.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/conv1d.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

template <PoolKind Kind>
// The mean or the largest value of each feature over the steps: [steps, features] to [features].
struct GlobalPool1D {
    // Whether this is max pooling (else average).
    static constexpr bool kMax = Kind == PoolKind::Max;
    std::string name;       // default "global_max_pooling1d_<i>" / "global_average_pooling1d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = kMax ? "globalmaxpooling1d" : "globalaveragepooling1d";
    // Layer i is named "global_max_pooling1d_<i>" or "global_average_pooling1d_<i>".
    static constexpr const char* kDefaultName = kMax ? "global_max_pooling1d" : "global_average_pooling1d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = kMax ? "GlobalMaxPooling1D" : "GlobalAveragePooling1D";
    // Another TF.js class name it imports from.
    static constexpr const char* kTfjsAlias = kMax ? "GlobalMaxPool1D" : "GlobalAvgPool1D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("name", &GlobalPool1D::name,
                  kMax ? "Default global_max_pooling1d_<i>." : "Default global_average_pooling1d_<i>."),
            trainableField(&GlobalPool1D::trainable));
    }

    // The whole sequence: [1, steps, features] -> [1, 1, features].
    LayerShape shape(const ShapeContext& c) const {
        layer_detail::needSequence(c);
        const Window w = Window::make(c.who(), c.in, 1, c.in.width, 1, 1, Padding::Valid, c.in.channels);
        return {w.out, w};
    }

    // A pool whose window is the whole sequence.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Pool{b.layer.window, Kind}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

using GlobalMaxPooling1D = GlobalPool1D<PoolKind::Max>;
using GlobalAveragePooling1D = GlobalPool1D<PoolKind::Average>;

}  // namespace gltrain
