// The CPU engine: the model's variables as host matrices and its graph run by
// cpu::Model (cpu/model.hpp: graph/cpu_plan.hpp with gltrain/cpu's SIMD and
// threaded kernels). Every step's loss is known at once, so the fit loop
// judges every step (NaN policy) and asyncLoss reads at once; a step whose
// update is not finite is undone by the model itself. Nothing is lost with a
// GL context: the snapshot is the state now.
#pragma once
#include <memory>
#include <vector>

#include "gltrain/context.hpp"
#include "gltrain/cpu/model.hpp"
#include "gltrain/engine/engine.hpp"
#include "gltrain/model/variables.hpp"

namespace gltrain {

class CpuEngine final : public Engine {
public:
    CpuEngine(Context& ctx, const std::vector<CompiledLayer>& layers, const ModelVariables& vars,
              const CompileOptions& o, const graph::ModelIO& io)
        : options_(o), io_(io), inputSize_(io.inputSize()), model_(makeLayers(layers, vars), setupOf(o, io)) {
        model_.useThreads(&ctx.cpuThreads());
        for (size_t i = 0; i < vars.list.size(); ++i)
            for (size_t l = 0; l < layers.size(); ++l)
                if (layers[l].geometry.name == vars.list[i].layer)
                    at_.push_back(&model_.variable(l, vars.list[i].decl.name));
    }

    HostMatrix read(size_t var, int slot) const override {
        return slot < 0 ? at_.at(var)->value : at_.at(var)->slots.at(size_t(slot));
    }
    void write(size_t var, int slot, const HostMatrix& value) override {
        (slot < 0 ? at_.at(var)->value : at_.at(var)->slots.at(size_t(slot))) = value;
    }
    void stateWritten(long, const std::vector<uint8_t>*) override { model_.stateWritten(); }
    std::optional<long> ensureUsable(const char*) override { return std::nullopt; }

    bool everyLossKnown() const override { return true; }
    void beginFit(const FitData& f) override {
        train_ = dataset(*f.x, f.y, 0, f.trainRows, true);
        val_.reset();
        if (f.valRows > 0) val_ = std::make_unique<cpu::Dataset>(dataset(*f.x, f.y, f.trainRows, f.valRows, true));
        else if (f.options.validationX)
            val_ = std::make_unique<cpu::Dataset>(
                dataset(*f.options.validationX, *f.options.validationY, 0, f.options.validationX->rows, true));
        shuffle_ = f.options.shuffle;
        orderedEpoch_ = -1;
    }
    void startEpoch() override {
        model_.resetSums();
        epochRows_ = 0;
    }
    StepResult step(const StepRequest& r) override {
        if (orderedEpoch_ != r.epoch) {
            train_.order = epochOrder(train_.n, options_.seed, r.epoch, shuffle_);
            orderedEpoch_ = r.epoch;
        }
        StepResult out;
        out.loss = lastLoss_ = model_.trainStep(train_, r.firstRow, r.rows, r.step);
        out.lossRead = true;
        out.updateRejected = model_.updateRejected();
        epochRows_ += r.rows;
        return out;
    }
    float lastLoss() override { return lastLoss_; }
    EpochSums epochSums() override {
        EpochSums s = model_.sums();
        s.rows = epochRows_;
        return s;
    }
    Evaluation validate(int batchSize) override { return evaluation(*val_, batchSize); }
    void endFit(long) override {
        train_ = cpu::Dataset{};
        val_.reset();
    }

    Evaluation evaluate(const HostMatrix& x, const Targets& y, int batchSize) override {
        return evaluation(dataset(x, y, 0, x.rows, false), batchSize);
    }
    HostMatrix predict(const HostMatrix& x, int batchSize) override {
        HostMatrix out(x.rows, model_.outputSize());
        model_.predict(x.data.data(), x.rows, batchSize, out.data.data());
        return out;
    }
    std::vector<PassTiming> profileStep(const HostMatrix& x, const Targets& y, int batchSize, int reps,
                                        long step) override {
        return model_.profileStep(dataset(x, y, 0, batchSize, false), batchSize, reps, step);
    }

    std::vector<uint8_t> snapshotCheckpoint() override { return {}; }  // the model saves its state now
    long snapshotStep() const override { return -1; }
    float lossScale() override { return 0.0f; }
    void setLearningRate(float lr) override { model_.setLearningRate(lr); }

private:
    static cpu::TrainingSetup setupOf(const CompileOptions& o, const graph::ModelIO& io) {
        cpu::TrainingSetup s;
        s.io = io;
        s.optimizer = o.optimizer;
        s.schedule = o.schedule;
        s.clipNorm = o.clipNorm;
        s.seed = o.seed;
        s.skipBadSteps = o.onNaN != NanPolicy::Ignore;
        s.revertOnBadLoss = o.onNaN == NanPolicy::Stop;
        return s;
    }
    static std::vector<cpu::Model::Layer> makeLayers(const std::vector<CompiledLayer>& layers,
                                                     const ModelVariables& vars) {
        std::vector<cpu::Model::Layer> out;
        for (const CompiledLayer& L : layers) {
            cpu::Model::Layer c;
            c.spec = *L.spec;
            c.geometry = L.geometry;
            for (const ModelVariable& v : vars.list) {
                if (v.layer != c.geometry.name) continue;
                cpu::Model::Variable h;
                h.name = v.decl.name;
                h.shape = v.decl.savedShape;
                h.stored = v.decl.stored;
                h.value = v.initial();
                h.decays = v.decays;
                if (v.decl.trainable) h.slots.assign(size_t(vars.slots), HostMatrix(h.value.rows, h.value.cols));
                (v.decl.trainable ? c.params : c.buffers).push_back(std::move(h));
            }
            out.push_back(std::move(c));
        }
        return out;
    }

    // Rows [r0, r0 + n) of (x, y): labels (one-hot rows become their argmax,
    // as the GPU engine's upload does) or target values. `copy`: a fit keeps
    // its rows (the caller's x may go away between beginFit and the steps).
    cpu::Dataset dataset(const HostMatrix& x, const Targets& y, int r0, int n, bool copy) const {
        cpu::Dataset d;
        d.n = n;
        const float* rows = x.data.data() + size_t(r0) * size_t(inputSize_);
        if (copy) {
            d.ownedX.assign(rows, rows + size_t(n) * size_t(inputSize_));
            d.x = d.ownedX.data();
        } else {
            d.x = rows;
        }
        if (y.rows() == 0) return d;
        if (io_.labels()) {
            d.labels = targetLabels(y, r0, n);
        } else {
            const size_t C = size_t(y.values.cols);
            d.values.assign(y.values.data.begin() + std::ptrdiff_t(size_t(r0) * C),
                            y.values.data.begin() + std::ptrdiff_t(size_t(r0 + n) * C));
        }
        return d;
    }
    Evaluation evaluation(const cpu::Dataset& d, int batchSize) {
        EpochSums s = EpochSums::of(io_);
        Evaluation e;
        e.loss = float(model_.evaluate(d, batchSize, s) / d.n);
        if (io_.accuracyOutput() >= 0) e.accuracy = float(s.correct / d.n);
        metricFigures(io_, s.metrics, d.n, e.metrics, e.accuracy);
        return e;
    }

    CompileOptions options_;
    graph::ModelIO io_;
    int inputSize_;
    cpu::Model model_;
    std::vector<cpu::Model::Variable*> at_;  // by ModelVariables index
    cpu::Dataset train_;
    std::unique_ptr<cpu::Dataset> val_;
    bool shuffle_ = true;
    int orderedEpoch_ = -1;
    long epochRows_ = 0;
    float lastLoss_ = 0;
};

}  // namespace gltrain
