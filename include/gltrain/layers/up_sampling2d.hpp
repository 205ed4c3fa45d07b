// UpSampling2D: each image enlarged by whole factors (Keras's `size`), each
// pixel repeated ('nearest') or interpolated ('bilinear', as TF.js's
// UpSampling2D calls tf.image.resizeBilinear: corners not aligned, no
// half-pixel centres). An Upsample op; its gradient is the resize's adjoint.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

// Each image enlarged: [H, W, C] -> [H*sh, W*sw, C].
struct UpSampling2D {
    // The factors along the height and the width.
    Size2 size{2, 2};
    // 'nearest' (each pixel repeated) or 'bilinear'.
    Interpolation interpolation = Interpolation::Nearest;
    std::string name;       // default "up_sampling2d_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "upsampling2d";
    // Layer i is named "up_sampling2d_<i>".
    static constexpr const char* kDefaultName = "up_sampling2d";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "UpSampling2D";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("size", &UpSampling2D::size, "n or [sh, sw]: the factors along the height and width (default 2).")
                .check(ranges::kPositiveInt)
                .tfjs("size"),
            field("interpolation", &UpSampling2D::interpolation,
                  "nearest (default: each pixel repeated) or bilinear (as TF.js's resizeBilinear).")
                .tfjs("interpolation"),
            field("name", &UpSampling2D::name, "Default up_sampling2d_<i>."),
            field(
                "trainable", &UpSampling2D::trainable,
                "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics (default true).")
                .tfjs("trainable"));
    }

    // Its output shape: the image times the factors.
    LayerShape shape(const ShapeContext& c) const {
        c.needImage();
        const int64_t h = int64_t(c.in.height) * size.h, w = int64_t(c.in.width) * size.w;
        c.fits("size", {h, w, c.in.channels},
               "an output of " + ShapeContext::size(h, w) + " x " + std::to_string(c.in.channels) + " channels");
        return {{int(h), int(w), c.in.channels}, {}};
    }

    // The resize.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::Upsample{b.layer.in, size, interpolation}, {graph::asImage(b, x, b.layer.in)});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
