// The JavaScript Sequential model. Its member functions are defined by area:
// building and compiling in sequential.cpp, layers from and to JavaScript in
// layers.cpp, fitting, evaluating and predicting in training.cpp, checkpoints,
// weights and the TF.js format in io.cpp.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "dataset.hpp"
#include "gltrain/sequential.hpp"

namespace gltrain::js {

class SequentialImpl {
public:
    using val = emscripten::val;

    ContextImpl* owner = nullptr;
    std::unique_ptr<Model> model;
    Sequential* sequential = nullptr;  // the model, when it is a Sequential (add() works)
    struct Event {
        bool epoch = false;
        StepInfo s;
        EpochInfo e;
    };
    std::vector<Event> events;

    // The model's GL objects (snapshot readers: pixel-pack buffers and fences) are
    // deleted in its own context, whichever context the page used last.
    ~SequentialImpl() {
        if (owner) owner->makeCurrent();
    }

    // ---- building (sequential.cpp)
    // input: what a model file's "input" holds, a flat size or [height, width, channels].
    static SequentialImpl* create(ContextImpl& c, val input);
    // A model from a model file's {input, layers} (layers may name their "inputs":
    // a functional model), not compiled yet.
    static SequentialImpl* fromConfig(ContextImpl& c, val config);
    void compile(val options);
    // compile()'s options ({loss, optimizer, ...}); `where` names the call in errors.
    static CompileOptions parseCompile(val options, const std::string& where);
    int inputSize() const { return model->inputSize(); }
    int outputSize() const { return model->outputSize(); }
    double step() const { return double(model->step()); }
    bool compiled() const { return model->outputSize() > 0; }
    // After compile: {inputs: [{name, size}], outputs: [{name, size, targetColumns}]}: how fit() of
    // several inputs or outputs packs their rows side by side (graph::ModelIO).
    val io() const;
    // Whether the model is a Sequential (a stack that add() grows), not a functional model.
    bool isSequential() const { return sequential != nullptr; }

    // ---- layers (layers.cpp)
    void add(val spec);
    // The type name add() takes for a layer, for one made elsewhere (an import).
    static std::string layerType(const Layer& l);
    // [{name, type, outputShape, outputSize, params, inbound, trainable}] (after compile: names and shapes as compile set them).
    val layers() const;

    // ---- training (training.cpp)
    void beginFit(DatasetImpl& train, DatasetImpl* validation, val options);
    bool stepOnce();
    int trainFor(double ms, int maxSteps);
    bool fitting() const { return model->fitting(); }
    // After a lost context: rebuilds the model from its snapshot; the step it resumes from.
    double restore();
    void endFit() { model->endFit(); }
    // Freezes or unfreezes a layer (Sequential::setTrainable).
    void setTrainable(std::string layer, bool trainable);
    static val epochObject(const EpochInfo& e);
    // Step and epoch reports since the last call, in order.
    val takeEvents();
    val history() const;
    static int batchOption(val options, const char* where);
    val evaluate(DatasetImpl& data, val options);
    // Where a training step's time goes (Sequential::profileStep): one entry per pass, in order.
    val profileStep(DatasetImpl& data, val options);
    val predictMatrix(const HostMatrix& x, int b);
    val predict(val x, val options);
    val predictDataset(DatasetImpl& data, val options);
    val generate(val prompt, int length, double temperature, int topK, double seed);

    // ---- checkpoints, weights, TF.js (io.cpp)
    // A compiled model from TF.js's Layers format: model.json's text and the
    // bytes of its one weights shard (exportTfjs's two parts), compiled with
    // compile()'s options. A malformed or unsupported file is a FormatError
    // naming the layer or weight; nothing is made then.
    static SequentialImpl* fromTfjs(ContextImpl& c, val modelJson, val weightData, val options);
    val saveCheckpoint();
    // The last snapshot (Sequential::snapshotCheckpoint): needs no GL, so it
    // works while the context is lost or after a restore was refused.
    val snapshotCheckpoint();
    // FitOptions::keepBest's checkpoint (null: none).
    val bestCheckpoint();
    int bestEpoch() const { return model->bestEpoch(); }
    double snapshotStep() const { return double(model->snapshotStep()); }
    // TF.js Layers format in memory: {modelJson, weightData, weightsFile} (the
    // manifest names the one shard weightsFile), for tf.io.fromMemory or a
    // download of the two files that tf.loadLayersModel reads.
    val exportTfjs();
    // options: {resetOptimizer}: load the weights and statistics only, the optimizer
    // starting afresh (step 0, zeroed slots), as for a checkpoint of another optimizer.
    void loadCheckpoint(val bytes, val options);
    val getWeight(std::string layer, std::string which);
    void setWeight(std::string layer, std::string which, val data);
};

}  // namespace gltrain::js
