// A layered model as a graph, the one both engines run: its layers' nodes
// (each layer's addNodes, gltrain/layers/), the loss and, for training,
// autodiff's backward pass — the training graph and the inference graph.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "gltrain/graph/autodiff.hpp"
#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers.hpp"
#include "gltrain/ops/loss.hpp"

namespace gltrain::graph {

// A variable as checkpoints save it (TensorFlow's shape); the graph stores it
// as a matrix: a vector as one row, a filter (kh, kw, C, F) as (kh*kw*C) x F.
struct VariableDecl {
    std::string name;  // "kernel", "moving_mean", ...
    std::vector<int64_t> savedShape;
    bool trainable = true;  // a parameter; false: a statistic
};
inline Shape storedShape(const std::vector<int64_t>& saved) {
    if (saved.size() <= 2) return Shape(saved);
    int64_t rows = 1;
    for (size_t k = 0; k + 1 < saved.size(); ++k) rows *= saved[k];
    return Shape{rows, saved.back()};
}

struct ModelLayer {
    const Layer* spec = nullptr;
    LayerGeometry geometry;
    std::vector<VariableDecl> variables;
};

struct ModelGraphOptions {
    Shape3 input;
    bool softmaxCrossEntropy = true;  // labels [B, 1]; otherwise `pointwise` against values shaped like the logits
    PointwiseLoss pointwise = PointwiseLoss::MeanSquaredError;
    uint32_t seed = 1;  // dropout's masks
    bool training = false;
    bool lossScaling = false;  // training: the seed is an input (the scale) instead of the constant 1
};

struct ModelGraph {
    Graph g;
    ValueId x = kNoValue, y = kNoValue;            // the batch's rows and targets
    ValueId logits = kNoValue, output = kNoValue;  // output: after a final Softmax
    ValueId lossRows = kNoValue, lossMean = kNoValue, seed = kNoValue;
    ValueId correctSoFar = kNoValue, correct = kNoValue;  // softmax cross-entropy's running count
    std::map<std::string, ValueId> variables;             // "<layer>/<variable>"
    std::vector<BatchStatistic> statistics;               // training: batch normalization's
    std::map<ValueId, ValueId> grads;                     // training: trainable parameter -> its gradient
};

inline ModelGraph buildModelGraph(const std::vector<ModelLayer>& layers, const ModelGraphOptions& o) {
    ModelGraph m;
    Graph& g = m.g;
    m.x = g.input("x", flatOrImage(o.input));
    for (const ModelLayer& L : layers)
        for (const VariableDecl& v : L.variables) {
            const std::string key = L.geometry.name + "/" + v.name;
            m.variables[key] = g.parameter(key, storedShape(v.savedShape), v.trainable);
        }
    // Each layer's output; a layer reads those of its inbound layers (a
    // stack: the one before it), so a value may feed several layers.
    std::vector<ValueId> outputs;
    ValueId logits = kNoValue;
    for (const ModelLayer& L : layers) {
        std::vector<ValueId> in;
        if (L.geometry.inbound.empty()) in.push_back(outputs.empty() ? m.x : outputs.back());
        for (int k : L.geometry.inbound) in.push_back(k == LayerGeometry::kModelInput ? m.x : outputs.at(size_t(k)));
        LayerBuild b{g,
                     L.geometry,
                     o.training,
                     o.seed,
                     [&](const char* n) { return m.variables.at(L.geometry.name + "/" + n); },
                     &m.statistics};
        outputs.push_back(std::visit(
            [&](const auto& layer) {
                if constexpr (isMergeLayer<std::decay_t<decltype(layer)>>) return layer.addNodes(b, in);
                else return layer.addNodes(b, in.at(0));
            },
            *L.spec));
        logits = b.logits;  // a Softmax's logits are the loss's only when it is the last layer
    }
    // The last layer is the model's output.
    const ValueId cur = outputs.empty() ? m.x : outputs.back();
    m.output = cur;
    // The loss reads the logits (before a final Softmax) as rows.
    m.logits = logits == kNoValue ? cur : logits;
    if (g.shape(m.logits).rank() != 2)
        m.logits = g.add1(Reshape{Shape::batched({g.shape(m.logits).cols()})}, {m.logits}, "loss");
    m.y = g.input("y", o.softmaxCrossEntropy ? Shape{kBatch, 1} : g.shape(m.logits));
    std::vector<ValueId> loss;
    if (o.softmaxCrossEntropy) {
        loss = g.add(SoftmaxCrossEntropy{}, {m.logits, m.y}, "loss");
        m.correctSoFar = g.input("correct_so_far", Shape{1});
        m.correct = g.add1(CorrectCount{}, {m.logits, m.y, m.correctSoFar}, "accuracy");
    } else {
        loss = g.add(PointwiseLossOp{o.pointwise}, {m.logits, m.y}, "loss");
    }
    m.lossRows = loss[0];
    m.lossMean = loss[1];
    if (!o.training) return m;
    // The loss's gradient is 1, or dynamic loss scaling's scale.
    m.seed = o.lossScaling ? g.input("loss_scale", Shape{1}) : g.constant("one", Shape{1}, 1.0f);
    const std::map<ValueId, ValueId> all = backward(g, {{m.lossMean, m.seed}});
    for (auto& [name, v] : m.variables)
        if (g.value(v).requiresGrad) m.grads[v] = all.at(v);
    return m;
}

}  // namespace gltrain::graph
