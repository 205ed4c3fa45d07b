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

// A value of a functional model being built: its input, or a layer's output.
class SymbolicTensor {
public:
    // Whether this is a model input (gltrain::Input) rather than a layer's output.
    bool isInput() const { return !node_->layer; }
    // The input's shape (for a model input).
    Shape3 inputShape() const { return node_->inputShape; }

    // The model input `input` and the layers that lead from it to `output`,
    // in an order where each layer comes after those it reads; the output last.
    static std::vector<LayerNode> layersBetween(const SymbolicTensor& input, const SymbolicTensor& output) {
        if (!input.isInput())
            throw ArgumentError("Model: its input must be made by gltrain::Input, not be a layer's output (" +
                                std::string(layerType(*input.node_->layer)) + ")");
        if (output.isInput()) throw ArgumentError("Model: its output is an Input: the model has no layers");
        std::map<const Node*, int> index;  // layer -> its place; the model input -> kModelInput
        index[input.node_.get()] = graph::LayerGeometry::kModelInput;
        std::vector<LayerNode> out;
        visit(output.node_.get(), index, out);
        return out;
    }

    template <class L>
    friend SymbolicTensor applyLayer(const L& layer, const std::vector<SymbolicTensor>& inputs);
    friend SymbolicTensor Input(Shape3 shape);

private:
    struct Node {
        std::optional<Layer> layer;  // none: a model input
        std::vector<SymbolicTensor> inbound;
        Shape3 inputShape;
    };
    explicit SymbolicTensor(std::shared_ptr<const Node> n) : node_(std::move(n)) {}

    // Post-order from the output: a layer after everything it reads.
    static int visit(const Node* n, std::map<const Node*, int>& index, std::vector<LayerNode>& out) {
        if (auto it = index.find(n); it != index.end()) return it->second;
        if (!n->layer)
            throw ArgumentError("Model: a layer reads an Input of shape " + n->inputShape.str() +
                                " that is not the model's input");
        LayerNode node{*n->layer, {}};
        for (const SymbolicTensor& in : n->inbound) node.inbound.push_back(visit(in.node_.get(), index, out));
        out.push_back(std::move(node));
        return index[n] = int(out.size()) - 1;
    }

    std::shared_ptr<const Node> node_;
};

// A model input of `shape` ([height, width, channels]; [1, 1, n] for flat rows).
inline SymbolicTensor Input(Shape3 shape) {
    auto n = std::make_shared<SymbolicTensor::Node>();
    n->inputShape = shape;
    return SymbolicTensor(std::move(n));
}
// A model input of flat rows of `size` values.
inline SymbolicTensor Input(int size) { return Input(Shape3{1, 1, size}); }

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
