// MaxPool2D and AveragePool2D: the largest value, or the mean, of each
// channel over square windows of an image — one layer with the pooling kind
// as a parameter (as tfjs-layers' Pooling2D), so the two cannot drift.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

template <PoolKind Kind>
// Max or average pooling over square windows of NHWC images (MaxPool2D, AveragePool2D).
struct Pool2D {
    // Whether this is max pooling (else average).
    static constexpr bool kMax = Kind == PoolKind::Max;

    // The window's side.
    int poolSize = 2;
    int stride = 0;  // 0: poolSize
    // 'valid' or 'same' (average pooling does not count padding).
    Padding padding = Padding::Valid;
    std::string name;       // default "max_pool2d_<i>" / "average_pool2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = kMax ? "maxpool2d" : "averagepool2d";
    // Layer i is named "max_pool2d_<i>" or "average_pool2d_<i>".
    static constexpr const char* kDefaultName = kMax ? "max_pool2d" : "average_pool2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = kMax ? "MaxPooling2D" : "AveragePooling2D";
    static constexpr const char* kTfjsAlias = kMax ? "MaxPool2D" : "AvgPool2D";  // Keras's other name for the class

    static constexpr auto fields() {
        return std::make_tuple(
            field("poolSize", &Pool2D::poolSize, "Default 2.")
                .check(ranges::kPositiveInt)
                .tfjs("pool_size", TfjsForm::Square),
            // TF.js's strides default to the pool size too, but as that size: tfjs_layers.hpp maps 0.
            field("stride", &Pool2D::stride, "0 or omitted: poolSize.").check(ranges::kNonNegativeInt),
            field("padding", &Pool2D::padding, "Default valid.").tfjs("padding"),
            field("name", &Pool2D::name, kMax ? "Default max_pool2d_<i>." : "Default average_pool2d_<i>."),
            trainableField(&Pool2D::trainable));
    }

    // Its output shape and window.
    LayerShape shape(const ShapeContext& c) const { return c.pooled(poolSize, stride, padding); }

    // Adds its nodes to the model's graph.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Pool{b.layer.window, Kind}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

using MaxPool2D = Pool2D<PoolKind::Max>;
using AveragePool2D = Pool2D<PoolKind::Average>;

}  // namespace gltrain
