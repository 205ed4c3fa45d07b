// The GPU engine: the model's variables as texture pairs, its graphs compiled
// to recorded pass lists (engine/gpu_step.hpp), one GpuStep per batch size,
// replayed every step — so the steady state compiles, allocates and reads
// back nothing but the loss the loop asks for (a 1x1 texel).
//
// It also keeps what a lost GL context takes away: a snapshot of the state
// (a checkpoint's bytes; at a fit's start and end, and every snapshotEvery
// steps as a GPU-side copy read back a part a step, engine/snapshot_reads.hpp,
// so no step stalls for it). When the context comes
// back, the engine makes its variables again from that snapshot and, in a
// fit, uploads the data again; the fit loop then replays the steps since the
// snapshot (the shuffle comes from (seed, epoch) and dropout from (seed,
// step), so the replay retraces them).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "gltrain/backend.hpp"
#include "gltrain/engine/engine.hpp"
#include "gltrain/engine/gpu_step.hpp"
#include "gltrain/engine/snapshot_reads.hpp"
#include "gltrain/readback.hpp"

namespace gltrain {

class GpuEngine final : public Engine {
public:
    GpuEngine(Context& ctx, const std::vector<CompiledLayer>& layers, const ModelVariables& vars,
              const CompileOptions& o, const graph::ModelIO& io)
        : ctx_(ctx), layers_(layers), vars_(vars), options_(o), io_(io), outputSize_(io.outputSize()) {
        createVariables();
    }

    // ---- the variables ----
    HostMatrix read(size_t var, int slot) const override { return tensor(var, slot).download(); }
    void write(size_t var, int slot, const HostMatrix& value) override { tensor(var, slot).upload(value); }
    void stateWritten(long step, const std::vector<uint8_t>* checkpoint) override {
        if (state_.stepCheck && !ctx_.lost()) resetStepCheck(*state_.stepCheck);
        if (!checkpoint) return takeSnapshot(step);  // a state written by the host could not be replayed
        snapshot_ = Snapshot{step, *checkpoint, {}};
        snapshotPending_ = false;
        snapshotCurrent_ = true;
    }

    std::optional<long> ensureUsable(const char* what) override {
        ctx_.requireUsable(what);
        if (generation_ == ctx_.generation()) return std::nullopt;
        try {
            rebuild();
        } catch (...) {
            // Lost again while rebuilding: rebuild at the next call.
            generation_ = std::numeric_limits<uint64_t>::max();
            throw;
        }
        return snapshot_.step;
    }

    // ---- a fit ----
    bool everyLossKnown() const override { return false; }
    void beginFit(const FitData& f) override {
        fit_ = &f;
        uploadFit();
    }
    // The state this fit starts from, for a lost context.
    void fitStarting(long step) override {
        if (!snapshotCurrent_ || snapshot_.step != step) takeSnapshot(step);
    }
    void startEpoch() override {
        hostSums_ = EpochSums::of(io_);
        countedRows_ = rowsInSums_ = 0;
        resetSums();
    }
    StepResult step(const StepRequest& r) override {
        pollSnapshot();
        GpuStep& p = full_ && full_->batch == r.rows ? *full_ : *ragged_;
        if (shuffledEpoch_ != r.epoch) {
            // Fisher–Yates from the counter hash: the same order natively and in the browser.
            const std::vector<int> order = epochOrder(train_->n, options_.seed, r.epoch, fit_->options.shuffle);
            train_->order.upload(std::vector<float>(order.begin(), order.end()));
            shuffledEpoch_ = r.epoch;
        }
        if (replaying_ && r.counted) {  // the replay's counts were counted before the loss
            resetSums();
            rowsInSums_ = 0;
        }
        replaying_ = !r.counted;
        if (r.counted && rowsInSums_ + p.batch > ctx_.exactIntegerLimit()) {
            // The next count could pass what the storage holds exactly (2048 for half floats).
            addDeviceSums(hostSums_);
            resetSums();
            rowsInSums_ = 0;
        }
        p.prepareRows(r.epoch, r.firstRow);
        p.setStepUniforms(r.step, options_);
        StepResult out;
        if (r.readLoss) {
            // The loss is read as soon as it exists: the backward passes and updates
            // are issued after the wait and flushed, so the GPU runs them while the
            // caller goes on (a read at the step's end waits for all of them).
            p.train.run(0, p.lossPasses);
            out.loss = readLoss(p.lossMean);
            out.lossRead = true;
            p.train.run(p.lossPasses, p.train.size());
        } else {
            p.train.run();
        }
        glFlush();  // the step starts on the GPU now, not at the next read
        p.swapAll();
        if (r.counted) countedRows_ += p.batch, rowsInSums_ += p.batch;
        snapshotCurrent_ = false;
        last_ = &p;
        return out;
    }
    void stepDone(long step, int snapshotEvery) override {
        if (snapshotEvery > 0 && step % snapshotEvery == 0) issueSnapshot(step);
    }
    void issueLossRead(long step, int rows) override {
        if (pendingLoss_) return;  // one read in flight at a time, through one reused buffer
        if (!lossReader_) lossReader_ = std::make_unique<AsyncReadback>(last_->lossMean);
        else lossReader_->issue(last_->lossMean);
        pendingLoss_ = LossReading{0, step, rows};
    }
    // A read in flight is taken when its fence has signalled — or when the loop
    // waits (at an epoch's end). Browsers update fences only between event-loop
    // turns, so a synchronous fit there sees its async losses at epoch ends.
    std::optional<LossReading> takeLossRead(bool wait) override {
        if (!pendingLoss_ || !(wait || lossReader_->ready())) return std::nullopt;
        LossReading r = *pendingLoss_;
        pendingLoss_.reset();
        lossReader_->get(read1x1_);
        r.loss = saturated(read1x1_.data[0]);
        return r;
    }
    float lastLoss() override { return readLoss(last_->lossMean); }
    EpochSums epochSums() override {
        EpochSums s = hostSums_;
        addDeviceSums(s);
        s.rows = countedRows_;
        return s;
    }
    Evaluation validate(int batchSize) override {
        Evaluation e = evaluateDevice(*val_, batchSize);
        bindFit();
        return e;
    }
    // The fit's last state becomes the snapshot (a lost context has no data to
    // replay from once the fit is over); while the context is lost, the last
    // snapshot stays.
    void endFit(long step) override {
        fit_ = nullptr;
        train_.reset();
        val_.reset();
        full_ = ragged_ = last_ = nullptr;
        pendingLoss_.reset();
        settleLastStep();
        if (!ctx_.lost()) takeSnapshot(step);
    }

    // ---- outside a fit ----
    Evaluation evaluate(const HostMatrix& x, const Targets& y, int batchSize) override {
        auto d = upload(x, y, 0, x.rows);
        return evaluateDevice(*d, batchSize);
    }
    HostMatrix predict(const HostMatrix& x, int batchSize) override {
        HostMatrix out(x.rows, outputSize_);
        auto d = upload(x, Targets(), 0, x.rows);
        for (int r0 = 0; r0 < x.rows; r0 += batchSize) {
            const int b = std::min(batchSize, x.rows - r0);
            GpuStep& p = plan(b, false);
            p.bind(*d);
            p.gatherOffset(r0);
            p.forward.run();
            HostMatrix y = p.output->download();
            std::copy(y.data.begin(), y.data.end(),
                      out.data.begin() + std::ptrdiff_t(size_t(r0) * size_t(outputSize_)));
        }
        return out;
    }
    // Each pass of the step (PassList::profile: GPU timer queries where the
    // context has them, else each pass waited for). Nothing is swapped.
    std::vector<PassTiming> profileStep(const HostMatrix& x, const Targets& y, int batchSize, int reps,
                                        long step) override {
        auto d = upload(x, y, 0, batchSize);
        GpuStep& p = plan(batchSize, true);
        p.bind(*d);
        p.prepareRows(0, 0);
        p.setStepUniforms(step, options_);
        auto times = p.train.profile(reps);
        if (train_ && (full_ == &p || ragged_ == &p)) p.bind(*train_);
        return times;
    }

    // ---- lost contexts ----
    std::vector<uint8_t> snapshotCheckpoint() override {
        if (!snapshot_.bytes.empty()) return snapshot_.bytes;
        if (snapshot_.values.empty()) return initialCheckpoint(vars_, options_);
        return serializeSafetensors(
            checkpointTensors(vars_, snapshot_.step, [&](size_t i) { return snapshot_.values[i].data; }),
            checkpointMetadata(options_, snapshot_.step));
    }
    long snapshotStep() const override { return snapshot_.empty() ? 0 : snapshot_.step; }

    // A snapshot's GPU-side copy is read back at most this many bytes a step
    // (at least one texel row): a model's whole state at once stalled the step
    // that took it (NVIDIA H200: 166–282 ms for 70 MB, issue 41).
    static constexpr size_t kSnapshotBytesPerStep = size_t(4) << 20;
    int restorations() const override { return restorations_; }
    void setLearningRate(float lr) override { options_.optimizer.lr = lr; }
    float lossScale() override {
        if (!lossScalingOn()) return 0.0f;
        return state_.lossScale ? state_.lossScale->front().download()(0, 0) : options_.lossScaling.initialScale;
    }

private:
    // A state the model had: weights, optimizer slots and statistics at a
    // step — as the checkpoint the host wrote (bytes), or as read back (values,
    // in ModelVariables::saved's order: serialized only when asked for). Empty:
    // the compiled initial state, which createVariables() makes again from the seed.
    struct Snapshot {
        long step = 0;
        std::vector<uint8_t> bytes;
        std::vector<HostMatrix> values;
        bool empty() const { return bytes.empty() && values.empty(); }
    };

    bool lossScalingOn() const { return options_.lossScaling.enabled(ctx_.backend() == Backend::GpuFloat16); }

    Tensor& tensor(size_t var, int slot) const {
        const GpuVariable& v = values_.at(var);
        return slot < 0 ? v.value->front() : v.slots.at(size_t(slot))->front();
    }
    void createVariables() {
        generation_ = ctx_.generation();
        values_.clear();
        for (const ModelVariable& v : vars_.list) {
            GpuVariable g;
            const HostMatrix init = v.initial();
            g.value = std::make_unique<PingPong>(ctx_, init);  // written by the update: packed
            if (v.decl.trainable)
                for (int s = 0; s < vars_.slots; ++s)
                    g.slots.push_back(std::make_unique<PingPong>(ctx_, HostMatrix(init.rows, init.cols)));
            values_.push_back(std::move(g));
        }
    }

    // ---- steps ----
    GpuStep& plan(int batch, bool training) {
        auto key = std::make_pair(batch, training);
        auto it = plans_.find(key);
        if (it != plans_.end()) return *it->second;
        auto p = std::make_unique<GpuStep>();
        GpuStepSource s;
        s.ctx = &ctx_;
        s.options = &options_;
        s.graph = &modelGraph(training);
        s.vars = &vars_;
        s.values = &values_;
        s.state = &state_;
        s.inputSize = io_.inputSize();
        s.targetCols = io_.targetCols();
        s.labels = io_.labels();
        s.metrics = io_.metrics;
        s.lossScaling = training && lossScalingOn();
        s.update = options_.optimizer;
        // On half-float storage eps is at least kHalfFloatMinEps.
        if (ctx_.backend() == Backend::GpuFloat16) s.update.eps = std::max(s.update.eps, kHalfFloatMinEps);
        GpuStepCompiler(s).record(*p, batch, training);
        return *plans_.emplace(key, std::move(p)).first->second;
    }
    // The model as a graph (graph/model_graph.hpp), for training or inference: made on first use.
    const graph::ModelGraph& modelGraph(bool training) {
        std::unique_ptr<graph::ModelGraph>& slot = training ? trainGraph_ : evalGraph_;
        if (slot) return *slot;
        std::vector<graph::ModelLayer> layers;
        for (const CompiledLayer& L : layers_) layers.push_back({L.spec, L.geometry, vars_.declsOf(L.geometry.name)});
        graph::ModelGraphOptions o;
        o.io = io_;
        o.seed = options_.seed;
        o.training = training;
        o.lossScaling = training && lossScalingOn();
        slot = std::make_unique<graph::ModelGraph>(graph::buildModelGraph(layers, o));
        return *slot;
    }

    // The training steps of a fit — one for full batches, one for a short last
    // batch — recorded before the first step (no compiles mid-epoch), and its data.
    void uploadFit() {
        const FitOptions& o = fit_->options;
        train_ = upload(*fit_->x, fit_->y, 0, fit_->trainRows);
        if (fit_->valRows > 0) val_ = upload(*fit_->x, fit_->y, fit_->trainRows, fit_->valRows);
        else if (o.validationX) val_ = upload(*o.validationX, *o.validationY, 0, o.validationX->rows);
        const int full = fit_->trainRows / o.batchSize, rem = shortBatchRows(fit_->trainRows, o);
        full_ = full ? &plan(o.batchSize, true) : nullptr;
        ragged_ = rem ? &plan(rem, true) : nullptr;
        // The snapshots' textures and buffers too: nothing is allocated mid-fit.
        if (o.snapshotEvery > 0 && !snapshotReads_)
            snapshotReads_ = std::make_unique<SnapshotReads>(ctx_, savedTensors(), kSnapshotBytesPerStep);
        shuffledEpoch_ = -1;
        bindFit();
    }
    void bindFit() {
        for (GpuStep* p : {full_, ragged_})
            if (p) p->bind(*train_);
    }
    void resetSums() {
        for (GpuStep* p : {full_, ragged_})
            if (p) p->resetSums();
    }
    // Adds what the fit's steps counted on the GPU since the sums were last reset to `s`.
    void addDeviceSums(EpochSums& s) {
        for (GpuStep* p : {full_, ragged_})
            if (p) addSums(*p, s);
    }
    // Adds a step's sums (correct predictions, metrics) to `s`.
    void addSums(GpuStep& p, EpochSums& s) {
        s.correct += readValue(p.correctSum.front());
        size_t at = 0;
        for (PingPong& m : p.metricSums)
            for (float v : m.front().download().data) s.metrics[at++] += double(v);
    }

    // Uploads rows [r0, r0 + n) of x and y.
    std::unique_ptr<DeviceData> upload(const HostMatrix& x, const Targets& y, int r0, int n) {
        // The GPU only samples these (TensorUse::Sampled): they stay fp32 on the half-float
        // backend too, so data keeps its precision and row indices above 2048 stay exact.
        auto d = std::make_unique<DeviceData>();
        d->n = n;
        d->x = Tensor(ctx_, n, x.cols, Layout::Packed, TensorUse::Sampled);
        d->x.upload(x.data.data() + size_t(r0) * size_t(x.cols), size_t(n) * size_t(x.cols));  // no host copy
        if (y.rows() == 0) {
            // predict: no targets
        } else if (io_.labels()) {
            const std::vector<int> labels = targetLabels(y, r0, n);
            d->y = Tensor(ctx_, HostMatrix(n, 1, std::vector<float>(labels.begin(), labels.end())), Layout::Unpacked,
                          TensorUse::Sampled);
        } else {
            const size_t C = size_t(y.values.cols);
            HostMatrix ys(n, y.values.cols,
                          std::vector<float>(y.values.data.begin() + std::ptrdiff_t(size_t(r0) * C),
                                             y.values.data.begin() + std::ptrdiff_t(size_t(r0 + n) * C)));
            d->y = Tensor(ctx_, ys, Layout::Packed, TensorUse::Sampled);
        }
        std::vector<float> order(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) order[size_t(i)] = float(i);
        d->order = Tensor(ctx_, HostMatrix(n, 1, std::move(order)), Layout::Unpacked, TensorUse::Sampled);
        return d;
    }

    // A 1x1 tensor's value (a loss, a count), read without allocating.
    float readValue(const Tensor& t) {
        t.download(read1x1_);
        return read1x1_.data[0];
    }
    float readLoss(const Tensor& t) { return saturated(readValue(t)); }
    // Some drivers (llvmpipe) saturate half floats at 65504 instead of making
    // them Inf: on RGBA16F such a loss overflowed, and is reported as the Inf it is.
    float saturated(float loss) const {
        if (ctx_.renderFormat() == GL_RGBA16F && std::fabs(loss) >= kHalfMax)
            return std::copysign(std::numeric_limits<float>::infinity(), loss);
        return loss;
    }

    // Loss and accuracy over a dataset on the GPU: per-batch sums accumulate
    // in 1x1 textures (one step for full batches, one for a ragged last batch)
    // and are read back once at the end.
    Evaluation evaluateDevice(DeviceData& d, int batchSize) {
        const int full = d.n / batchSize, rem = d.n % batchSize;
        GpuStep* pf = full ? &plan(batchSize, false) : nullptr;
        GpuStep* pr = rem ? &plan(rem, false) : nullptr;
        for (GpuStep* p : {pf, pr})
            if (p) p->resetSums();
        const bool classes = io_.accuracyOutput() >= 0;
        double lossSum = 0;
        EpochSums sums = EpochSums::of(io_);
        // Takes a step's sums into the host's; before a count could pass what the
        // storage holds exactly (2^24 rows, 2048 for half floats) and at the end.
        auto take = [&](GpuStep& p) {
            lossSum += readValue(p.lossSum.front());
            addSums(p, sums);
            p.resetSums();
        };
        long fullRows = 0;
        for (int r0 = 0; r0 < d.n; r0 += batchSize) {
            GpuStep& p = d.n - r0 >= batchSize ? *pf : *pr;
            if (&p == pf && (fullRows += batchSize) > ctx_.exactIntegerLimit()) {
                take(p);
                fullRows = batchSize;
            }
            p.bind(d);
            p.gatherOffset(r0);
            p.forward.run();
            p.evalTail.run();
            p.swapAll();
        }
        for (GpuStep* p : {pf, pr})
            if (p) take(*p);
        Evaluation e;
        e.loss = float(lossSum / d.n);
        if (classes) e.accuracy = float(sums.correct / d.n);
        metricFigures(io_, sums.metrics, d.n, e.metrics, e.accuracy);
        return e;
    }

    // The last step's outputs are judged by the next step's guard; with no next
    // step (a fit's end, a stop) the host judges them: when what it wrote is not
    // finite, the state before it, still in the back buffers, becomes the state.
    void settleLastStep() {
        if (!state_.stepCheck || ctx_.lost()) return;
        if (!stepCheckFailed(state_.stepCheck->front().download())) return;
        for (GpuVariable& v : values_) {
            v.value->swap();
            for (auto& slot : v.slots) slot->swap();
        }
        resetStepCheck(*state_.stepCheck);  // the back buffers now hold the bad step
    }

    // ---- snapshots ----
    // The snapshot, now (a synchronous read: at a fit's start and end, and
    // after the host wrote the state; between, issueSnapshot() reads through fences).
    void takeSnapshot(long step) {
        std::vector<HostMatrix> values;
        for (const SavedTensor& s : vars_.saved) {
            values.push_back(read(s.var, s.slot));
            // A state that is not finite (NanPolicy::Ignore lets one in) is no state to
            // restore: the last snapshot stays.
            if (!allFinite(values.back())) {
                if (options_.onNaN != NanPolicy::Ignore) requireFiniteTensor(s.name, values.back().data, step);
                return;
            }
        }
        snapshot_ = Snapshot{step, {}, std::move(values)};
        snapshotPending_ = false;
        snapshotCurrent_ = true;
    }
    static bool allFinite(const HostMatrix& m) {
        for (float x : m.data)
            if (!std::isfinite(x)) return false;
        return true;
    }
    // Copies every saved tensor on the GPU (snapshot textures, made once);
    // pollSnapshot() reads the copy back a part a step. One in flight at a time.
    void issueSnapshot(long step) {
        if (snapshotPending_) return;
        const std::vector<const Tensor*> saved = savedTensors();
        if (!snapshotReads_) snapshotReads_ = std::make_unique<SnapshotReads>(ctx_, saved, kSnapshotBytesPerStep);
        snapshotReads_->begin(saved);
        snapshotPending_ = true;
        snapshotPendingStep_ = step;
    }
    // The tensors a snapshot holds now, in ModelVariables::saved's order.
    std::vector<const Tensor*> savedTensors() const {
        std::vector<const Tensor*> saved;
        for (const SavedTensor& s : vars_.saved) saved.push_back(&tensor(s.var, s.slot));
        return saved;
    }
    // Takes the next part of a pending snapshot into host buffers kept from
    // snapshot to snapshot (no allocation once the first has been taken) and
    // queues the read of the one after; the last part makes it the snapshot.
    void pollSnapshot() {
        if (!snapshotPending_ || !snapshotReads_->advance(incoming_)) return;
        snapshotPending_ = false;
        if (ctx_.lost()) return;  // read as the context went away: not to be trusted
        // A state the step guard is about to undo (it judges a step's outputs at the
        // next step) is no state to restore: the last snapshot stays.
        if (!snapshotReads_->finite()) return;
        snapshot_.step = snapshotPendingStep_;
        snapshot_.bytes.clear();
        std::swap(snapshot_.values, incoming_);  // the old snapshot's buffers take the next one
    }

    // Everything on the GPU went with a lost context: the variables are made
    // again from the snapshot, and a fit in progress uploads its data again.
    void rebuild() {
        plans_.clear();  // tensors and passes of the old context: dropped without GL calls
        snapshotReads_.reset();
        snapshotPending_ = false;
        state_ = GpuStepState{};
        train_.reset();
        val_.reset();
        full_ = ragged_ = last_ = nullptr;
        lossReader_.reset();
        pendingLoss_.reset();
        createVariables();
        for (size_t i = 0; i < snapshot_.values.size(); ++i)
            write(vars_.saved[i].var, vars_.saved[i].slot, snapshot_.values[i]);
        if (!snapshot_.bytes.empty()) {
            // A checkpoint the model loaded (validated then): every tensor it has is one the model has, of its shape.
            const SafetensorsFile f =
                parseSafetensors(snapshot_.bytes, "(the snapshot of step " + std::to_string(snapshot_.step) + ")");
            for (const SavedTensor& s : vars_.saved)
                if (f.contains(s.name)) {
                    const ModelVariable& v = vars_.list[s.var];
                    write(s.var, s.slot, HostMatrix(v.rows, v.cols, f.at(s.name).floats()));
                }
        }
        snapshotCurrent_ = true;
        ++restorations_;
        if (!fit_) return;
        uploadFit();
        countedRows_ -= rowsInSums_;  // those counts were on the GPU
        rowsInSums_ = 0;
        replaying_ = false;
    }

    Context& ctx_;
    const std::vector<CompiledLayer>& layers_;
    const ModelVariables& vars_;
    CompileOptions options_;
    graph::ModelIO io_;
    int outputSize_;
    std::vector<GpuVariable> values_;  // by ModelVariables index
    GpuStepState state_;
    std::map<std::pair<int, bool>, std::unique_ptr<GpuStep>> plans_;
    std::unique_ptr<graph::ModelGraph> trainGraph_, evalGraph_;
    // A fit: its data on the GPU and steps, and the epoch's correct counts — in the
    // GPU sums (rowsInSums_ rows) plus those read out before the storage could lose an integer.
    const FitData* fit_ = nullptr;
    std::unique_ptr<DeviceData> train_, val_;
    GpuStep *full_ = nullptr, *ragged_ = nullptr, *last_ = nullptr;
    int shuffledEpoch_ = -1;
    EpochSums hostSums_;  // the epoch's sums taken from the GPU before it (the GPU's are reset then)
    long countedRows_ = 0, rowsInSums_ = 0;
    bool replaying_ = false;
    std::unique_ptr<AsyncReadback> lossReader_;  // asyncLoss: the loss, read through a fence
    std::optional<LossReading> pendingLoss_;
    // Lost contexts: the generation of the context the variables live in, the
    // last snapshot, the reads of the next one, and how often the engine was rebuilt.
    uint64_t generation_ = 0;
    Snapshot snapshot_;
    bool snapshotCurrent_ = true;                   // the snapshot is the model's current state
    std::unique_ptr<SnapshotReads> snapshotReads_;  // the GPU-side copy and its reads
    bool snapshotPending_ = false;
    long snapshotPendingStep_ = 0;
    std::vector<HostMatrix> incoming_;  // the pending snapshot's values
    int restorations_ = 0;
    HostMatrix read1x1_;  // the host copy of the step's 1x1 reads, kept
};

}  // namespace gltrain
