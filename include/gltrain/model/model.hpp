// Model: a compiled network of layers and what users do with it — fit,
// evaluate, predict, read and write weights, save and load checkpoints,
// survive a lost GL context — written once over an engine (engine/engine.hpp):
// the GPU engine, or the CPU engine where the context's backend is the CPU.
// Sequential (sequential.hpp) builds one from a stack of layers.
//
// How a fit runs: beginFit() checks every argument and hands the data to the
// engine; stepOnce() runs one step of the fit loop (model/fit_loop.hpp);
// fit() runs them all. The model owns the global step, the history and the
// checkpoint format (model/variables.hpp, model/checkpoint.hpp); the engine
// owns the numbers.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/engine/cpu_engine.hpp"
#include "gltrain/engine/gpu_engine.hpp"
#include "gltrain/file_io.hpp"
#include "gltrain/model/checkpoint.hpp"
#include "gltrain/model/data_checks.hpp"
#include "gltrain/model/fit_loop.hpp"
#include "gltrain/model/generate.hpp"
#include "gltrain/model/symbolic.hpp"

namespace gltrain {

// A compiled network and what users do with it; see the comment at the top of this header. Built by Sequential.
class Model {
public:
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;
    virtual ~Model() = default;

    // Values per input row (several inputs: all of them, side by side).
    int inputSize() const { return inputSize_; }
    // The (first) input's [height, width, channels] ([1, 1, n] for flat inputs).
    Shape3 inputShape() const { return inputShapes_[0]; }
    // Every input's shape, in order.
    const std::vector<Shape3>& inputShapes() const { return inputShapes_; }
    // The layers whose outputs are the model's, in order.
    std::vector<size_t> outputLayers() const {
        if (outputs_.empty()) return {nodes_.empty() ? 0 : nodes_.size() - 1};
        return std::vector<size_t>(outputs_.begin(), outputs_.end());
    }
    // A layer's output shape ([1, 1, n] for flat ones); after compile.
    Shape3 outputShape(size_t layer) const { return layers_.at(layer).geometry.out; }
    // The shape layer i reads (a merge layer's first input); after compile.
    Shape3 layerInputShape(size_t layer) const { return layers_.at(layer).geometry.in; }
    // Values per output row (several outputs: all of them, side by side); after compile.
    int outputSize() const { return outputSize_; }
    // What the model reads and what its losses compare (graph/model_graph.hpp); after compile.
    const graph::ModelIO& io() const { return io_; }
    // The global step: training steps taken (and restored from checkpoints).
    long step() const { return step_; }
    // The options compile() was given.
    const CompileOptions& options() const { return options_; }
    // Layer i's name (e.g. "dense_0"), as checkpoints name its variables.
    const std::string& layerName(size_t i) const { return layers_.at(i).geometry.name; }
    // How summaries and model files name inbound index k: a layer, or a model input.
    std::string inboundName(int k) const {
        if (!graph::LayerGeometry::isModelInput(k)) return layerName(size_t(k));
        const size_t i = size_t(graph::LayerGeometry::inputIndex(k));
        if (!inputNames_.empty()) return inputNames_.at(i);
        return inputShapes_.size() == 1 ? "input" : "input_" + std::to_string(i);
    }
    // Whether compile() has run.
    bool compiled() const { return bool(engine_); }
    // How many layers the model has.
    size_t layerCount() const { return nodes_.size(); }
    // Layer i as it was given (kind and options; its name is layerName(i) after compile).
    const Layer& layer(size_t i) const { return nodes_.at(i).spec; }
    // The layers layer i reads (negative: a model input, LayerGeometry::modelInput(k)); after compile.
    const std::vector<int>& inbound(size_t i) const { return layers_.at(i).geometry.inbound; }
    // The layer whose weights layer i uses: a shared layer's first call (-1: its own weights).
    int shares(size_t i) const { return nodes_.at(i).shares; }
    // Whether the model is a Sequential's stack: one input, each layer reading
    // only the one before it (the first the input), the last layer the one
    // output, no layer shared. Summaries and exports write a stack without wiring.
    bool isStack() const {
        if (inputShapes_.size() != 1 || outputLayers() != std::vector<size_t>{nodes_.empty() ? 0 : nodes_.size() - 1})
            return false;
        for (size_t i = 0; i < nodes_.size(); ++i)
            if ((!nodes_[i].inbound.empty() && nodes_[i].inbound != std::vector<int>{int(i) - 1}) ||
                nodes_[i].shares >= 0)
                return false;
        return true;
    }

    // Infers and checks every shape, then creates and initialises the
    // parameters and optimizer state. Errors name the layer, what it
    // received and from where — all before the engine allocates anything.
    void compile(const CompileOptions& options = {}) {
        if (nodes_.empty()) throw ArgumentError("compile: the model has no layers");
        checkCompileOptions(options);
        checkOutputLosses(options);
        std::vector<CompiledLayer> layers;
        std::vector<bool> read(nodes_.size(), false);
        for (size_t i = 0; i < nodes_.size(); ++i) {
            CompiledLayer L = inferLayer(i, layers, options);
            if (nodes_[i].shares >= 0) checkSharedCall(L, layers[size_t(nodes_[i].shares)]);
            for (auto& other : layers)
                if (other.geometry.name == L.geometry.name)
                    throw ArgumentError("compile: two layers are named '" + L.geometry.name + "'");
            for (int k : L.geometry.inbound)
                if (k >= 0) read[size_t(k)] = true;
            layers.push_back(std::move(L));
        }
        // Every layer leads to an output.
        std::string outputs;
        for (size_t o : outputLayers()) {
            read[o] = true;
            outputs += (outputs.empty() ? "" : ", ") + layers[o].geometry.name;
        }
        for (size_t i = 0; i < nodes_.size(); ++i)
            if (!read[i])
                throw ArgumentError("compile: layer " + layers[i].geometry.name +
                                    "'s output is used by no layer and is not a model output (" + outputs + ")");
        compileLayers(std::move(layers), options);
    }

    // Freezes (false) or unfreezes a layer, by name ("dense_0" before compile
    // too). A compiled model recompiles at once, keeping its weights,
    // statistics, step and the optimizer state of what trains on; a layer it
    // unfreezes starts its optimizer state at zero.
    Model& setTrainable(const std::string& layer, bool trainable) {
        if (fitting())
            throw ArgumentError("setTrainable: a fit is in progress (let it finish, or call endFit() first)");
        size_t at = indexOf(layer, "setTrainable");
        if (nodes_[at].shares >= 0) at = size_t(nodes_[at].shares);  // a shared layer: every call of it
        if (layerTrainable(nodes_[at].spec) == trainable) return *this;
        auto set = [&] {
            for (size_t i = 0; i < nodes_.size(); ++i)
                if (i == at || nodes_[i].shares == int(at))
                    std::visit([&](auto& l) { l.trainable = trainable; }, nodes_[i].spec);
        };
        if (!compiled()) {
            set();
            return *this;
        }
        const State kept = state();
        set();
        compile(options());
        restoreState(kept);
        return *this;
    }

    // One layer as a summary lists it.
    struct LayerSummary {
        // Its name and type ("dense_0", "dense").
        std::string name, type;
        // Its output shape ([1, 1, n] for flat ones).
        Shape3 output;
        // Its parameters' values (a frozen layer's too; not batch normalization's statistics).
        int64_t parameters = 0;
        // The layers it reads ("input": the model's input; "input_1": its second of several).
        std::vector<std::string> inbound;
        // false: frozen.
        bool trainable = true;
        // A shared layer's later call: the layer whose weights it uses (its parameters are counted there).
        std::string shares;
    };
    // Every layer, in order: name, type, output shape, parameters, inbound layers; after compile.
    std::vector<LayerSummary> summary() const {
        if (!compiled()) throw ArgumentError("summary: the model is not compiled (call compile first)");
        std::vector<LayerSummary> out;
        for (const CompiledLayer& L : layers_) {
            LayerSummary s;
            s.name = L.geometry.name;
            s.type = layerType(*L.spec);
            s.output = L.geometry.out;
            s.trainable = layerTrainable(*L.spec);
            s.shares = L.geometry.weightsOf;
            s.parameters = s.shares.empty() ? parameterCount(*L.spec, L.geometry.in) : 0;
            for (int k : L.geometry.inbound) s.inbound.push_back(inboundName(k));
            out.push_back(std::move(s));
        }
        return out;
    }

    // ---- training -------------------------------------------------------

    // Trains on rows x (labels or targets y) as `o` says, calling `cb`; returns one EpochInfo per epoch. Checks
    // every argument first.
    std::vector<EpochInfo> fit(const HostMatrix& x, const Targets& y, const FitOptions& o = {}, Callbacks cb = {}) {
        beginFit(x, y, o, std::move(cb));
        while (stepOnce()) {
        }
        return history();
    }

    // ---- several inputs or outputs ----------------------------------------

    // Each input's rows, in the model's input order.
    using InputRows = std::vector<std::reference_wrapper<const HostMatrix>>;

    // Trains a model of several inputs or outputs: each input's rows and each
    // output's targets (class labels or values, as its loss needs), in the
    // model's orders; checked whole first. The rows are copied side by side (io()).
    std::vector<EpochInfo> fit(const InputRows& xs, const std::vector<Targets>& ys, const FitOptions& o = {},
                               Callbacks cb = {}) {
        beginFit(xs, ys, o, std::move(cb));
        while (stepOnce()) {
        }
        return history();
    }
    // fit()'s non-blocking form for several inputs or outputs (see beginFit below).
    void beginFit(const InputRows& xs, const std::vector<Targets>& ys, const FitOptions& o, Callbacks cb = {}) {
        requireCompiled("fit");
        HostMatrix x = packInputs("fit", xs);
        Targets y = packTargets("fit", ys, x.rows);
        endFit();  // a running fit reads the rows packed before
        packedX_ = std::move(x);
        beginFit(packedX_, y, o, std::move(cb));
    }
    // Loss (the weighted sum of the outputs') and accuracy (the first softmax
    // cross-entropy output's) of a model of several inputs or outputs.
    Evaluation evaluate(const InputRows& xs, const std::vector<Targets>& ys, int batchSize = 256) {
        requireCompiled("evaluate");
        const HostMatrix x = packInputs("evaluate", xs);
        return evaluate(x, packTargets("evaluate", ys, x.rows), batchSize);
    }
    // Each output's predictions (rows x that output's size), for a model of several inputs or outputs.
    std::vector<HostMatrix> predict(const InputRows& xs, int batchSize = 256) {
        requireCompiled("predict");
        const HostMatrix all = predict(packInputs("predict", xs), batchSize);
        std::vector<HostMatrix> out;
        int at = 0;
        for (const graph::ModelOutput& o : io_.outputs) {
            HostMatrix m(all.rows, o.width);
            for (int r = 0; r < all.rows; ++r)
                std::copy_n(all.data.begin() + std::ptrdiff_t(size_t(r) * size_t(all.cols) + size_t(at)), o.width,
                            m.data.begin() + std::ptrdiff_t(size_t(r) * size_t(o.width)));
            at += o.width;
            out.push_back(std::move(m));
        }
        return out;
    }

    // The non-blocking form: beginFit() uploads and plans; stepOnce() runs one
    // step (false when fit is done); trainFor(ms) runs steps for about ms.
    // x (and FitOptions' validation data) must stay alive until the fit ends:
    // after a lost context they are uploaded again.
    void beginFit(const HostMatrix& x, const Targets& y, const FitOptions& o, Callbacks cb = {}) {
        requireCompiled("fit");
        if (o.epochs <= 0) throw ArgumentError("fit: epochs must be positive, got " + std::to_string(o.epochs));
        if (o.steps < 0)
            throw ArgumentError("fit: steps must be >= 0 (0: as many as the epochs take), got " +
                                std::to_string(o.steps));
        if (o.batchSize <= 0)
            throw ArgumentError("fit: batchSize must be positive, got " + std::to_string(o.batchSize));
        if (o.lossEvery < 0) throw ArgumentError("fit: lossEvery must be >= 0");
        if (o.snapshotEvery < 0)
            throw ArgumentError("fit: snapshotEvery must be >= 0 (0: snapshots only at the fit's start and end), got " +
                                std::to_string(o.snapshotEvery));
        if (!(o.validationSplit >= 0.0f && o.validationSplit < 1.0f))
            throw ArgumentError("fit: validationSplit must be in [0, 1), got " + std::to_string(o.validationSplit));
        checkData("fit", x, y);
        if (bool(o.validationX) != bool(o.validationY))
            throw ArgumentError(std::string("fit: ") + (o.validationX ? "validationX is given without validationY"
                                                                      : "validationY is given without validationX"));
        if (o.validationX && o.validationSplit > 0.0f)
            throw ArgumentError("fit: give validationSplit or validationX/validationY, not both");
        if (o.validationX) checkData("fit (validation data)", *o.validationX, *o.validationY);
        int n = x.rows, nVal = 0;
        if (o.validationSplit > 0.0f) {
            nVal = n - trainingRows(n, o);
            if (nVal <= 0 || nVal >= n)
                throw ArgumentError("fit: validationSplit leaves no training or validation rows");
            n -= nVal;
        }
        const FitOptions watched = checkEpochCallbacks(o, nVal > 0 || o.validationX);
        if (o.dropRemainder && o.batchSize > n)
            throw ArgumentError("fit: batchSize " + std::to_string(o.batchSize) + " is larger than the " +
                                std::to_string(n) + " training rows, and dropRemainder leaves out a short batch");
        endFit();
        history_.clear();
        best_.clear();
        bestEpoch_ = -1;
        if (step_ >= fitEndStep(n, o)) return;  // trained that far already
        fitData_ = std::make_unique<FitData>(FitData{&x, y, n, nVal, watched, io_.accuracyOutput() >= 0, &io_});
        loop_ = std::make_unique<FitLoop>(*engine_, options_, *fitData_, std::move(cb), step_, history_,
                                          [this] { return saveCheckpoint(); });
    }

    // After a lost context (ContextLostError while it lasts), the first call
    // rebuilds the model from its snapshot and replays the steps since then
    // without reporting them again: onStep sees every step once, in order.
    bool stepOnce() {
        if (!loop_) return false;
        requireUsable("fit");
        bool more = false;
        try {
            more = loop_->stepOnce();
        } catch (const TrainingError&) {
            dropFit();  // the loop ended the fit in the engine
            throw;
        }
        if (!more) {
            const std::vector<uint8_t> restore = loop_->restoreAtEnd();
            dropFit();
            if (!restore.empty()) restoreCheckpoint(restore, "(the best epoch's state, earlyStopping.restoreBest)");
        }
        return more;
    }

    // Steps until about `ms` milliseconds have passed (at least one step, at
    // most maxSteps); returns the number of steps run. For requestAnimationFrame
    // loops; maxSteps lets a loop stop or look at the model at a chosen step,
    // whatever the machine's speed.
    int trainFor(double ms, int maxSteps = std::numeric_limits<int>::max()) {
        if (maxSteps < 1) throw ArgumentError("trainFor: maxSteps must be >= 1, got " + std::to_string(maxSteps));
        const auto t0 = std::chrono::steady_clock::now();
        int n = 0;
        auto elapsedMs = [&] {
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        while (fitting() && n < maxSteps && (n == 0 || elapsedMs() < ms)) {
            stepOnce();
            ++n;
        }
        return n;
    }
    // Whether a fit begun by beginFit() is in progress.
    bool fitting() const { return bool(loop_); }
    // Ends a fit early (an aborted training loop): the model keeps the
    // weights, optimizer state and step of the last completed step.
    void endFit() {
        if (!loop_) return;
        engine_->endFit(step_);
        dropFit();
    }
    // FitOptions::keepBest: the checkpoint of the best epoch of the last fit
    // (or the one running) by its monitor, and that epoch (empty, -1: none yet).
    const std::vector<uint8_t>& bestCheckpoint() const { return loop_ ? loop_->best() : best_; }
    // The epoch of bestCheckpoint() (-1: none).
    int bestEpoch() const { return loop_ ? loop_->bestEpoch() : bestEpoch_; }

    // Where a training step's time goes: the step's parts at this batch size
    // on the first rows of (x, y), each run `reps` times and timed — on the
    // GPU each pass (GPU timer queries where the context has them, else each
    // pass waited for), on the CPU each op of the step's graph. The model does
    // not change.
    std::vector<PassTiming> profileStep(const HostMatrix& x, const Targets& y, int batchSize, int reps = 5) {
        requireCompiled("profileStep");
        checkData("profileStep", x, y);
        if (batchSize <= 0 || batchSize > x.rows)
            throw ArgumentError("profileStep: batchSize must be in [1, " + std::to_string(x.rows) + "], got " +
                                std::to_string(batchSize));
        if (reps < 1) throw ArgumentError("profileStep: reps must be >= 1, got " + std::to_string(reps));
        return engine_->profileStep(x, y, batchSize, reps, step_);
    }
    // Every epoch trained so far.
    const std::vector<EpochInfo>& history() const { return history_; }

    // ---- evaluation -----------------------------------------------------

    // Mean loss and accuracy (classification) over rows x with targets y.
    Evaluation evaluate(const HostMatrix& x, const Targets& y, int batchSize = 256) {
        requireCompiled("evaluate");
        if (batchSize <= 0) throw ArgumentError("evaluate: batchSize must be positive");
        checkData("evaluate", x, y);
        return engine_->evaluate(x, y, batchSize);
    }

    // The model's outputs (after a final Softmax, probabilities), rows x outputSize.
    HostMatrix predict(const HostMatrix& x, int batchSize = 256) {
        requireCompiled("predict");
        if (batchSize <= 0) throw ArgumentError("predict: batchSize must be positive");
        if (x.cols != inputSize_)
            throw ArgumentError("predict: x has " + std::to_string(x.cols) + " columns, the model expects " +
                                std::to_string(inputSize_));
        if (x.rows <= 0) throw ArgumentError("predict: x has no rows");
        requireConsistent("predict", "x", x);
        requireFinite("predict", x);
        return engine_->predict(x, batchSize);
    }

    // ---- generation -------------------------------------------------------

    // A language model's window and vocabulary: one input of `context` token
    // ids, one output of logits [context, vocab] trained with
    // sequence_softmax_cross_entropy; ArgumentError saying which it is not.
    TokenModel tokenModel(const char* what = "generate") const {
        requireCompiled(what);
        const std::string need = std::string(what) +
                                 ": the model must read [context] token ids and give logits [context, vocab] at each "
                                 "step, trained with sequence_softmax_cross_entropy; ";
        if (io_.inputs.size() != 1 || io_.outputs.size() != 1)
            throw ArgumentError(need + "it has " + std::to_string(io_.inputs.size()) + " inputs and " +
                                std::to_string(io_.outputs.size()) + " outputs");
        const Shape3 in = io_.inputs[0];
        const graph::ModelOutput& out = io_.outputs[0];
        if (in.height != 1 || in.width != 1) throw ArgumentError(need + "its input is " + in.str() + ", not token ids");
        if (out.loss.kind != LossKind::SequenceCrossEntropy)
            throw ArgumentError(need + "it is compiled with " + lossName(out.loss.kind));
        const Shape3 o = outputShape(outputLayers()[0]);
        if (o.height != 1 || o.width != in.channels)
            throw ArgumentError(need + "its output is " + o.str() + " for an input of " + std::to_string(in.channels) +
                                " steps");
        return {in.channels, o.channels};
    }

    // `prompt` (token ids) continued by o.length tokens, each drawn from the
    // logits predict() gives at the step of the last token so far
    // (model/generate.hpp: window, padding, temperature, topK, seed). Returns
    // the continuation. Options and ids are checked before anything runs.
    std::vector<int> generate(const std::vector<int>& prompt, const GenerateOptions& o = {}) {
        const TokenModel m = tokenModel();
        checkGenerateOptions(o, m);
        checkPrompt(prompt, m);
        return generateTokens(prompt, o, m, [&](const HostMatrix& x) { return engine_->predict(x, 1); });
    }
    // generate() on byte tokens (a byte-level model: a vocabulary of at most 256): the continuation's bytes.
    std::vector<uint8_t> generate(const std::vector<uint8_t>& prompt, const GenerateOptions& o = {}) {
        const TokenModel m = tokenModel();
        if (m.vocab > 256)
            throw ArgumentError("generate: bytes are tokens of a vocabulary of at most 256, the model's has " +
                                std::to_string(m.vocab) + " (generate token ids instead)");
        const std::vector<int> out = generate(std::vector<int>(prompt.begin(), prompt.end()), o);
        return std::vector<uint8_t>(out.begin(), out.end());
    }

    // ---- parameters and checkpoints ---------------------------------------

    // A layer's parameter or statistic, read back as its stored matrix:
    // "kernel" (Dense in x out; Conv2D (kh*kw*C) x filters), "bias" (1 x out),
    // "gamma", "beta", "moving_mean", "moving_variance" (1 x C).
    HostMatrix weight(const std::string& layer, const std::string& which) const {
        return engine_->read(variable(layer, which, "weight"), -1);
    }
    void setWeight(const std::string& layer, const std::string& which, const HostMatrix& value) {
        const size_t v = variable(layer, which, "setWeight");
        const ModelVariable& mv = vars_.list[v];
        requireConsistent("setWeight", "value", value);
        if (value.rows != mv.rows || value.cols != mv.cols)
            throw ArgumentError("setWeight: " + layer + "/" + which + " is " + std::to_string(mv.rows) + "x" +
                                std::to_string(mv.cols) + ", got " + std::to_string(value.rows) + "x" +
                                std::to_string(value.cols));
        requireFinite("setWeight", value);
        engine_->write(v, -1, value);
        engine_->stateWritten(step_, nullptr);  // a changed weight could not be replayed after a lost context
    }

    // safetensors: "<layer>/<variable>" in TensorFlow's shapes — Dense kernel
    // [in, out], Conv2D kernel [kh, kw, C, filters] (HWIO), bias, gamma, beta,
    // moving_mean, moving_variance [C] — optimizer slots "<layer>/<param>/slot<i>",
    // and metadata (format, step, seed, optimizer).
    std::vector<uint8_t> saveCheckpoint() const {
        return serializeSafetensors(checkpoint(), checkpointMetadata(options_, step_));
    }
    // Writes a temporary file and renames it: a crash never leaves half a checkpoint.
    void save(const std::string& path) const {
        saveSafetensorsFile(path, checkpoint(), checkpointMetadata(options_, step_));
    }

    // Loads weights (and optimizer state and step, when present). Everything
    // is validated before anything changes: on any error the model is unchanged.
    // The file must hold exactly the model's tensors: one it lacks, one the model
    // does not have (a deeper model's file), or optimizer state of another optimizer
    // (its metadata 'optimizer') is an error. resetOptimizer: the file's optimizer
    // state and step are ignored, and training starts afresh from its weights and
    // statistics (as from a file of weights only: step 0, zeroed slots).
    void loadCheckpoint(const std::vector<uint8_t>& bytes, const std::string& source = "<checkpoint>",
                        bool resetOptimizer = false) {
        requireCompiled("loadCheckpoint");
        const SafetensorsFile f = parseSafetensors(bytes, source);
        const StagedCheckpoint staged =
            stageCheckpoint(f, vars_, options_.optimizer, resetOptimizer, "loadCheckpoint " + source + ": ");
        // Validated: now change the model.
        endFit();
        for (const auto& w : staged.writes) engine_->write(w.var, w.slot, w.value);
        step_ = staged.step;
        // What was loaded is the state to restore after a lost context (unless its
        // slots were dropped: then the state now is not the file's).
        engine_->stateWritten(step_, resetOptimizer ? nullptr : &bytes);
    }
    // Loads a checkpoint file (as save() writes), checked whole before anything changes.
    void load(const std::string& path) { loadCheckpoint(readFile(path, "checkpoint"), path); }

    // Texture pool counters: constant across steps in the steady state.
    const PoolStats& poolStats() const { return ctx_->pool().stats(); }

    // ---- lost contexts ----------------------------------------------------

    // Rebuilds the model on a restored context from its last snapshot, unless
    // that is done already (every entry that computes does it first); returns
    // the step the model is at then. ContextLostError while the context is
    // lost. In a fit, stepOnce() then replays the steps since the snapshot.
    long restore() {
        requireCompiled("restore");
        return step_;
    }
    // The step of the last snapshot (compile: step 0, the initial state).
    long snapshotStep() const {
        if (!engine_) return 0;
        const long s = engine_->snapshotStep();
        return s < 0 ? step_ : s;
    }
    // The last snapshot as a checkpoint (saveCheckpoint's format; its 'step' is
    // snapshotStep()): the state a lost context restores. It reads nothing from
    // the GPU, so it is how to keep a model's progress while the context is
    // lost, or after a restore was refused (a device that cannot run what the
    // Context chose: every GPU call throws UnsupportedError). The CPU engine
    // keeps no snapshots: its state now.
    std::vector<uint8_t> snapshotCheckpoint() const {
        if (!engine_) throw ArgumentError("snapshotCheckpoint: the model is not compiled (call compile first)");
        std::vector<uint8_t> bytes = engine_->snapshotCheckpoint();
        return bytes.empty() ? saveCheckpoint() : bytes;
    }
    // How many times the model was rebuilt after a lost context.
    int restorations() const { return engine_ ? engine_->restorations() : 0; }
    // The dynamic loss scale (a synchronous read); 0 when loss scaling is off.
    float lossScale() {
        requireCompiled("lossScale");
        return engine_->lossScale();
    }

    // A model of `inputShape` inputs whose layers read what `nodes` says, each
    // only layers before it; the last is the output. Functional models
    // (model/symbolic.hpp) and model files with "inputs" are built so.
    Model(Context& ctx, Shape3 inputShape, std::vector<LayerNode> nodes)
        : Model(ctx, std::vector<Shape3>{inputShape}, std::move(nodes), {}) {}
    // A model of several inputs (a layer reads input k as LayerGeometry::modelInput(k))
    // whose outputs are the layers `outputs` (empty: the last), in order.
    Model(Context& ctx, std::vector<Shape3> inputShapes, std::vector<LayerNode> nodes, std::vector<int> outputs,
          std::vector<std::string> inputNames = {})
        : Model(ctx, firstInput(inputShapes), "Model") {
        for (size_t k = 0; k < inputShapes.size(); ++k)
            checkedInput(inputShapes[k], "Model: input " + std::to_string(k));
        inputShapes_ = std::move(inputShapes);
        inputSize_ = 0;
        for (const Shape3& s : inputShapes_) {
            if (int64_t(inputSize_) + s.size() > Window::kMaxExtent)
                throw ArgumentError("Model: its inputs together are more than " + std::to_string(Window::kMaxExtent) +
                                    " values per example");
            inputSize_ += s.size();
        }
        if (!inputNames.empty() && inputNames.size() != inputShapes_.size())
            throw ArgumentError("Model: " + std::to_string(inputNames.size()) + " input names for " +
                                std::to_string(inputShapes_.size()) + " inputs");
        inputNames_ = std::move(inputNames);
        for (size_t i = 0; i < nodes.size(); ++i)
            for (int k : nodes[i].inbound)
                if (graph::LayerGeometry::isModelInput(k)
                        ? size_t(graph::LayerGeometry::inputIndex(k)) >= inputShapes_.size()
                        : size_t(k) >= i)
                    throw ArgumentError("Model: layer " + std::to_string(i) + " reads " +
                                        (graph::LayerGeometry::isModelInput(k)
                                             ? "input " + std::to_string(graph::LayerGeometry::inputIndex(k)) +
                                                   ", which the model does not have"
                                             : "layer " + std::to_string(k) + ", which is not before it"));
        for (size_t i = 0; i < nodes.size(); ++i) {
            const int owner = nodes[i].shares;
            if (owner < 0) continue;
            if (size_t(owner) >= i || nodes[size_t(owner)].shares >= 0)
                throw ArgumentError("Model: layer " + std::to_string(i) + " shares the weights of layer " +
                                    std::to_string(owner) + ", which is not a layer before it with weights of its own");
            if (nodes[i].spec.index() != nodes[size_t(owner)].spec.index())
                throw ArgumentError("Model: layer " + std::to_string(i) + " (" + layerType(nodes[i].spec) +
                                    ") shares the weights of layer " + std::to_string(owner) + ", a " +
                                    layerType(nodes[size_t(owner)].spec));
            nodes[i].spec = nodes[size_t(owner)].spec;  // one layer: its calls have its options
        }
        std::vector<bool> seen(nodes.size(), false);
        for (int o : outputs) {
            if (o < 0 || size_t(o) >= nodes.size())
                throw ArgumentError("Model: output " + std::to_string(o) + " is not a layer (it has " +
                                    std::to_string(nodes.size()) + ")");
            if (seen[size_t(o)]) throw ArgumentError("Model: layer " + std::to_string(o) + " is an output twice");
            seen[size_t(o)] = true;
        }
        nodes_ = std::move(nodes);
        outputs_ = std::move(outputs);
    }
    // A functional model: the layers from `input` (gltrain::Input) to `output`
    // (model/symbolic.hpp), compiled by compile().
    Model(Context& ctx, const SymbolicTensor& input, const SymbolicTensor& output)
        : Model(ctx, std::vector<SymbolicTensor>{input}, std::vector<SymbolicTensor>{output}) {}
    // A functional model of several inputs or outputs (in these orders: fit's, predict's and the losses').
    Model(Context& ctx, const std::vector<SymbolicTensor>& inputs, const std::vector<SymbolicTensor>& outputs)
        : Model(ctx, SymbolicTensor::between(inputs, outputs)) {}
    // A functional model from its inputs, layers and outputs (SymbolicTensor::between).
    Model(Context& ctx, FunctionalGraph f)
        : Model(ctx, std::move(f.inputs), std::move(f.nodes), std::move(f.outputs), std::move(f.inputNames)) {}

protected:
    // A model of `inputShape` inputs on `ctx` (Sequential adds the layers); `who` names it in errors.
    Model(Context& ctx, Shape3 inputShape, const char* who = "Sequential")
        : ctx_(&ctx), inputShapes_{checkedInput(inputShape, who)}, inputSize_(inputShape.size()) {}

    // Appends a layer reading `inbound` (empty: the layer before); before compile().
    void addNode(LayerNode node) {
        if (compiled()) throw ArgumentError("Sequential::add: the model is already compiled");
        nodes_.push_back(std::move(node));
    }

    // The context the model trains on.
    Context& context() const { return *ctx_; }

    // The checks of compile's options that do not depend on the layers.
    void checkCompileOptions(const CompileOptions& options) const {
        // A running fit holds pointers into the engine: end it first.
        if (loop_) throw ArgumentError("compile: a fit is in progress (let it finish, or call endFit() first)");
        options.optimizer.validate();
        options.schedule.validate();
        options.lossScaling.validate();
        if (!(options.clipNorm >= 0.0f)) throw ArgumentError("compile: clipNorm must be >= 0");
        if (options.smallDenseStepMacs < 0) throw ArgumentError("compile: smallDenseStepMacs must be >= 0");
        checkLossSpec(options.loss);
        for (const MetricSpec& m : options.metrics) {
            if (int(m.kind) < 0 || int(m.kind) > int(MetricKind::Loss))
                throw ArgumentError("compile: metric " + std::to_string(int(m.kind)) + " is not a MetricKind");
            if (const std::string problem = metricProblem(m); !problem.empty())
                throw ArgumentError("compile: " + problem);
        }
        if (options.onNaN != NanPolicy::Stop && options.onNaN != NanPolicy::Skip && options.onNaN != NanPolicy::Ignore)
            throw ArgumentError("compile: onNaN " + std::to_string(int(options.onNaN)) + " is not a NanPolicy");
    }

    // Compiles `layers` (their shapes inferred and checked by the caller; their
    // specs must outlive the model or its next compile): creates and
    // initialises the variables on the engine the context's backend chooses.
    void compileLayers(std::vector<CompiledLayer> layers, const CompileOptions& options) {
        graph::ModelIO io;
        io.inputs = inputShapes_;
        const std::vector<size_t> outs = outputLayers();
        for (size_t k = 0; k < outs.size(); ++k) {
            graph::ModelOutput o;
            o.layer = layers.empty() ? -1 : int(outs[k]);
            o.width = layers.empty() ? inputSize_ : layers[outs[k]].geometry.out.size();
            o.loss = outputLoss(options, k);
            o.weight = options.lossWeights.empty() ? 1.0f : options.lossWeights[k];
            o.steps = layers.empty() ? 1 : layers[outs[k]].geometry.out.width;
            const LossKind kind = o.loss.kind;
            if (kind == LossKind::Custom) try {  // its errors now, not at the first fit
                    graph::checkLoss(o.loss, o.width);
                } catch (const Error& e) {
                    throw ArgumentError(std::string("compile: ") + e.what());
                }
            if ((kind == LossKind::SoftmaxCrossEntropy || kind == LossKind::CategoricalCrossEntropy) && o.width < 2)
                throw ArgumentError(std::string("compile: ") + lossName(kind) + " needs at least 2 outputs, " +
                                    (outs.size() == 1 ? std::string("the model has ")
                                                      : "output " + std::to_string(k) + " (" +
                                                            layers[outs[k]].geometry.name + ") has ") +
                                    std::to_string(o.width));
            io.outputs.push_back(o);
        }
        io.metrics = compiledMetrics(options, io, layers, outs);
        requireCheckpointFits(layers, options);
        // Shapes are good: now the engine's work.
        engine_.reset();
        options_ = options;
        layers_ = std::move(layers);
        io_ = std::move(io);
        outputSize_ = io_.outputSize();
        vars_ = ModelVariables::of(layers_, options_);
        step_ = 0;
        if (ctx_->backend() == Backend::Cpu)
            engine_ = std::make_unique<CpuEngine>(*ctx_, layers_, vars_, options_, io_);
        else engine_ = std::make_unique<GpuEngine>(*ctx_, layers_, vars_, options_, io_);
    }

    // The state — every tensor a checkpoint holds, by name — and the step, to
    // carry over a recompile (setTrainable).
    struct State {
        // Every tensor a checkpoint holds, by its name there.
        std::map<std::string, HostMatrix> tensors;
        // The model's step.
        long step = 0;
    };
    // The state now (a synchronous read of every tensor).
    State state() const {
        requireCompiled("state");
        State s;
        for (const SavedTensor& t : vars_.saved) s.tensors[t.name] = engine_->read(t.var, t.slot);
        s.step = step_;
        return s;
    }
    // Writes back what the recompiled model still has (a slot it did not have starts at zero).
    void restoreState(const State& s) {
        for (const SavedTensor& t : vars_.saved)
            if (auto it = s.tensors.find(t.name); it != s.tensors.end()) engine_->write(t.var, t.slot, it->second);
        step_ = s.step;
        engine_->stateWritten(step_, nullptr);
    }

private:
    static Shape3 firstInput(const std::vector<Shape3>& inputs) {
        if (inputs.empty()) throw ArgumentError("Model: it needs an input");
        return inputs[0];
    }
    static Shape3 checkedInput(Shape3 s, const std::string& who) {
        if (s.height <= 0 || s.width <= 0 || s.channels <= 0)
            throw ArgumentError(who + ": input shape " + s.str() + " has a zero or negative size");
        if (Window::cappedProduct({s.height, s.width, s.channels}) > Window::kMaxExtent)
            throw ArgumentError(who + ": input shape " + s.str() + " is more than " +
                                std::to_string(Window::kMaxExtent) + " values per example");
        return s;
    }
    // Layer i's name: given, or "<kDefaultName>_<i>".
    std::string nameOf(size_t i) const {
        if (const int owner = nodes_[i].shares; owner >= 0) {  // the owner's k-th call: "<owner>@<k>"
            int k = 1;
            for (size_t j = size_t(owner) + 1; j < i; ++j) k += nodes_[j].shares == owner;
            return nameOf(size_t(owner)) + "@" + std::to_string(k);
        }
        const std::string& given = givenLayerName(nodes_[i].spec);
        return given.empty() ? defaultLayerName(nodes_[i].spec, i) : given;
    }
    size_t indexOf(const std::string& name, const char* what) const {
        std::string names;
        for (size_t i = 0; i < nodes_.size(); ++i) {
            if (nameOf(i) == name) return i;
            names += (names.empty() ? "" : ", ") + nameOf(i);
        }
        throw ArgumentError(std::string(what) + ": no layer named '" + name + "' (the layers: " + names + ")");
    }

    // Layer i's name, inputs and output shape from the layers before it;
    // errors name the layer, what it received and from where.
    CompiledLayer inferLayer(size_t i, const std::vector<CompiledLayer>& before, const CompileOptions& options) const {
        const Layer& spec = nodes_[i].spec;
        CompiledLayer L;
        L.spec = &spec;
        L.geometry.name = nameOf(i);
        L.geometry.inbound = nodes_[i].inbound;
        if (nodes_[i].shares >= 0) L.geometry.weightsOf = nameOf(size_t(nodes_[i].shares));
        if (L.geometry.inbound.empty())
            L.geometry.inbound.push_back(i == 0 ? graph::LayerGeometry::kModelInput : int(i) - 1);
        ShapeContext c;
        for (int k : L.geometry.inbound) {
            const bool input = graph::LayerGeometry::isModelInput(k);
            c.ins.push_back(input ? inputShapes_.at(size_t(graph::LayerGeometry::inputIndex(k)))
                                  : before.at(size_t(k)).geometry.out);
            c.froms.push_back(
                input ? (inputShapes_.size() == 1 ? std::string("the model input") : "model input " + inboundName(k))
                      : before.at(size_t(k)).geometry.name);
        }
        c.in = L.geometry.in = c.ins[0];
        L.geometry.ins = c.ins;
        c.from = c.froms[0];
        c.name = L.geometry.name;
        const size_t n = c.ins.size();
        if (mergeLayer(spec) && n < 2)
            c.fail("merges several inputs but " + c.received() + " alone (give it two or more)");
        if (!mergeLayer(spec) && n > size_t(layerMaxInputs(spec)))
            c.fail(layerMaxInputs(spec) == 1
                       ? "takes one input but " + c.receivedAll()
                       : "takes at most " + std::to_string(layerMaxInputs(spec)) + " inputs but " + c.receivedAll());
        // The checks of each field's own value, from the layer's field table (layers/field.hpp).
        if (const std::string problem = layerFieldProblem(spec); !problem.empty())
            throw ArgumentError("compile: layer " + L.geometry.name + ": " + problem);
        // Its output, from the layer's own shape function (layers/shape.hpp).
        c.flatModelInput = n == 1 && graph::LayerGeometry::isModelInput(L.geometry.inbound[0]) &&
                           c.ins[0].height == 1 && c.ins[0].width == 1;
        const std::vector<size_t> outs = outputLayers();
        const auto output = std::find(outs.begin(), outs.end(), i);
        c.last = output != outs.end();  // an output: what its loss reads
        c.softmaxLoss = outputLoss(options, c.last ? size_t(output - outs.begin()) : 0).allowsFinalSoftmax();
        const LayerShape s = std::visit([&](const auto& l) { return l.shape(c); }, spec);
        L.geometry.out = s.out;
        L.geometry.window = s.window;
        return L;
    }

    // A shared layer's later call reads its first call's variables: they must
    // fit what it receives, and statistics (a moving average per call) are not shared.
    static void checkSharedCall(const CompiledLayer& call, const CompiledLayer& owner) {
        const std::string where =
            "compile: layer " + call.geometry.name + " (a call of shared layer " + owner.geometry.name + ")";
        for (const LayerVariable& v : layerVariables(*owner.spec, owner.geometry.in))
            if (!v.trainable)
                throw ArgumentError(where + ": a " + layerType(*owner.spec) + " keeps statistics of what it reads (" +
                                    v.name +
                                    "), which a layer applied twice cannot share; give each call its own layer");
        const std::vector<LayerVariable> mine = layerVariables(*call.spec, call.geometry.in),
                                         theirs = layerVariables(*owner.spec, owner.geometry.in);
        for (size_t k = 0; k < mine.size(); ++k)
            if (mine[k].rows != theirs.at(k).rows || mine[k].cols != theirs.at(k).cols)
                throw ArgumentError(where + ": receives " + call.geometry.in.str() + " but its weights (" +
                                    mine[k].name + ") were made for " + owner.geometry.in.str() + ", what " +
                                    owner.geometry.name + " receives");
    }

    // Every entry that computes comes through here: after a lost context the
    // engine rebuilds itself from its snapshot, and the model's step is the snapshot's.
    void requireUsable(const char* what) {
        if (auto restored = engine_->ensureUsable(what)) step_ = *restored;
    }
    void requireCompiled(const char* what) const {
        if (!engine_) throw ArgumentError(std::string(what) + ": the model is not compiled (call compile first)");
        // A rebuild from the snapshot restores the model's observable state, so const entries may do it too.
        const_cast<Model*>(this)->requireUsable(what);
    }
    void dropFit() {
        best_ = loop_->best();
        bestEpoch_ = loop_->bestEpoch();
        loop_.reset();
        fitData_.reset();
    }
    // A checkpoint the model made, as the whole state it was: with its step even
    // without optimizer state (loadCheckpoint takes a step only with it).
    void restoreCheckpoint(const std::vector<uint8_t>& bytes, const std::string& what) {
        loadCheckpoint(bytes, what);
        step_ = std::stol(parseSafetensors(bytes, what).metadata.at("step"));
        engine_->stateWritten(step_, &bytes);
    }
    // The epoch callbacks' options (FitOptions::earlyStopping, ...), before anything runs;
    // returns o with each monitor's direction resolved (MonitorMode::Auto: as its figure is).
    FitOptions checkEpochCallbacks(FitOptions o, bool validation) const {
        auto monitor = [&](const char* what, Monitor& m) {
            const std::string where = std::string("fit: ") + what + ".monitor";
            const std::string figure = m.figure();
            const graph::ModelMetric* metric = nullptr;
            for (const graph::ModelMetric& mm : io_.metrics)
                if (mm.name == figure) metric = &mm;
            if (figure != "loss" && figure != "accuracy" && !metric) {
                std::string names = "loss, accuracy";
                for (const graph::ModelMetric& mm : io_.metrics)
                    if (mm.name != "accuracy") names += ", " + mm.name;
                throw ArgumentError(where + " '" + m.name + "' is none of the model's figures (" + names +
                                    ", or one of them after val_)");
            }
            if (figure == "accuracy" && !metric && io_.accuracyOutput() < 0)
                throw ArgumentError(where + " is " + m.name +
                                    ", which only softmax cross-entropy reports (or compile with metrics: accuracy)");
            if (m.validation() && !validation)
                throw ArgumentError(where + " is " + m.name + " but the fit has no validation data (give " +
                                    "validationSplit or validationX/validationY, or monitor " + figure + ")");
            if (int(m.mode) < 0 || int(m.mode) > int(MonitorMode::Max))
                throw ArgumentError(where + "'s mode " + std::to_string(int(m.mode)) + " is not a MonitorMode");
            if (m.mode == MonitorMode::Auto)
                m.mode = (metric ? metricHigherIsBetter(metric->spec) : figure == "accuracy") ? MonitorMode::Max
                                                                                              : MonitorMode::Min;
            if (!(m.minDelta >= 0.0f)) throw ArgumentError(where + "'s minDelta must be >= 0");
        };
        if (o.earlyStopping.patience < 0) throw ArgumentError("fit: earlyStopping.patience must be >= 0 (0: off)");
        if (o.earlyStopping.patience > 0) monitor("earlyStopping", o.earlyStopping.monitor);
        ReduceLrOnPlateau& r = o.reduceLrOnPlateau;
        if (r.patience < 0) throw ArgumentError("fit: reduceLrOnPlateau.patience must be >= 0 (0: off)");
        if (r.patience > 0) {
            monitor("reduceLrOnPlateau", r.monitor);
            if (!(r.factor > 0.0f && r.factor < 1.0f))
                throw ArgumentError("fit: reduceLrOnPlateau.factor must be in (0, 1), got " + std::to_string(r.factor));
            if (!(r.minLr >= 0.0f)) throw ArgumentError("fit: reduceLrOnPlateau.minLr must be >= 0");
        }
        if (o.keepBest.enabled) monitor("keepBest", o.keepBest.monitor);
        return o;
    }
    // compile's metrics, resolved for each output (several outputs: each output's loss, and metrics named
    // "<output layer>_<name>";
    // a metric goes to each output whose targets it fits, and must fit one), with the accuracy
    // softmax cross-entropy reports anyway left out.
    static std::vector<graph::ModelMetric> compiledMetrics(const CompileOptions& options, const graph::ModelIO& io,
                                                           const std::vector<CompiledLayer>& layers,
                                                           const std::vector<size_t>& outs) {
        std::vector<graph::ModelMetric> out;
        // Several outputs: each one's own loss (unweighted), as Keras's history has "<output>_loss".
        if (io.outputs.size() > 1)
            for (size_t k = 0; k < io.outputs.size(); ++k)
                out.push_back(
                    {int(k), MetricSpec::ofLoss(io.outputs[k].loss, "loss"), layers[outs[k]].geometry.name + "_loss"});
        for (const MetricSpec& asked : options.metrics) {
            bool fits = false;
            std::string misfit;  // why it does not fit the first output it does not
            for (size_t k = 0; k < io.outputs.size(); ++k) {
                graph::ModelMetric m{int(k), asked, metricName(asked)};
                const std::string where = io.outputs.size() == 1 ? ""
                                                                 : " of output " + std::to_string(k) + " (" +
                                                                       layers[outs[k]].geometry.name + ")";
                if (const std::string problem =
                        resolveMetric(m.spec, io.outputs[k].loss, io.outputs[k].width, io.outputs[k].steps);
                    !problem.empty()) {
                    if (misfit.empty()) misfit = problem + where;
                    continue;
                }
                fits = true;
                if (m.spec.kind == MetricKind::Loss && m.spec.loss.kind == LossKind::Custom) try {
                        graph::checkLoss(m.spec.loss, io.outputs[k].width);
                    } catch (const Error& e) {
                        throw ArgumentError("compile: metric " + m.name + where + ": " + e.what());
                    }
                if (io.outputs.size() == 1 && m.spec.kind == MetricKind::SparseCategoricalAccuracy &&
                    m.name == "accuracy" && io.accuracyOutput() == 0)
                    continue;  // reported as accuracy already
                if (io.outputs.size() > 1 && !layers.empty()) m.name = layers[outs[k]].geometry.name + "_" + m.name;
                for (const graph::ModelMetric& other : out)
                    if (other.name == m.name) throw ArgumentError("compile: metric " + m.name + " is given twice");
                if (m.name == "loss" || (m.name == "accuracy" && io.accuracyOutput() >= 0))
                    throw ArgumentError("compile: a metric may not be named " + m.name +
                                        " (the model reports that figure itself)");
                out.push_back(std::move(m));
            }
            if (!fits) throw ArgumentError("compile: " + misfit);
        }
        return out;
    }
    void checkData(const char* what, const HostMatrix& x, const Targets& y) const {
        if (!io_.packed())
            return gltrain::checkData(
                what, x, y, inputSize_,
                options_.loss.kind == LossKind::SequenceCrossEntropy ? io_.outputs[0].targetCols() : outputSize_,
                options_.loss, outputSize_ / io_.outputs[0].steps);
        // Rows and targets packed as io() says (several inputs or outputs).
        gltrain::checkData(what, x, y, inputSize_, io_.targetCols(), LossKind::MeanSquaredError);
        int at = 0;
        for (size_t k = 0; k < io_.outputs.size(); ++k) {
            const graph::ModelOutput& o = io_.outputs[k];
            HostMatrix part(y.values.rows, o.targetCols());
            for (int r = 0; r < part.rows; ++r)
                std::copy_n(y.values.data.begin() + std::ptrdiff_t(size_t(r) * size_t(y.values.cols) + size_t(at)),
                            part.cols, part.data.begin() + std::ptrdiff_t(size_t(r) * size_t(part.cols)));
            at += part.cols;
            checkTargets((std::string(what) + " (output " + std::to_string(k) + ", columns " +
                          std::to_string(at - part.cols) + ".." + std::to_string(at - 1) + " of y)")
                             .c_str(),
                         o.loss.labels() ? Targets(labelColumn(what, part)) : Targets(std::move(part)), o.width,
                         outputLoss(options_, k));
        }
    }
    // A column of class labels stored as floats, as labels; an error unless each is an integer.
    static std::vector<int> labelColumn(const char* what, const HostMatrix& column) {
        std::vector<int> labels(size_t(column.rows));
        for (int r = 0; r < column.rows; ++r) {
            const float v = column.data[size_t(r)];
            if (!(v == std::floor(v)) || std::fabs(v) > 1e9f)
                throw ArgumentError(std::string(what) + ": the label at row " + std::to_string(r) + " is " +
                                    std::to_string(v) + ", not a class index");
            labels[size_t(r)] = int(v);
        }
        return labels;
    }
    // The loss of output k.
    static const LossSpec& outputLoss(const CompileOptions& o, size_t k) {
        return o.losses.empty() ? o.loss : o.losses.at(k);
    }
    // compile's checks of the per-output losses and weights.
    void checkOutputLosses(const CompileOptions& o) const {
        const size_t n = outputLayers().size();
        if (!o.losses.empty() && o.losses.size() != n)
            throw ArgumentError("compile: " + std::to_string(o.losses.size()) + " losses for " + std::to_string(n) +
                                " outputs (give one per output, or none for `loss` on each)");
        for (const LossSpec& l : o.losses) checkLossSpec(l);
        if (!o.lossWeights.empty() && o.lossWeights.size() != n)
            throw ArgumentError("compile: " + std::to_string(o.lossWeights.size()) + " lossWeights for " +
                                std::to_string(n) + " outputs");
        for (size_t k = 0; k < o.lossWeights.size(); ++k)
            if (!(o.lossWeights[k] >= 0.0f) || !std::isfinite(o.lossWeights[k]))
                throw ArgumentError("compile: lossWeights[" + std::to_string(k) + "] must be finite and >= 0, got " +
                                    std::to_string(o.lossWeights[k]));
    }
    static void checkLossSpec(const LossSpec& l) {
        if (int(l.kind) < 0 || int(l.kind) > int(LossKind::Custom))
            throw ArgumentError("compile: loss " + std::to_string(int(l.kind)) + " is not a LossKind");
        if (const std::string problem = lossProblem(l); !problem.empty()) throw ArgumentError("compile: " + problem);
    }
    // Each input's rows side by side, checked.
    HostMatrix packInputs(const char* what, const InputRows& xs) const {
        if (xs.size() != inputShapes_.size())
            throw ArgumentError(std::string(what) + ": " + std::to_string(xs.size()) + " inputs given, the model has " +
                                std::to_string(inputShapes_.size()));
        const int rows = xs[0].get().rows;
        for (size_t k = 0; k < xs.size(); ++k) {
            const HostMatrix& x = xs[k];
            const std::string name = "inputs[" + std::to_string(k) + "]";
            requireConsistent(what, name.c_str(), x);
            if (x.cols != inputShapes_[k].size())
                throw ArgumentError(std::string(what) + ": " + name + " has " + std::to_string(x.cols) +
                                    " columns, the model's input " +
                                    inboundName(graph::LayerGeometry::modelInput(int(k))) + " has " +
                                    std::to_string(inputShapes_[k].size()));
            if (x.rows != rows)
                throw ArgumentError(std::string(what) + ": " + name + " has " + std::to_string(x.rows) +
                                    " rows, inputs[0] has " + std::to_string(rows));
        }
        if (rows <= 0) throw ArgumentError(std::string(what) + ": the inputs have no rows");
        HostMatrix out(rows, inputSize_);
        int at = 0;
        for (const HostMatrix& x : xs) {
            for (int r = 0; r < rows; ++r)
                std::copy_n(x.data.begin() + std::ptrdiff_t(size_t(r) * size_t(x.cols)), x.cols,
                            out.data.begin() + std::ptrdiff_t(size_t(r) * size_t(inputSize_) + size_t(at)));
            at += x.cols;
        }
        return out;
    }
    // Each output's targets side by side (a class label as one column), each checked against its output and loss.
    Targets packTargets(const char* what, const std::vector<Targets>& ys, int rows) const {
        if (ys.size() != io_.outputs.size())
            throw ArgumentError(std::string(what) + ": " + std::to_string(ys.size()) +
                                " targets given, the model has " + std::to_string(io_.outputs.size()) + " outputs");
        if (!io_.packed()) return ys[0];
        HostMatrix out(rows, io_.targetCols());
        int at = 0;
        for (size_t k = 0; k < ys.size(); ++k) {
            const graph::ModelOutput& o = io_.outputs[k];
            const std::string where =
                std::string(what) + " (targets[" + std::to_string(k) + "], output " + layerName(size_t(o.layer)) + ")";
            if (ys[k].rows() != size_t(rows))
                throw ArgumentError(where + ": " + std::to_string(ys[k].rows()) + " rows, the inputs have " +
                                    std::to_string(rows));
            checkTargets(where.c_str(), ys[k], o.width, outputLoss(options_, k));
            if (o.loss.labels()) {
                const std::vector<int> labels = targetLabels(ys[k], 0, rows);
                for (int r = 0; r < rows; ++r) out(r, at) = float(labels[size_t(r)]);
            } else {
                for (int r = 0; r < rows; ++r)
                    std::copy_n(ys[k].values.data.begin() + std::ptrdiff_t(size_t(r) * size_t(o.width)), o.width,
                                out.data.begin() + std::ptrdiff_t(size_t(r) * size_t(out.cols) + size_t(at)));
            }
            at += o.targetCols();
        }
        return Targets(std::move(out));
    }

    CheckpointTensors checkpoint() const {
        requireCompiled("saveCheckpoint");
        return checkpointTensors(vars_, step_,
                                 [&](size_t i) { return engine_->read(vars_.saved[i].var, vars_.saved[i].slot).data; });
    }

    // A variable by layer and name; errors name what the layer has.
    size_t variable(const std::string& layer, const std::string& which, const char* what) const {
        requireCompiled(what);
        bool found = false;
        std::string names;
        for (size_t i = 0; i < vars_.list.size(); ++i) {
            if (vars_.list[i].layer != layer) continue;
            if (vars_.list[i].decl.name == which) return i;
            names += (names.empty() ? "" : ", ") + vars_.list[i].decl.name;
        }
        for (const CompiledLayer& L : layers_) found = found || L.geometry.name == layer;
        if (!found) throw ArgumentError(std::string(what) + ": no layer named '" + layer + "'");
        throw ArgumentError(std::string(what) + ": layer '" + layer + "' has " +
                            (names.empty() ? "no weights" : "no '" + which + "' (it has " + names + ")"));
    }

    Context* ctx_;
    std::vector<LayerNode> nodes_;  // the layers as built (compile's CompiledLayer::spec points here)
    std::vector<Shape3> inputShapes_;
    std::vector<std::string> inputNames_;  // empty: "input", or "input_<k>" of several
    int inputSize_;                        // all inputs' values per row
    std::vector<int> outputs_;             // the output layers (empty: the last)
    graph::ModelIO io_;                    // after compile
    int outputSize_ = 0;
    HostMatrix packedX_;  // a fit of several inputs: its rows side by side (FitData points here)
    std::vector<CompiledLayer> layers_;
    ModelVariables vars_;
    CompileOptions options_;
    long step_ = 0;
    std::unique_ptr<Engine> engine_;
    std::unique_ptr<FitData> fitData_;
    std::unique_ptr<FitLoop> loop_;
    std::vector<EpochInfo> history_;
    std::vector<uint8_t> best_;  // the last fit's bestCheckpoint()
    int bestEpoch_ = -1;
};

}  // namespace gltrain
