// Reverse-mode autodiff over a Graph: backward(g, seeds) walks the nodes in
// reverse and asks each node on a gradient's path for its op's `grad`, which
// adds the nodes computing its inputs' gradients (other ops of the table:
// MatMul's are MatMuls, Conv's are its backward kernels). A value that feeds
// several nodes gets the sum of their gradients (Add nodes). Only inputs that
// require a gradient get one: the data, frozen parameters and statistics cost
// nothing, and the first layer computes no gradient for its input.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gltrain/graph/graph.hpp"

namespace gltrain::graph {

// What an op's `grad` sees of its node: its inputs and outputs, the gradients
// flowing into its outputs, and where to put its inputs' gradients.
class GradBuilder {
public:
    GradBuilder(Graph& g, int node, std::map<ValueId, ValueId>& grads) : g_(g), node_(node), grads_(grads) {}

    ValueId in(int i) const { return g_.node(node_).inputs[size_t(i)]; }
    ValueId out(int k) const { return g_.node(node_).outputs[size_t(k)]; }
    // The gradient flowing into output k, or kNoValue.
    ValueId dOut(int k) const {
        auto it = grads_.find(out(k));
        return it == grads_.end() ? kNoValue : it->second;
    }
    bool needs(int i) const { return g_.value(in(i)).requiresGrad; }
    const Shape& shape(ValueId v) const { return g_.shape(v); }
    void grad(int i, ValueId gradient) { accumulate(g_, grads_, in(i), gradient, name()); }
    ValueId add(Op op, std::vector<ValueId> inputs) { return g_.add1(std::move(op), std::move(inputs), name()); }
    std::vector<ValueId> addN(Op op, std::vector<ValueId> inputs) {
        return g_.add(std::move(op), std::move(inputs), name());
    }
    ValueId constant(const std::string& what, const Shape& shape, float value) {
        return g_.constant(name() + "/" + what, shape, value);
    }

    // grads[v] += gradient: the first one as is, the others through Add nodes.
    static void accumulate(Graph& g, std::map<ValueId, ValueId>& grads, ValueId v, ValueId gradient,
                           const std::string& name) {
        if (g.shape(gradient) != g.shape(v))
            throw ShapeError(name + ": the gradient of " + g.describe(v) + " came out " + g.shape(gradient).str());
        auto [it, fresh] = grads.emplace(v, gradient);
        if (!fresh) it->second = g.add1(Add{}, {it->second, gradient}, name);
    }

private:
    std::string name() const { return g_.node(node_).name + "/grad"; }
    Graph& g_;
    int node_;
    std::map<ValueId, ValueId>& grads_;
};

// Adds the backward pass to `g`: `seeds` pairs values with their incoming
// gradients (a loss with the constant 1, or loss scaling's scale). Returns the
// gradient of every value that requires one and lies on a seed's path —
// parameters included — keyed by value.
inline std::map<ValueId, ValueId> backward(Graph& g, const std::vector<std::pair<ValueId, ValueId>>& seeds) {
    std::map<ValueId, ValueId> grads;
    g.beginBackward();
    for (auto [v, seed] : seeds) {
        if (!g.value(v).requiresGrad)
            throw ShapeError("backward: " + g.describe(v) + " does not depend on a trainable parameter");
        GradBuilder::accumulate(g, grads, v, seed, "backward");
    }
    for (int n = g.nodes(); n-- > 0;) {
        const Node& node = g.node(n);
        bool reached = false;
        for (ValueId v : node.outputs) reached |= grads.count(v) > 0;
        if (!reached) continue;
        const unsigned gradIn = opGradInputs(node.op);
        for (size_t i = 0; i < node.inputs.size(); ++i)
            if (g.value(node.inputs[i]).requiresGrad && !(gradIn >> i & 1u))
                throw ShapeError(node.name + " (" + opName(node.op) + "): no gradient for its input " +
                                 std::to_string(i) + ", " + g.describe(node.inputs[i]) +
                                 ", which depends on a trainable parameter");
        GradBuilder b(g, n, grads);
        const Op op = node.op;  // `node` may move as grad adds nodes
        std::visit(
            [&](const auto& o) {
                if constexpr (std::decay_t<decltype(o)>::kGradOutputs != 0) o.grad(b);
            },
            op);
    }
    return grads;
}

}  // namespace gltrain::graph
