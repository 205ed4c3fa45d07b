// Bidirectional: two LSTMs over the same sequence, one reading it from its
// start and one from its end, their outputs merged — TF.js's Bidirectional
// wrapping an LSTM. A field table holds plain values, not a layer, so the
// wrapped LSTM's fields are this layer's own (units, its activations,
// useBias, returnSequences) and its initializers are LSTM's defaults; the
// TF.js import and export read and write them as the nested "layer" config.
// The variables are named as TF.js names them, forward_lstm/kernel ..
// backward_lstm/bias. With returnSequences the backward direction's outputs
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
#include "gltrain/layers/lstm.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// An LSTM in both directions over a sequence, merged by concatenation, sum, product or mean.
struct Bidirectional {
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
    // Its variables' names: TF.js's for a wrapped layer named "lstm".
    static constexpr LstmNames kForward{"forward_lstm/kernel", "forward_lstm/recurrent_kernel", "forward_lstm/bias"};
    // The backward direction's.
    static constexpr LstmNames kBackward{"backward_lstm/kernel", "backward_lstm/recurrent_kernel",
                                         "backward_lstm/bias"};

    // The field table (layers/field.hpp) every reader and writer of layers uses. Only mergeMode is a key of
    // TF.js's config; the others are the wrapped LSTM's (tfjs_layers.hpp).
    static constexpr auto fields() {
        return std::make_tuple(
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

    // One direction's LSTM (every step's output, which the merge reads).
    LSTM direction(bool backwards) const {
        LSTM l;
        l.units = units;
        l.activation = activation;
        l.recurrentActivation = recurrentActivation;
        l.useBias = useBias;
        l.returnSequences = returnSequences;
        l.goBackwards = backwards;
        return l;
    }

    // Each direction's kernel, recurrent_kernel and bias.
    std::vector<LayerVariable> variables(Shape3 in) const {
        std::vector<LayerVariable> v = direction(false).variablesNamed(in, kForward);
        for (const LayerVariable& b : direction(true).variablesNamed(in, kBackward)) v.push_back(b);
        return v;
    }

    // A sequence [steps, features] -> [units] (x 2 concatenated), or [steps, units] with returnSequences.
    LayerShape shape(const ShapeContext& c) const {
        direction(false).checkInput(c);
        if (mergeMode != "concat" && mergeMode != "sum" && mergeMode != "mul" && mergeMode != "ave")
            c.fail("mergeMode '" + mergeMode + "' is not one of concat, sum, mul, ave");
        return {{1, returnSequences ? c.in.width : 1, mergeMode == "concat" ? 2 * units : units}, {}};
    }

    // Both directions' LSTMs, the backward one's outputs in the input's order, merged.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const int T = b.layer.in.width;
        const LSTM forwards = direction(false), backwards = direction(true);
        graph::ValueId f = forwards.steps(b, x, kForward), r = backwards.steps(b, x, kBackward);
        if (returnSequences) {
            r = b.add(graph::ReverseSteps{units}, {r});
        } else {
            f = forwards.lastStep(b, f, T);
            r = backwards.lastStep(b, r, T);
        }
        if (mergeMode == "concat") return b.add(graph::Concat{-1}, {f, r});
        if (mergeMode == "mul") return b.add(graph::Mul{}, {f, r});
        const graph::ValueId sum = b.add(graph::Add{}, {f, r});
        return mergeMode == "ave" ? b.add(graph::Scale{0.5f}, {sum}) : sum;
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
