// A graph recorded into pass lists for one batch size: the GPU lowering.
//
// Each node is recorded by the first of the candidates below that takes it
// (as TFLite's GPU delegate tries its node shaders in order), the last one
// being the op's own `gpu` (one op at a time: the op table's tests run with
// nothing else). With GpuPlanOptions::fuse the compiler's patterns come
// first (matched in graph/patterns.hpp, which graph/cpu_plan.hpp shares),
// each worth a pass or a tensor a step (bench/RESULTS.md, bench/COMPARE.md):
//   - a product, its bias and its activation: one pass with the matmul's
//     epilogue (ops/matmul.hpp), keeping Z only where the backward's f'(Z)
//     cannot be read from the output (derivativeFromOutput);
//   - a convolution, its bias and its activation: one forward/conv2d pass;
//   - a loss and its gradient: one call of its fused kernels;
//   - a point-wise loss's gradient written by the last, small, linear
//     product (ops/loss.hpp's recordDenseLossGrad);
//   - an incoming gradient dZ·Wᵀ times the previous layer's f'(Z): the
//     product's backward epilogue;
//   - a dense bias's gradient left to its update (GradientForm::ColumnSum);
//   - a reshape: the same tensor (rows are NHWC, so no data moves).
// Inputs, parameters and constants get tensors the caller fills, unless it
// binds its own (the batch, the parameters' ping-pong fronts, the loss).
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gltrain/graph/patterns.hpp"
#include "gltrain/ops/optimizer.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain::graph {

struct GpuPlanOptions {
    bool fuse = false;  // the compiler's patterns (above); off: one op at a time
    // A dense bias's gradient is summed by its optimizer update (no reduction
    // passes) — not when clipping or loss scaling measures every gradient first.
    bool biasSumInUpdate = false;
    // A point-wise loss's gradient is written by the last linear product when
    // it is at most this many multiply-adds (0: never): one pass less, at
    // about half the blocked kernel's speed (bench/RESULTS.md).
    int64_t lossGradInProductMacs = 0;
    std::map<ValueId, Tensor*> bound;               // tensors the caller owns
    std::map<ValueId, Layout> layouts;              // of the tensors the plan makes for inputs and parameters
    std::function<PassList*(const Node&)> listFor;  // where a node's passes go (null: the plan's own list)
};

class GpuPlan {
public:
    GpuPlan(Context& ctx, const Graph& g, int batch, const std::vector<ValueId>& wanted, GpuPlanOptions o = {})
        : ctx_(ctx),
          g_(g),
          batch_(batch),
          o_(std::move(o)),
          p_(g, wanted),
          tensors_(size_t(g.values()), nullptr),
          done_(size_t(g.nodes()), false),
          form_(size_t(g.values()), GradientForm::Same) {
        for (auto& [v, t] : o_.bound) tensors_.at(size_t(v)) = t;
        for (ValueId v = 0; v < g.values(); ++v) {
            const Value& x = g.value(v);
            if (!p_.needed[size_t(v)] || x.kind == ValueKind::Computed || tensors_[size_t(v)]) continue;
            auto it = o_.layouts.find(v);
            Tensor& t = make(v, it == o_.layouts.end() ? Layout::Packed : it->second);
            if (x.kind == ValueKind::Constant) t.upload(HostMatrix(t.rows(), t.cols(), x.constant));
        }
        for (int n : p_.order) {
            if (done_[size_t(n)]) continue;
            const Node& node = g.node(n);
            if (!(o_.fuse && fused(n))) {
                OpRecorder r{*this, node};
                std::visit([&](const auto& op) { op.gpu(r); }, node.op);
            }
            done_[size_t(n)] = true;
        }
        // What the caller reads must exist; an op reading a missing tensor throws as it records.
        for (ValueId v : wanted)
            if (!tensors_[size_t(v)]) throw Error("GpuPlan: nothing wrote " + g.describe(v));
    }

    // A value's tensor: the caller uploads inputs and parameters and reads results.
    // For a gradient left to its update (gradientForm: ColumnSum), the tensor it sums.
    Tensor& operator[](ValueId v) {
        if (!tensors_.at(size_t(v))) throw ArgumentError("GpuPlan: " + g_.describe(v) + " is not in this plan");
        return *tensors_[size_t(v)];
    }
    bool has(ValueId v) const { return tensors_.at(size_t(v)) != nullptr; }
    GradientForm gradientForm(ValueId v) const { return form_.at(size_t(v)); }
    PassList& passes() { return list_; }
    // The passes that draw dropout masks: their `step` uniform is set per step.
    const std::vector<Pass*>& randomPasses() const { return random_; }
    void run() { list_.run(); }

    // What an op's `gpu` sees.
    struct OpRecorder {
        GpuPlan& plan;
        const Node& node;
        PassList& list() const { return plan.listOf(node); }
        Context& ctx() const { return plan.ctx_; }
        const Tensor& in(int i) const { return plan[node.inputs[size_t(i)]]; }
        const Shape& shape(int i) const { return plan.g_.shape(node.inputs[size_t(i)]); }
        // Output k's tensor, made on first use in `layout` (a bound one as it is).
        Tensor& out(int k, Layout layout = Layout::Packed) const {
            return plan.output(node.outputs[size_t(k)], layout);
        }
        int rows(int k) const { return int(plan.g_.shape(node.outputs[size_t(k)]).rows(plan.batch_)); }
        // A tensor of the op's own, made once with the plan (an LSTM's step passes ping-pong through two).
        Tensor& temp(int rows, int cols, Layout layout) const {
            return plan.store_.emplace_back(plan.ctx_, rows, cols, layout);
        }
        // Whether anything reads output k (a kernel may then skip writing it).
        bool wants(int k) const { return plan.p_.read(node.outputs[size_t(k)]); }
        // A gradient seed: null when it is the constant 1 (the kernels' default scale).
        const Tensor* seed(int i) const {
            const Value& x = plan.g_.value(node.inputs[size_t(i)]);
            return x.kind == ValueKind::Constant && x.constant == 1.0f ? nullptr : &in(i);
        }
        void addRandomPass(Pass& p) const { plan.random_.push_back(&p); }
    };

private:
    Tensor& make(ValueId v, Layout layout) {
        const Shape& s = g_.shape(v);
        store_.emplace_back(ctx_, int(s.rows(batch_)), int(s.cols()), layout);
        return *(tensors_[size_t(v)] = &store_.back());
    }
    Tensor& output(ValueId v, Layout layout) { return tensors_[size_t(v)] ? *tensors_[size_t(v)] : make(v, layout); }
    PassList& listOf(const Node& n) {
        PassList* l = o_.listFor ? o_.listFor(n) : nullptr;
        return l ? *l : list_;
    }
    // ---- the compiler's patterns ----

    bool fused(int n) {
        return fuseProductOrConvolution(n) || fuseLossAndGradient(n) || fuseProductWithDerivative(n) ||
               leaveBiasSumToUpdate(n) || aliasReshape(n);
    }

    // MatMul or Conv -> BiasAdd -> (Activate): one pass (graph/patterns.hpp).
    bool fuseProductOrConvolution(int n) {
        const auto m = matchProduct(g_, p_, n);
        if (!m) return false;
        const Node& node = g_.node(n);
        const Tensor &x = (*this)[m->x], &w = (*this)[m->w], &b = (*this)[m->b];
        PassList& list = listOf(node);
        if (!m->conv) {
            if (m->actNode < 0 && fuseLossGradient(node, *m)) return done(m->biasNode);
            if (m->keepZ)
                recordDenseTrain(list, x, w, b, m->act, output(m->z, Layout::Packed), output(m->y, Layout::Packed),
                                 m->alpha);
            else recordDense(list, x, w, b, m->act, output(m->y, blockLayout(ctx_, batch_)), m->alpha);
        } else {
            const Layout rows4 = op_detail::convLayout(batch_);
            if (m->keepZ) {
                recordConv2D(list, x, w, &b, m->conv->window, Activation::Linear, output(m->z, rows4));
                recordActivation(list, *tensors_[size_t(m->z)], m->act, output(m->y, Layout::Packed), m->alpha);
            } else {
                recordConv2D(list, x, w, &b, m->conv->window, m->act, output(m->y, rows4), m->alpha);
            }
        }
        if (m->zIsY) tensors_[size_t(m->z)] = tensors_[size_t(m->y)];
        done(m->biasNode);
        if (m->actNode >= 0) done(m->actNode);
        return true;
    }
    // The last product's linear output z read only by a point-wise loss and its
    // gradient: the product writes z and the gradient in one pass (GPU only:
    // one pass less while the product is far below a pass's fixed cost).
    bool fuseLossGradient(const Node& product, const ProductMatch& m) {
        if (o_.lossGradInProductMacs <= 0 || p_.readers[size_t(m.z)].size() != 2) return false;
        const PointwiseLossOp* loss = nullptr;
        int gradNode = -1;
        for (int r : p_.readers[size_t(m.z)]) {
            if (const auto* l = opOf<PointwiseLossOp>(g_, r)) loss = l;
            else if (opOf<PointwiseLossGrad>(g_, r)) gradNode = r;
        }
        if (!loss || gradNode < 0 || opOf<PointwiseLossGrad>(g_, gradNode)->kind != loss->kind) return false;
        const Node& grad = g_.node(gradNode);
        // The product's pass comes first: a seed (a weighted output's) or target (label smoothing's)
        // computed after it is not there yet.
        for (int i : {1, 2})
            if (g_.value(grad.inputs[size_t(i)]).kind == ValueKind::Computed) return false;
        const Tensor &x = (*this)[m.x], &w = (*this)[m.w], &b = (*this)[m.b];
        if (int64_t(batch_) * x.cols() * w.cols() > o_.lossGradInProductMacs) return false;
        OpRecorder r{*this, grad};
        recordDenseLossGrad(listOf(product), x, w, b, loss->kind, (*this)[grad.inputs[1]], output(m.z, Layout::Packed),
                            output(grad.outputs[0], Layout::Packed), r.seed(2));
        return done(gradNode);
    }
    // A loss and its gradient: one call of its fused kernels.
    bool fuseLossAndGradient(int n) {
        const auto gradNode = matchLossGradient(g_, p_, n, done_);
        if (!gradNode) return false;
        const Node &node = g_.node(n), &grad = g_.node(*gradNode);
        OpRecorder r{*this, grad};
        Tensor* rows = p_.read(node.outputs[0]) ? &output(node.outputs[0], Layout::Unpacked) : nullptr;
        Tensor* mean = p_.read(node.outputs[1]) ? &output(node.outputs[1], Layout::Packed) : nullptr;
        Tensor& dx = output(grad.outputs[0], Layout::Packed);
        const Tensor &pred = (*this)[node.inputs[0]], &target = (*this)[node.inputs[1]];
        PassList& list = listOf(node);
        if (opOf<SoftmaxCrossEntropy>(g_, n)) recordSoftmaxCrossEntropy(list, pred, target, &dx, rows, mean, r.seed(2));
        else if (opOf<PointwiseLossOp>(g_, n)->kind == PointwiseLoss::MeanSquaredError)
            recordMse(list, pred, target, &dx, rows, mean, r.seed(2));
        else recordBinaryCrossEntropyWithLogits(list, pred, target, &dx, rows, mean, r.seed(2));
        return done(*gradNode);
    }
    // dZ·Wᵀ times the previous layer's f'(Z): the product's backward epilogue.
    bool fuseProductWithDerivative(int n) {
        const auto d = matchDerivativeEpilogue(g_, p_, n);
        if (!d) return false;
        const Node &node = g_.node(n), &dact = g_.node(*d);
        const ActivateGrad& ag = *opOf<ActivateGrad>(g_, *d);
        MatmulOptions nt;
        nt.transB = true;
        nt.act = ag.act;
        nt.actAlpha = ag.alpha;
        nt.dactZ = &(*this)[dact.inputs[1]];
        recordMatmul(listOf(node), (*this)[node.inputs[0]], (*this)[node.inputs[1]],
                     output(dact.outputs[0], blockLayout(ctx_, batch_)), nt);
        return done(*d);
    }
    // A dense bias's gradient read only as a result: its update sums dZ itself.
    bool leaveBiasSumToUpdate(int n) {
        const auto* cs = opOf<ChannelSum>(g_, n);
        if (!cs || !o_.biasSumInUpdate || batch_ > kColumnSumMaxRows) return false;
        const Node& node = g_.node(n);
        const ValueId v = node.outputs[0];
        if (!p_.readers[size_t(v)].empty() || g_.shape(node.inputs[0]).rank() != 2) return false;
        form_[size_t(v)] = GradientForm::ColumnSum;
        tensors_[size_t(v)] = &(*this)[node.inputs[0]];
        return true;
    }
    bool aliasReshape(int n) {
        if (!opOf<Reshape>(g_, n)) return false;
        const Node& node = g_.node(n);
        if (tensors_[size_t(node.outputs[0])]) return false;  // bound: a copy
        tensors_[size_t(node.outputs[0])] = &(*this)[node.inputs[0]];
        return true;
    }
    bool done(int n) {
        done_[size_t(n)] = true;
        return true;
    }

    Context& ctx_;
    const Graph& g_;
    int batch_;
    GpuPlanOptions o_;
    PassList list_;
    std::deque<Tensor> store_;  // stable addresses: passes hold references
    PlanNodes p_;
    std::vector<Tensor*> tensors_;
    std::vector<bool> done_;
    std::vector<GradientForm> form_;
    std::vector<Pass*> random_;
};

}  // namespace gltrain::graph
