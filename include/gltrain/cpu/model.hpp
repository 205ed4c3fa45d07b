// The CPU backend of a Sequential model: parameters, optimizer state and
// statistics in host memory, and the model's graph (graph/model_graph.hpp,
// the one the GPU engine lowers) run by graph/cpu_plan.hpp with the kernels
// of gltrain/cpu/ and the compiler's fusions: the same step as on the GPU,
// with the same formulas, dropout masks and seeds; then clip by global norm
// and one fused update per parameter.
//
// Sequential keeps everything that does not depend on where the numbers live
// (shapes, validation, the fit loop, callbacks, checkpoints) and hands a
// CPU-backend model its layers (spec + inferred geometry) and parameters; this
// class only computes. A plan per batch size holds every buffer, so the steady
// state allocates nothing.
//
// As on the GPU, a step whose loss is NaN or Inf (with NanPolicy Stop or Skip)
// changes nothing at all, batch normalization's moving averages included.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/cpu/activation.hpp"
#include "gltrain/cpu/batchnorm.hpp"
#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/loss.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/cpu/optimizer.hpp"
#include "gltrain/cpu/parallel_for.hpp"
#include "gltrain/cpu/pooling.hpp"
#include "gltrain/error.hpp"
#include "gltrain/graph/cpu_plan.hpp"
#include "gltrain/graph/model_graph.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/layers.hpp"
#include "gltrain/optimizer_config.hpp"
#include "gltrain/schedule.hpp"

namespace gltrain::cpu {

// What a training step needs from the compile options.
struct TrainingSetup {
    graph::ModelIO io;  // the inputs, and the outputs with their losses
    OptimizerConfig optimizer{};
    Schedule schedule{};
    float clipNorm = 0.0f;     // > 0: clip by global norm
    uint32_t seed = 1;         // dropout masks: uniform01(seed, step, r * cols + c), as on the GPU
    bool skipBadSteps = true;  // a NaN/Inf loss leaves parameters, state and statistics as they were
    // and undoes the previous step too (NanPolicy::Stop: the weights that gave it are not good)
    bool revertOnBadLoss = false;
};

// Rows of data in host memory, their targets, and the order in which
// training visits them. x points at the caller's rows (evaluate, predict) or
// at `ownedX`, a copy a fit keeps (the caller's matrices may go away between
// beginFit and the steps).
struct Dataset {
    int n = 0;
    const float* x = nullptr;  // n x the model's input size
    std::vector<float> ownedX;
    std::vector<int> labels;    // one softmax cross-entropy output (graph::ModelIO::labels)
    std::vector<float> values;  // n x the targets' columns (graph::ModelIO::targetCols)
    std::vector<int> order;     // training: a permutation of 0 .. n-1
};

class Model {
public:
    struct Variable {
        std::string name;
        std::vector<int64_t> shape;  // as saved in checkpoints (TensorFlow's shapes)
        graph::Shape stored;         // as the graph holds it (LayerVariable::stored)
        HostMatrix value;
        std::vector<HostMatrix> slots;  // optimizer state, each shaped like value
        HostMatrix grad;                // this step's gradient (trainable parameters)
        bool decays = false;            // weight decay applies to it (ModelVariable::decays)
    };
    // One layer: its spec, inferred geometry (name, shapes, window, inputs), parameters and statistics.
    struct Layer {
        gltrain::Layer spec;
        graph::LayerGeometry geometry;
        std::vector<Variable> params, buffers;
    };

    Model(std::vector<Layer> layers, const TrainingSetup& setup)
        : layers_(std::move(layers)),
          inputSize_(setup.io.inputSize()),
          setup_(setup),
          noDecay_(setup.optimizer.withoutDecay()),
          sums_(graph::EpochSums::of(setup.io)) {
        outputSize_ = setup.io.outputSize();
        for (auto& L : layers_)
            for (auto& v : L.params) v.grad = HostMatrix(v.value.rows, v.value.cols);
    }

    int outputSize() const { return outputSize_; }
    // Large products share their rows across these threads (not owned; null: this thread alone).
    void useThreads(ThreadPool* pool) {
        pool_ = pool;
        ws_.pool = pool;
        plans_.clear();
    }
    const std::vector<Layer>& layers() const { return layers_; }
    // What a checkpoint holds, in the GPU engine's order: f(name, variable, value)
    // for every parameter, each of its optimizer slots ("<layer>/<name>/slot<i>")
    // and every statistic.
    template <class F>
    void forEachSaved(F&& f) {
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                f(L.geometry.name + "/" + v.name, v, v.value);
                for (size_t s = 0; s < v.slots.size(); ++s)
                    f(L.geometry.name + "/" + v.name + "/slot" + std::to_string(s), v, v.slots[s]);
            }
            for (auto& v : L.buffers) f(L.geometry.name + "/" + v.name, v, v.value);
        }
    }
    // Parameters ("kernel", "bias", "gamma", "beta") and statistics ("moving_mean", "moving_variance").
    Variable& variable(size_t layer, const std::string& name) {
        for (auto* list : {&layers_.at(layer).params, &layers_.at(layer).buffers})
            for (auto& v : *list)
                if (v.name == name) return v;
        throw Error("cpu::Model: layer " + std::to_string(layer) + " has no variable " + name);
    }

    // One training step on rows order[offset .. offset + batch) of d at global
    // step `step` (0-based: the update uses t = step + 1 and the schedule's
    // learning rate at step). Returns the batch's mean loss; correct
    // predictions are added to correctSum().
    float trainStep(const Dataset& d, int offset, int batch, long step) {
        Plan& p = plan(batch, Mode::Train);
        gatherRows(p, d, offset, batch, true);
        p.run->run(step);
        const float lossMean = (*p.run)[p.graph->lossMean].data[0];
        addSums(p, sums_);
        if (setup_.skipBadSteps && !std::isfinite(lossMean)) {
            if (setup_.revertOnBadLoss) revert();
            return lossMean;
        }
        // A step that leaves a parameter, slot or statistic not finite is not
        // applied (under a NaN policy), whatever its loss was.
        updateRejected_ = !update(p, step) && setup_.skipBadSteps;
        if (updateRejected_) revert();
        return lossMean;
    }
    // Whether the last trainStep's update was not applied because it left a value that is not finite.
    bool updateRejected() const { return updateRejected_; }
    // The host wrote the state (a checkpoint, setWeight): no step before it may be undone.
    void stateWritten() { revertible_ = false; }
    // The correct predictions and metric sums since resetSums().
    const graph::EpochSums& sums() const { return sums_; }
    // The learning rate the schedule scales from, from the next step on.
    void setLearningRate(float lr) { setup_.optimizer.lr = lr; }
    void resetSums() { sums_ = graph::EpochSums::of(setup_.io); }

    // Loss (mean over rows) and correct predictions over all of d, in batches
    // (the last may be short); inference mode.
    // Also adds the correct predictions and metric sums to `sums`.
    double evaluate(const Dataset& d, int batchSize, graph::EpochSums& sums) {
        double loss = 0;
        for (int r0 = 0; r0 < d.n; r0 += batchSize) {
            const int b = std::min(batchSize, d.n - r0);
            Plan& p = plan(b, Mode::Evaluate);
            gatherRows(p, d, r0, b, false);
            p.run->run();
            for (float l : (*p.run)[p.graph->lossRows].data) loss += double(l);
            addSums(p, sums);
        }
        return loss;
    }

    // The training step's graph on d's first `batch` rows, each op (or fused
    // group) timed `reps` times. The update is not run: the model does not change.
    std::vector<PassTiming> profileStep(const Dataset& d, int batch, int reps, long step) {
        Plan& p = plan(batch, Mode::Train);
        gatherRows(p, d, 0, batch, false);
        return p.run->profile(reps, step);
    }

    // The outputs (after a final Softmax, probabilities) for `rows` rows of x.
    void predict(const float* x, int rows, int batchSize, float* out) {
        for (int r0 = 0; r0 < rows; r0 += batchSize) {
            const int b = std::min(batchSize, rows - r0);
            Plan& p = plan(b, Mode::Predict);
            std::copy(x + size_t(r0) * size_t(inputSize_), x + size_t(r0 + b) * size_t(inputSize_),
                      (*p.run)[p.graph->x].data.begin());
            p.run->run();
            const HostMatrix& y = (*p.run)[p.graph->output];
            std::copy(y.data.begin(), y.data.end(), out + size_t(r0) * size_t(outputSize_));
        }
    }

private:
    // The model's graphs (graph/model_graph.hpp) run for one batch size: a
    // training step, an evaluation (losses and correct counts), a prediction.
    enum class Mode { Train, Evaluate, Predict };
    struct Plan {
        const graph::ModelGraph* graph = nullptr;
        std::unique_ptr<graph::CpuPlan> run;
    };
    const graph::ModelGraph& modelGraph(bool training) {
        std::unique_ptr<graph::ModelGraph>& slot = training ? trainGraph_ : evalGraph_;
        if (slot) return *slot;
        std::vector<graph::ModelLayer> layers;
        for (const Layer& L : layers_) {
            graph::ModelLayer ml{&L.spec, L.geometry, {}};
            for (const auto* list : {&L.params, &L.buffers})
                for (const Variable& v : *list) ml.variables.push_back({v.name, v.shape, list == &L.params, v.stored});
            layers.push_back(std::move(ml));
        }
        graph::ModelGraphOptions o;
        o.io = setup_.io;
        o.seed = setup_.seed;
        o.training = training;
        slot = std::make_unique<graph::ModelGraph>(graph::buildModelGraph(layers, o));
        return *slot;
    }
    Plan& plan(int B, Mode mode) {
        auto key = std::make_pair(B, int(mode));
        auto it = plans_.find(key);
        if (it != plans_.end()) return it->second;
        Plan p;
        p.graph = &modelGraph(mode == Mode::Train);
        const graph::ModelGraph& m = *p.graph;
        graph::CpuPlanOptions o;
        o.fuse = true;
        o.pool = pool_;
        std::vector<graph::ValueId> wanted{m.output};
        for (const Layer& L : layers_)
            for (const auto* list : {&L.params, &L.buffers})
                for (const Variable& v : *list)
                    o.bound[m.variables.at(L.geometry.name + "/" + v.name)] = const_cast<HostMatrix*>(&v.value);
        if (mode != Mode::Predict) {
            wanted.push_back(m.lossMean);
            if (mode == Mode::Evaluate) wanted.push_back(m.lossRows);
            if (m.correct != graph::kNoValue) wanted.push_back(m.correct);
            wanted.insert(wanted.end(), m.metricSums.begin(), m.metricSums.end());
        }
        if (mode == Mode::Train) {
            for (Layer& L : layers_)
                for (Variable& v : L.params) {
                    const graph::ValueId grad = m.grads.at(m.variables.at(L.geometry.name + "/" + v.name));
                    o.bound[grad] = &v.grad;
                    wanted.push_back(grad);
                }
            for (const graph::BatchStatistic& s : m.statistics) wanted.push_back(s.batchValue);
        }
        p.run = std::make_unique<graph::CpuPlan>(m.g, B, wanted, std::move(o));
        return plans_.emplace(key, std::move(p)).first->second;
    }

    // The batch's rows (and targets) into the plan's inputs.
    void gatherRows(Plan& p, const Dataset& d, int offset, int batch, bool ordered) {
        const graph::ModelGraph& m = *p.graph;
        auto rowOf = [&](int r) { return ordered ? d.order[size_t(offset + r)] : offset + r; };
        float* x = (*p.run)[m.x].data.data();
        for (int r = 0; r < batch; ++r)
            std::copy(d.x + size_t(rowOf(r)) * size_t(inputSize_), d.x + size_t(rowOf(r) + 1) * size_t(inputSize_),
                      x + size_t(r) * size_t(inputSize_));
        float* y = (*p.run)[m.y].data.data();
        const int C = setup_.io.targetCols();
        for (int r = 0; r < batch; ++r) {
            if (setup_.io.labels()) y[r] = float(d.labels[size_t(rowOf(r))]);
            else
                std::copy(d.values.begin() + std::ptrdiff_t(size_t(rowOf(r)) * size_t(C)),
                          d.values.begin() + std::ptrdiff_t(size_t(rowOf(r) + 1) * size_t(C)),
                          y + size_t(r) * size_t(C));
        }
        if (m.correctSoFar != graph::kNoValue) (*p.run)[m.correctSoFar].data[0] = 0.0f;
        for (graph::ValueId v : m.metricSoFar) std::fill((*p.run)[v].data.begin(), (*p.run)[v].data.end(), 0.0f);
    }

    // A run's counts (each batch's own: the inputs of its sums so far are 0) added to `s`.
    void addSums(Plan& p, graph::EpochSums& s) {
        const graph::ModelGraph& m = *p.graph;
        if (m.correct != graph::kNoValue) s.correct += double((*p.run)[m.correct].data[0]);
        size_t at = 0;
        for (graph::ValueId v : m.metricSums)
            for (float x : (*p.run)[v].data) s.metrics[at++] += double(x);
    }

    // Every array of the training state: parameters, their slots, statistics
    // (listed once: the steps allocate nothing).
    const std::vector<HostMatrix*>& stateArrays() {
        if (stateArrays_.empty())
            for (auto& L : layers_) {
                for (auto& v : L.params) {
                    stateArrays_.push_back(&v.value);
                    for (auto& s : v.slots) stateArrays_.push_back(&s);
                }
                for (auto& v : L.buffers) stateArrays_.push_back(&v.value);
            }
        return stateArrays_;
    }
    // The state before the last step becomes the state again (as on the GPU,
    // ops/step_guard.hpp: two arrays each, swapped, so keeping it costs no copy).
    void revert() {
        if (!revertible_) return;
        const std::vector<HostMatrix*>& all = stateArrays();
        for (size_t i = 0; i < all.size(); ++i) std::swap(*all[i], previous_[i]);
        revertible_ = false;
    }

    // The step's updates read the state before it (kept in previous_, so that
    // revert() can go back to it) and write the state after it: one parallel
    // region over the elements of every parameter, each part updating its
    // elements and checking what it wrote. Returns whether every parameter,
    // slot and statistic is finite after it.
    bool update(Plan& p, long step) {
        const std::vector<HostMatrix*>& all = stateArrays();
        previous_.resize(all.size());
        for (size_t i = 0; i < all.size(); ++i) {
            if (previous_[i].data.size() != all[i]->data.size()) previous_[i] = *all[i];
            std::swap(*all[i], previous_[i]);
        }
        revertible_ = true;
        float gscale = 1.0f;
        if (setup_.clipNorm > 0.0f) {
            clipList_.clear();
            for (auto& L : layers_)
                for (auto& v : L.params) clipList_.push_back({v.grad.data.data(), v.grad.size()});
            gscale = clipFactor(clipList_, setup_.clipNorm);
        }
        const float lr = setup_.schedule.at(setup_.optimizer.lr, step);
        if (!(lr >= 0.0f) || !std::isfinite(lr))
            throw ArgumentError("optimizer: the learning rate of step " + std::to_string(step + 1) + " is " +
                                std::to_string(lr) + " (must be finite and >= 0)");
        updates_.clear();
        size_t k = 0, total = 0;  // k: the index in `all` (stateArrays' order) of the next array
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                Update u{v.decays ? &setup_.optimizer : &noDecay_,
                         previous_[k++].data.data(),
                         v.value.data.data(),
                         v.grad.data.data(),
                         {},
                         {},
                         v.value.size()};
                for (size_t i = 0; i < v.slots.size(); ++i) {
                    u.state0[i] = previous_[k++].data.data();
                    u.state[i] = v.slots[i].data.data();
                }
                updates_.push_back(u);
                total += u.n;
            }
            for (auto& v : L.buffers) v.value = previous_[k++];  // moved below, in place (a few values)
        }
        std::atomic<bool> finite{true};
        forElements(ws_, total, 32.0, [&](size_t first, size_t end) {
            size_t at = 0;  // where the parameter's elements start
            for (const Update& u : updates_) {
                const size_t a = std::max(first, at), b = std::min(end, at + u.n);  // this part's share of u
                if (a < b) {
                    optimizerUpdate(*u.o, u.p0, u.p, u.g, u.state0, u.state, a - at, b - at, gscale, int(step + 1), lr);
                    bool ok = allFinite(u.p + (a - at), b - a);
                    for (int i = 0; i < u.o->stateSlots(); ++i) ok = ok && allFinite(u.state[i] + (a - at), b - a);
                    if (!ok) finite.store(false, std::memory_order_relaxed);
                }
                at += u.n;
            }
        });
        // Batch normalization's moving averages, the variance made unbiased
        // (reference/batchnorm.hpp), only now that the step is known to be good.
        for (const graph::BatchStatistic& s : p.graph->statistics) {
            const double m = double(p.run->batch()) * s.pixels;
            const float unbias = s.variance ? float(m > 1 ? m / (m - 1) : 1.0) : 1.0f;
            const std::string layer = s.variable.substr(0, s.variable.rfind('/'));
            for (auto& L : layers_)
                if (L.geometry.name == layer) {
                    const BatchNormalization& bn = std::get<BatchNormalization>(L.spec);
                    float* avg = find(L.buffers, s.variable.substr(layer.size() + 1).c_str()).value.data.data();
                    const float* stat = (*p.run)[s.batchValue].data.data();
                    for (int c = 0; c < L.geometry.out.channels; ++c)
                        avg[c] = bn.momentum * avg[c] + (1.0f - bn.momentum) * unbias * stat[size_t(c)];
                }
        }
        bool ok = finite.load();
        for (auto& L : layers_)
            for (auto& v : L.buffers) ok = ok && allFinite(v.value.data.data(), v.value.size());
        return ok;
    }

    // Whether none of x[0, n) is NaN or infinite (x - x is 0 for every finite x), in a loop that vectorises.
    static bool allFinite(const float* x, size_t n) {
        unsigned bad = 0;
        for (size_t i = 0; i < n; ++i) bad |= unsigned(!(x[i] - x[i] == 0.0f));
        return bad == 0;
    }

    static Variable& find(std::vector<Variable>& list, const char* name) {
        for (auto& v : list)
            if (v.name == name) return v;
        throw Error(std::string("cpu::Model: missing variable ") + name);
    }

    std::vector<Layer> layers_;
    int inputSize_, outputSize_ = 0;
    TrainingSetup setup_;
    OptimizerConfig noDecay_;  // the optimizer for the parameters weight decay leaves out
    std::unique_ptr<graph::ModelGraph> trainGraph_, evalGraph_;
    std::map<std::pair<int, int>, Plan> plans_;  // by batch size and mode
    ThreadPool* pool_ = nullptr;
    // One parameter's update this step: its optimizer, the arrays it reads and writes (optimizerUpdate), its size.
    struct Update {
        const OptimizerConfig* o;
        const float* p0;
        float* p;
        const float* g;
        const float* state0[2];
        float* state[2];
        size_t n;
    };
    std::vector<Update> updates_;  // the step's, in stateArrays' order (cleared, so the steps allocate nothing)
    Workspace ws_;                 // the update's threads (useThreads)
    std::vector<HostMatrix*> stateArrays_;
    std::vector<HostMatrix> previous_;  // the state before the last step (update, revert)
    bool revertible_ = false;           // previous_ is that state
    bool updateRejected_ = false;
    std::vector<std::pair<const float*, size_t>> clipList_;
    graph::EpochSums sums_;
};

}  // namespace gltrain::cpu
