// The GPU engine's compiler from a model's graph to recorded pass lists, one
// GpuStep per batch size and purpose (training, or evaluation and prediction):
// the row gathers (16 batches at once), the graph lowered by graph/gpu_plan.hpp
// with its fusions, and the training step's tail — clipping, loss scaling,
// the NaN guard, one fused optimizer update per parameter, batch
// normalization's moving averages under the guard. A chain of small dense
// layers (graph::matchDenseChain) trains instead with ops/mlp.hpp's step of
// one pass per parameter.
#pragma once
#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "gltrain/graph/gpu_plan.hpp"
#include "gltrain/graph/model_graph.hpp"
#include "gltrain/graph/patterns.hpp"
#include "gltrain/model/variables.hpp"
#include "gltrain/ops/loss_scale.hpp"
#include "gltrain/ops/mlp.hpp"
#include "gltrain/ops/optimizer.hpp"
#include "gltrain/ops/reduce.hpp"
#include "gltrain/ops/step_guard.hpp"
#include "gltrain/ping_pong.hpp"

namespace gltrain {

// A variable on the GPU: its value and optimizer slots, each a pair of
// textures the step reads from and writes to, swapped after it.
struct GpuVariable {
    std::unique_ptr<PingPong> value;
    std::vector<std::unique_ptr<PingPong>> slots;
};

// A dataset on the GPU: rows, targets (labels N x 1 or values N x C), and
// the order in which training visits them.
struct DeviceData {
    int n = 0;
    Tensor x, y, order;
};

// Everything one batch size needs, recorded once.
struct GpuStep {
    int batch = 0;
    bool training = false;
    Tensor xb, yb;  // the batch: in a training step, row windows of xFill, yFill
    // Training: the gathers fill fillSteps batches at once (one pass each for x
    // and y every fillSteps steps, not every step); the step's batch is a window.
    Tensor xFill, yFill;
    PassList fill;
    int fillSteps = 1;
    int filledEpoch = -1, filledStart = -1;  // what xFill, yFill hold: rows from filledStart of that epoch
    std::deque<Tensor> tensors;              // the step's own temporaries (stable addresses)
    std::unique_ptr<graph::GpuPlan> graph;   // the model's passes and their tensors
    Tensor* output = nullptr;                // model output (after a final Softmax)
    Tensor lossRows, lossMean;
    PingPong correctSum;  // correct predictions accumulated over an epoch / an evaluation
    PingPong lossSum;
    std::deque<PingPong> metricSums;  // each metric's sums (graph::ModelIO::metrics), accumulated the same way
    PassList forward;                 // gather + forward (predict, evaluate)
    PassList train;                   // forward + loss + backward + updates (or the dense chain's passes)
    size_t lossPasses = 0;            // train's first passes, up to the one that writes lossMean
    PassList evalTail;                // loss, sums (after forward)
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
    // batch, whose step's batches are shorter than the full ones before it)
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
        for (PingPong& m : metricSums) m.front().clear();
    }
};

// State the training steps of one model share.
struct GpuStepState {
    std::unique_ptr<PingPong> lossScale;  // dynamic loss scaling's (scale, good steps)
    std::unique_ptr<PingPong> stepCheck;  // what the last step wrote, checked (ops/step_guard.hpp); null under Ignore
};

// What the compiler records from: the model's graph and variables, where they live.
struct GpuStepSource {
    Context* ctx = nullptr;
    const CompileOptions* options = nullptr;
    const graph::ModelGraph* graph = nullptr;  // the training or the inference graph
    const ModelVariables* vars = nullptr;
    std::vector<GpuVariable>* values = nullptr;  // by ModelVariables index
    GpuStepState* state = nullptr;
    int inputSize = 0, targetCols = 0;        // values per row of x, of the targets
    bool labels = true;                       // the targets are class labels, one column (graph::ModelIO::labels)
    bool lossScaling = false;                 // on (the compile options, and on the half-float backend by default)
    std::vector<graph::ModelMetric> metrics;  // the metrics, whose sums each step keeps
    OptimizerConfig update{};                 // the optimizer as the update passes run it
};

// Whether the small dense step (ops/mlp.hpp) computes `loss`: today's fused losses without label smoothing.
inline bool smallDenseLoss(const LossSpec& loss) {
    return loss.labelSmoothing == 0.0f &&
           (loss.kind == LossKind::SoftmaxCrossEntropy || loss.kind == LossKind::MeanSquaredError ||
            (loss.kind == LossKind::BinaryCrossEntropy && loss.fromLogits));
}

class GpuStepCompiler {
public:
    explicit GpuStepCompiler(const GpuStepSource& s) : s_(s), ctx_(*s.ctx), o_(*s.options), m_(*s.graph) {}

    // Records a step's passes. Training: forward with Z kept, loss, backward
    // (the activation derivative fused into the pass that produces each dense
    // layer's incoming gradient), optional clipping, one fused update pass per
    // parameter.
    void record(GpuStep& p, int B, bool training) {
        p.batch = B;
        p.training = training;
        const bool labels = s_.labels;
        const int yCols = s_.targetCols;
        const Layout yLayout = labels ? Layout::Unpacked : Layout::Packed;
        if (training) {
            p.fillSteps = fillStepsFor(B, s_.inputSize + yCols);
            p.xFill = Tensor(ctx_, p.fillSteps * B, s_.inputSize);
            p.yFill = Tensor(ctx_, p.fillSteps * B, yCols, yLayout);
            p.xb = Tensor::rowWindow(p.xFill, 0, B);
            p.yb = Tensor::rowWindow(p.yFill, 0, B);
        } else {
            p.xb = Tensor(ctx_, B, s_.inputSize);
            p.yb = Tensor(ctx_, B, yCols, yLayout);
            p.lossRows = Tensor(ctx_, B, 1, Layout::Unpacked);  // training reads only the mean
        }
        p.lossMean = Tensor(ctx_, 1, 1);
        p.correctSum = PingPong(ctx_, HostMatrix(1, 1));
        p.lossSum = PingPong(ctx_, HostMatrix(1, 1));
        for (const graph::ModelMetric& m : s_.metrics) p.metricSums.emplace_back(ctx_, HostMatrix(1, m.sums()));
        // Row gathers: x into the forward, y into the loss; their sources are bound
        // by GpuStep::bind (a pass with an unbound input refuses to run).
        for (int which = 0; which < 2; ++which) {
            PassList& list = training ? p.fill : which == 0 ? p.forward : p.evalTail;
            Pass& g = list.add(Pass(ctx_, "util/gather_rows"));
            g.output(training ? (which == 0 ? p.xFill : p.yFill) : which == 0 ? p.xb : p.yb).uniformInt("offset", 0);
            p.gathers.push_back(&g);
        }
        if (training && recordDenseChainStep(p)) return;
        if (training && s_.lossScaling && !s_.state->lossScale)
            s_.state->lossScale = std::make_unique<PingPong>(makeLossScaleState(ctx_, o_.lossScaling));
        recordGraph(p, B, training);
        if (training) recordUpdates(p, B);
    }

private:
    // The largest last layer (batch x in x out multiply-adds) whose pass also writes the loss gradient.
    static constexpr int64_t kLossGradInForwardMacs = 1 << 16;

    // How many batches a training step gathers at once: up to 16, and no more
    // than about 8 MiB of rows (values: x and y columns). Each pass costs a
    // fixed ~0.05 ms on a software renderer (a render pass and barrier in
    // ANGLE), two gathers a step were 2 of W4's 13 passes (bench/COMPARE.md).
    static int fillStepsFor(int batch, int valuesPerRow) {
        constexpr int kMaxFillSteps = 16;
        constexpr double kFillBytes = 8.0 * 1024 * 1024;
        const double perBatch = double(batch) * double(valuesPerRow) * 4.0;
        return std::max(1, std::min(kMaxFillSteps, int(kFillBytes / perBatch)));
    }

    GpuVariable& variable(const std::string& key) { return (*s_.values)[variableIndex(key)]; }
    GpuVariable& variable(graph::ValueId v) { return (*s_.values)[variableIndex(v)]; }
    // The index in the model's variables (ModelVariables::list) of a key or of the graph's value.
    size_t variableIndex(const std::string& key) const {
        for (size_t i = 0; i < s_.vars->list.size(); ++i)
            if (s_.vars->list[i].key() == key) return i;
        throw Error("GpuStepCompiler: no variable " + key);
    }
    size_t variableIndex(graph::ValueId v) const {
        for (auto& [key, id] : m_.variables)
            if (id == v) return variableIndex(key);
        throw Error("GpuStepCompiler: value " + std::to_string(v) + " is no variable");
    }

    // The graph's nodes, lowered: training into one list (split for an early
    // loss read where the backward starts), evaluation into the forward
    // (predict), then the loss and the sums.
    void recordGraph(GpuStep& p, int B, bool training) {
        graph::GpuPlanOptions o;
        o.fuse = true;
        o.bound[m_.x] = &p.xb;
        o.bound[m_.y] = &p.yb;
        o.bound[m_.lossMean] = &p.lossMean;
        if (!training) o.bound[m_.lossRows] = &p.lossRows;
        if (m_.correct != graph::kNoValue) {
            o.bound[m_.correctSoFar] = &p.correctSum.front();
            o.bound[m_.correct] = &p.correctSum.back();
            p.swaps.push_back(&p.correctSum);
        }
        for (size_t k = 0; k < m_.metricSums.size(); ++k) {
            o.bound[m_.metricSoFar[k]] = &p.metricSums[k].front();
            o.bound[m_.metricSums[k]] = &p.metricSums[k].back();
            p.swaps.push_back(&p.metricSums[k]);
        }
        if (training && s_.state->lossScale)
            o.bound[m_.seed] = &s_.state->lossScale->front();  // the gradients are scaled by it
        for (auto& [name, v] : m_.variables) o.bound[v] = &variable(name).value->front();
        // A dense bias's gradient summed by its update itself, saving the reduction's
        // passes, unless clipping or loss scaling has to measure every gradient first.
        o.biasSumInUpdate = training && o_.clipNorm <= 0.0f && !s_.state->lossScale;
        o.lossGradInProductMacs = training ? kLossGradInForwardMacs : 0;
        p.lossPasses = std::numeric_limits<size_t>::max();
        // Evaluation's tail is what reads the targets, which its gather fills
        // after the forward (predict runs the forward alone).
        std::set<graph::ValueId> targetValues{m_.y};
        o.listFor = [&p, training, targetValues](const graph::Node& n) mutable {
            if (training) {
                if (n.backward && p.lossPasses == std::numeric_limits<size_t>::max()) p.lossPasses = p.train.size();
                return &p.train;
            }
            bool tail = false;
            for (graph::ValueId v : n.inputs) tail = tail || targetValues.count(v) > 0;
            if (tail) targetValues.insert(n.outputs.begin(), n.outputs.end());
            return tail ? &p.evalTail : &p.forward;
        };
        std::vector<graph::ValueId> wanted{m_.output, m_.logits, m_.lossMean};
        if (!training) wanted.push_back(m_.lossRows);
        if (m_.correct != graph::kNoValue) wanted.push_back(m_.correct);
        wanted.insert(wanted.end(), m_.metricSums.begin(), m_.metricSums.end());
        for (auto& [param, grad] : m_.grads) wanted.push_back(grad);
        for (auto& s : m_.statistics) wanted.push_back(s.batchValue);
        p.graph = std::make_unique<graph::GpuPlan>(ctx_, m_.g, B, wanted, std::move(o));
        p.output = &(*p.graph)[m_.output];
        p.dropouts = p.graph->randomPasses();
        if (training) {
            if (p.lossPasses > p.train.size()) p.lossPasses = p.train.size();
            return;
        }
        // The sum of the rows' losses over an evaluation.
        ReduceOptions total;
        total.accumulate = &p.lossSum.front();
        recordReduce(p.evalTail, p.lossRows, ReduceOp::Sum, ReduceAxis::All, p.lossSum.back(), total);
        p.swaps.push_back(&p.lossSum);
    }

    // The training step's tail: clipping, loss scaling, the guard, the updates
    // (last layer first) and the moving averages.
    void recordUpdates(GpuStep& p, int B) {
        graph::GpuPlan& plan = *p.graph;
        struct ParamGrad {
            GpuVariable* v;
            const Tensor* g;
            GradientForm form;
            const OptimizerConfig* update;  // with or without weight decay (ModelVariable::decays)
        };
        const OptimizerConfig noDecay = s_.update.withoutDecay();
        std::vector<const Tensor*> grads;  // the gradients clipping and loss scaling measure
        std::vector<ParamGrad> paramGrads;
        const ModelVariables& vars = *s_.vars;
        std::vector<size_t> order;  // last layer first; a layer's in their order
        for (size_t end = vars.list.size(); end > 0;) {
            size_t begin = end;
            while (begin > 0 && vars.list[begin - 1].layer == vars.list[end - 1].layer) --begin;
            for (size_t i = begin; i < end; ++i)
                if (vars.list[i].decl.trainable) order.push_back(i);
            end = begin;
        }
        for (size_t i : order) {
            const graph::ValueId grad = m_.grads.at(m_.variables.at(vars.list[i].key()));
            const GradientForm form = plan.gradientForm(grad);
            if (form == GradientForm::Same) grads.push_back(&plan[grad]);
            paramGrads.push_back({&(*s_.values)[i], &plan[grad], form, vars.list[i].decays ? &s_.update : &noDecay});
        }
        // BatchNormalization's moving averages, moved after the updates (under their guard).
        struct MovingAverage {
            PingPong* avg;
            const Tensor* stat;
            float momentum, scale;
        };
        std::vector<MovingAverage> movingAverages;
        for (const graph::BatchStatistic& s : m_.statistics) {
            // The variance made unbiased (reference/batchnorm.hpp).
            const double values = double(B) * s.pixels;
            const float unbias = s.variance ? float(values > 1 ? values / (values - 1) : 1.0) : 1.0f;
            movingAverages.push_back({variable(s.variable).value.get(), &plan[s.batchValue], s.momentum, unbias});
        }
        // Clip by global norm: a 1x1 factor every update samples.
        const Tensor* gscale = nullptr;
        const Tensor* lossGuard = o_.onNaN == NanPolicy::Ignore ? nullptr : &p.lossMean;
        const Tensor* scaleGuard = nullptr;
        Tensor* norm = nullptr;
        if (o_.clipNorm > 0.0f) {
            norm = &p.temp(ctx_, 1, 1);
            recordGlobalL2Norm(p.train, grads, *norm);
        }
        if (PingPong* scale = s_.state->lossScale.get()) {
            // Loss scaling: the updates unscale (and clip) through FACTOR and skip
            // a step whose gradients overflowed through GUARD; the scale adapts (ops/loss_scale.hpp).
            Tensor& gmax = p.temp(ctx_, 1, 1);
            Tensor& factor = p.temp(ctx_, 1, 2);
            Tensor& stepGuard = p.temp(ctx_, 1, 2);
            recordGlobalMaxAbs(p.train, grads, gmax);
            recordLossScaleStep(p.train, o_.lossScaling, *scale, gmax, lossGuard, norm, o_.clipNorm, factor, stepGuard);
            p.swaps.push_back(scale);
            gscale = &factor;
            scaleGuard = &stepGuard;
        } else if (norm) {
            Tensor& factor = p.temp(ctx_, 1, 1);
            p.train.add(Pass(ctx_, "reduce/clip_factor"))
                .input("NORM", *norm)
                .output(factor)
                .uniform("maxNorm", o_.clipNorm);
            gscale = &factor;
        }
        // Without a NaN policy, loss scaling's guard alone skips an overflowed step.
        const Tensor* guard = lossGuard ? recordGuard(p, scaleGuard) : scaleGuard;
        std::vector<const Tensor*> checked;
        for (const ParamGrad& pg : paramGrads)
            recordUpdate(p, *pg.v, checked, [&](const std::vector<PingPong*>& slots) -> Pass& {
                return recordOptimizerUpdate(p.train, *pg.update, *pg.v->value, *pg.g, slots, gscale, guard, pg.form);
            });
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

    // One parameter's update pass (made by `make` from its slots), its swaps and checks.
    template <class Make>
    void recordUpdate(GpuStep& p, GpuVariable& v, std::vector<const Tensor*>& checked, Make&& make) {
        std::vector<PingPong*> slots;
        for (auto& s : v.slots) slots.push_back(s.get());
        p.updates.push_back(&make(slots));
        p.swaps.push_back(v.value.get());
        for (auto* s : slots) p.swaps.push_back(s);
        addCheckedOutputs(checked, *v.value, slots, o_.optimizer);
    }

    // A small dense model (graph::matchDenseChain; a point-wise loss or softmax
    // cross-entropy, no clipping or loss scaling): the loss pass (and for
    // softmax the correct count's) and one update pass per parameter, each
    // running the network itself (ops/mlp.hpp): 1 + P passes (2 + P) instead of
    // a pass per layer, the loss's, the backward matmuls and the updates.
    // Records nothing and returns false for any other model or a step past
    // smallDenseStepMacs.
    bool recordDenseChainStep(GpuStep& p) {
        if (o_.clipNorm > 0.0f || s_.lossScaling || m_.packed || !m_.metricSums.empty() || !smallDenseLoss(o_.loss))
            return false;
        const auto chain = graph::matchDenseChain(m_.g, m_.x, m_.logits);
        if (!chain) return false;
        SmallMlp m;
        m.x = &p.xb;
        m.t = &p.yb;
        m.loss = o_.loss.kind == LossKind::BinaryCrossEntropy ? PointwiseLoss::BinaryCrossEntropyWithLogits
                                                              : PointwiseLoss::MeanSquaredError;
        m.softmaxLabels = o_.loss.labels();
        std::vector<std::pair<GpuVariable*, GpuVariable*>> params;  // kernel, bias
        for (const graph::DenseLink& l : *chain) {
            params.push_back({&variable(l.kernel), &variable(l.bias)});
            m.layers.push_back(
                {&params.back().first->value->front(), &params.back().second->value->front(), l.act, l.alpha});
        }
        if (!smallMlpProblem(m).empty() || smallMlpStepMacs(m) > o_.smallDenseStepMacs) return false;
        recordSmallMlpLoss(p.train, m, p.lossMean);
        if (m.softmaxLabels) {  // the epoch's training accuracy, as the general step's reduce/argmax counts it
            recordSmallMlpCorrectCount(p.train, m, p.correctSum.back(), &p.correctSum.front());
            p.swaps.push_back(&p.correctSum);
        }
        p.lossPasses = p.train.size();
        const Tensor* guard = recordGuard(p, nullptr);
        std::vector<const Tensor*> checked;
        const OptimizerConfig noDecay = s_.update.withoutDecay();
        for (size_t l = 0; l < params.size(); ++l)
            for (bool bias : {false, true}) {
                const graph::ValueId id = bias ? (*chain)[l].bias : (*chain)[l].kernel;
                GpuVariable& v = variable(id);
                const OptimizerConfig& update = s_.vars->list[variableIndex(id)].decays ? s_.update : noDecay;
                recordUpdate(p, v, checked, [&](const std::vector<PingPong*>& slots) -> Pass& {
                    return recordSmallMlpUpdate(p.train, update, m, int(l), bias, *v.value, slots, guard);
                });
            }
        recordCheck(p, checked);
        return true;
    }

    // The step guard (ops/step_guard.hpp) under a NaN policy: the verdict the
    // step's updates read, from its loss, loss scaling's guard (`skip`) and the
    // check of what the previous step wrote. Null under NanPolicy::Ignore.
    const Tensor* recordGuard(GpuStep& p, const Tensor* skip) {
        if (o_.onNaN == NanPolicy::Ignore) return nullptr;
        if (!s_.state->stepCheck) s_.state->stepCheck = std::make_unique<PingPong>(makeStepCheckState(ctx_));
        Tensor& verdict = p.temp(ctx_, 1, 1, Layout::Unpacked);
        recordStepGuard(p.train, p.lossMean, skip, *s_.state->stepCheck, o_.onNaN == NanPolicy::Stop, verdict);
        return &verdict;
    }
    // The check of what the step's updates wrote (`checked`: addCheckedOutputs').
    void recordCheck(GpuStep& p, const std::vector<const Tensor*>& checked) {
        if (!s_.state->stepCheck) return;
        recordStepCheck(p.train, checked, *s_.state->stepCheck);
        p.swaps.push_back(s_.state->stepCheck.get());
    }

    GpuStepSource s_;
    Context& ctx_;
    const CompileOptions& o_;
    const graph::ModelGraph& m_;
};

}  // namespace gltrain
