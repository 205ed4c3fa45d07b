// The functional API's values (tfjs-layers' SymbolicTensor): a model's input,
// or a layer applied to values. Layers are applied by calling them; a Model
// made from an input and an output is every layer between the two:
//
//   auto x = gltrain::Input({28, 28, 1});
//   auto h = gltrain::Conv2D{.. 8 filters, 3, same ..}(x);
//   auto y = gltrain::Add{}({h, gltrain::Conv2D{..}(h)});      // a residual merge
//   gltrain::Model model(ctx, x, gltrain::Dense{10}(gltrain::Flatten{}(y)));
//
// A value may feed several layers (branches). Each call makes a new layer:
// applying one layer value twice makes two layers with their own weights.
// Shapes are inferred and checked by compile(), whose errors name the layer
// and where each input came from.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers.hpp"

namespace gltrain {

// One layer of a model as built: its spec and the layers it reads.
struct LayerNode {
    // The layer's kind and options.
    Layer spec;
    // The layers it reads, by index (graph::LayerGeometry::kModelInput: the
    // model's input); empty: the layer before it (the model's input for the first).
    std::vector<int> inbound;
};

// A functional model's layers as built from its values: its inputs' shapes
// (and names), the layers in an order where each comes after those it reads,
// and which layers are its outputs.
struct FunctionalGraph {
    // Each input's shape.
    std::vector<Shape3> inputs;
    // Each input's name (empty: unnamed inputs).
    std::vector<std::string> inputNames;
    // The layers, each after those it reads.
    std::vector<LayerNode> nodes;
    // The output layers, in the model's output order.
    std::vector<int> outputs;
};

// A value of a functional model being built: its input, or a layer's output.
class SymbolicTensor {
public:
    // Whether this is a model input (gltrain::Input) rather than a layer's output.
    bool isInput() const { return !node_->layer; }
    // The input's shape (for a model input).
    Shape3 inputShape() const { return node_->inputShape; }
    // The input's name (for a model input; empty: none given).
    const std::string& inputName() const { return node_->inputName; }

    // The model inputs `inputs` and the layers that lead from them to
    // `outputs`; every input must lead to an output, and every layer read
    // must come from these inputs.
    static FunctionalGraph between(const std::vector<SymbolicTensor>& inputs,
                                   const std::vector<SymbolicTensor>& outputs) {
        if (inputs.empty()) throw ArgumentError("Model: it needs an input (gltrain::Input)");
        if (outputs.empty()) throw ArgumentError("Model: it needs an output (a layer's value)");
        FunctionalGraph f;
        std::map<const Node*, int> index;  // layer -> its place; input k -> LayerGeometry::modelInput(k)
        bool named = false;
        for (size_t k = 0; k < inputs.size(); ++k) {
            const SymbolicTensor& in = inputs[k];
            if (!in.isInput())
                throw ArgumentError("Model: input " + std::to_string(k) +
                                    " must be made by gltrain::Input, not be a layer's output (" +
                                    std::string(layerType(*in.node_->layer)) + ")");
            if (!index.emplace(in.node_.get(), graph::LayerGeometry::modelInput(int(k))).second)
                throw ArgumentError("Model: input " + std::to_string(k) + " is given twice");
            f.inputs.push_back(in.inputShape());
            f.inputNames.push_back(in.inputName());
            named = named || !in.inputName().empty();
        }
        if (named)
            for (size_t k = 0; k < f.inputNames.size(); ++k)
                if (f.inputNames[k].empty()) f.inputNames[k] = "input_" + std::to_string(k);
        if (!named) f.inputNames.clear();
        for (size_t k = 0; k < outputs.size(); ++k) {
            if (outputs[k].isInput())
                throw ArgumentError("Model: output " + std::to_string(k) + " is an Input, not a layer's value");
            const int at = visit(outputs[k].node_.get(), index, f.nodes);
            for (int o : f.outputs)
                if (o == at) throw ArgumentError("Model: output " + std::to_string(k) + " is given twice");
            f.outputs.push_back(at);
        }
        // Every input leads to an output (an unread input is a mistake, and would cost a copy of its rows).
        std::vector<bool> read(inputs.size(), false);
        for (const LayerNode& n : f.nodes)
            for (int k : n.inbound)
                if (graph::LayerGeometry::isModelInput(k)) read[size_t(graph::LayerGeometry::inputIndex(k))] = true;
        for (size_t k = 0; k < read.size(); ++k)
            if (!read[k]) throw ArgumentError("Model: input " + std::to_string(k) + " leads to no output");
        return f;
    }

    template <class L>
    friend SymbolicTensor applyLayer(const L& layer, const std::vector<SymbolicTensor>& inputs);
    friend SymbolicTensor Input(Shape3 shape, std::string name);

private:
    struct Node {
        std::optional<Layer> layer;  // none: a model input
        std::vector<SymbolicTensor> inbound;
        Shape3 inputShape;
        std::string inputName;
    };
    explicit SymbolicTensor(std::shared_ptr<const Node> n) : node_(std::move(n)) {}

    // Post-order from the output: a layer after everything it reads.
    static int visit(const Node* n, std::map<const Node*, int>& index, std::vector<LayerNode>& out) {
        if (auto it = index.find(n); it != index.end()) return it->second;
        if (!n->layer)
            throw ArgumentError("Model: a layer reads an Input of shape " + n->inputShape.str() +
                                " that is not one of the model's inputs");
        LayerNode node{*n->layer, {}};
        for (const SymbolicTensor& in : n->inbound) node.inbound.push_back(visit(in.node_.get(), index, out));
        out.push_back(std::move(node));
        return index[n] = int(out.size()) - 1;
    }

    std::shared_ptr<const Node> node_;
};

// A model input of `shape` ([height, width, channels]; [1, 1, n] for flat
// rows), named in summaries and errors (empty: "input", or "input_<k>").
inline SymbolicTensor Input(Shape3 shape, std::string name = "") {
    auto n = std::make_shared<SymbolicTensor::Node>();
    n->inputShape = shape;
    n->inputName = std::move(name);
    return SymbolicTensor(std::move(n));
}
// A model input of flat rows of `size` values.
inline SymbolicTensor Input(int size, std::string name = "") { return Input(Shape3{1, 1, size}, std::move(name)); }

// `layer` applied to `inputs` (one, or a merge layer's several): what a layer's call does (layers/call.hpp).
template <class L>
SymbolicTensor applyLayer(const L& layer, const std::vector<SymbolicTensor>& inputs) {
    if constexpr (isMergeLayer<L>) {
        if (inputs.size() < 2)
            throw ArgumentError(std::string(L::kType) + ": merges two or more values, applied to " +
                                std::to_string(inputs.size()));
    } else if (inputs.size() != 1) {
        throw ArgumentError(std::string(L::kType) + ": takes one value, applied to " + std::to_string(inputs.size()) +
                            " (merge them first, e.g. with Concatenate)");
    }
    auto n = std::make_shared<SymbolicTensor::Node>();
    n->layer = layer;
    n->inbound = inputs;
    return SymbolicTensor(std::move(n));
}

}  // namespace gltrain
