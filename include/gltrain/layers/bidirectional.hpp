// Bidirectional: two LSTMs or two GRUs over the same sequence, one reading it
// from its start and one from its end, their outputs merged — TF.js's
// Bidirectional wrapping an LSTM or a GRU. A field table holds plain values,
// not a layer, so the wrapped layer's kind ("layer": lstm or gru) and fields
// are this layer's own (units, its activations, useBias, returnSequences)
// and its initializers are the wrapped layer's defaults; the TF.js import and
// export read and write them as the nested "layer" config. The variables are
// named as TF.js names them, forward_lstm/kernel .. backward_lstm/bias (or
// forward_gru/...). With returnSequences the backward direction's outputs
// are put back in the input's order before the merge, as Keras does.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/ops/concat.hpp"
#include "gltrain/graph/ops/elementwise.hpp"
#include "gltrain/graph/ops/recurrent.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/gru.hpp"
#include "gltrain/layers/lstm.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// An LSTM or a GRU in both directions over a sequence, merged by concatenation, sum, product or mean.
struct Bidirectional {
    // The wrapped layer's type: "lstm" or "gru".
    std::string layer = "lstm";
    // Each direction's state size.
    int units = 0;
    // The cells' activation (tanh).
    Activation activation = Activation::Tanh;
    // The gates' activation: TF.js's default hard_sigmoid.
    Activation recurrentActivation = Activation::HardSigmoid;
    // Whether the gates have a bias.
    bool useBias = true;
    // true: every step's output; false: each direction's last.
    bool returnSequences = false;
    // How the two directions' outputs merge: "concat" (2 x units), "sum", "mul" or "ave".
    std::string mergeMode = "concat";
    std::string name;       // default "bidirectional_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "bidirectional";
    // Layer i is named "bidirectional_<i>".
    static constexpr const char* kDefaultName = "bidirectional";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Bidirectional";
    // The field table (layers/field.hpp) every reader and writer of layers uses. Only mergeMode is a key of
    // TF.js's config; the others are the wrapped layer's (tfjs_layers.hpp).
    static constexpr auto fields() {
        return std::make_tuple(
            field("layer", &Bidirectional::layer, "The wrapped layer: lstm (default) or gru."),
            field("units", &Bidirectional::units, "Each direction's state size.")
                .check(ranges::kPositiveInt)
                .mustGive(),
            field("activation", &Bidirectional::activation, "The cells' activation (default tanh)."),
            field("recurrentActivation", &Bidirectional::recurrentActivation,
                  "The gates' activation (default hard_sigmoid, as TF.js)."),
            field("useBias", &Bidirectional::useBias, "Whether the gates have a bias (default true)."),
            field("returnSequences", &Bidirectional::returnSequences,
                  "true: every step's output; false (default): each direction's last."),
            field("mergeMode", &Bidirectional::mergeMode, "concat (default), sum, mul or ave.").tfjs("merge_mode"),
            field("name", &Bidirectional::name, "Default bidirectional_<i>."),
            trainableField(&Bidirectional::trainable));
    }

    // One direction's layer of type L, LSTM or GRU (every step's output, which the merge reads).
    template <class L>
    L direction(bool backwards) const {
        L l;
        l.units = units;
        l.activation = activation;
        l.recurrentActivation = recurrentActivation;
        l.useBias = useBias;
        l.returnSequences = returnSequences;
        l.goBackwards = backwards;
        return l;
    }
    // f(forwards, backwards) on the wrapped layer's two directions, LSTMs or GRUs.
    template <class F>
    auto withDirections(F&& f) const {
        if (layer == GRU::kType) return f(direction<GRU>(false), direction<GRU>(true));
        return f(direction<LSTM>(false), direction<LSTM>(true));
    }

    // Each direction's kernel, recurrent_kernel and bias.
    std::vector<LayerVariable> variables(Shape3 in) const {
        return withDirections([&](const auto& forwards, const auto& backwards) {
            std::vector<LayerVariable> v = forwards.variablesNamed(in, forwards.kForward);
            for (const LayerVariable& b : backwards.variablesNamed(in, backwards.kBackward)) v.push_back(b);
            return v;
        });
    }

    // A sequence [steps, features] -> [units] (x 2 concatenated), or [steps, units] with returnSequences.
    LayerShape shape(const ShapeContext& c) const {
        if (layer != LSTM::kType && layer != GRU::kType) c.fail("layer '" + layer + "' is not one of lstm, gru");
        withDirections([&](const auto& forwards, const auto&) {
            forwards.checkInput(c);
            return 0;
        });
        if (mergeMode != "concat" && mergeMode != "sum" && mergeMode != "mul" && mergeMode != "ave")
            c.fail("mergeMode '" + mergeMode + "' is not one of concat, sum, mul, ave");
        return {{1, returnSequences ? c.in.width : 1, mergeMode == "concat" ? 2 * units : units}, {}};
    }

    // Both directions' layers, the backward one's outputs in the input's order, merged.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const int T = b.layer.in.width;
        graph::ValueId f, r;
        withDirections([&](const auto& forwards, const auto& backwards) {
            f = forwards.steps(b, x, forwards.kForward);
            r = backwards.steps(b, x, backwards.kBackward);
            if (returnSequences) {
                r = b.add(graph::ReverseSteps{units}, {r});
            } else {
                f = forwards.lastStep(b, f, T);
                r = backwards.lastStep(b, r, T);
            }
            return 0;
        });
        if (mergeMode == "concat") return b.add(graph::Concat{-1}, {f, r});
        if (mergeMode == "mul") return b.add(graph::Mul{}, {f, r});
        const graph::ValueId sum = b.add(graph::Add{}, {f, r});
        return mergeMode == "ave" ? b.add(graph::Scale{0.5f}, {sum}) : sum;
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
