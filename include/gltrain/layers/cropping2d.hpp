// Cropping2D: rows and columns cut from the edges of each image (Keras's
// `cropping`: n, [h, w] or [[top, bottom], [left, right]]). A CropImage op,
// whose gradient pads with zeros.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

// Each image without its edges: [H, W, C] -> [H - top - bottom, W - left - right, C].
struct Cropping2D {
    // The rows and columns cut from each side.
    Margins cropping{0};
    std::string name;       // default "cropping2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "cropping2d";
    // Layer i is named "cropping2d_<i>".
    static constexpr const char* kDefaultName = "cropping2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Cropping2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("cropping", &Cropping2D::cropping,
                  "n from every side, [h, w] (rows from the top and bottom, columns from the left and right) or "
                  "[[top, bottom], [left, right]] (default 0).")
                .check(ranges::kNonNegativeInt)
                .tfjs("cropping"),
            field("name", &Cropping2D::name, "Default cropping2d_<i>."),
            field(
                "trainable", &Cropping2D::trainable,
                "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics (default true).")
                .tfjs("trainable"));
    }

    // Its output shape: what is left of the image, at least one pixel.
    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        if (int64_t(cropping.rows()) >= c.in.height || int64_t(cropping.cols()) >= c.in.width)
            c.fail("cropping " + cropping.str() + " leaves nothing of the image: it " + c.received());
        return {{c.in.height - cropping.rows(), c.in.width - cropping.cols(), c.in.channels}, {}};
    }

    // The crop.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::CropImage{b.layer.in, cropping}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
