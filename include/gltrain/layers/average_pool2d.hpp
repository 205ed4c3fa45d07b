// AveragePool2D: the mean of each channel over square windows of an image.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

struct AveragePool2D {
    int poolSize = 2;
    int stride = 0;  // 0: poolSize
    Padding padding = Padding::Valid;
    std::string name;  // default "average_pool2d_<i>"

    static constexpr const char* kType = "averagepool2d";
    static constexpr const char* kDefaultName = "average_pool2d";
    static constexpr const char* kTfjsClass = "AveragePooling2D";
    static constexpr const char* kTfjsAlias = "AvgPool2D";  // Keras's other name for the class

    static constexpr auto fields() {
        return std::make_tuple(
            field("poolSize", &AveragePool2D::poolSize, "Default 2.")
                .check(ranges::kPositiveInt)
                .tfjs("pool_size", TfjsForm::Square),
            // TF.js's strides default to the pool size too, but as that size: tfjs_layers.hpp maps 0.
            field("stride", &AveragePool2D::stride, "0 or omitted: poolSize.").check(ranges::kNonNegativeInt),
            field("padding", &AveragePool2D::padding, "Default valid.").tfjs("padding"),
            field("name", &AveragePool2D::name, "Default average_pool2d_<i>."));
    }

    LayerShape shape(const ShapeContext& c) const { return c.pooled(poolSize, stride, padding); }

    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Pool{b.layer.window, PoolKind::Average}, {graph::asImage(b, x, b.layer.in)});
    }
};

}  // namespace gltrain
