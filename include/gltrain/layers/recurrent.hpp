// The recurrent layers, LSTM and GRU, as one template over their kind: the
// same fields, variables and plumbing, TF.js's weights and defaults
// (hard_sigmoid gates, a glorot_normal kernel, an orthogonal recurrent
// kernel), not Python Keras's. kernel [features, G units] and
// recurrent_kernel [units, G units] hold the gates side by side in Keras's
// order (LSTM: G = 4, i, f, c, o; GRU: G = 3, z, r, h), bias [G units]. The
// input's share of every step's gates, x·W + b, is one product before the
// time loop (Dense's on a sequence); the loop itself is one op,
// LstmSequence or GruSequence (graph/ops/recurrent.hpp), which runs a pass or
// a few per step on the GPU rather than a graph node per step.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/ops/conv.hpp"
#include "gltrain/graph/ops/recurrent.hpp"
#include "gltrain/graph/ops/spatial.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/conv1d.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// Which recurrent cell a layer runs.
enum class RecurrentKind { Lstm, Gru };

// The saved names of a recurrent layer's variables: its own, or one direction's in a Bidirectional.
struct RecurrentNames {
    // The input's kernel [features, G units].
    const char* kernel = "kernel";
    // The recurrent kernel [units, G units].
    const char* recurrentKernel = "recurrent_kernel";
    // The bias [G units].
    const char* bias = "bias";
};

// What only one kind of recurrent layer has: nothing, by default.
template <RecurrentKind K>
struct RecurrentOptions {};
// An LSTM's forget gate's initial bias.
template <>
struct RecurrentOptions<RecurrentKind::Lstm> {
    // Whether the forget gate's bias starts at 1 (TF.js's unitForgetBias; TF.js's default false, Python Keras's
    // true); the other gates' start as the bias initializer says.
    bool unitForgetBias = false;
};

// A recurrent layer over a sequence: the last step's output [units], or every step's [steps, units].
template <RecurrentKind K>
struct Recurrent : RecurrentOptions<K> {
    // How many gates a unit has: its share of the kernels' and the bias's columns.
    static constexpr int kGates = K == RecurrentKind::Lstm ? 4 : 3;

    // The state's size: each step's output.
    int units = 0;
    // The cell's activation: an LSTM's candidate and output cell, a GRU's candidate (tanh).
    Activation activation = Activation::Tanh;
    // The gates' activation: TF.js's default hard_sigmoid (Python Keras: sigmoid).
    Activation recurrentActivation = Activation::HardSigmoid;
    // Whether the gates have a bias.
    bool useBias = true;
    // true: every step's output [steps, units]; false: the last step's [units].
    bool returnSequences = false;
    // Whether to read the sequence from its end (the outputs come in that order).
    bool goBackwards = false;
    // How the kernel starts (glorot_normal, TF.js's default).
    Initializer kernelInit{Initializer::GlorotNormal, 0.0f};
    // How the recurrent kernel starts (orthogonal, TF.js's default).
    Initializer recurrentInit{Initializer::Orthogonal, 0.0f};
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "lstm_<i>" / "gru_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = K == RecurrentKind::Lstm ? "lstm" : "gru";
    // Layer i is named "lstm_<i>" / "gru_<i>".
    static constexpr const char* kDefaultName = kType;
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = K == RecurrentKind::Lstm ? "LSTM" : "GRU";
    // Its variables' names in a Bidirectional: TF.js's for a wrapped layer named as kType.
    static constexpr RecurrentNames kForward =
        K == RecurrentKind::Lstm
            ? RecurrentNames{"forward_lstm/kernel", "forward_lstm/recurrent_kernel", "forward_lstm/bias"}
            : RecurrentNames{"forward_gru/kernel", "forward_gru/recurrent_kernel", "forward_gru/bias"};
    // The backward direction's.
    static constexpr RecurrentNames kBackward =
        K == RecurrentKind::Lstm
            ? RecurrentNames{"backward_lstm/kernel", "backward_lstm/recurrent_kernel", "backward_lstm/bias"}
            : RecurrentNames{"backward_gru/kernel", "backward_gru/recurrent_kernel", "backward_gru/bias"};

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        auto shared = std::make_tuple(
            field("units", &Recurrent::units, "The state's size: each step's output.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("units"),
            field("activation", &Recurrent::activation, "The cell's activation (default tanh).").tfjs("activation"),
            field("recurrentActivation", &Recurrent::recurrentActivation,
                  "The gates' activation (default hard_sigmoid, as TF.js).")
                .tfjs("recurrent_activation"),
            field("useBias", &Recurrent::useBias, "Whether the gates have a bias (default true).").tfjs("use_bias"),
            field("returnSequences", &Recurrent::returnSequences,
                  "true: every step's output [steps, units]; false (default): the last step's.")
                .tfjs("return_sequences"),
            field("goBackwards", &Recurrent::goBackwards, "Read the sequence from its end (default false).")
                .tfjs("go_backwards"),
            field("kernelInitializer", &Recurrent::kernelInit, "Default glorot_normal.").tfjs("kernel_initializer"),
            field("recurrentInitializer", &Recurrent::recurrentInit, "Default orthogonal.")
                .tfjs("recurrent_initializer"),
            field("biasInitializer", &Recurrent::biasInit, "Default zeros.").tfjs("bias_initializer"));
        auto tail = std::make_tuple(
            field("name", &Recurrent::name, K == RecurrentKind::Lstm ? "Default lstm_<i>." : "Default gru_<i>."),
            trainableField(&Recurrent::trainable));
        if constexpr (K == RecurrentKind::Lstm) {
            return std::tuple_cat(
                shared,
                std::make_tuple(field<Recurrent, bool>("unitForgetBias", &Recurrent::unitForgetBias,
                                                       "The forget gate's bias starts at 1 (default false, as TF.js).")
                                    .tfjs("unit_forget_bias")),
                tail);
        } else {
            return std::tuple_cat(shared, tail);
        }
    }

    // kernel [features, G units], recurrent_kernel [units, G units] and (useBias) bias [G units].
    std::vector<LayerVariable> variables(Shape3 in) const { return variablesNamed(in, {}); }
    // The same variables under `names` (a Bidirectional's two directions name theirs apart).
    std::vector<LayerVariable> variablesNamed(Shape3 in, const RecurrentNames& names) const {
        const int F = in.channels, G = LayerVariable::capped(kGates * int64_t(units));
        std::vector<LayerVariable> v = {{names.kernel, {F, G}, true, kernelInit, F, G, F, G},
                                        {names.recurrentKernel, {units, G}, true, recurrentInit, units, G, units, G}};
        if (useBias) {
            LayerVariable bias{names.bias, {G}, true, biasInit, 1, G, F, G};
            if constexpr (K == RecurrentKind::Lstm)
                if (this->unitForgetBias) bias.ones = {units, 2 * units};  // the forget gate's columns
            v.push_back(bias);
        }
        return v;
    }

    // A sequence [steps, features] -> [units], or [steps, units] with returnSequences.
    LayerShape shape(const ShapeContext& c) const {
        checkInput(c);
        return {{1, returnSequences ? c.in.width : 1, units}, {}};
    }
    // Fails unless the input is a sequence this layer's sizes and activations fit.
    void checkInput(const ShapeContext& c) const {
        layer_detail::needSequence(c);
        const std::string gates = " x " + std::to_string(kGates) + " x " + std::to_string(units) + " units";
        c.fits("units", {c.in.channels, kGates, units},
               "a kernel of " + std::to_string(c.in.channels) + " features" + gates);
        c.fits("units", {c.in.width, kGates, units}, "gate inputs of " + std::to_string(c.in.width) + " steps" + gates);
        for (Activation a : {activation, recurrentActivation})
            if (activationUsesAlpha(a))
                c.fail(std::string("activation ") + activationName(a) + " is not supported (it takes an alpha)");
    }

    // x·kernel + bias for every step (a 1x1 convolution), the time loop, and the last step unless returnSequences.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        const graph::ValueId h = steps(b, x, {});
        return returnSequences ? h : lastStep(b, h, b.layer.in.width);
    }
    // Every step's output h [B, 1, T, U], in the order read, with the variables under `names`.
    graph::ValueId steps(graph::LayerBuild& b, graph::ValueId x, const RecurrentNames& names) const {
        const Shape3 in = b.layer.in;
        const Window w = Window::make(b.layer.name, in, 1, 1, 1, 1, Padding::Valid, kGates * units);
        graph::ValueId xz = b.add(graph::Conv{w}, {graph::asImage(b, x, in), b.variable(names.kernel)});
        if (useBias) xz = b.add(graph::BiasAdd{}, {xz, b.variable(names.bias)});
        const RecurrentCell cell{units, activation, recurrentActivation, goBackwards};
        const graph::ValueId r = b.variable(names.recurrentKernel);
        if constexpr (K == RecurrentKind::Lstm) return b.addN(graph::LstmSequence{cell}, {xz, r})[0];
        else return b.addN(graph::GruSequence{cell}, {xz, r})[0];
    }
    // The last of h's `T` steps, [B, U].
    graph::ValueId lastStep(graph::LayerBuild& b, graph::ValueId h, int T) const {
        return graph::asFlat(b, b.add(graph::CropImage{{1, T, units}, {0, 0, T - 1, 0}}, {h}));
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
