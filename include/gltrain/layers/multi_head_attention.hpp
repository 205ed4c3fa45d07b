// MultiHeadAttention (Keras's): scaled dot-product attention over
// `numHeads` heads. Called on one sequence [steps, features] it is
// self-attention (query = key = value), so it works in a Sequential; on two
// (a functional model's [query, value]) it is cross-attention, the key being
// the value as in Keras when no key is given. The value must have the
// query's features (its steps may differ).
//
// The projections are Dense per step — 1x1 convolutions of the sequence, as
// layers/dense.hpp does — whose kernels have Keras's shapes and names
// (query/kernel [F, H, dk], ..., attention_output/kernel [H, dv, F']); the
// heads are strided views of the projections' rows, multiplied in place
// (graph/ops/attention.hpp): scores = Q·Kᵀ / sqrt(dk) per head, a softmax
// over the keys (causal: query i sees keys 0..i, Keras's use_causal_mask),
// dropout on the probabilities while training, their product with V, and
// the output projection of the heads side by side. The kernels start as a
// Dense's of F inputs and H*dk outputs would (Keras's EinsumDense counts
// fans of its 3-D kernels otherwise).
#pragma once
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/ops/attention.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// Multi-head scaled dot-product attention of a query sequence over a value sequence (itself when called on one).
struct MultiHeadAttention {
    // Heads.
    int numHeads = 0;
    // Each head's size of queries and keys.
    int keyDim = 0;
    // Each head's size of values; 0: keyDim.
    int valueDim = 0;
    // Whether the projections add biases.
    bool useBias = true;
    // Fraction of the attention probabilities dropped while training.
    float dropout = 0.0f;
    // Query i attends to keys 0..i only (Keras's use_causal_mask).
    bool causal = false;
    // Features of each output step; 0: the query's.
    int outputShape = 0;
    Initializer kernelInit{};  // Glorot uniform
    // How the biases start (zeros).
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;       // default "multi_head_attention_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Reads the query, and optionally the value.
    static constexpr int kMaxInputs = 2;
    // Model config / JavaScript "type".
    static constexpr const char* kType = "multiheadattention";
    // Layer i is named "multi_head_attention_<i>".
    static constexpr const char* kDefaultName = "multi_head_attention";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "MultiHeadAttention";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        using M = MultiHeadAttention;
        return std::make_tuple(
            field("numHeads", &M::numHeads, "Heads.").check(ranges::kPositiveInt).mustGive().tfjs("num_heads"),
            field("keyDim", &M::keyDim, "Each head's size of queries and keys.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("key_dim"),
            field("valueDim", &M::valueDim, "Each head's size of values (default keyDim).")
                .check(ranges::kNonNegativeInt)
                .tfjs("value_dim"),
            field("useBias", &M::useBias, "Whether the projections add biases (default true).").tfjs("use_bias"),
            field("dropout", &M::dropout, "Fraction of the attention probabilities dropped while training (default 0).")
                .check(ranges::kUnitIntervalOpen)
                .tfjs("dropout"),
            field("causal", &M::causal, "Query i attends to keys 0..i only (default false)."),
            field("outputShape", &M::outputShape, "Features of each output step (default the query's).")
                .check(ranges::kNonNegativeInt)
                .tfjs("output_shape"),
            field("kernelInitializer", &M::kernelInit, "Default glorot_uniform.").tfjs("kernel_initializer"),
            field("biasInitializer", &M::biasInit, "Default zeros.").tfjs("bias_initializer"),
            field("name", &M::name, "Default multi_head_attention_<i>."), trainableField(&M::trainable));
    }

    // Each head's size of values.
    int headValues() const { return valueDim > 0 ? valueDim : keyDim; }
    // Features of each output step from the query's.
    int outputFeatures(const Shape3& query) const { return outputShape > 0 ? outputShape : query.channels; }

    // The projections' kernels and biases (Keras's names and shapes), from the query's shape.
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int F = in.channels, H = numHeads, dk = keyDim, dv = headValues(), out = outputFeatures(in);
        const int qk = LayerVariable::capped(int64_t(H) * dk), hv = LayerVariable::capped(int64_t(H) * dv);
        std::vector<LayerVariable> v;
        for (const auto& [kernel, bias, size, width] :
             {std::make_tuple("query/kernel", "query/bias", dk, qk), std::make_tuple("key/kernel", "key/bias", dk, qk),
              std::make_tuple("value/kernel", "value/bias", dv, hv)}) {
            v.push_back({kernel, {F, H, size}, true, kernelInit, F, width, F, width});
            if (useBias) v.push_back({bias, {H, size}, true, biasInit, 1, width, F, width, true});
        }
        v.push_back({"attention_output/kernel", {H, dv, out}, true, kernelInit, hv, out, hv, out});
        if (useBias) v.push_back({"attention_output/bias", {out}, true, biasInit, 1, out, hv, out});
        return v;
    }

    // [steps, features] (and the value's [steps', features]) -> [steps, outputShape].
    LayerShape shape(const ShapeContext& c) const {
        const Shape3& query = c.in;
        const Shape3& value = c.ins.size() > 1 ? c.ins[1] : query;
        for (const Shape3& s : {query, value})
            if (s.height != 1 || c.flatModelInput)
                c.fail("needs sequences [steps, features] but " + (c.ins.size() > 1 ? c.receivedAll() : c.received()));
        if (value.channels != query.channels)
            c.fail("needs a value with the query's " + std::to_string(query.channels) + " features but " +
                   c.receivedAll());
        const int64_t H = numHeads, out = outputFeatures(query);
        c.fits("keyDim", {query.channels, H, keyDim},
               "a query kernel of " + std::to_string(query.channels) + " features x " + std::to_string(H) +
                   " heads x " + std::to_string(keyDim));
        c.fits("valueDim", {query.channels, H, headValues()},
               "a value kernel of " + std::to_string(query.channels) + " features x " + std::to_string(H) +
                   " heads x " + std::to_string(headValues()));
        c.fits("numHeads", {H, query.width, value.width},
               "the scores of " + std::to_string(H) + " heads x " + std::to_string(query.width) + " x " +
                   std::to_string(value.width) + " steps");
        c.fits("keyDim", {value.width, H, keyDim}, "the keys of " + std::to_string(value.width) + " steps");
        c.fits("valueDim", {value.width, H, headValues()}, "the values of " + std::to_string(value.width) + " steps");
        c.fits("outputShape", {query.width, out}, "an output of " + std::to_string(query.width) + " steps");
        return {{1, query.width, int(out)}, {}};
    }

    // The projections, the heads' attention and the output projection.
    graph::ValueId addNodes(graph::LayerBuild& b, const std::vector<graph::ValueId>& in) const {
        const Shape3 qIn = b.layer.in, vIn = in.size() > 1 ? b.layer.ins.at(1) : qIn;
        const graph::ValueId query = in[0], value = in.size() > 1 ? in[1] : in[0];
        const int H = numHeads, dk = keyDim, dv = headValues(), Tq = qIn.width, Tv = vIn.width;
        const graph::ValueId Q = project(b, query, qIn, H * dk, "query"), K = project(b, value, vIn, H * dk, "key"),
                             V = project(b, value, vIn, H * dv, "value");
        // Per head h: scores [Tq, Tv] = Q[:, h] · K[:, h]ᵀ / sqrt(dk), laid out [H, Tq, Tv].
        const HeadProduct scores{
            H, Tq, Tv, dk, {dk, H * dk, 1}, {dk, 1, H * dk}, {Tq * Tv, Tv, 1}, float(1.0 / std::sqrt(double(dk)))};
        graph::ValueId P = b.add(graph::AttentionSoftmax{Tq, Tv, causal},
                                 {b.add(graph::HeadMatMul{scores, graph::Shape::batched({H, Tq, Tv})}, {Q, K})});
        if (b.training && dropout > 0.0f)
            P = b.add(graph::Mul{}, {P, b.add(graph::DropoutMask{dropout, b.maskSeed()}, {P})});
        // Per head h: the context [Tq, dv] = P[h] · V[:, h], the heads side by side [Tq, H*dv].
        const HeadProduct context{H, Tq, dv, Tv, {Tq * Tv, Tv, 1}, {dv, H * dv, 1}, {dv, H * dv, 1}};
        const graph::ValueId O = b.add(graph::HeadMatMul{context, graph::Shape::batched({1, Tq, H * dv})}, {P, V});
        return project(b, O, {1, Tq, H * dv}, outputFeatures(qIn), "attention_output");
    }

    // `x` [steps, in.channels] times `<what>/kernel` at each step, plus `<what>/bias`.
    graph::ValueId project(graph::LayerBuild& b, graph::ValueId x, const Shape3& in, int units,
                           const std::string& what) const {
        const Window w = Window::make("compile: layer " + b.layer.name, in, 1, 1, 1, 1, Padding::Valid, units);
        const graph::ValueId y =
            b.add(graph::Conv{w}, {graph::asImage(b, x, in), b.variable((what + "/kernel").c_str())});
        if (!useBias) return y;
        return b.add(graph::BiasAdd{}, {y, b.variable((what + "/bias").c_str())});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
