// LSTM: a long short-term memory layer over a sequence [steps, features],
// with TF.js's weights: kernel [features, 4 units] and recurrent_kernel
// [units, 4 units] in Keras's gate order (i, f, c, o), bias [4 units]. Its
// defaults are TF.js 4.22's (hard_sigmoid gates, a glorot_normal kernel),
// not Python Keras's. The input's share of every step's gates, x·W + b, is
// one product before the time loop (Dense's on a sequence); the loop itself
// is one op, LstmSequence (graph/ops/recurrent.hpp), which runs a pass per
// step on the GPU rather than a graph node per step.
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

// The saved names of an LSTM's variables: its own, or one direction's in a Bidirectional.
struct LstmNames {
    // The input's kernel [features, 4U].
    const char* kernel = "kernel";
    // The recurrent kernel [U, 4U].
    const char* recurrentKernel = "recurrent_kernel";
    // The bias [4U].
    const char* bias = "bias";
};

// An LSTM over a sequence: the last step's output [units], or every step's [steps, units].
struct LSTM {
    // The state's size: each step's output.
    int units = 0;
    // The cell's activation, on the candidate and on the output's cell (tanh).
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
    // How the recurrent kernel starts: glorot_uniform (TF.js's orthogonal is not an initializer gltrain has).
    Initializer recurrentInit{};
    // How the bias starts (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "lstm_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "lstm";
    // Layer i is named "lstm_<i>".
    static constexpr const char* kDefaultName = "lstm";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "LSTM";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("units", &LSTM::units, "The state's size: each step's output.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("units"),
            field("activation", &LSTM::activation, "The cell's activation (default tanh).").tfjs("activation"),
            field("recurrentActivation", &LSTM::recurrentActivation,
                  "The gates' activation (default hard_sigmoid, as TF.js).")
                .tfjs("recurrent_activation"),
            field("useBias", &LSTM::useBias, "Whether the gates have a bias (default true).").tfjs("use_bias"),
            field("returnSequences", &LSTM::returnSequences,
                  "true: every step's output [steps, units]; false (default): the last step's.")
                .tfjs("return_sequences"),
            field("goBackwards", &LSTM::goBackwards, "Read the sequence from its end (default false).")
                .tfjs("go_backwards"),
            field("kernelInitializer", &LSTM::kernelInit, "Default glorot_normal.").tfjs("kernel_initializer"),
            field("recurrentInitializer", &LSTM::recurrentInit, "Default glorot_uniform.")
                .tfjs("recurrent_initializer"),
            field("biasInitializer", &LSTM::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &LSTM::name, "Default lstm_<i>."), trainableField(&LSTM::trainable));
    }

    // kernel [features, 4U], recurrent_kernel [U, 4U] and (useBias) bias [4U].
    std::vector<LayerVariable> variables(Shape3 in) const { return variablesNamed(in, {}); }
    // The same variables under `names` (a Bidirectional's two directions name theirs apart).
    std::vector<LayerVariable> variablesNamed(Shape3 in, const LstmNames& names) const {
        const int F = in.channels, G = LayerVariable::capped(4 * int64_t(units));
        std::vector<LayerVariable> v = {{names.kernel, {F, G}, true, kernelInit, F, G, F, G},
                                        {names.recurrentKernel, {units, G}, true, recurrentInit, units, G, units, G}};
        if (useBias) v.push_back({names.bias, {G}, true, biasInit, 1, G, F, G});
        return v;
    }

    // A sequence [steps, features] -> [units], or [steps, units] with returnSequences.
    LayerShape shape(const ShapeContext& c) const {
        checkInput(c);
        return {{1, returnSequences ? c.in.width : 1, units}, {}};
    }
    // Fails unless the input is a sequence this LSTM's sizes and activations fit.
    void checkInput(const ShapeContext& c) const {
        layer_detail::needSequence(c);
        c.fits("units", {c.in.channels, 4, units},
               "a kernel of " + std::to_string(c.in.channels) + " features x 4 x " + std::to_string(units) + " units");
        c.fits("units", {c.in.width, 4, units},
               "gate inputs of " + std::to_string(c.in.width) + " steps x 4 x " + std::to_string(units) + " units");
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
    graph::ValueId steps(graph::LayerBuild& b, graph::ValueId x, const LstmNames& names) const {
        const Shape3 in = b.layer.in;
        const Window w = Window::make(b.layer.name, in, 1, 1, 1, 1, Padding::Valid, 4 * units);
        graph::ValueId xz = b.add(graph::Conv{w}, {graph::asImage(b, x, in), b.variable(names.kernel)});
        if (useBias) xz = b.add(graph::BiasAdd{}, {xz, b.variable(names.bias)});
        const LstmCell cell{units, activation, recurrentActivation, goBackwards};
        return b.addN(graph::LstmSequence{cell}, {xz, b.variable(names.recurrentKernel)})[0];
    }
    // The last of h's `T` steps, [B, U].
    graph::ValueId lastStep(graph::LayerBuild& b, graph::ValueId h, int T) const {
        return graph::asFlat(b, b.add(graph::CropImage{{1, T, units}, {0, 0, T - 1, 0}}, {h}));
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
