// A layered model as a graph, the one both engines run: its layers' nodes
// (each layer's addNodes, gltrain/layers/), the loss and, for training,
// autodiff's backward pass — the training graph and the inference graph.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "gltrain/graph/autodiff.hpp"
#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/loss_graph.hpp"
#include "gltrain/layers.hpp"
#include "gltrain/metric_spec.hpp"
#include "gltrain/ops/loss.hpp"

namespace gltrain::graph {

// A variable as checkpoints save it (TensorFlow's shape) and as the graph
// stores it (LayerVariable::stored): a matrix, a filter (kh, kw, C, F) as
// (kh*kw*C) x F, or a vector, stored as one row.
struct VariableDecl {
    std::string name;  // "kernel", "moving_mean", ...
    std::vector<int64_t> savedShape;
    bool trainable = true;  // a parameter; false: a statistic
    Shape stored;           // its shape in the graph
};

struct ModelLayer {
    const Layer* spec = nullptr;
    LayerGeometry geometry;
    std::vector<VariableDecl> variables;
};

// One output of a model and the loss that compares it with its targets.
struct ModelOutput {
    int layer = -1;       // the layer whose output it is (-1: the last)
    int width = 0;        // values per row (its layer's output size)
    LossSpec loss{};      // labels [B, 1] (loss.labels()); otherwise values shaped like the output
    float weight = 1.0f;  // its share of the loss training minimizes (several outputs)
    int steps = 1;        // a sequence output's steps [1, steps, classes]: the sequence loss's targets per row
    // Columns of its targets in a row: 1 (a class label), a class per step, or the output's values.
    int targetCols() const { return loss.kind == LossKind::SequenceCrossEntropy ? steps : loss.labels() ? 1 : width; }
};

// A metric of one output (CompileOptions::metrics), resolved for it
// (metric_spec.hpp's resolveMetric), and the name history gives it.
struct ModelMetric {
    int output = 0;
    MetricSpec spec{};
    std::string name;
    // Its sums per row.
    int sums() const { return metricSumsPerRow(spec); }
};

// What a model reads and what its loss compares. With one input and one
// output the batch's rows are that input and the targets that output's; with
// several, each row holds the inputs side by side (in order, each flattened)
// and each target row the outputs' targets side by side (a class label is
// one column), so the engines move one matrix of rows each way as for one
// input, and the graph cuts the columns apart (Slice).
struct ModelIO {
    std::vector<Shape3> inputs;
    std::vector<ModelOutput> outputs;
    // The metrics reported each epoch and by evaluate, each a running sum in the graph.
    std::vector<ModelMetric> metrics;
    // Several inputs or outputs: rows and targets are packed.
    bool packed() const { return inputs.size() > 1 || outputs.size() > 1; }
    // Values per row of x.
    int inputSize() const {
        int n = 0;
        for (const Shape3& s : inputs) n += s.size();
        return n;
    }
    // Values per row of the predictions (the outputs side by side).
    int outputSize() const {
        int n = 0;
        for (const ModelOutput& o : outputs) n += o.width;
        return n;
    }
    // Columns of a target row.
    int targetCols() const {
        int n = 0;
        for (const ModelOutput& o : outputs) n += o.targetCols();
        return n;
    }
    // Whether targets are class labels, one per row (one output with softmax cross-entropy).
    bool labels() const { return !packed() && outputs.at(0).loss.labels(); }
    // The output whose accuracy the model reports (the first with softmax cross-entropy; -1: none).
    int accuracyOutput() const {
        for (size_t k = 0; k < outputs.size(); ++k)
            if (outputs[k].loss.labels()) return int(k);
        return -1;
    }
};

// What the rows counted since the epoch started add up to: correct
// predictions, and each metric's sums (graph::ModelIO::metrics, side by side).
struct EpochSums {
    double correct = 0;
    std::vector<double> metrics;
    long rows = 0;

    // Zero sums for io's metrics.
    static EpochSums of(const graph::ModelIO& io) {
        EpochSums s;
        size_t n = 0;
        for (const graph::ModelMetric& m : io.metrics) n += size_t(m.sums());
        s.metrics.assign(n, 0.0);
        return s;
    }
};
// io's metrics from their sums over `rows` rows, by name, into `out` — but a
// metric named "accuracy" (one output's, asked for) into `accuracy`, where
// softmax cross-entropy's goes.
inline void metricFigures(const ModelIO& io, const std::vector<double>& sums, long rows,
                          std::map<std::string, float>& out, float& accuracy) {
    size_t at = 0;
    for (const ModelMetric& m : io.metrics) {
        const float v = float(metricValue(m.spec, sums.data() + at, rows));
        (m.name == "accuracy" ? accuracy : out[m.name]) = v;
        at += size_t(m.sums());
    }
}

struct ModelGraphOptions {
    ModelIO io;
    uint32_t seed = 1;  // dropout's masks
    bool training = false;
    bool lossScaling = false;  // training: the seed is an input (the scale) instead of the constant 1
};

struct ModelGraph {
    Graph g;
    ValueId x = kNoValue, y = kNoValue;  // the batch's rows and targets (packed, with several inputs or outputs)
    ValueId logits = kNoValue;           // the first output's loss input (before a final Softmax)
    ValueId output = kNoValue;           // after a final Softmax; several outputs: side by side, flat
    ValueId lossRows = kNoValue, lossMean = kNoValue, seed = kNoValue;  // several outputs: the weighted sums
    ValueId correctSoFar = kNoValue, correct = kNoValue;  // softmax cross-entropy's running count (accuracyOutput's)
    // Each metric's (ModelIO::metrics) running sums [K]: an input (the sums so far) and the sums after this batch.
    std::vector<ValueId> metricSoFar, metricSums;
    std::map<std::string, ValueId> variables;  // "<layer>/<variable>"
    std::vector<BatchStatistic> statistics;    // training: batch normalization's
    std::map<ValueId, ValueId> grads;          // training: trainable parameter -> its gradient
    bool packed = false;                       // several inputs or outputs (ModelIO::packed)
};

namespace model_graph_detail {
// Columns [start, start + length) of a packed [B, n] value (the whole of it: no node).
inline ValueId columns(Graph& g, ValueId v, int start, int length, const char* what) {
    if (start == 0 && length == g.shape(v).cols()) return v;
    return g.add1(Slice{1, start, length}, {v}, what);
}
// A value as rows [B, n] (free: rows are stored flat).
inline ValueId rows(Graph& g, ValueId v, const std::string& where) {
    const Shape& s = g.shape(v);
    return s.rank() == 2 ? v : g.add1(Reshape{Shape::batched({s.cols()})}, {v}, where);
}
}  // namespace model_graph_detail

inline ModelGraph buildModelGraph(const std::vector<ModelLayer>& layers, const ModelGraphOptions& o) {
    using namespace model_graph_detail;
    const ModelIO& io = o.io;
    if (io.inputs.empty() || io.outputs.empty()) throw Error("buildModelGraph: a model needs an input and an output");
    ModelGraph m;
    Graph& g = m.g;
    m.packed = io.packed();
    // The inputs: x itself, or its columns cut apart.
    std::vector<ValueId> inputs;
    if (io.inputs.size() == 1) {
        m.x = g.input("x", flatOrImage(io.inputs[0]));
        inputs.push_back(m.x);
    } else {
        m.x = g.input("x", Shape::batched({io.inputSize()}));
        int at = 0;
        for (size_t k = 0; k < io.inputs.size(); ++k) {
            const std::string name = "input_" + std::to_string(k);
            ValueId v = columns(g, m.x, at, io.inputs[k].size(), name.c_str());
            if (g.shape(v) != flatOrImage(io.inputs[k])) v = g.add1(Reshape{flatOrImage(io.inputs[k])}, {v}, name);
            inputs.push_back(v);
            at += io.inputs[k].size();
        }
    }
    for (const ModelLayer& L : layers)
        for (const VariableDecl& v : L.variables) {
            const std::string key = L.geometry.name + "/" + v.name;
            m.variables[key] = g.parameter(key, v.stored, v.trainable);
        }
    // Each layer's output; a layer reads those of its inbound layers (a
    // stack: the one before it), so a value may feed several layers.
    std::vector<ValueId> outputs, logitsOf;
    for (const ModelLayer& L : layers) {
        std::vector<ValueId> in;
        if (L.geometry.inbound.empty()) in.push_back(outputs.empty() ? inputs[0] : outputs.back());
        for (int k : L.geometry.inbound)
            in.push_back(LayerGeometry::isModelInput(k) ? inputs.at(size_t(LayerGeometry::inputIndex(k)))
                                                        : outputs.at(size_t(k)));
        LayerBuild b{g,
                     L.geometry,
                     o.training,
                     o.seed,
                     [&](const char* n) { return m.variables.at(L.geometry.variablesOf() + "/" + n); },
                     &m.statistics};
        outputs.push_back(std::visit(
            [&](const auto& layer) {
                if constexpr (maxLayerInputs < std::decay_t < decltype(layer) >>> 1) return layer.addNodes(b, in);
                else return layer.addNodes(b, in.at(0));
            },
            *L.spec));
        logitsOf.push_back(b.logits);  // a final Softmax's logits: what its output's loss reads
    }
    // Each output's loss reads its logits (before a final Softmax) as rows,
    // against its columns of y.
    m.y = g.input("y", io.labels() ? Shape{kBatch, 1}
                       : m.packed  ? Shape::batched({io.targetCols()})
                                   : Shape::batched({io.outputs[0].targetCols()}));
    std::vector<ValueId> predictions, targets;
    ValueId lossRows = kNoValue, lossMean = kNoValue;
    int targetAt = 0;
    for (size_t k = 0; k < io.outputs.size(); ++k) {
        const ModelOutput& out = io.outputs[k];
        const size_t layer = out.layer < 0 ? layers.size() - 1 : size_t(out.layer);
        const ValueId value = layers.empty() ? inputs[0] : outputs.at(layer);
        predictions.push_back(value);
        const ValueId logits = rows(g, layers.empty() || logitsOf[layer] == kNoValue ? value : logitsOf[layer], "loss");
        if (k == 0) m.logits = logits;
        const std::string name = io.outputs.size() == 1 ? "loss" : "loss_" + std::to_string(k);
        const ValueId y = columns(g, m.y, targetAt, out.targetCols(), name.c_str());
        targetAt += out.targetCols();
        targets.push_back(y);
        // The loss reads the logits or (losses on probabilities, custom ones) the output.
        const ValueId prediction = out.loss.readsLogits() ? logits : rows(g, value, name);
        if (!out.loss.labels() && out.loss.kind != LossKind::SequenceCrossEntropy && g.shape(y) != g.shape(prediction))
            throw ShapeError("output " + std::to_string(k) + " is " + g.shape(prediction).str() +
                             " but its targets are " + g.shape(y).str());
        const LossNodes nodes = addLoss(g, out.loss, prediction, y, name);
        std::vector<ValueId> loss{nodes.rows, nodes.mean};
        if (int(k) == io.accuracyOutput()) {
            m.correctSoFar = g.input("correct_so_far", Shape{1});
            m.correct = g.add1(CorrectCount{}, {logits, y, m.correctSoFar}, "accuracy");
        }
        if (io.outputs.size() > 1 && out.weight != 1.0f)
            for (ValueId& v : loss) v = g.add1(Scale{out.weight}, {v}, name);
        lossRows = lossRows == kNoValue ? loss[0] : g.add1(Add{}, {lossRows, loss[0]}, "loss");
        lossMean = lossMean == kNoValue ? loss[1] : g.add1(Add{}, {lossMean, loss[1]}, "loss");
    }
    m.lossRows = lossRows;
    m.lossMean = lossMean;
    // The metrics: each row's statistics (or a loss's rows), summed into the batches' running sums.
    for (size_t k = 0; k < io.metrics.size(); ++k) {
        const ModelMetric& mm = io.metrics[k];
        const std::string name = "metric_" + mm.name;
        const size_t out = size_t(mm.output);
        const size_t layer = io.outputs[out].layer < 0 ? layers.size() - 1 : size_t(io.outputs[out].layer);
        const ValueId value = rows(g, predictions[out], name);
        ValueId statistics;
        if (mm.spec.kind == MetricKind::Loss) {
            // Cross-entropies on logits read those before a final Softmax; the others the output (mse
            // too, unlike the loss, as Keras's metric on the model's predictions).
            const bool logits = mm.spec.loss.readsLogits() && mm.spec.loss.kind != LossKind::MeanSquaredError &&
                                !layers.empty() && logitsOf[layer] != kNoValue;
            statistics =
                addLoss(g, mm.spec.loss, logits ? rows(g, logitsOf[layer], name) : value, targets[out], name).rows;
            if (mm.spec.steps > 0) {
                // Per token: (the row's mean times its counted steps, those steps), the steps
                // counted as accuracy per token counts them.
                const ValueId counted =
                    columns(g,
                            g.add1(MetricRows{MetricKind::SparseCategoricalAccuracy, 0.5f, 200, mm.spec.steps},
                                   {value, targets[out]}, name),
                            1, 1, name.c_str());
                statistics = g.add1(Concat{1}, {g.add1(Mul{}, {statistics, counted}, name), counted}, name);
            }
        } else {
            statistics = g.add1(MetricRows{mm.spec.kind, mm.spec.threshold, mm.spec.thresholds, mm.spec.steps},
                                {value, targets[out]}, name);
        }
        m.metricSoFar.push_back(g.input(name + "_so_far", Shape{mm.sums()}));
        m.metricSums.push_back(g.add1(RunningSum{}, {statistics, m.metricSoFar.back()}, name));
    }
    // The predictions: the output, or the outputs side by side as rows.
    m.output = predictions[0];
    for (size_t k = 1; k < predictions.size(); ++k) {
        if (k == 1) m.output = rows(g, m.output, "output");
        m.output = g.add1(Concat{1}, {m.output, rows(g, predictions[k], "output")}, "output");
    }
    if (!o.training) return m;
    // The loss's gradient is 1, or dynamic loss scaling's scale.
    m.seed = o.lossScaling ? g.input("loss_scale", Shape{1}) : g.constant("one", Shape{1}, 1.0f);
    const std::map<ValueId, ValueId> all = backward(g, {{m.lossMean, m.seed}});
    for (auto& [name, v] : m.variables)
        if (g.value(v).requiresGrad) m.grads[v] = all.at(v);
    return m;
}

}  // namespace gltrain::graph
