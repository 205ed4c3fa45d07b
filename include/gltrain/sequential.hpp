// Sequential: a stack of layers trained on the GPU.
//
//   gltrain::Sequential model(ctx, 784);
//   model.add(gltrain::Dense{256, gltrain::Activation::ReLU})
//        .add(gltrain::Dense{128, gltrain::Activation::ReLU})
//        .add(gltrain::Dense{10});
//   model.compile({});                       // softmax cross-entropy, Adam 1e-3
//   model.fit(x, labels, {.epochs = 2, .batchSize = 128});
//
// How a step runs: compile() checks every shape (naming the layer and both
// shapes) before any GPU work. fit() uploads the dataset once; each batch size
// gets a Plan — every tensor the step needs and the step's passes (row gather,
// forward, loss, backward, clip, update), recorded once and replayed every
// step, so the steady state compiles, allocates and reads back nothing but the
// loss the user asked for (every `lossEvery` steps, a 1x1 texel). Parameters
// and optimizer state are PingPong pairs swapped after each step.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gltrain/activation.hpp"
#include "gltrain/cpu/trainer.hpp"
#include "gltrain/graph/gpu_plan.hpp"
#include "gltrain/graph/model_graph.hpp"
#include "gltrain/backend.hpp"
#include "gltrain/initializer.hpp"
#include "gltrain/layers.hpp"
#include "gltrain/ops/batchnorm.hpp"
#include "gltrain/ops/conv.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/ops/loss.hpp"
#include "gltrain/ops/loss_scale.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/ops/mlp.hpp"
#include "gltrain/ops/optimizer.hpp"
#include "gltrain/ops/random.hpp"
#include "gltrain/ops/reduce.hpp"
#include "gltrain/ops/step_guard.hpp"
#include "gltrain/readback.hpp"
#include "gltrain/safetensors.hpp"
#include "gltrain/schedule.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain {

class Sequential {
public:
    // A model of flat inputs (rows of inputSize values)...
    Sequential(Context& ctx, int inputSize) : Sequential(ctx, Shape3{1, 1, inputSize}) {}
    // ...or of images: rows of height*width*channels values in NHWC order.
    Sequential(Context& ctx, Shape3 inputShape) : ctx_(&ctx), inputShape_(inputShape) {
        if (inputShape.height <= 0 || inputShape.width <= 0 || inputShape.channels <= 0)
            throw ArgumentError("Sequential: input shape " + inputShape.str() + " has a zero or negative size");
        if (Window::cappedProduct({inputShape.height, inputShape.width, inputShape.channels}) > Window::kMaxExtent)
            throw ArgumentError("Sequential: input shape " + inputShape.str() + " is more than " +
                                std::to_string(Window::kMaxExtent) + " values per example");
        inputSize_ = inputShape.size();
    }
    Sequential(const Sequential&) = delete;
    Sequential& operator=(const Sequential&) = delete;

    Sequential& add(Layer layer) {
        if (compiled_) throw ArgumentError("Sequential::add: the model is already compiled");
        specs_.push_back(std::move(layer));
        return *this;
    }

    // Infers and checks every shape, then creates and initialises the
    // parameters and optimizer state. Errors name the layer and the shapes.
    void compile(const CompileOptions& options = {}) {
        // A running fit holds pointers into plans_ and the parameters: end it first.
        if (fit_) throw ArgumentError("compile: a fit is in progress (let it finish, or call endFit() first)");
        options.optimizer.validate();
        options.schedule.validate();
        options.lossScaling.validate();
        if (!(options.clipNorm >= 0.0f)) throw ArgumentError("compile: clipNorm must be >= 0");
        if (options.smallDenseStepMacs < 0) throw ArgumentError("compile: smallDenseStepMacs must be >= 0");
        if (specs_.empty()) throw ArgumentError("compile: the model has no layers");
        if (options.loss != LossKind::SoftmaxCrossEntropy && options.loss != LossKind::MeanSquaredError &&
            options.loss != LossKind::BinaryCrossEntropy)
            throw ArgumentError("compile: loss " + std::to_string(int(options.loss)) + " is not a LossKind");
        if (options.onNaN != NanPolicy::Stop && options.onNaN != NanPolicy::Skip && options.onNaN != NanPolicy::Ignore)
            throw ArgumentError("compile: onNaN " + std::to_string(int(options.onNaN)) + " is not a NanPolicy");
        std::vector<LayerState> layers;
        Shape3 shape = inputShape_;
        for (size_t i = 0; i < specs_.size(); ++i) {
            LayerState L = inferLayer(i, shape, i == 0 ? "the model input" : layers.back().name, options);
            for (auto& other : layers)
                if (other.name == L.name) throw ArgumentError("compile: two layers are named '" + L.name + "'");
            shape = L.out;
            layers.push_back(std::move(L));
        }
        const int width = shape.size();
        if (options.loss == LossKind::SoftmaxCrossEntropy && width < 2)
            throw ArgumentError("compile: softmax cross-entropy needs at least 2 outputs, the model has " +
                                std::to_string(width));
        requireCheckpointFits(layers, options);
        // Shapes are good: now the GPU work.
        options_ = options;
        layers_ = std::move(layers);
        outputSize_ = width;
        cpu_.reset();
        if (ctx_->backend() == Backend::Cpu) {  // the CPU backend (cpu/trainer.hpp) holds the numbers
            std::vector<cpu::Model::Layer> onCpu(layers_.size());
            for (size_t i = 0; i < layers_.size(); ++i) createParameters(i, &onCpu[i]);
            cpu_ = std::make_unique<cpu::Trainer>(std::move(onCpu), inputSize_, options_, &step_);
            cpu_->model().useThreads(&ctx_->cpuThreads());
        } else {
            for (size_t i = 0; i < layers_.size(); ++i) createParameters(i);
        }
        plans_.clear();
        trainGraph_.reset();
        evalGraph_.reset();
        step_ = 0;
        compiled_ = true;
        forgetSnapshot();  // the compiled initial state is what a lost context restores
    }

    int inputSize() const { return inputSize_; }
    Shape3 inputShape() const { return inputShape_; }
    // A layer's output shape ([1, 1, n] for flat ones); after compile.
    Shape3 outputShape(size_t layer) const { return layers_.at(layer).out; }
    int outputSize() const { return outputSize_; }
    long step() const { return step_; }
    const CompileOptions& options() const { return options_; }
    size_t layerCount() const { return specs_.size(); }
    const std::string& layerName(size_t i) const { return layers_.at(i).name; }
    // Layer i as it was added (kind and options; its name is layerName(i) after compile).
    const Layer& layer(size_t i) const { return specs_.at(i); }
    bool compiled() const { return compiled_; }

    // ---- training -------------------------------------------------------

    std::vector<EpochInfo> fit(const HostMatrix& x, const Targets& y, const FitOptions& o = {}, Callbacks cb = {}) {
        beginFit(x, y, o, std::move(cb));
        while (stepOnce()) {
        }
        return history();
    }

    // The non-blocking form: beginFit() uploads and plans; stepOnce() runs one
    // step (false when fit is done); trainFor(ms) runs steps for about ms.
    // x (and FitOptions' validation data) must stay alive until the fit ends:
    // after a lost context they are uploaded again.
    void beginFit(const HostMatrix& x, const Targets& y, const FitOptions& o, Callbacks cb = {}) {
        requireCompiled("fit");
        if (o.epochs <= 0) throw ArgumentError("fit: epochs must be positive, got " + std::to_string(o.epochs));
        if (o.batchSize <= 0) throw ArgumentError("fit: batchSize must be positive, got " + std::to_string(o.batchSize));
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
            if (nVal <= 0 || nVal >= n) throw ArgumentError("fit: validationSplit leaves no training or validation rows");
            n -= nVal;
        }
        if (o.dropRemainder && o.batchSize > n)
            throw ArgumentError("fit: batchSize " + std::to_string(o.batchSize) + " is larger than the " +
                                std::to_string(n) + " training rows, and dropRemainder leaves out a short batch");
        if (cpu_) return cpu_->beginFit(x, y, n, nVal, o, std::move(cb));
        fit_ = std::make_unique<FitState>();
        fit_->options = o;
        fit_->callbacks = std::move(cb);
        fit_->x = &x;  // uploaded again if the context is lost
        fit_->y = y;
        fit_->train = upload(x, y, 0, n);
        if (nVal > 0) fit_->val = upload(x, y, n, nVal);
        else if (o.validationX) fit_->val = upload(*o.validationX, *o.validationY, 0, o.validationX->rows);
        fit_->trainRows = n;
        fit_->stepsPerEpoch = int(gltrain::stepsPerEpoch(n, o));
        planFit(*fit_);
        fit_->endStep = long(o.epochs) * fit_->stepsPerEpoch;
        fit_->start = Clock::now();
        history_.clear();
        if (step_ >= fit_->endStep) fit_.reset();
    }

    // After a lost context (ContextLostError while it lasts), the first call
    // rebuilds the model from its snapshot and replays the steps since then
    // without reporting them again: onStep sees every step once, in order.
    bool stepOnce() {
        if (cpu_) return cpu_->stepOnce();
        if (!fit_) return false;
        requireGpu("fit");
        FitState& f = *fit_;
        if (!f.snapshotted) {  // the state this fit starts from, for a lost context
            if (!snapshotCurrent_ || snapshot_.step != step_) takeSnapshot();
            f.snapshotted = true;
        }
        pollSnapshot();
        const int epoch = int(step_ / f.stepsPerEpoch);
        const int batch = int(step_ % f.stepsPerEpoch);
        Plan& p = f.planOf(batch);
        // A replayed step ran before the context was lost and was reported then.
        const bool replay = step_ + 1 <= f.reportedStep;
        if (f.startedEpoch != epoch) {
            f.startedEpoch = epoch;
            f.epochStart = Clock::now();
            f.epochLossSum = 0;
            f.epochLossRows = 0;
            f.epochRows = 0;
            f.correctHost = 0;
            f.countedRows = f.rowsInSums = 0;
            f.resetSums();
        }
        if (f.shuffledEpoch != epoch) {
            shuffleInto(*f.train, epoch, f.options.shuffle);
            f.shuffledEpoch = epoch;
        }
        if (f.replaying && !replay) {  // the replay's counts were counted before the loss
            f.resetSums();
            f.rowsInSums = 0;
        }
        f.replaying = replay;
        if (!replay && f.rowsInSums + p.batch > ctx_->exactIntegerLimit()) {
            // The next count could pass what the storage holds exactly (2048 for half floats).
            f.correctHost += readCorrectSums(f);
            f.resetSums();
            f.rowsInSums = 0;
        }
        p.prepareRows(epoch, batch * f.options.batchSize);
        p.setStepUniforms(step_, options_);
        const bool read = !replay && f.options.lossEvery > 0 && (step_ + 1) % f.options.lossEvery == 0;
        const bool readNow = read && !f.options.asyncLoss;
        float loss = 0;
        if (readNow) {
            // The loss is read as soon as it exists: the backward passes and updates
            // are issued after the wait and flushed, so the GPU runs them while the
            // caller goes on (a read at the step's end waits for all of them).
            p.train.run(0, p.lossPasses);
            loss = readValue(p.lossMean);
            p.train.run(p.lossPasses, p.train.size());
        } else {
            p.train.run();
        }
        glFlush();  // the step starts on the GPU now, not at the next read
        p.swapAll();
        ++step_;
        f.epochRows += p.batch;
        if (!replay) f.countedRows += p.batch, f.rowsInSums += p.batch;
        snapshotCurrent_ = false;
        if (f.options.snapshotEvery > 0 && step_ % f.options.snapshotEvery == 0) issueSnapshot();

        StepInfo info;
        info.step = step_;
        info.epoch = epoch;
        // A read in flight is taken when its fence has signalled — or at an epoch's
        // end, where waiting is fine. (Browsers update fences only between event-loop
        // turns, so a synchronous fit there sees its async losses at epoch ends.)
        const bool epochEnd = batch + 1 == f.stepsPerEpoch;
        if (f.pending && (epochEnd || f.reader->ready())) {
            f.pending = false;
            f.reader->get(read1x1_);
            takeLoss(f, read1x1_.data[0], f.pendingStep, f.pendingRows, &info);
        }
        if (read) {
            if (f.options.asyncLoss) {
                if (!f.pending) {  // one read in flight at a time, through one reused buffer
                    if (!f.reader) f.reader = std::make_unique<AsyncReadback>(p.lossMean);
                    else f.reader->issue(p.lossMean);
                    f.pending = true;
                    f.pendingStep = step_;
                    f.pendingRows = p.batch;
                }
            } else {
                takeLoss(f, loss, step_, p.batch, &info);
            }
        }
        info.elapsedSeconds = seconds(f.start);
        info.samplesPerSecond = double(f.epochRows) / std::max(1e-9, seconds(f.epochStart));
        if (!replay) {
            f.reportedStep = step_;
            if (f.callbacks.onStep) f.callbacks.onStep(info);
        }
        // An epoch end the replay passes again was reported before the loss.
        if (epochEnd && (history_.empty() || history_.back().epoch < epoch)) endEpoch(f, epoch);
        if (step_ >= f.endStep) {
            finishFit();
            return false;
        }
        return true;
    }

    // Steps until about `ms` milliseconds have passed (at least one step, at
    // most maxSteps); returns the number of steps run. For requestAnimationFrame
    // loops; maxSteps lets a loop stop or look at the model at a chosen step,
    // whatever the machine's speed.
    int trainFor(double ms, int maxSteps = std::numeric_limits<int>::max()) {
        if (maxSteps < 1) throw ArgumentError("trainFor: maxSteps must be >= 1, got " + std::to_string(maxSteps));
        auto t0 = Clock::now();
        int n = 0;
        while (fitting() && n < maxSteps && (n == 0 || seconds(t0) * 1000.0 < ms)) {
            stepOnce();
            ++n;
        }
        return n;
    }
    bool fitting() const { return cpu_ ? cpu_->fitting() : bool(fit_); }
    // Ends a fit early (an aborted training loop): the model keeps the
    // weights, optimizer state and step of the last completed step.
    void endFit() {
        if (cpu_) cpu_->endFit();
        if (fit_) finishFit();
    }

    // Where a training step's time goes: the step's passes at this batch size
    // on the first rows of (x, y), each run `reps` times and timed
    // (PassList::profile: GPU timer queries where the context has them, else
    // each pass waited for). Nothing is swapped, so the model does not change.
    std::vector<PassTiming> profileStep(const HostMatrix& x, const Targets& y, int batchSize, int reps = 5) {
        requireCompiled("profileStep");
        if (cpu_) throw UnsupportedError("profileStep: this model trains on the CPU backend; the profile times GPU passes");
        checkData("profileStep", x, y);
        if (batchSize <= 0 || batchSize > x.rows)
            throw ArgumentError("profileStep: batchSize must be in [1, " + std::to_string(x.rows) + "], got " +
                                std::to_string(batchSize));
        auto d = upload(x, y, 0, batchSize);
        Plan& p = plan(batchSize, true);
        p.bind(*d);
        p.prepareRows(0, 0);
        p.setStepUniforms(step_, options_);
        auto times = p.train.profile(reps);
        if (fit_ && (fit_->plan == &p || fit_->ragged == &p)) p.bind(*fit_->train);
        return times;
    }
    const std::vector<EpochInfo>& history() const { return cpu_ ? cpu_->history() : history_; }

    // ---- evaluation -----------------------------------------------------

    Evaluation evaluate(const HostMatrix& x, const Targets& y, int batchSize = 256) {
        requireCompiled("evaluate");
        if (batchSize <= 0) throw ArgumentError("evaluate: batchSize must be positive");
        checkData("evaluate", x, y);
        if (cpu_) return cpu_->evaluate(x, y, batchSize);
        auto data = upload(x, y, 0, x.rows);
        return evaluateDevice(*data, batchSize);
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
        if (cpu_) return cpu_->predict(x, batchSize);
        HostMatrix out(x.rows, outputSize_);
        auto d = upload(x, Targets(), 0, x.rows);
        for (int r0 = 0; r0 < x.rows; r0 += batchSize) {
            int b = std::min(batchSize, x.rows - r0);
            Plan& p = plan(b, false);
            p.bind(*d);
            p.gatherOffset(r0);
            p.forward.run();
            HostMatrix y = p.output->download();
            std::copy(y.data.begin(), y.data.end(), out.data.begin() + std::ptrdiff_t(size_t(r0) * size_t(outputSize_)));
        }
        return out;
    }

    // ---- parameters and checkpoints ---------------------------------------

    // A layer's parameter or statistic, read back as its stored matrix:
    // "kernel" (Dense in x out; Conv2D (kh*kw*C) x filters), "bias" (1 x out),
    // "gamma", "beta", "moving_mean", "moving_variance" (1 x C).
    HostMatrix weight(const std::string& layer, const std::string& which) const {
        const Variable& v = variable(layer, which, "weight");
        return cpu_ ? onCpu(layer, which).value : v.value->front().download();
    }
    void setWeight(const std::string& layer, const std::string& which, const HostMatrix& value) {
        const Variable& v = variable(layer, which, "setWeight");
        if (cpu_) {
            HostMatrix& h = onCpu(layer, which).value;
            if (value.rows != h.rows || value.cols != h.cols)
                throw ArgumentError("setWeight: " + layer + "/" + which + " is " + std::to_string(h.rows) + "x" +
                                    std::to_string(h.cols) + ", got " + std::to_string(value.rows) + "x" +
                                    std::to_string(value.cols));
            requireConsistent("setWeight", "value", value);
            requireFinite("setWeight", value);
            h = value;
            stateWritten();
            return;
        }
        Tensor& t = v.value->front();
        if (value.rows != t.rows() || value.cols != t.cols())
            throw ArgumentError("setWeight: " + layer + "/" + which + " is " + t.shapeString() + ", got " +
                                std::to_string(value.rows) + "x" + std::to_string(value.cols));
        requireFinite("setWeight", value);
        t.upload(value);
        stateWritten();
        takeSnapshot();  // a changed weight could not be replayed after a lost context
    }

    // safetensors: "<layer>/<variable>" in TensorFlow's shapes — Dense kernel
    // [in, out], Conv2D kernel [kh, kw, C, filters] (HWIO), bias, gamma, beta,
    // moving_mean, moving_variance [C] — optimizer slots "<layer>/<param>/slot<i>",
    // and metadata (format, step, seed, optimizer).
    std::vector<uint8_t> saveCheckpoint() const {
        auto c = checkpoint();
        return serializeSafetensors(c.first, c.second);
    }
    // Writes a temporary file and renames it: a crash never leaves half a checkpoint.
    void save(const std::string& path) const {
        auto c = checkpoint();
        saveSafetensorsFile(path, c.first, c.second);
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
        SafetensorsFile f = parseSafetensors(bytes, source);
        const std::string where = "loadCheckpoint " + source + ": ";
        const OptimizerConfig& opt = options_.optimizer;
        std::vector<std::pair<Stored, HostMatrix>> staged;
        std::set<std::string> used;  // the file's tensors the model takes (or, resetting, ignores)
        bool anyState = false, allState = true;
        auto isSlot = [](const std::string& name) { return name.find("/slot") != std::string::npos; };
        if (resetOptimizer)
            for (const std::string& name : f.names)
                if (isSlot(name)) used.insert(name);
        const bool fileHasState = std::any_of(f.names.begin(), f.names.end(), isSlot);
        if (fileHasState && !resetOptimizer && f.metadata.count("optimizer") &&
            f.metadata.at("optimizer") != optimizerName(opt.kind))
            throw ArgumentError(where + "its optimizer state is " + f.metadata.at("optimizer") + "'s, the model trains with " +
                                optimizerName(opt.kind) + " (load it with resetOptimizer, or --reset-optimizer, to " +
                                "start the optimizer afresh from its weights)");
        auto take = [&](const std::string& name, Stored target, const std::vector<int64_t>& shape, bool optional,
                        int slot) {
            if (!f.contains(name)) {
                if (optional) return false;
                throw ArgumentError(where + "tensor '" + name + "' is missing");
            }
            used.insert(name);
            const TensorData& t = f.at(name);
            int64_t n = int64_t(target.rows) * target.cols;
            // The saved shape, or the stored matrix's [rows, cols].
            bool shapeOk = t.shape == shape || (t.shape.size() == 2 && t.shape[0] == target.rows &&
                                                t.shape[1] == target.cols);
            if (!shapeOk || int64_t(t.numel()) != n)
                throw ArgumentError(where + "tensor '" + name + "' has shape " + shapeString(t.shape) +
                                    ", the model needs " + shapeString(shape));
            if (t.dtype != Dtype::F32)
                throw ArgumentError(where + "tensor '" + name + "' is " + dtypeName(t.dtype) + ", expected F32");
            HostMatrix m(target.rows, target.cols, t.floats());
            const bool square = slot >= 0 && opt.slotIsSquare(slot);
            for (size_t i = 0; i < m.data.size(); ++i) {
                if (!std::isfinite(m.data[i]))
                    throw ArgumentError(where + "tensor '" + name + "' holds NaN or Inf (element " + std::to_string(i) +
                                        ")");
                if (square && m.data[i] < 0.0f)
                    throw ArgumentError(where + "tensor '" + name + "' is " + optimizerName(opt.kind) +
                                        "'s mean of squared gradients but holds " + std::to_string(m.data[i]) +
                                        " at element " + std::to_string(i) + " (must be >= 0)");
            }
            staged.push_back({target, std::move(m)});
            return true;
        };
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                take(L.name + "/" + v.name, stored(L, v, -1), v.shape, false, -1);
                if (resetOptimizer) continue;
                for (int s = 0; s < opt.stateSlots(); ++s) {
                    bool a = take(L.name + "/" + v.name + "/slot" + std::to_string(s), stored(L, v, s), v.shape, true, s);
                    anyState = anyState || a;
                    allState = allState && a;
                }
            }
            for (auto& v : L.buffers) take(L.name + "/" + v.name, stored(L, v, -1), v.shape, false, -1);
        }
        std::string unknown;
        int unknownCount = 0;
        for (const std::string& name : f.names)
            if (!used.count(name) && ++unknownCount <= 5) unknown += (unknown.empty() ? "'" : ", '") + name + "'";
        if (unknownCount)
            throw ArgumentError(where + std::to_string(unknownCount) + " tensor" + (unknownCount > 1 ? "s" : "") +
                                " the model does not have: " + unknown + (unknownCount > 5 ? ", ..." : "") +
                                (fileHasState && !anyState && !resetOptimizer
                                     ? " (optimizer state of another optimizer? load it with resetOptimizer)"
                                     : " (a checkpoint of another model?)"));
        if (anyState && !allState)
            throw ArgumentError(where + "optimizer state is present for some parameters only");
        long step = 0;
        if (f.metadata.count("step") && !resetOptimizer) {
            const std::string& text = f.metadata.at("step");
            size_t usedChars = 0;
            try {
                step = std::stol(text, &usedChars);
            } catch (...) {
                usedChars = 0;
            }
            if (usedChars == 0 || usedChars != text.size())
                throw ArgumentError(where + "metadata 'step' is not a number: '" + text + "'");
            if (step < 0) throw ArgumentError(where + "metadata 'step' is negative");
        }
        // Validated: now change the model.
        for (auto& [target, value] : staged) target.write(value);
        stateWritten();
        if (!anyState)
            for (auto& L : layers_)
                for (auto& v : L.params)
                    for (int s = 0; s < opt.stateSlots(); ++s) {
                        Stored slot = stored(L, v, s);
                        slot.write(HostMatrix(slot.rows, slot.cols));
                    }
        step_ = anyState ? step : 0;
        fit_.reset();
        if (cpu_) cpu_->endFit();
        if (resetOptimizer)
            takeSnapshot();  // the state now is not the file's (its slots were dropped): snapshot it
        else
            snapshot_ = {bytes, step_};  // what was loaded is the state to restore after a lost context
        snapshotPending_ = false;
        snapshotCurrent_ = true;
    }
    void load(const std::string& path) { loadCheckpoint(readFile(path, "checkpoint"), path); }

    // Texture pool counters: constant across steps in the steady state.
    const PoolStats& poolStats() const { return ctx_->pool().stats(); }

    // ---- lost contexts ----------------------------------------------------

    // Rebuilds the model on a restored context from its last snapshot, unless
    // that is done already (every entry that uses the GPU does it first);
    // returns the step the model is at then. ContextLostError while the context
    // is lost. In a fit, stepOnce() then replays the steps since the snapshot.
    long restore() {
        requireCompiled("restore");
        return step_;
    }
    // The step of the last snapshot (compile: step 0, the initial state).
    long snapshotStep() const { return snapshot_.bytes.empty() ? 0 : snapshot_.step; }
    // The last snapshot as a checkpoint (saveCheckpoint's format; its 'step' is
    // snapshotStep()): the state a lost context restores. It reads nothing from
    // the GPU, so it is how to keep a model's progress while the context is
    // lost, or after a restore was refused (a device that cannot run what the
    // Context chose: every GPU call throws UnsupportedError). The CPU backend
    // keeps no snapshots: its state now.
    std::vector<uint8_t> snapshotCheckpoint() const {
        if (!compiled_) throw ArgumentError("snapshotCheckpoint: the model is not compiled (call compile first)");
        if (cpu_) return saveCheckpoint();
        return snapshot_.bytes.empty() ? initialCheckpoint() : snapshot_.bytes;
    }
    // How many times the model was rebuilt after a lost context.
    int restorations() const { return restorations_; }
    // The dynamic loss scale (a synchronous read); 0 when loss scaling is off.
    float lossScale() {
        requireCompiled("lossScale");
        if (!lossScalingOn()) return 0.0f;
        return lossScale_ ? lossScale_->front().download()(0, 0) : options_.lossScaling.initialScale;
    }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

    // A trainable parameter (with its optimizer slots) or a statistic (moving
    // averages: no slots), as a matrix on the GPU and its saved shape.
    struct Variable {
        std::string name;
        std::vector<int64_t> shape;
        std::unique_ptr<PingPong> value;
        std::vector<std::unique_ptr<PingPong>> slots;
    };
    struct LayerState {
        std::string name;
        Shape3 in, out;
        Window window;  // Conv2D and pooling
        std::vector<Variable> params, buffers;
        Variable& param(const char* n) {
            for (auto& v : params)
                if (v.name == n) return v;
            throw Error("Sequential: layer " + name + " has no parameter " + n);
        }
        Variable& buffer(const char* n) {
            for (auto& v : buffers)
                if (v.name == n) return v;
            throw Error("Sequential: layer " + name + " has no statistic " + n);
        }
    };

    // A dataset on the GPU: rows, targets (labels N x 1 or values N x C), and
    // the order in which training visits them.
    struct DeviceData {
        int n = 0;
        Tensor x, y, order;
    };

    // Everything one batch size needs, recorded once.
    struct Plan {
        int batch = 0;
        bool training = false;
        Tensor xb, yb;     // the batch: in a training plan, row windows of xFill, yFill
        // Training: the gathers fill fillSteps batches at once (one pass each for x
        // and y every fillSteps steps, not every step); the step's batch is a window.
        Tensor xFill, yFill;
        PassList fill;
        int fillSteps = 1;
        int filledEpoch = -1, filledStart = -1;  // what xFill, yFill hold: rows from filledStart of that epoch
        std::deque<Tensor> tensors;  // the step's own temporaries (stable addresses)
        std::unique_ptr<graph::GpuPlan> graph;  // the model's passes and their tensors
        Tensor* output = nullptr;    // model output (after a final Softmax)
        Tensor* logits = nullptr;    // what the loss reads
        Tensor lossRows, lossMean;
        PingPong correctSum;         // correct predictions accumulated over an epoch / an evaluation
        PingPong lossSum;
        PassList forward;  // gather + forward (predict, evaluate)
        PassList train;    // forward + loss + backward + updates (or recordSmallMlpStep's passes)
        size_t lossPasses = 0;  // train's first passes, up to the one that writes lossMean
        PassList evalTail; // loss, sums (after forward)
        std::vector<Pass*> gathers;
        std::vector<Pass*> dropouts;
        std::vector<Pass*> updates;  // one per parameter; per-step lr and bias corrections
        std::vector<PingPong*> swaps;

        Tensor& temp(Context& ctx, int r, int c, Layout layout = Layout::Packed) {
            tensors.emplace_back(ctx, r, c, layout);
            return tensors.back();
        }
        // Points the row gathers at a dataset (y only when it has targets).
        void bind(DeviceData& d) {
            gathers[0]->input("SRC", d.x).input("IDX", d.order);
            if (d.y) gathers[1]->input("SRC", d.y).input("IDX", d.order);
            filledEpoch = filledStart = -1;  // another dataset (or order): gather again
        }
        // Training: points xb, yb at the batch starting at row `first` of
        // `epoch`'s order, gathering the chunk of fillSteps batches that holds it
        // first unless it is already there. Chunks start at multiples of
        // fillSteps batches; a batch that does not fall inside one (a short last
        // batch, whose plan's batches are shorter than the full ones before it)
        // starts its own. A chunk may reach past the data (gather_rows clamps;
        // unused rows).
        void prepareRows(int epoch, int first) {
            const int span = fillSteps * batch;
            int start = first / span * span;
            if (first + batch > start + span) start = first;
            if (filledEpoch != epoch || filledStart != start) {
                gatherOffset(start);
                fill.run();
                filledEpoch = epoch;
                filledStart = start;
            }
            xb.moveWindow(first - start);
            yb.moveWindow(first - start);
        }
        void gatherOffset(int off) {
            for (auto* g : gathers) g->uniformInt("offset", off);
        }
        void setStepUniforms(long step, const CompileOptions& o) {
            for (auto* d : dropouts) d->uniformInt("step", int(step & 0xFFFFFF));
            float lr = o.schedule.at(o.optimizer.lr, step);
            for (auto* u : updates) setStep(*u, o.optimizer, int(step + 1), lr);
        }
        void swapAll() {
            for (auto* s : swaps) s->swap();
        }
        void resetSums() {
            correctSum.front().clear();
            lossSum.front().clear();
        }
    };

    struct FitState {
        FitOptions options;
        Callbacks callbacks;
        std::unique_ptr<DeviceData> train, val;
        Plan* plan = nullptr;    // full batches (none when the rows are fewer than a batch)
        Plan* ragged = nullptr;  // the epoch's short last batch (none when it divides or is dropped)
        // Uploaded again after a lost context: the caller's x (which must outlive
        // the fit), and a copy of the targets (often a temporary made from labels).
        const HostMatrix* x = nullptr;
        Targets y;
        int trainRows = 0;              // x's first rows train; the rest (validationSplit) validate
        int stepsPerEpoch = 1;
        // The rows of an epoch's short last batch (0: none).
        int raggedRows() const { return shortBatchRows(trainRows, options); }
        // The plan that runs step `batch` of an epoch.
        Plan& planOf(int batch) const { return ragged && batch + 1 == stepsPerEpoch ? *ragged : *plan; }
        void resetSums() const {
            for (Plan* p : {plan, ragged})
                if (p) p->resetSums();
        }
        long endStep = 0;
        int shuffledEpoch = -1, startedEpoch = -1;
        Clock::time_point start, epochStart;
        double epochLossSum = 0;
        long epochLossRows = 0, epochRows = 0;
        // Epoch accuracy: correct counts in the GPU sum (rowsInSums rows) plus
        // those read out before the storage could lose an integer.
        double correctHost = 0;
        long countedRows = 0, rowsInSums = 0;
        bool snapshotted = false;  // the fit's starting state is in the snapshot
        long reportedStep = 0;     // onStep has seen every step up to here
        bool replaying = false;    // re-running steps after a lost context
        std::unique_ptr<AsyncReadback> reader;  // the loss, read through a fence (asyncLoss)
        bool pending = false;
        long pendingStep = 0;
        int pendingRows = 0;  // the rows of the step whose loss is in flight
    };

    // Layer i's name and output shape from its input shape; errors name the
    // layer, what it received and from where.
    LayerState inferLayer(size_t i, Shape3 in, const std::string& from, const CompileOptions& options) const {
        LayerState L;
        L.in = in;
        L.out = in;
        const Layer& spec = specs_[i];
        const std::string& given = givenLayerName(spec);
        L.name = given.empty() ? std::visit([](const auto& l) { return std::string(l.kDefaultName); }, spec) + "_" +
                                     std::to_string(i)
                               : given;
        // The checks of each field's own value, from the layer's field table (layers/field.hpp).
        if (const std::string problem = layerFieldProblem(spec); !problem.empty())
            throw ArgumentError("compile: layer " + L.name + ": " + problem);
        // Its output, from the layer's own shape function (layers/shape.hpp).
        ShapeContext c;
        c.in = in;
        c.name = L.name;
        c.from = from;
        c.flatModelInput = i == 0 && inputShape_.height == 1 && inputShape_.width == 1;
        c.last = i + 1 == specs_.size();
        c.softmaxLoss = options.loss == LossKind::SoftmaxCrossEntropy;
        const LayerShape s = std::visit([&](const auto& l) { return l.shape(c); }, spec);
        L.out = s.out;
        L.window = s.window;
        return L;
    }

    // Creates layer i's parameters (initialised from the seed, stream 2i and
    // 2i + 1 as before), their optimizer slots, and its statistics — on the
    // GPU, or with `onCpu` as that CPU-backend layer's host matrices (the
    // Variables here then keep names and shapes only).
    void createParameters(size_t i, cpu::Model::Layer* onCpu = nullptr) {
        generation_ = ctx_->generation();
        LayerState& L = layers_[i];
        if (onCpu) {
            onCpu->name = L.name;
            onCpu->spec = specs_[i];
            onCpu->in = L.in;
            onCpu->out = L.out;
            onCpu->window = L.window;
        }
        initialVariables(L, i, [&](bool trainable, const char* name, std::vector<int64_t> shape, auto&& make) {
            const HostMatrix init = make();
            std::vector<Variable>& list = trainable ? L.params : L.buffers;
            Variable v;
            v.name = name;
            v.shape = std::move(shape);
            if (onCpu) {
                cpu::Model::Variable h;
                h.name = name;
                h.shape = v.shape;
                h.value = init;
                if (trainable) h.slots.assign(size_t(options_.optimizer.stateSlots()), HostMatrix(init.rows, init.cols));
                (trainable ? onCpu->params : onCpu->buffers).push_back(std::move(h));
                list.push_back(std::move(v));
                return;
            }
            v.value = std::make_unique<PingPong>(*ctx_, init);  // written by the update: packed
            if (trainable)
                for (int s = 0; s < options_.optimizer.stateSlots(); ++s)
                    v.slots.push_back(std::make_unique<PingPong>(*ctx_, HostMatrix(init.rows, init.cols)));
            list.push_back(std::move(v));
        });
    }
    // Layer i's variables, as its header declares them (layers/variable.hpp):
    // add(trainable, name, shape, make), make() their initial value from the
    // seed (made only when called: compile counts the shapes first).
    template <class Add>
    void initialVariables(const LayerState& L, size_t i, Add&& add) const {
        const uint32_t seed = options_.seed;
        const std::vector<LayerVariable> vars = layerVariables(specs_[i], L.in);
        for (size_t k = 0; k < vars.size(); ++k) {
            const LayerVariable& v = vars[k];
            add(v.trainable, v.name, v.shape, [&] { return v.initial(seed, uint32_t(2 * i + k)); });
        }
    }
    // A checkpoint, and every snapshot a fit takes, is one buffer: compile
    // refuses a model whose checkpoint one buffer cannot hold (a std::vector's
    // max_size: 2^31 - 1 bytes on wasm32) from its shapes, before anything is
    // allocated — it failed at fit() or saveCheckpoint() with a bare "vector" before.
    void requireCheckpointFits(const std::vector<LayerState>& layers, const CompileOptions& options) const {
        double params = 0, statistics = 0;
        for (size_t i = 0; i < layers.size(); ++i)
            initialVariables(layers[i], i, [&](bool trainable, const char*, const std::vector<int64_t>& shape, auto&&) {
                double n = 1;
                for (int64_t d : shape) n *= double(d);
                (trainable ? params : statistics) += n;
            });
        const int slotsPerParam = options.optimizer.stateSlots();
        const double slots = params * slotsPerParam, bytes = 8.0 + 4.0 * (params + slots + statistics);
        const double limit = double(std::vector<uint8_t>().max_size());
        if (bytes <= limit) return;
        auto grouped = [](double v) {  // 10803960128 -> "10,803,960,128"
            std::string digits = std::to_string(int64_t(v)), out;
            for (size_t k = 0; k < digits.size(); ++k) {
                if (k && (digits.size() - k) % 3 == 0) out += ',';
                out += digits[k];
            }
            return out;
        };
        auto gib = [](double b, const char* format) {
            char text[32];
            std::snprintf(text, sizeof text, format, b / 1073741824.0);
            return std::string(text);
        };
        std::string parts = grouped(params) + " parameters";
        if (slots > 0)
            parts += ", " + grouped(slots) + " values of " + optimizerName(options.optimizer.kind) + "'s " +
                     std::to_string(slotsPerParam) + " optimizer slot" + (slotsPerParam > 1 ? "s" : "");
        if (statistics > 0) parts += ", " + grouped(statistics) + " statistics";
        throw ArgumentError("compile: the model's checkpoint would take " + gib(bytes, "%.1f") + " GiB (" + grouped(bytes) +
                            " bytes: " + parts + ", 4 bytes each), more than the " + gib(limit + 1, "%g") + " GiB (" +
                            grouped(limit) + " bytes) one " +
#ifdef __EMSCRIPTEN__
                            "WebAssembly " +
#endif
                            "buffer can hold; fit() (whose snapshots are checkpoints) and saveCheckpoint() could not "
                            "make it. Use fewer or smaller layers" +
                            (slots > 0 ? std::string(", or an optimizer with fewer slots (sgd keeps none)") : "") + ".");
    }
    // The compiled initial state as a checkpoint (step 0), made on the host in
    // forEachSaved's order: what an empty snapshot stands for.
    std::vector<uint8_t> initialCheckpoint() const {
        std::vector<std::pair<std::string, TensorData>> tensors;
        for (size_t i = 0; i < layers_.size(); ++i) {
            std::vector<std::pair<std::string, TensorData>> statistics;
            initialVariables(layers_[i], i, [&](bool trainable, const char* name, std::vector<int64_t> shape, auto&& make) {
                const HostMatrix init = make();
                const std::string key = layers_[i].name + "/" + name;
                if (!trainable) {
                    statistics.emplace_back(key, TensorData::f32(shape, init.data));
                    return;
                }
                tensors.emplace_back(key, TensorData::f32(shape, init.data));
                for (int s = 0; s < options_.optimizer.stateSlots(); ++s)
                    tensors.emplace_back(key + "/slot" + std::to_string(s),
                                         TensorData::f32(shape, std::vector<float>(init.data.size(), 0.0f)));
            });
            for (auto& t : statistics) tensors.push_back(std::move(t));
        }
        return serializeSafetensors(tensors, checkpointMetadata(0));
    }


    using Checkpoint = std::pair<std::vector<std::pair<std::string, TensorData>>, std::map<std::string, std::string>>;
    Checkpoint checkpoint() const {
        requireCompiled("saveCheckpoint");
        Checkpoint c;
        // The step guard keeps non-finite values out of the model's state; should one
        // get there all the same, no checkpoint or snapshot is made of it.
        auto add = [&](const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& data) {
            for (float x : data)
                if (!std::isfinite(x))
                    throw TrainingError("saveCheckpoint: tensor '" + name + "' holds NaN or Inf at step " +
                                        std::to_string(step_) + "; no checkpoint is made of a state that is not finite");
            c.first.emplace_back(name, TensorData::f32(shape, data));
        };
        if (cpu_)  // the same names, shapes and order from the CPU backend's host matrices
            cpu_->model().forEachSaved([&](const std::string& name, const cpu::Model::Variable& v, const HostMatrix& m) {
                add(name, v.shape, m.data);
            });
        else
            forEachSaved([&](const std::string& name, const Variable& v, const Tensor& t) {
                add(name, v.shape, t.download().data);
            });
        c.second = checkpointMetadata(step_);
        return c;
    }
    // What a checkpoint holds, in its order: f(name, variable, tensor) for every
    // parameter, its optimizer slots and every statistic.
    template <class F>
    void forEachSaved(F&& f) const {
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                f(L.name + "/" + v.name, v, v.value->front());
                for (size_t s = 0; s < v.slots.size(); ++s)
                    f(L.name + "/" + v.name + "/slot" + std::to_string(s), v, v.slots[s]->front());
            }
            for (auto& v : L.buffers) f(L.name + "/" + v.name, v, v.value->front());
        }
    }
    std::map<std::string, std::string> checkpointMetadata(long step) const {
        return {{"format", "gltrain-1"},
                {"step", std::to_string(step)},
                {"seed", std::to_string(options_.seed)},
                {"optimizer", optimizerName(options_.optimizer.kind)}};
    }

    // ---- snapshots and lost contexts ----

    // A state the model had, as safetensors bytes (saveCheckpoint's format:
    // weights, optimizer slots, statistics, step). Empty: the compiled initial
    // state, which createParameters() makes again from the seed.
    struct Snapshot {
        std::vector<uint8_t> bytes;
        long step = 0;
    };

    // Every entry that uses the GPU comes through here: ContextLostError while
    // the context is lost; after it came back, the model rebuilds itself first.
    void requireGpu(const char* what) {
        if (cpu_) return;  // the CPU backend: nothing on the GPU
        ctx_->requireUsable(what);
        if (compiled_ && generation_ != ctx_->generation()) rebuild();
    }

    // The snapshot, now (a synchronous read: at a fit's start and end, and
    // after setWeight; between, issueSnapshot() reads through fences).
    void takeSnapshot() {
        // A state that is not finite (NanPolicy::Ignore lets one in) is no state to
        // restore: the last snapshot stays.
        try {
            snapshot_ = {saveCheckpoint(), step_};
        } catch (const TrainingError&) {
            if (options_.onNaN != NanPolicy::Ignore) throw;
            return;
        }
        snapshotPending_ = false;
        snapshotCurrent_ = true;
    }
    // Queues a read of every saved tensor (one pixel-pack buffer each, reused);
    // pollSnapshot() takes it once the GPU is done. One in flight at a time.
    void issueSnapshot() {
        if (snapshotPending_) return;
        if (snapshotReaders_.empty())
            forEachSaved([&](const std::string&, const Variable&, const Tensor& t) {
                snapshotReaders_.push_back(std::make_unique<AsyncReadback>(t));
            });
        else
            for (auto& r : snapshotReaders_) r->issue();
        snapshotPending_ = true;
        snapshotPendingStep_ = step_;
    }
    void pollSnapshot() {
        // The fences signal in order: the last one covers them all.
        if (!snapshotPending_ || !snapshotReaders_.back()->ready()) return;
        std::vector<std::pair<std::string, TensorData>> tensors;
        size_t i = 0;
        bool finite = true;
        forEachSaved([&](const std::string& name, const Variable& v, const Tensor&) {
            const std::vector<float>& data = snapshotReaders_[i++]->get().data;
            for (float x : data) finite = finite && std::isfinite(x);
            tensors.emplace_back(name, TensorData::f32(v.shape, data));
        });
        snapshotPending_ = false;
        if (ctx_->lost()) return;  // read as the context went away: not to be trusted
        // A state the step guard is about to undo (it judges a step's outputs at the
        // next step) is no state to restore: the last snapshot stays.
        if (!finite) return;
        snapshot_ = {serializeSafetensors(tensors, checkpointMetadata(snapshotPendingStep_)), snapshotPendingStep_};
    }

    // Everything this model had on the GPU went with a lost context. The
    // variables are made again from the snapshot (weights, optimizer state,
    // step), and a fit in progress uploads its data again (beginFit's x and y
    // are still the caller's) and replays the steps since the snapshot: the
    // shuffle comes from (seed, epoch) and dropout from (seed, step), so the
    // replay retraces them.
    void rebuild() {
        generation_ = ctx_->generation();
        plans_.clear();  // tensors and passes of the old context: dropped without GL calls
        snapshotReaders_.clear();
        snapshotPending_ = false;
        lossScale_.reset();
        stepCheck_.reset();
        std::unique_ptr<FitState> fit = std::move(fit_);
        if (fit) {
            if (fit->train) fit->trainRows = fit->train->n;
            fit->train.reset();
            fit->val.reset();
            fit->reader.reset();
            fit->pending = false;
            fit->plan = fit->ragged = nullptr;
        }
        try {
            rebuildFrom(fit);
        } catch (...) {
            // Lost again while rebuilding: keep the fit, and rebuild at the next call.
            generation_ = std::numeric_limits<uint64_t>::max();
            if (fit) fit_ = std::move(fit);
            throw;
        }
    }
    void rebuildFrom(std::unique_ptr<FitState>& fit) {
        for (size_t i = 0; i < layers_.size(); ++i) {
            layers_[i].params.clear();
            layers_[i].buffers.clear();
            createParameters(i);
        }
        const Snapshot snap = snapshot_;
        if (!snap.bytes.empty()) loadCheckpoint(snap.bytes, "(the snapshot of step " + std::to_string(snap.step) + ")");
        step_ = snap.step;  // loadCheckpoint takes the step only with optimizer state (SGD has none)
        snapshot_ = snap;
        snapshotCurrent_ = true;
        ++restorations_;
        if (!fit) return;
        FitState& f = *fit;
        f.train = upload(*f.x, f.y, 0, f.trainRows);
        if (f.options.validationSplit > 0.0f) f.val = upload(*f.x, f.y, f.trainRows, f.x->rows - f.trainRows);
        else if (f.options.validationX) f.val = upload(*f.options.validationX, *f.options.validationY, 0, f.options.validationX->rows);
        planFit(f);
        f.shuffledEpoch = -1;
        f.countedRows -= f.rowsInSums;  // those counts were on the GPU
        f.rowsInSums = 0;
        f.replaying = false;
        fit_ = std::move(fit);
    }
    // The fit's last state becomes the snapshot (a lost context has no data to
    // replay from once the fit is over); while the context is lost, the last
    // snapshot stays.
    void finishFit() {
        fit_.reset();
        settleLastStep();
        if (!ctx_->lost()) takeSnapshot();
    }
    void forgetSnapshot() {
        snapshot_ = Snapshot{};
        snapshotReaders_.clear();
        snapshotPending_ = false;
        snapshotCurrent_ = true;
        lossScale_.reset();
        stepCheck_.reset();
    }

    bool lossScalingOn() const { return options_.lossScaling.enabled(ctx_->backend() == Backend::GpuFloat16); }
    // The optimizer as the update passes run it: on half-float storage eps is at least kHalfFloatMinEps.
    OptimizerConfig updateConfig() const {
        OptimizerConfig c = options_.optimizer;
        if (ctx_->backend() == Backend::GpuFloat16) c.eps = std::max(c.eps, kHalfFloatMinEps);
        return c;
    }

    // Where a variable's value (slot -1) or optimizer slot lives — a GPU tensor
    // or the CPU backend's host matrix — as its stored shape and a writer.
    struct Stored {
        int rows = 0, cols = 0;
        std::function<void(const HostMatrix&)> write;
    };
    Stored stored(const LayerState& L, const Variable& v, int slot) {
        if (cpu_) {
            cpu::Model::Variable& h = onCpu(L.name, v.name);
            HostMatrix& m = slot < 0 ? h.value : h.slots.at(size_t(slot));
            return {m.rows, m.cols, [&m](const HostMatrix& x) { m = x; }};
        }
        Tensor& t = slot < 0 ? v.value->front() : v.slots.at(size_t(slot))->front();
        return {t.rows(), t.cols(), [&t](const HostMatrix& x) { t.upload(x); }};
    }
    // A variable of the CPU backend, by layer and variable name (both known to exist).
    cpu::Model::Variable& onCpu(const std::string& layer, const std::string& name) const {
        for (size_t i = 0; i < layers_.size(); ++i)
            if (layers_[i].name == layer) return cpu_->model().variable(i, name);
        throw Error("Sequential: no layer named " + layer);
    }

    static std::string shapeString(const std::vector<int64_t>& shape) {
        std::string s = "[";
        for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
        return s + "]";
    }
    const Variable& variable(const std::string& layer, const std::string& which, const char* what) const {
        requireCompiled(what);
        for (auto& L : layers_) {
            if (L.name != layer) continue;
            std::string names;
            for (auto* list : {&L.params, &L.buffers})
                for (auto& v : *list) {
                    if (v.name == which) return v;
                    names += (names.empty() ? "" : ", ") + v.name;
                }
            throw ArgumentError(std::string(what) + ": layer '" + layer + "' has " +
                                (names.empty() ? "no weights" : "no '" + which + "' (it has " + names + ")"));
        }
        throw ArgumentError(std::string(what) + ": no layer named '" + layer + "'");
    }
    void requireCompiled(const char* what) const {
        if (!compiled_) throw ArgumentError(std::string(what) + ": the model is not compiled (call compile first)");
        // A rebuild from the snapshot restores the model's observable state, so const entries may do it too.
        const_cast<Sequential*>(this)->requireGpu(what);
    }
    static void requireFinite(const char* what, const HostMatrix& m) {
        for (size_t i = 0; i < m.data.size(); ++i)
            if (!std::isfinite(m.data[i]))
                throw ArgumentError(std::string(what) + ": value at row " + std::to_string(i / size_t(m.cols)) +
                                    ", column " + std::to_string(i % size_t(m.cols)) + " is NaN or Inf");
    }

    // HostMatrix's fields are public: a hand-built one may hold fewer values
    // than rows x cols, and reading it would run past its end.
    static void requireConsistent(const char* what, const char* name, const HostMatrix& m) {
        if (m.rows < 0 || m.cols < 0 || m.data.size() != size_t(m.rows) * size_t(m.cols))
            throw ArgumentError(std::string(what) + ": " + name + " has " + std::to_string(m.data.size()) +
                                " values, expected " + std::to_string(m.rows) + "x" + std::to_string(m.cols));
    }

    void checkData(const char* what, const HostMatrix& x, const Targets& y) const {
        if (x.rows <= 0) throw ArgumentError(std::string(what) + ": x has no rows");
        requireConsistent(what, "x", x);
        if (!y.isLabels()) requireConsistent(what, "y", y.values);
        if (x.cols != inputSize_)
            throw ArgumentError(std::string(what) + ": x has " + std::to_string(x.cols) + " columns, the model expects " +
                                std::to_string(inputSize_));
        if (y.rows() != size_t(x.rows))
            throw ArgumentError(std::string(what) + ": x has " + std::to_string(x.rows) + " rows but y has " +
                                std::to_string(y.rows()));
        requireFinite(what, x);
        if (options_.loss == LossKind::SoftmaxCrossEntropy) {
            if (y.isLabels()) {
                for (size_t i = 0; i < y.labels.size(); ++i)
                    if (y.labels[i] < 0 || y.labels[i] >= outputSize_)
                        throw ArgumentError(std::string(what) + ": label " + std::to_string(y.labels[i]) + " at row " +
                                            std::to_string(i) + " is outside [0, " + std::to_string(outputSize_) + ")");
            } else {
                if (y.values.cols != outputSize_)
                    throw ArgumentError(std::string(what) + ": one-hot targets have " + std::to_string(y.values.cols) +
                                        " columns, the model outputs " + std::to_string(outputSize_));
                requireFinite(what, y.values);
            }
        } else {
            if (y.isLabels())
                throw ArgumentError(std::string(what) + ": this loss needs target values (a matrix), not labels");
            if (y.values.cols != outputSize_)
                throw ArgumentError(std::string(what) + ": y has " + std::to_string(y.values.cols) +
                                    " columns, the model outputs " + std::to_string(outputSize_));
            requireFinite(what, y.values);
            // A probability: labels 0/1/2 trained silently toward nonsense before.
            if (options_.loss == LossKind::BinaryCrossEntropy)
                for (size_t i = 0; i < y.values.data.size(); ++i)
                    if (!(y.values.data[i] >= 0.0f && y.values.data[i] <= 1.0f)) {
                        char value[32];
                        std::snprintf(value, sizeof value, "%g", double(y.values.data[i]));
                        throw ArgumentError(std::string(what) + ": binary cross-entropy targets are probabilities in "
                                            "[0, 1], but y at row " + std::to_string(i / size_t(y.values.cols)) +
                                            ", column " + std::to_string(i % size_t(y.values.cols)) + " is " + value);
                    }
        }
    }

    // Uploads rows [r0, r0 + n) of x and y.
    std::unique_ptr<DeviceData> upload(const HostMatrix& x, const Targets& y, int r0, int n) {
        // The GPU only samples these (TensorUse::Sampled): they stay fp32 on the half-float
        // backend too, so data keeps its precision and row indices above 2048 stay exact.
        auto d = std::make_unique<DeviceData>();
        d->n = n;
        d->x = Tensor(*ctx_, n, x.cols, Layout::Packed, TensorUse::Sampled);
        d->x.upload(x.data.data() + size_t(r0) * size_t(x.cols), size_t(n) * size_t(x.cols));  // no host copy
        if (y.rows() == 0) {
            // predict: no targets
        } else if (options_.loss == LossKind::SoftmaxCrossEntropy) {
            std::vector<float> labels(static_cast<size_t>(n));
            for (int i = 0; i < n; ++i) {
                if (y.isLabels()) {
                    labels[size_t(i)] = float(y.labels[size_t(r0 + i)]);
                } else {  // one-hot rows: the class is the row's argmax
                    int best = 0;
                    for (int c = 1; c < y.values.cols; ++c)
                        if (y.values(r0 + i, c) > y.values(r0 + i, best)) best = c;
                    labels[size_t(i)] = float(best);
                }
            }
            d->y = Tensor(*ctx_, HostMatrix(n, 1, std::move(labels)), Layout::Unpacked, TensorUse::Sampled);
        } else {
            HostMatrix ys(n, y.values.cols,
                          std::vector<float>(y.values.data.begin() + std::ptrdiff_t(size_t(r0) * size_t(y.values.cols)),
                                             y.values.data.begin() + std::ptrdiff_t(size_t(r0 + n) * size_t(y.values.cols))));
            d->y = Tensor(*ctx_, ys, Layout::Packed, TensorUse::Sampled);
        }
        std::vector<float> order(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) order[size_t(i)] = float(i);
        d->order = Tensor(*ctx_, HostMatrix(n, 1, std::move(order)), Layout::Unpacked, TensorUse::Sampled);
        return d;
    }

    // Fisher–Yates from the counter hash: the same order natively and in the browser.
    void shuffleInto(DeviceData& d, int epoch, bool shuffle) {
        const std::vector<int> order = epochOrder(d.n, options_.seed, epoch, shuffle);
        d.order.upload(std::vector<float>(order.begin(), order.end()));
    }

    // A 1x1 tensor's value (a loss, a count), read without allocating.
    float readValue(const Tensor& t) {
        t.download(read1x1_);
        return read1x1_.data[0];
    }

    // A step's mean loss over `rows` rows: reported, and weighted by its rows in the epoch's mean.
    void takeLoss(FitState& f, float loss, long atStep, int rows, StepInfo* info) {
        // Some drivers (llvmpipe) saturate half floats at 65504 instead of making
        // them Inf: on RGBA16F such a loss overflowed, and is reported as the Inf it is.
        if (ctx_->renderFormat() == GL_RGBA16F && std::fabs(loss) >= kHalfMax)
            loss = std::copysign(std::numeric_limits<float>::infinity(), loss);
        if (!std::isfinite(loss) && options_.onNaN == NanPolicy::Stop) {
            long from = std::max(1L, atStep - std::max(1, f.options.lossEvery) + 1);
            finishFit();
            throw TrainingError("fit: the loss is " + std::string(std::isnan(loss) ? "NaN" : "Inf") +
                                (from == atStep ? " at step " + std::to_string(atStep)
                                                : " by step " + std::to_string(atStep) + " (first bad step in " +
                                                      std::to_string(from) + ".." + std::to_string(atStep) + ")") +
                                "; training stopped and the weights of the last good step are kept");
        }
        if (std::isfinite(loss)) {
            f.epochLossSum += double(loss) * rows;
            f.epochLossRows += rows;
        }
        if (info) {
            info->loss = loss;
            info->lossRead = true;
            info->lossStep = atStep;
        }
    }

    void endEpoch(FitState& f, int epoch) {
        Plan& last = f.planOf(f.stepsPerEpoch - 1);
        EpochInfo e;
        e.epoch = epoch;
        e.step = step_;
        if (f.epochLossRows == 0 || f.options.lossEvery == 0) {
            float l = readValue(last.lossMean);
            takeLoss(f, l, step_, last.batch, nullptr);
        }
        e.loss = float(f.epochLossSum / double(std::max(1L, f.epochLossRows)));
        if (options_.loss == LossKind::SoftmaxCrossEntropy)
            e.accuracy = float((f.correctHost + readCorrectSums(f)) / std::max(1L, f.countedRows));
        else
            e.accuracy = std::numeric_limits<float>::quiet_NaN();
        e.seconds = seconds(f.epochStart);
        e.samplesPerSecond = double(f.epochRows) / std::max(1e-9, e.seconds);
        if (f.val) {
            Evaluation v = evaluateDevice(*f.val, f.options.batchSize);
            e.valLoss = v.loss;
            e.valAccuracy = v.accuracy;
            bindFit(f);
        }
        history_.push_back(e);
        if (f.callbacks.onEpoch) f.callbacks.onEpoch(e);
    }

    // The training plans of a fit: one for full batches, one for a short last
    // batch; both recorded before the first step (no compiles mid-epoch).
    void planFit(FitState& f) {
        const int full = f.trainRows / f.options.batchSize, rem = f.raggedRows();
        f.plan = full ? &plan(f.options.batchSize, true) : nullptr;
        f.ragged = rem ? &plan(rem, true) : nullptr;
        bindFit(f);
    }
    void bindFit(FitState& f) {
        for (Plan* p : {f.plan, f.ragged})
            if (p) p->bind(*f.train);
    }
    // The correct predictions counted on the GPU since the sums were last reset.
    float readCorrectSums(FitState& f) {
        float n = 0;
        for (Plan* p : {f.plan, f.ragged})
            if (p) n += readValue(p->correctSum.front());
        return n;
    }

    // Loss and accuracy over a dataset on the GPU: per-batch sums accumulate
    // in 1x1 textures (one plan for full batches, one for a ragged last batch)
    // and are read back once at the end.
    Evaluation evaluateDevice(DeviceData& d, int batchSize) {
        const int full = d.n / batchSize, rem = d.n % batchSize;
        Plan* pf = full ? &plan(batchSize, false) : nullptr;
        Plan* pr = rem ? &plan(rem, false) : nullptr;
        for (Plan* p : {pf, pr})
            if (p) p->resetSums();
        double lossSum = 0, correct = 0;
        // Takes a plan's sums into the host's; before a count could pass what the
        // storage holds exactly (2^24 rows, 2048 for half floats) and at the end.
        auto take = [&](Plan& p) {
            lossSum += readValue(p.lossSum.front());
            if (options_.loss == LossKind::SoftmaxCrossEntropy) correct += readValue(p.correctSum.front());
            p.resetSums();
        };
        long fullRows = 0;
        for (int r0 = 0; r0 < d.n; r0 += batchSize) {
            Plan& p = d.n - r0 >= batchSize ? *pf : *pr;
            if (&p == pf && (fullRows += batchSize) > ctx_->exactIntegerLimit()) {
                take(p);
                fullRows = batchSize;
            }
            p.bind(d);
            p.gatherOffset(r0);
            p.forward.run();
            p.evalTail.run();
            p.swapAll();
        }
        for (Plan* p : {pf, pr})
            if (p) take(*p);
        Evaluation e;
        e.loss = float(lossSum / d.n);
        if (options_.loss == LossKind::SoftmaxCrossEntropy) e.accuracy = float(correct / d.n);
        return e;
    }

    // The largest last layer (batch x in x out multiply-adds) whose pass also writes the loss gradient.
    static constexpr int64_t kLossGradInForwardMacs = 1 << 16;
    // A training plan for a small dense model (Dense layers, a point-wise loss or
    // softmax cross-entropy, no clipping or loss scaling): the loss pass (and for
    // softmax the correct count's) and one update pass per parameter, each running
    // the network itself (ops/mlp.hpp): 1 + P passes (2 + P) instead of a pass per
    // layer, the loss's, the backward matmuls and the updates. Records nothing and
    // returns false for any other model or a step past smallDenseStepMacs.
    // MSE or BCE as the kernels name them (not meaningful for softmax cross-entropy).
    PointwiseLoss pointwiseLossKind() const {
        return options_.loss == LossKind::BinaryCrossEntropy ? PointwiseLoss::BinaryCrossEntropyWithLogits
                                                             : PointwiseLoss::MeanSquaredError;
    }
    bool recordSmallMlpStep(Plan& p) {
        if (options_.clipNorm > 0.0f || lossScalingOn()) return false;
        SmallMlp m;
        m.x = &p.xb;
        m.t = &p.yb;
        m.loss = pointwiseLossKind();
        m.softmaxLabels = options_.loss == LossKind::SoftmaxCrossEntropy;
        std::vector<LayerState*> dense;
        for (size_t i = 0; i < layers_.size(); ++i) {
            // Rows are already flat; the loss reads the logits before a final Softmax.
            if (std::holds_alternative<Flatten>(specs_[i]) || std::holds_alternative<Softmax>(specs_[i])) continue;
            auto* d = std::get_if<Dense>(&specs_[i]);
            if (!d) return false;
            LayerState& S = layers_[i];
            m.layers.push_back({&S.param("kernel").value->front(), &S.param("bias").value->front(), d->activation, d->alpha});
            dense.push_back(&S);
        }
        if (!smallMlpProblem(m).empty() || smallMlpStepMacs(m) > options_.smallDenseStepMacs) return false;
        recordSmallMlpLoss(p.train, m, p.lossMean);
        if (m.softmaxLabels) {  // the epoch's training accuracy, as the general step's reduce/argmax counts it
            recordSmallMlpCorrectCount(p.train, m, p.correctSum.back(), &p.correctSum.front());
            p.swaps.push_back(&p.correctSum);
        }
        p.lossPasses = p.train.size();
        const Tensor* guard = recordGuard(p, nullptr);
        std::vector<const Tensor*> checked;
        for (size_t l = 0; l < dense.size(); ++l) {
            for (bool bias : {false, true}) {
                Variable& v = dense[l]->param(bias ? "bias" : "kernel");
                std::vector<PingPong*> slots;
                for (auto& s : v.slots) slots.push_back(s.get());
                p.updates.push_back(&recordSmallMlpUpdate(p.train, updateConfig(), m, int(l), bias, *v.value, slots, guard));
                p.swaps.push_back(v.value.get());
                for (auto* s : slots) p.swaps.push_back(s);
                addCheckedOutputs(checked, *v.value, slots, options_.optimizer);
            }
        }
        recordCheck(p, checked);
        return true;
    }

    // How many batches a training plan gathers at once: up to 16, and no more
    // than about 8 MiB of rows (values: x and y columns). Each pass costs a
    // fixed ~0.05 ms on a software renderer (a render pass and barrier in
    // ANGLE), two gathers a step were 2 of W4's 13 passes (bench/COMPARE.md).
    static int fillStepsFor(int batch, int valuesPerRow) {
        constexpr int kMaxFillSteps = 16;
        constexpr double kFillBytes = 8.0 * 1024 * 1024;
        const double perBatch = double(batch) * double(valuesPerRow) * 4.0;
        return std::max(1, std::min(kMaxFillSteps, int(kFillBytes / perBatch)));
    }

    Plan& plan(int batch, bool training) {
        auto key = std::make_pair(batch, training);
        auto it = plans_.find(key);
        if (it != plans_.end()) return *it->second;
        auto p = std::make_unique<Plan>();
        record(*p, batch, training);
        return *plans_.emplace(key, std::move(p)).first->second;
    }

    // Records a plan's passes. Training: forward with Z kept, loss, backward
    // (the activation derivative fused into the pass that produces each dense
    // layer's incoming gradient), optional clipping, one fused update pass per
    // parameter.
    void record(Plan& p, int B, bool training) {
        Context& ctx = *ctx_;
        p.batch = B;
        p.training = training;
        const bool labels = options_.loss == LossKind::SoftmaxCrossEntropy;
        const int yCols = labels ? 1 : outputSize_;
        const Layout yLayout = labels ? Layout::Unpacked : Layout::Packed;
        if (training) {
            p.fillSteps = fillStepsFor(B, inputSize_ + yCols);
            p.xFill = Tensor(ctx, p.fillSteps * B, inputSize_);
            p.yFill = Tensor(ctx, p.fillSteps * B, yCols, yLayout);
            p.xb = Tensor::rowWindow(p.xFill, 0, B);
            p.yb = Tensor::rowWindow(p.yFill, 0, B);
        } else {
            p.xb = Tensor(ctx, B, inputSize_);
            p.yb = Tensor(ctx, B, yCols, yLayout);
        }
        if (!training) p.lossRows = Tensor(ctx, B, 1, Layout::Unpacked);  // training reads only the mean
        p.lossMean = Tensor(ctx, 1, 1);
        p.correctSum = PingPong(ctx, HostMatrix(1, 1));
        p.lossSum = PingPong(ctx, HostMatrix(1, 1));
        // Row gathers: x into the forward, y into the loss; their sources are bound
        // by Plan::bind (a pass with an unbound input refuses to run).
        for (int which = 0; which < 2; ++which) {
            PassList& list = training ? p.fill : which == 0 ? p.forward : p.evalTail;
            Pass& g = list.add(Pass(ctx, "util/gather_rows"));
            g.output(training ? (which == 0 ? p.xFill : p.yFill) : which == 0 ? p.xb : p.yb).uniformInt("offset", 0);
            p.gathers.push_back(&g);
        }

        if (training && recordSmallMlpStep(p)) return;
        if (training && lossScalingOn() && !lossScale_)
            lossScale_ = std::make_unique<PingPong>(makeLossScaleState(ctx, options_.lossScaling));
        const ModelGraph& m = modelGraph(training);
        graph::GpuPlanOptions o;
        o.fuse = true;
        o.bound[m.x] = &p.xb;
        o.bound[m.y] = &p.yb;
        o.bound[m.lossMean] = &p.lossMean;
        if (!training) o.bound[m.lossRows] = &p.lossRows;
        if (m.correct != graph::kNoValue) {
            o.bound[m.correctSoFar] = &p.correctSum.front();
            o.bound[m.correct] = &p.correctSum.back();
            p.swaps.push_back(&p.correctSum);
        }
        if (training && lossScale_) o.bound[m.seed] = &lossScale_->front();  // the gradients are scaled by it
        for (auto& [name, v] : m.variables) o.bound[v] = &variableOf(name).value->front();
        // A dense bias's gradient summed by its update itself, saving the reduction's
        // passes, unless clipping or loss scaling has to measure every gradient first.
        o.biasSumInUpdate = training && options_.clipNorm <= 0.0f && !lossScale_;
        o.lossGradInProductMacs = training ? kLossGradInForwardMacs : 0;
        // Training: one list, split for an early loss read where the backward starts;
        // evaluation: the forward (predict), then the loss and the sums.
        p.lossPasses = std::numeric_limits<size_t>::max();
        o.listFor = [&](const graph::Node& n) {
            if (training) {
                if (n.backward && p.lossPasses == std::numeric_limits<size_t>::max()) p.lossPasses = p.train.size();
                return &p.train;
            }
            const bool tail = std::holds_alternative<graph::SoftmaxCrossEntropy>(n.op) ||
                              std::holds_alternative<graph::PointwiseLossOp>(n.op) ||
                              std::holds_alternative<graph::CorrectCount>(n.op);
            return tail ? &p.evalTail : &p.forward;
        };
        std::vector<graph::ValueId> wanted{m.output, m.logits, m.lossMean};
        if (!training) wanted.push_back(m.lossRows);
        if (m.correct != graph::kNoValue) wanted.push_back(m.correct);
        for (auto& [param, grad] : m.grads) wanted.push_back(grad);
        for (auto& s : m.statistics) wanted.push_back(s.batchValue);
        p.graph = std::make_unique<graph::GpuPlan>(ctx, m.g, B, wanted, std::move(o));
        graph::GpuPlan& plan = *p.graph;
        p.logits = &plan[m.logits];
        p.output = &plan[m.output];
        p.dropouts = plan.randomPasses();
        if (!training) {  // the sum of the rows' losses over an evaluation
            ReduceOptions total;
            total.accumulate = &p.lossSum.front();
            recordReduce(p.evalTail, p.lossRows, ReduceOp::Sum, ReduceAxis::All, p.lossSum.back(), total);
            p.swaps.push_back(&p.lossSum);
            return;
        }
        if (p.lossPasses > p.train.size()) p.lossPasses = p.train.size();

        // The parameters' gradients, last layer first (the order the updates run in).
        struct ParamGrad {
            Variable* v;
            const Tensor* g;
            GradientForm form;
        };
        std::vector<const Tensor*> grads;  // the gradients clipping and loss scaling measure
        std::vector<ParamGrad> paramGrads;
        for (size_t i = layers_.size(); i-- > 0;)
            for (Variable& v : layers_[i].params) {
                const graph::ValueId grad = m.grads.at(m.variables.at(layers_[i].name + "/" + v.name));
                const GradientForm form = plan.gradientForm(grad);
                if (form == GradientForm::Same) grads.push_back(&plan[grad]);
                paramGrads.push_back({&v, &plan[grad], form});
            }
        // BatchNormalization's moving averages, moved after the updates (under their guard).
        struct MovingAverage {
            PingPong* avg;
            const Tensor* stat;
            float momentum, scale;
        };
        std::vector<MovingAverage> movingAverages;
        for (const graph::BatchStatistic& s : m.statistics) {
            // The variance made unbiased (reference/batchnorm.hpp).
            const double values = double(B) * s.pixels;
            const float unbias = s.variance ? float(values > 1 ? values / (values - 1) : 1.0) : 1.0f;
            movingAverages.push_back({variableOf(s.variable).value.get(), &plan[s.batchValue], s.momentum, unbias});
        }

        // Clip by global norm: a 1x1 factor every update samples.
        const Tensor* gscale = nullptr;
        const Tensor* lossGuard = options_.onNaN == NanPolicy::Ignore ? nullptr : &p.lossMean;
        const Tensor* scaleGuard = nullptr;
        Tensor* norm = nullptr;
        if (options_.clipNorm > 0.0f) {
            norm = &p.temp(ctx, 1, 1);
            recordGlobalL2Norm(p.train, grads, *norm);
        }
        if (lossScale_) {
            // Loss scaling: the updates unscale (and clip) through FACTOR and skip
            // a step whose gradients overflowed through GUARD; the scale adapts (ops/loss_scale.hpp).
            Tensor& gmax = p.temp(ctx, 1, 1);
            Tensor& factor = p.temp(ctx, 1, 2);
            Tensor& stepGuard = p.temp(ctx, 1, 2);
            recordGlobalMaxAbs(p.train, grads, gmax);
            recordLossScaleStep(p.train, options_.lossScaling, *lossScale_, gmax, lossGuard, norm, options_.clipNorm,
                                factor, stepGuard);
            p.swaps.push_back(lossScale_.get());
            gscale = &factor;
            scaleGuard = &stepGuard;
        } else if (norm) {
            Tensor& factor = p.temp(ctx, 1, 1);
            p.train.add(Pass(ctx, "reduce/clip_factor")).input("NORM", *norm).output(factor).uniform("maxNorm", options_.clipNorm);
            gscale = &factor;
        }
        // Without a NaN policy, loss scaling's guard alone skips an overflowed step.
        const Tensor* guard = lossGuard ? recordGuard(p, scaleGuard) : scaleGuard;
        std::vector<const Tensor*> checked;
        for (auto& [v, g, form] : paramGrads) {
            std::vector<PingPong*> slots;
            for (auto& s : v->slots) slots.push_back(s.get());
            Pass& u = recordOptimizerUpdate(p.train, updateConfig(), *v->value, *g, slots, gscale, guard, form);
            p.updates.push_back(&u);
            p.swaps.push_back(v->value.get());
            for (auto* s : slots) p.swaps.push_back(s);
            addCheckedOutputs(checked, *v->value, slots, options_.optimizer);
        }
        // A skipped step changes nothing: the moving averages take the updates'
        // guard (with loss scaling its step guard, which also catches a loss that
        // half floats saturated at 65504 instead of making it Inf).
        for (auto& a : movingAverages) {
            recordMovingAverage(p.train, *a.avg, *a.stat, a.momentum, a.scale, guard);
            p.swaps.push_back(a.avg);
            checked.push_back(&a.avg->back());
        }
        if (lossGuard) recordCheck(p, checked);
    }

    // The model as a graph (graph/model_graph.hpp), for training or inference:
    // made on first use after a compile.
    using ModelGraph = graph::ModelGraph;
    const ModelGraph& modelGraph(bool training) {
        std::unique_ptr<ModelGraph>& slot = training ? trainGraph_ : evalGraph_;
        if (slot) return *slot;
        std::vector<graph::ModelLayer> layers;
        for (size_t i = 0; i < layers_.size(); ++i) {
            const LayerState& L = layers_[i];
            graph::ModelLayer ml{&specs_[i], {L.name, L.in, L.out, L.window}, {}};
            for (const auto* list : {&L.params, &L.buffers})
                for (const Variable& v : *list) ml.variables.push_back({v.name, v.shape, list == &L.params});
            layers.push_back(std::move(ml));
        }
        graph::ModelGraphOptions o;
        o.input = inputShape_;
        o.softmaxCrossEntropy = options_.loss == LossKind::SoftmaxCrossEntropy;
        o.pointwise = pointwiseLossKind();
        o.seed = options_.seed;
        o.training = training;
        o.lossScaling = training && lossScalingOn();
        slot = std::make_unique<ModelGraph>(graph::buildModelGraph(layers, o));
        return *slot;
    }
    Variable& variableOf(const std::string& key) {
        for (auto& L : layers_)
            if (key.compare(0, L.name.size() + 1, L.name + "/") == 0) {
                const std::string n = key.substr(L.name.size() + 1);
                for (auto* list : {&L.params, &L.buffers})
                    for (auto& v : *list)
                        if (v.name == n) return v;
            }
        throw Error("Sequential: no variable " + key);
    }

    // The step guard (ops/step_guard.hpp) under a NaN policy: the verdict the
    // step's updates read, from its loss, loss scaling's guard (`skip`) and the
    // check of what the previous step wrote. Null under NanPolicy::Ignore.
    const Tensor* recordGuard(Plan& p, const Tensor* skip) {
        if (options_.onNaN == NanPolicy::Ignore) return nullptr;
        if (!stepCheck_) stepCheck_ = std::make_unique<PingPong>(makeStepCheckState(*ctx_));
        Tensor& verdict = p.temp(*ctx_, 1, 1, Layout::Unpacked);
        recordStepGuard(p.train, p.lossMean, skip, *stepCheck_, options_.onNaN == NanPolicy::Stop, verdict);
        return &verdict;
    }
    // The check of what the step's updates wrote (`checked`: addCheckedOutputs').
    void recordCheck(Plan& p, const std::vector<const Tensor*>& checked) {
        if (!stepCheck_) return;
        recordStepCheck(p.train, checked, *stepCheck_);
        p.swaps.push_back(stepCheck_.get());
    }
    // The last step's outputs are judged by the next step's guard; with no next
    // step (a fit's end, a stop) the host judges them: when what it wrote is not
    // finite, the state before it, still in the back buffers, becomes the state.
    void settleLastStep() {
        if (!stepCheck_ || cpu_ || ctx_->lost()) return;
        if (!stepCheckFailed(stepCheck_->front().download())) return;
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                v.value->swap();
                for (auto& slot : v.slots) slot->swap();
            }
            for (auto& v : L.buffers) v.value->swap();
        }
        resetStepCheck(*stepCheck_);  // the back buffers now hold the bad step
    }
    // The host wrote the state: no step before it may be reverted to.
    void stateWritten() {
        if (cpu_) cpu_->model().stateWritten();
        else if (stepCheck_ && !ctx_->lost()) resetStepCheck(*stepCheck_);
    }

    Context* ctx_;
    Shape3 inputShape_;
    int inputSize_;
    int outputSize_ = 0;
    std::vector<Layer> specs_;
    std::vector<LayerState> layers_;
    CompileOptions options_;
    bool compiled_ = false;
    long step_ = 0;
    std::map<std::pair<int, bool>, std::unique_ptr<Plan>> plans_;
    std::unique_ptr<FitState> fit_;
    std::unique_ptr<ModelGraph> trainGraph_, evalGraph_;  // modelGraph(): made on first use after a compile
    std::unique_ptr<cpu::Trainer> cpu_;  // set when the model trains on the CPU backend
    std::vector<EpochInfo> history_;
    // Lost contexts: the generation of the context the variables live in, the
    // last snapshot, the reads of the next one, and how often the model was rebuilt.
    uint64_t generation_ = 0;
    Snapshot snapshot_;
    bool snapshotCurrent_ = true;  // the snapshot is the model's current state
    std::vector<std::unique_ptr<AsyncReadback>> snapshotReaders_;
    bool snapshotPending_ = false;
    long snapshotPendingStep_ = 0;
    int restorations_ = 0;
    // Dynamic loss scaling's state (scale, good steps), shared by the training plans.
    std::unique_ptr<PingPong> lossScale_;
    // What the last step wrote, checked (ops/step_guard.hpp); null under NanPolicy::Ignore.
    std::unique_ptr<PingPong> stepCheck_;
    HostMatrix read1x1_;  // the host copy of the step's 1x1 reads, kept (readValue)
};

}  // namespace gltrain
