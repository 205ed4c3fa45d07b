// ZeroPadding2D: rows and columns of zeros around each image (Keras's
// `padding`: n, [h, w] or [[top, bottom], [left, right]]). A PadImage op,
// whose gradient crops.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

// Zeros around each image: [H, W, C] -> [top + H + bottom, left + W + right, C].
struct ZeroPadding2D {
    // The rows and columns of zeros on each side.
    Margins padding{1};
    std::string name;       // default "zero_padding2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "zeropadding2d";
    // Layer i is named "zero_padding2d_<i>".
    static constexpr const char* kDefaultName = "zero_padding2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "ZeroPadding2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("padding", &ZeroPadding2D::padding,
                  "n on every side, [h, w] (rows above and below, columns left and right) or [[top, bottom], "
                  "[left, right]] (default 1).")
                .check(ranges::kNonNegativeInt)
                .tfjs("padding"),
            field("name", &ZeroPadding2D::name, "Default zero_padding2d_<i>."),
            field(
                "trainable", &ZeroPadding2D::trainable,
                "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics (default true).")
                .tfjs("trainable"));
    }

    // Its output shape: the image with its margins.
    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        const int64_t h = int64_t(c.in.height) + padding.rows(), w = int64_t(c.in.width) + padding.cols();
        c.fits("padding", {h, w, c.in.channels},
               "an output of " + ShapeContext::size(h, w) + " x " + std::to_string(c.in.channels) + " channels");
        return {{int(h), int(w), c.in.channels}, {}};
    }

    // The pad.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::PadImage{b.layer.in, padding}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
