// A graph recorded into pass lists for one batch size: the GPU lowering.
//
// Each node is recorded by the first of the candidates below that takes it
// (as TFLite's GPU delegate tries its node shaders in order), the last one
// being the op's own `gpu` (one op at a time: the op table's tests run with
// nothing else). With GpuPlanOptions::fuse the compiler's patterns come
// first, each worth a pass or a tensor a step (bench/RESULTS.md, bench/COMPARE.md):
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

#include "gltrain/graph/graph.hpp"
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
    std::map<ValueId, Tensor*> bound;         // tensors the caller owns
    std::map<ValueId, Layout> layouts;        // of the tensors the plan makes for inputs and parameters
    std::function<PassList*(const Node&)> listFor;  // where a node's passes go (null: the plan's own list)
};

// Linear's, ReLU's and LeakyReLU's (slope >= 0) derivative at Z equals their
// derivative at Y = f(Z) (Y > 0 exactly where Z > 0; NaN stays NaN), so such
// layers keep no Z: their forward is the fused single-output kernel and the
// backward reads f'(Y).
inline bool derivativeFromOutput(Activation a, float alpha) {
    return a == Activation::Linear || a == Activation::ReLU || (a == Activation::LeakyReLU && alpha >= 0.0f);
}

class GpuPlan {
public:
    GpuPlan(Context& ctx, const Graph& g, int batch, const std::vector<ValueId>& wanted, GpuPlanOptions o = {})
        : ctx_(ctx), g_(g), batch_(batch), o_(std::move(o)), tensors_(size_t(g.values()), nullptr),
          consumers_(size_t(g.values())), wanted_(size_t(g.values()), false), done_(size_t(g.nodes()), false),
          form_(size_t(g.values()), GradientForm::Same) {
        for (auto& [v, t] : o_.bound) tensors_.at(size_t(v)) = t;
        std::vector<bool> needed(size_t(g.values()), false);
        for (ValueId v : wanted) needed[size_t(v)] = wanted_[size_t(v)] = true;
        std::vector<int> order;
        for (int n = g.nodes(); n-- > 0;) {
            const Node& node = g.node(n);
            bool run = false;
            for (ValueId v : node.outputs) run = run || needed[size_t(v)];
            if (!run) continue;
            order.insert(order.begin(), n);
            for (ValueId v : node.inputs) {
                needed[size_t(v)] = true;
                consumers_[size_t(v)].insert(consumers_[size_t(v)].begin(), n);
            }
        }
        for (ValueId v = 0; v < g.values(); ++v) {
            const Value& x = g.value(v);
            if (!needed[size_t(v)] || x.kind == ValueKind::Computed || tensors_[size_t(v)]) continue;
            auto it = o_.layouts.find(v);
            Tensor& t = make(v, it == o_.layouts.end() ? Layout::Packed : it->second);
            if (x.kind == ValueKind::Constant) t.upload(HostMatrix(t.rows(), t.cols(), x.constant));
        }
        for (int n : order) {
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
        Tensor& out(int k, Layout layout = Layout::Packed) const { return plan.output(node.outputs[size_t(k)], layout); }
        int rows(int k) const { return int(plan.g_.shape(node.outputs[size_t(k)]).rows(plan.batch_)); }
        // Whether anything reads output k (a kernel may then skip writing it).
        bool wants(int k) const { return plan.read(node.outputs[size_t(k)]); }
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
    bool read(ValueId v) const { return wanted_[size_t(v)] || !consumers_[size_t(v)].empty(); }
    PassList& listOf(const Node& n) {
        PassList* l = o_.listFor ? o_.listFor(n) : nullptr;
        return l ? *l : list_;
    }
    template <class T>
    const T* opAt(int n) const {
        return std::get_if<T>(&g_.node(n).op);
    }
    const std::vector<int>& readers(ValueId v) const { return consumers_[size_t(v)]; }
    // The one node reading v, if v has exactly one reader and nothing else wants it.
    int soleReader(ValueId v) const { return !wanted_[size_t(v)] && readers(v).size() == 1 ? readers(v)[0] : -1; }

    // ---- the compiler's patterns ----

    bool fused(int n) {
        return fuseProductOrConvolution(n) || fuseLossAndGradient(n) || fuseProductWithDerivative(n) ||
               leaveBiasSumToUpdate(n) || aliasReshape(n);
    }

    // MatMul or Conv -> BiasAdd -> (Activate): one pass (see the top).
    bool fuseProductOrConvolution(int n) {
        const Node& node = g_.node(n);
        const auto* mm = opAt<MatMul>(n);
        const auto* conv = opAt<Conv>(n);
        if (!(mm && !mm->transA && !mm->transB) && !conv) return false;
        const int biasNode = soleReader(node.outputs[0]);
        if (biasNode < 0 || !opAt<BiasAdd>(biasNode) || g_.node(biasNode).inputs[0] != node.outputs[0]) return false;
        const ValueId z = g_.node(biasNode).outputs[0];
        // The activation, and the backward's f'(Z) readers of z; anything else reading z
        // needs Z itself: then the activation stays a pass of its own.
        int actNode = -1;
        std::vector<int> derivatives;
        for (int r : readers(z)) {
            if (const auto* a = opAt<Activate>(r); a && actNode < 0) actNode = r;
            else if (opAt<ActivateGrad>(r) && g_.node(r).inputs[1] == z) derivatives.push_back(r);
            else actNode = -2;
        }
        if (actNode == -2 || wanted_[size_t(z)]) actNode = -1, derivatives.clear();
        const Activate act = actNode >= 0 ? *opAt<Activate>(actNode) : Activate{Activation::Linear, 0.01f};
        for (int d : derivatives) {
            const auto* ag = opAt<ActivateGrad>(d);
            if (ag->act != act.act || ag->alpha != act.alpha) return false;
        }
        const ValueId yv = actNode >= 0 ? g_.node(actNode).outputs[0] : z;
        const Tensor &x = (*this)[node.inputs[0]], &w = (*this)[node.inputs[1]], &b = (*this)[g_.node(biasNode).inputs[1]];
        PassList& list = listOf(node);
        const bool keepZ = !derivatives.empty() && !derivativeFromOutput(act.act, act.alpha);
        if (mm) {
            if (actNode < 0 && fuseLossGradient(n, biasNode, z)) return done(biasNode);
            if (keepZ) {
                recordDenseTrain(list, x, w, b, act.act, output(z, Layout::Packed), output(yv, Layout::Packed), act.alpha);
            } else {
                recordDense(list, x, w, b, act.act, output(yv, blockLayout(ctx_, batch_)), act.alpha);
            }
        } else {
            const Layout rows4 = batch_ >= 4 ? Layout::PackedRows4 : Layout::Packed;
            if (keepZ) {
                recordConv2D(list, x, w, &b, conv->window, Activation::Linear, output(z, rows4));
                recordActivation(list, *tensors_[size_t(z)], act.act, output(yv, Layout::Packed), act.alpha);
            } else {
                recordConv2D(list, x, w, &b, conv->window, act.act, output(yv, rows4), act.alpha);
            }
        }
        if (!keepZ && yv != z && read(z)) tensors_[size_t(z)] = tensors_[size_t(yv)];  // f'(Y) is f'(Z)
        done(biasNode);
        if (actNode >= 0) done(actNode);
        return true;
    }
    // The last product's bias output z read only by a point-wise loss and its
    // gradient: the product writes z and the gradient in one pass.
    bool fuseLossGradient(int n, int biasNode, ValueId z) {
        if (o_.lossGradInProductMacs <= 0 || readers(z).size() != 2) return false;
        const PointwiseLossOp* loss = nullptr;
        int gradNode = -1;
        for (int r : readers(z)) {
            if (const auto* l = opAt<PointwiseLossOp>(r)) loss = l;
            else if (opAt<PointwiseLossGrad>(r)) gradNode = r;
        }
        if (!loss || gradNode < 0 || opAt<PointwiseLossGrad>(gradNode)->kind != loss->kind) return false;
        const Node &node = g_.node(n), &grad = g_.node(gradNode);
        const Tensor &x = (*this)[node.inputs[0]], &w = (*this)[node.inputs[1]], &b = (*this)[g_.node(biasNode).inputs[1]];
        if (int64_t(batch_) * x.cols() * w.cols() > o_.lossGradInProductMacs) return false;
        OpRecorder r{*this, grad};
        recordDenseLossGrad(listOf(node), x, w, b, loss->kind, (*this)[grad.inputs[1]], output(z, Layout::Packed),
                            output(grad.outputs[0], Layout::Packed), r.seed(2));
        return done(gradNode);
    }
    // A loss and its gradient node (same prediction and target): one call.
    bool fuseLossAndGradient(int n) {
        const Node& node = g_.node(n);
        const bool softmax = opAt<SoftmaxCrossEntropy>(n) != nullptr;
        const auto* pointwise = opAt<PointwiseLossOp>(n);
        if (!softmax && !pointwise) return false;
        int gradNode = -1;
        for (int r : readers(node.inputs[0])) {
            const Node& c = g_.node(r);
            const bool match = softmax ? opAt<SoftmaxCrossEntropyGrad>(r) != nullptr
                                       : opAt<PointwiseLossGrad>(r) && opAt<PointwiseLossGrad>(r)->kind == pointwise->kind;
            if (match && !done_[size_t(r)] && c.inputs[0] == node.inputs[0] && c.inputs[1] == node.inputs[1]) gradNode = r;
        }
        if (gradNode < 0) return false;
        const Node& grad = g_.node(gradNode);
        OpRecorder r{*this, grad};
        Tensor* rows = read(node.outputs[0]) ? &output(node.outputs[0], Layout::Unpacked) : nullptr;
        Tensor* mean = read(node.outputs[1]) ? &output(node.outputs[1], Layout::Packed) : nullptr;
        Tensor& dx = output(grad.outputs[0], Layout::Packed);
        const Tensor &pred = (*this)[node.inputs[0]], &target = (*this)[node.inputs[1]];
        if (softmax) recordSoftmaxCrossEntropy(listOf(node), pred, target, &dx, rows, mean, r.seed(2));
        else if (pointwise->kind == PointwiseLoss::MeanSquaredError) recordMse(listOf(node), pred, target, &dx, rows, mean, r.seed(2));
        else recordBinaryCrossEntropyWithLogits(listOf(node), pred, target, &dx, rows, mean, r.seed(2));
        return done(gradNode);
    }
    // dZ·Wᵀ read only by the previous layer's f'(Z): the product's backward epilogue.
    bool fuseProductWithDerivative(int n) {
        const auto* mm = opAt<MatMul>(n);
        if (!mm || mm->transA || !mm->transB) return false;
        const Node& node = g_.node(n);
        const int d = soleReader(node.outputs[0]);
        const auto* ag = d >= 0 ? opAt<ActivateGrad>(d) : nullptr;
        if (!ag || g_.node(d).inputs[0] != node.outputs[0]) return false;
        MatmulOptions nt;
        nt.transB = true;
        nt.act = ag->act;
        nt.actAlpha = ag->alpha;
        nt.dactZ = &(*this)[g_.node(d).inputs[1]];
        recordMatmul(listOf(node), (*this)[node.inputs[0]], (*this)[node.inputs[1]],
                     output(g_.node(d).outputs[0], blockLayout(ctx_, batch_)), nt);
        return done(d);
    }
    // A dense bias's gradient read only as a result: its update sums dZ itself.
    bool leaveBiasSumToUpdate(int n) {
        const auto* cs = opAt<ChannelSum>(n);
        if (!cs || !o_.biasSumInUpdate || batch_ > kColumnSumMaxRows) return false;
        const Node& node = g_.node(n);
        const ValueId v = node.outputs[0];
        if (!readers(v).empty() || g_.shape(node.inputs[0]).rank() != 2) return false;
        form_[size_t(v)] = GradientForm::ColumnSum;
        tensors_[size_t(v)] = &(*this)[node.inputs[0]];
        return true;
    }
    bool aliasReshape(int n) {
        if (!opAt<Reshape>(n)) return false;
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
    std::vector<Tensor*> tensors_;
    std::vector<std::vector<int>> consumers_;  // the plan's nodes reading each value, in order
    std::vector<bool> wanted_;
    std::vector<bool> done_;
    std::vector<GradientForm> form_;
    std::vector<Pass*> random_;
};

}  // namespace gltrain::graph
