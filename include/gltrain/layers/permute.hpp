// Permute: each example's axes reordered (Keras's `dims`, a 1-based
// permutation of the axes after the batch: [2, 1] swaps a sequence's steps
// and features, [3, 1, 2] moves an image's channels first). A Transpose op,
// whose gradient is the inverse permutation.
#pragma once
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

// Each example's axes reordered: output axis k is input axis dims[k] (1-based, after the batch).
struct Permute {
    // A permutation of 1..rank, the input's rank after the batch (1 to 3).
    std::vector<int> dims;
    std::string name;       // default "permute_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "permute";
    // Layer i is named "permute_<i>".
    static constexpr const char* kDefaultName = "permute";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Permute";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("dims", &Permute::dims,
                  "A permutation of the axes after the batch, from 1: [2, 1] for [steps, features], [3, 1, 2] "
                  "moves an image's channels first.")
                .check(Range{1, 3})
                .mustGive()
                .tfjs("dims"),
            field("name", &Permute::name, "Default permute_<i>."),
            field(
                "trainable", &Permute::trainable,
                "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics (default true).")
                .tfjs("trainable"));
    }

    // The input's axes after the batch as `dims` reads them: [c], [w, c] or [h, w, c].
    static std::vector<int64_t> axes(const Shape3& in, size_t rank) {
        if (rank == 1) return {in.size()};
        if (rank == 2) return {in.width, in.channels};
        return {in.height, in.width, in.channels};
    }
    // The input's shape with its axes permuted; an empty string when dims permutes them, else why not.
    std::string permuted(const Shape3& in, Shape3* out) const {
        const size_t n = dims.size();
        std::vector<bool> seen(n, false);
        bool permutation = n >= 1 && n <= 3;
        for (int d : dims) {
            permutation = permutation && d >= 1 && d <= int(n) && !seen[size_t(d - 1)];
            if (permutation) seen[size_t(d - 1)] = true;
        }
        if (!permutation)
            return "dims " + intListStr(dims) + " is not a permutation of 1.." +
                   std::to_string(std::max<size_t>(n, 1)) + " (the axes after the batch, from 1)";
        if ((n == 1 && (in.height != 1 || in.width != 1)) || (n == 2 && in.height != 1))
            return "dims " + intListStr(dims) + " permutes " + std::to_string(n) + " axes";
        const std::vector<int64_t> a = axes(in, n);
        int o[3] = {1, 1, 1};
        for (size_t k = 0; k < n; ++k) o[3 - n + k] = int(a[size_t(dims[k] - 1)]);
        *out = Shape3{o[0], o[1], o[2]};
        return "";
    }

    // Its output shape: the input's axes in the order dims gives.
    LayerShape shape(const ShapeContext& c) const {
        Shape3 out;
        const std::string problem = permuted(c.in, &out);
        if (!problem.empty()) c.fail(problem + ": it " + c.received());
        return {out, {}};
    }

    // A Transpose of the input's axes (reshapes around it move no data).
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const std::vector<int64_t> in = axes(b.layer.in, dims.size());
        std::vector<int> perm;
        for (int d : dims) perm.push_back(d - 1);
        const graph::Shape from = graph::Shape::batched(in), to = graph::flatOrImage(b.layer.out);
        if (b.g.shape(x) != from) x = b.add(graph::Reshape{from}, {x});
        graph::ValueId y = b.add(graph::Transpose{in, perm}, {x});
        return b.g.shape(y) == to ? y : b.add(graph::Reshape{to}, {y});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
