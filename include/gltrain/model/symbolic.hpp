// The functional API's values (tfjs-layers' SymbolicTensor): a model's input,
// or a layer applied to values. Layers are applied by calling them; a Model
// made from an input and an output is every layer between the two:
//
//   auto x = gltrain::Input({28, 28, 1});
//   auto h = gltrain::Conv2D{.. 8 filters, 3, same ..}(x);
//   auto y = gltrain::Add{}({h, gltrain::Conv2D{..}(h)});      // a residual merge
//   gltrain::Model model(ctx, x, gltrain::Dense{10}(gltrain::Flatten{}(y)));
//
// A value may feed several layers (branches). Each call of a layer value
// makes a new layer: applying `Dense{8}` twice makes two layers with their
// own weights. A shared layer (tfjs-layers' layer object called twice:
// siamese towers, a shared embedding) is a gltrain::Shared, whose calls all
// read and train one set of weights (the gradients of its uses add up):
//
//   gltrain::Shared<gltrain::Dense> tower(gltrain::Dense{8, Activation::Relu});
//   auto a = gltrain::Input(16, "a"), b = gltrain::Input(16, "b");
//   auto d = gltrain::Subtract{}({tower(a), tower(b)});
//
// In the model its first call is the layer ("dense_0": its weights, options,
// trainable flag and checkpoint tensors), each later call a layer of its own
// named "<first>@<k>" (dense_0@1) with no weights of its own (LayerNode::shares).
// A layer with statistics (BatchNormalization) cannot be shared.
// Shapes are inferred and checked by compile(), whose errors name the layer
// and where each input came from.
#pragma once
#include <initializer_list>
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
    // A shared layer's later call: the earlier layer (its first call) whose
    // weights and options it uses; -1: a layer of its own.
    int shares = -1;
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
        Walk walk;  // layer -> its place; input k -> LayerGeometry::modelInput(k)
        std::map<const Node*, int>& index = walk.index;
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
            const int at = visit(outputs[k].node_.get(), walk, f.nodes);
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
    template <class L>
    friend class Shared;
    friend SymbolicTensor Input(Shape3 shape, std::string name);

private:
    struct Node {
        std::optional<Layer> layer;           // none: a model input
        std::shared_ptr<const Layer> shared;  // a Shared's call: the Shared (null: a layer of its own)
        std::vector<SymbolicTensor> inbound;
        Shape3 inputShape;
        std::string inputName;
    };
    explicit SymbolicTensor(std::shared_ptr<const Node> n) : node_(std::move(n)) {}

    // `layer` applied to `inputs`, checked; `shared`: a Shared's call (null: a layer of its own).
    template <class L>
    static SymbolicTensor applied(const L& layer, const std::vector<SymbolicTensor>& inputs,
                                  std::shared_ptr<const Layer> shared) {
        if constexpr (isMergeLayer<L>) {
            if (inputs.size() < 2)
                throw ArgumentError(std::string(L::kType) + ": merges two or more values, applied to " +
                                    std::to_string(inputs.size()));
        } else if (inputs.empty() || (maxLayerInputs<L> == 1 && inputs.size() != 1)) {
            throw ArgumentError(std::string(L::kType) + ": takes one value, applied to " +
                                std::to_string(inputs.size()) + " (merge them first, e.g. with Concatenate)");
        } else if (inputs.size() > size_t(maxLayerInputs<L>)) {
            throw ArgumentError(std::string(L::kType) + ": takes at most " + std::to_string(maxLayerInputs<L>) +
                                " values, applied to " + std::to_string(inputs.size()));
        }
        auto n = std::make_shared<Node>();
        n->layer = layer;
        n->shared = std::move(shared);
        n->inbound = inputs;
        return SymbolicTensor(std::move(n));
    }

    // What a walk from the outputs has placed: each value's layer, and each Shared's first call.
    struct Walk {
        std::map<const Node*, int> index;
        std::map<const Layer*, int> firstCall;
    };
    // Post-order from the output: a layer after everything it reads (a
    // Shared's first call placed is its layer; the later ones share it).
    static int visit(const Node* n, Walk& walk, std::vector<LayerNode>& out) {
        if (auto it = walk.index.find(n); it != walk.index.end()) return it->second;
        if (!n->layer)
            throw ArgumentError("Model: a layer reads an Input of shape " + n->inputShape.str() +
                                " that is not one of the model's inputs");
        LayerNode node{*n->layer, {}};
        for (const SymbolicTensor& in : n->inbound) node.inbound.push_back(visit(in.node_.get(), walk, out));
        const int at = int(out.size());
        if (n->shared) {
            const auto first = walk.firstCall.emplace(n->shared.get(), at).first;
            if (first->second != at) node.shares = first->second;
        }
        out.push_back(std::move(node));
        return walk.index[n] = at;
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
    return SymbolicTensor::applied(layer, inputs, nullptr);
}

// One layer applied several times with one set of weights (see the comment
// at the top of this header): copies of a Shared are the same layer.
template <class L>
class Shared {
public:
    // The layer to share.
    explicit Shared(L layer) : layer_(std::make_shared<const Layer>(std::move(layer))) {}
    // The layer applied to one value.
    SymbolicTensor operator()(const SymbolicTensor& x) const { return (*this)(std::vector<SymbolicTensor>{x}); }
    // The layer applied to a merge layer's several values.
    SymbolicTensor operator()(std::initializer_list<SymbolicTensor> xs) const {
        return (*this)(std::vector<SymbolicTensor>(xs));
    }
    // The layer applied to a merge layer's several values.
    SymbolicTensor operator()(const std::vector<SymbolicTensor>& xs) const {
        return SymbolicTensor::applied(std::get<L>(*layer_), xs, layer_);
    }

private:
    std::shared_ptr<const Layer> layer_;
};

}  // namespace gltrain
