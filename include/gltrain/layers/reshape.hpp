// Reshape: each example's values as another shape of the same size (Keras's
// `target_shape`, up to three dimensions, one of them -1 for "the rest").
// Rows are stored flat, so it moves no data: a graph Reshape, which the plans alias.
#pragma once
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

// Each example's values in another shape of the same size; moves no data.
struct Reshape {
    // The shape after the batch: 1 to 3 sizes, one of them may be -1 (inferred).
    std::vector<int> targetShape;
    std::string name;       // default "reshape_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "reshape";
    // Layer i is named "reshape_<i>".
    static constexpr const char* kDefaultName = "reshape";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Reshape";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("targetShape", &Reshape::targetShape,
                  "The shape after the batch: 1 to 3 sizes, one of them may be -1 (the rest).")
                .check(Range{-1, double(std::numeric_limits<int>::max())})
                .mustGive()
                .tfjs("target_shape"),
            field("name", &Reshape::name, "Default reshape_<i>."),
            field(
                "trainable", &Reshape::trainable,
                "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics (default true).")
                .tfjs("trainable"));
    }

    // targetShape for `size` values per example, -1 resolved, as [h, w, c]
    // ([n] is [1, 1, n], [a, b] is [1, a, b]); an empty string when it fits, else why not.
    std::string resolve(int64_t size, Shape3* out) const {
        if (targetShape.empty() || targetShape.size() > 3)
            return "targetShape must have 1 to 3 sizes, got " + std::to_string(targetShape.size());
        int64_t known = 1;
        int unknown = 0;
        for (int d : targetShape) {
            if (d == 0 || d < -1) return "targetShape sizes must be positive or -1, got " + std::to_string(d);
            if (d == -1) ++unknown;
            else known *= d;
        }
        if (unknown > 1) return "targetShape may have one -1, got " + std::to_string(unknown);
        if (unknown ? size % known != 0 : known != size)
            return "targetShape " + intListStr(targetShape) + " does not hold " + std::to_string(size) +
                   " values per example";
        int dims[3] = {1, 1, 1};
        for (size_t k = 0; k < targetShape.size(); ++k)
            dims[3 - targetShape.size() + k] = targetShape[k] == -1 ? int(size / known) : targetShape[k];
        *out = Shape3{dims[0], dims[1], dims[2]};
        return "";
    }
    // Its output shape: targetShape with -1 resolved; the sizes must agree.
    LayerShape shape(const ShapeContext& c) const {
        Shape3 out;
        const std::string problem = resolve(c.in.size(), &out);
        if (!problem.empty()) c.fail(problem + ": it " + c.received());
        return {out, {}};
    }

    // A reshape the plans alias: no pass.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::Shape to = graph::flatOrImage(b.layer.out);
        return b.g.shape(x) == to ? x : b.add(graph::Reshape{to}, {x});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
