// A model's graph: values (inputs, parameters, constants, and what nodes
// compute) and nodes (an op of the op table applied to values). Nodes are
// added in an order where every input already exists, so the node list is a
// topological order and reverse-mode autodiff (graph/autodiff.hpp) walks it
// backwards. A value may feed any number of nodes.
//
// Shapes are inferred as nodes are added; an error names the node, its op,
// and where each of its inputs came from, as Sequential's messages always did.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gltrain/graph/op_table.hpp"

namespace gltrain::graph {

using ValueId = int;
inline constexpr ValueId kNoValue = -1;

enum class ValueKind { Input, Parameter, Constant, Computed };

struct Value {
    Shape shape;
    ValueKind kind = ValueKind::Computed;
    std::string name;           // inputs and parameters: theirs; computed: "<node>:<output>"
    int node = -1;              // the node computing it (Computed)
    int output = 0;             // which of that node's outputs
    bool requiresGrad = false;  // a trainable parameter, or computed from one differentiably
    float constant = 0.0f;      // ValueKind::Constant: every element
};

struct Node {
    Op op;
    std::vector<ValueId> inputs, outputs;
    std::string name;       // the layer (or "<layer>/grad") that added it
    bool backward = false;  // added by autodiff (graph/autodiff.hpp)
};

class Graph {
public:
    ValueId input(std::string name, Shape shape) {
        return addValue(std::move(shape), ValueKind::Input, std::move(name));
    }
    // A trainable parameter requires a gradient; a frozen one or a statistic does not.
    ValueId parameter(std::string name, Shape shape, bool trainable = true) {
        const ValueId v = addValue(std::move(shape), ValueKind::Parameter, std::move(name));
        values_[size_t(v)].requiresGrad = trainable;
        return v;
    }
    ValueId constant(std::string name, Shape shape, float value) {
        const ValueId v = addValue(std::move(shape), ValueKind::Constant, std::move(name));
        values_[size_t(v)].constant = value;
        return v;
    }

    // Adds `op` on `inputs`; returns its outputs. Throws ShapeError naming the
    // node (`name`: the layer adding it), the op and its inputs' origins.
    std::vector<ValueId> add(Op op, std::vector<ValueId> inputs, const std::string& name) {
        const std::string who = name + " (" + opName(op) + ")";
        if (int(inputs.size()) != opInputs(op))
            throw ShapeError(who + ": takes " + std::to_string(opInputs(op)) + " inputs, got " +
                             std::to_string(inputs.size()));
        Shapes in;
        for (ValueId v : inputs) {
            if (v < 0 || v >= int(values_.size())) throw ShapeError(who + ": an input is not a value of this graph");
            in.push_back(values_[size_t(v)].shape);
        }
        Shapes out;
        try {
            out = std::visit([&](const auto& o) { return o.shapes(in); }, op);
        } catch (const ShapeError& e) {
            std::string from;
            for (size_t i = 0; i < inputs.size(); ++i)
                from += std::string(i ? "; " : "") + "input " + std::to_string(i) + " is " + describe(inputs[i]);
            throw ShapeError(who + ": " + e.what() + " (" + from + ")");
        }
        const int id = int(nodes_.size());
        // An output depends on the parameters when any input does — also through an
        // input the op gives no gradient for, which autodiff then reports.
        const unsigned gradOut = opGradOutputs(op);
        bool differentiable = false;
        for (ValueId v : inputs) differentiable |= values_[size_t(v)].requiresGrad;
        Node n{std::move(op), std::move(inputs), {}, name, backward_};
        for (size_t k = 0; k < out.size(); ++k) {
            const ValueId v = addValue(std::move(out[k]), ValueKind::Computed, name + ":" + std::to_string(k));
            values_[size_t(v)].node = id;
            values_[size_t(v)].output = int(k);
            values_[size_t(v)].requiresGrad = differentiable && (gradOut >> k & 1u);
            n.outputs.push_back(v);
        }
        nodes_.push_back(std::move(n));
        return nodes_.back().outputs;
    }
    ValueId add1(Op op, std::vector<ValueId> inputs, const std::string& name) {
        return add(std::move(op), std::move(inputs), name).front();
    }

    // Nodes added from now on belong to the backward pass (autodiff sets it).
    void beginBackward() { backward_ = true; }

    const Value& value(ValueId v) const { return values_.at(size_t(v)); }
    const Node& node(int n) const { return nodes_.at(size_t(n)); }
    int values() const { return int(values_.size()); }
    int nodes() const { return int(nodes_.size()); }
    const Shape& shape(ValueId v) const { return value(v).shape; }

    // "the input x [B, 784]", "the parameter dense_1/kernel [784, 10]",
    // "output 0 of dense_1 (matmul) [B, 10]".
    std::string describe(ValueId v) const {
        const Value& x = value(v);
        switch (x.kind) {
            case ValueKind::Input: return "the input " + x.name + " " + x.shape.str();
            case ValueKind::Parameter: return "the parameter " + x.name + " " + x.shape.str();
            case ValueKind::Constant: return "the constant " + x.name + " " + x.shape.str();
            case ValueKind::Computed: break;
        }
        const Node& n = node(x.node);
        return "output " + std::to_string(x.output) + " of " + n.name + " (" + opName(n.op) + ") " + x.shape.str();
    }

private:
    ValueId addValue(Shape shape, ValueKind kind, std::string name) {
        Value v;
        v.shape = std::move(shape);
        v.kind = kind;
        v.name = std::move(name);
        values_.push_back(std::move(v));
        return ValueId(values_.size() - 1);
    }

    std::vector<Value> values_;
    std::vector<Node> nodes_;
    bool backward_ = false;
};

}  // namespace gltrain::graph
