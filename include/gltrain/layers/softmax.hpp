// Softmax: probabilities over one axis (Keras's `axis`, default -1: the last),
// at any depth and on images too. As the last layer over a flat output, with
// the softmax cross-entropy loss, training's loss reads the logits before it
// (the two fuse); predict() applies it.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"

namespace gltrain {

// Softmax over one axis; as the last layer, training's softmax cross-entropy reads the logits before it.
struct Softmax {
    std::string name;       // default "softmax_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")
    // The axis, as Keras counts it: 0 is the batch, -1 the last (an image's channels).
    int axis = -1;

    // Model config / JavaScript "type".
    static constexpr const char* kType = "softmax";
    // Layer i is named "softmax_<i>".
    static constexpr const char* kDefaultName = "softmax";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Softmax";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("name", &Softmax::name, "Default softmax_<i>."), trainableField(&Softmax::trainable),
            field(
                "axis", &Softmax::axis,
                "The axis, counting the batch as 0: -1 (default) the last, of an image 1 height, 2 width, 3 channels.")
                .check(Range{-4, 3})  // the axes of a rank-4 value; shape() checks the input's rank
                .tfjs("axis"));
    }

    // The axis of a [batch, ...] value of rank `rank` (2 flat, 4 an image) as an index >= 1, or 0 if none.
    int resolvedAxis(int rank) const {
        const int a = axis < 0 ? axis + rank : axis;
        return a >= 1 && a < rank ? a : 0;
    }

    // Its output shape: the input's. As the last layer it must be the loss's softmax.
    LayerShape shape(const ShapeContext& c) const {
        const bool flat = c.in.height == 1 && c.in.width == 1;
        const int rank = flat ? 2 : 4;
        if (!resolvedAxis(rank))
            c.fail("axis " + std::to_string(axis) + " is not an axis of its input: it " + c.received() + " (" +
                   (flat ? "1 or -1" : "1 to 3 or -3 to -1") + "; 0 is the batch)");
        if (c.last) {
            if (!c.softmaxLoss)
                c.fail(
                    "a Softmax as the last layer needs a softmax cross-entropy loss (which reads the logits "
                    "before it) or a loss on the model's output (kl_divergence, mae, ...), not mse or binary "
                    "cross-entropy on logits");
            if (!flat || resolvedAxis(rank) != 1)
                c.fail(
                    "as the last layer, a Softmax is the softmax cross-entropy's, over the last axis of a flat "
                    "output, but it " +
                    c.received() + " with axis " + std::to_string(axis));
        }
        return {c.in, {}};
    }

    // The softmax's node; the loss reads the logits if this is the last layer (graph/model_graph.hpp).
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::Shape s = b.g.shape(x);
        const int a = resolvedAxis(s.rank());
        if (a == s.rank() - 1 && s.cols() == s.last()) {  // [B, C] or [B, 1, 1, C] over C: rows
            b.logits = graph::asFlat(b, x);               // the loss's, when no layer follows
            return b.add(graph::SoftmaxRows{}, {b.logits});
        }
        int64_t stride = 1;
        for (int d = a + 1; d < s.rank(); ++d) stride *= s.dims[size_t(d)];
        return b.add(graph::SoftmaxAxis{{int(s.dims[size_t(a)]), int(stride)}}, {x});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
