// The merge layers: Add, Subtract, Multiply, Average and Maximum of values of
// one shape (one template, as Pool2D), and Concatenate along an axis. They
// read several layers' outputs (`kMerge`), so they belong to functional
// models (model/symbolic.hpp) and model files whose layers name "inputs".
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"

namespace gltrain {

// What an element-wise merge computes.
enum class MergeKind { Add, Subtract, Multiply, Average, Maximum };

namespace merge_detail {
constexpr const char* name(MergeKind k) {
    return k == MergeKind::Add        ? "add"
           : k == MergeKind::Subtract ? "subtract"
           : k == MergeKind::Multiply ? "multiply"
           : k == MergeKind::Average  ? "average"
                                      : "maximum";
}
constexpr const char* tfjsClass(MergeKind k) {
    return k == MergeKind::Add        ? "Add"
           : k == MergeKind::Subtract ? "Subtract"
           : k == MergeKind::Multiply ? "Multiply"
           : k == MergeKind::Average  ? "Average"
                                      : "Maximum";
}
// A value as `s`: a flat [B, n] or an image [B, H, W, C] (the same rows, so no data moves).
inline graph::ValueId as(graph::LayerBuild& b, graph::ValueId x, const Shape3& s) {
    return s.height == 1 && s.width == 1 ? graph::asFlat(b, x) : graph::asImage(b, x, s);
}
}  // namespace merge_detail

template <MergeKind Kind>
// The element-wise sum, difference, product, mean or maximum of values of one shape.
struct Merge {
    std::string name;       // default "<type>_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Reads several inputs (two for Subtract).
    static constexpr bool kMerge = true;
    // Model config / JavaScript "type" ("add").
    static constexpr const char* kType = merge_detail::name(Kind);
    // Layer i is named "<type>_<i>".
    static constexpr const char* kDefaultName = merge_detail::name(Kind);
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = merge_detail::tfjsClass(Kind);

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(field("name", &Merge::name, "Default <type>_<i>."), trainableField(&Merge::trainable));
    }

    // Its output shape: its inputs', which must agree.
    LayerShape shape(const ShapeContext& c) const {
        if (Kind == MergeKind::Subtract && c.ins.size() != 2) c.fail("subtracts two inputs but " + c.receivedAll());
        for (const Shape3& s : c.ins)
            if (!(s == c.ins[0])) c.fail("needs inputs of one shape but " + c.receivedAll());
        return {c.in, {}};
    }

    // Adds its nodes: a chain of binary ops (Average: the sum, scaled).
    graph::ValueId addNodes(graph::LayerBuild& b, const std::vector<graph::ValueId>& in) const {
        std::vector<graph::ValueId> xs;
        for (graph::ValueId x : in) xs.push_back(merge_detail::as(b, x, b.layer.in));
        graph::ValueId y = xs[0];
        for (size_t i = 1; i < xs.size(); ++i) {
            if constexpr (Kind == MergeKind::Subtract) y = b.add(graph::Sub{}, {y, xs[i]});
            else if constexpr (Kind == MergeKind::Multiply) y = b.add(graph::Mul{}, {y, xs[i]});
            else if constexpr (Kind == MergeKind::Maximum) y = b.add(graph::Maximum{}, {y, xs[i]});
            else y = b.add(graph::Add{}, {y, xs[i]});
        }
        if constexpr (Kind == MergeKind::Average) y = b.add(graph::Scale{1.0f / float(xs.size())}, {y});
        return y;
    }

    GLTRAIN_LAYER_CALLS
};

using Add = Merge<MergeKind::Add>;
using Subtract = Merge<MergeKind::Subtract>;
using Multiply = Merge<MergeKind::Multiply>;
using Average = Merge<MergeKind::Average>;
using Maximum = Merge<MergeKind::Maximum>;

// Values side by side along one axis (Keras's: -1, the last, is the channels);
// they agree on every other dimension.
struct Concatenate {
    // The axis, counting the batch as 0: 1..3 (height, width, channels) for
    // images, 1 for flat values; negative from the end. Default -1.
    int axis = -1;
    std::string name;       // default "concatenate_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Reads several inputs.
    static constexpr bool kMerge = true;
    // Model config / JavaScript "type".
    static constexpr const char* kType = "concatenate";
    // Layer i is named "concatenate_<i>".
    static constexpr const char* kDefaultName = "concatenate";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Concatenate";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("axis", &Concatenate::axis, "The axis, the batch being 0; negative from the end (default -1).")
                .check(Range{-3, 3})
                .tfjs("axis"),
            field("name", &Concatenate::name, "Default concatenate_<i>."), trainableField(&Concatenate::trainable));
    }

    // Flat inputs have one axis after the batch, images three.
    static bool flat(const Shape3& s) { return s.height == 1 && s.width == 1; }
    // The axis as 1..3 of [H, W, C] (images) or 1 (flat); 0 when it is not one.
    int axisIn(const Shape3& s) const {
        const int rank = flat(s) ? 1 : 3, k = axis < 0 ? rank + 1 + axis : axis;
        return k >= 1 && k <= rank ? (flat(s) ? 3 : k) : 0;
    }

    // Its output shape: the inputs', with their sizes along the axis added.
    LayerShape shape(const ShapeContext& c) const {
        bool allFlat = true;
        for (const Shape3& s : c.ins) allFlat = allFlat && flat(s);
        for (const Shape3& s : c.ins)
            if (!allFlat && flat(s)) c.fail("needs all inputs flat or all images but " + c.receivedAll());
        const int k = axisIn(c.in);
        if (k == 0)
            c.fail("axis " + std::to_string(axis) + " is not an axis of " + ShapeContext::shown(c.in) +
                   " after the batch");
        Shape3 out = c.in;
        auto dim = [](Shape3& s, int d) -> int& { return d == 1 ? s.height : d == 2 ? s.width : s.channels; };
        int64_t along = dim(out, k);  // the sizes along the axis, summed in 64 bits
        for (size_t i = 1; i < c.ins.size(); ++i) {
            Shape3 s = c.ins[i];
            dim(s, k) = dim(out, k);
            if (!(s == out))
                c.fail("needs inputs that agree on every axis but " + std::to_string(axis) + "; it " + c.receivedAll());
            Shape3 t = c.ins[i];
            along += dim(t, k);
        }
        const int64_t across = out.size() / dim(out, k);  // the values per step along the axis
        c.fits(
            "axis", {across, along},
            "an output per example of " + std::to_string(across) + " x " + std::to_string(along) + " along the axis");
        dim(out, k) = int(along);
        return {out, {}};
    }

    // Adds its nodes: one Concat per input after the first.
    graph::ValueId addNodes(graph::LayerBuild& b, const std::vector<graph::ValueId>& in) const {
        const bool isFlat = flat(b.layer.in);
        const int k = axisIn(b.layer.in);
        std::vector<graph::ValueId> xs;
        for (size_t i = 0; i < in.size(); ++i) xs.push_back(merge_detail::as(b, in[i], b.layer.ins.at(i)));
        graph::ValueId y = xs[0];
        for (size_t i = 1; i < xs.size(); ++i) y = b.add(graph::Concat{isFlat ? 1 : k}, {y, xs[i]});
        return y;
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
