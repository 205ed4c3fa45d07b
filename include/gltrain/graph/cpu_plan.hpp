// A graph run on the CPU for one batch size: a HostMatrix per value (sized
// once: a step allocates nothing but what a kernel's scratch first grows to)
// and the nodes a set of wanted values needs, in order, each through its op's
// `cpu` (gltrain/cpu's SIMD and threaded kernels) — or, with
// CpuPlanOptions::fuse, through the CPU's share of the compiler's patterns
// (graph/gpu_plan.hpp has the GPU's):
//   - a product or convolution, its bias and activation: one kernel with the
//     product's epilogue, keeping Z only where f'(Z) cannot be read from Y;
//   - a loss and its gradient: one pass over the logits;
//   - dZ·Wᵀ times the previous layer's f'(Z): the product's epilogue;
//   - a reshape: the same matrix (rows are NHWC).
// Max pooling's argmax is kept from the forward for its gradient.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/loss.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/graph/gpu_plan.hpp"
#include "gltrain/host_matrix.hpp"

namespace gltrain::graph {

struct CpuPlanOptions {
    bool fuse = false;
    std::map<ValueId, HostMatrix*> bound;  // matrices the caller owns (parameters, their gradients)
    cpu::ThreadPool* pool = nullptr;       // the context's threads (Context::cpuThreads), or null: the caller's alone
};

class CpuPlan {
public:
    CpuPlan(const Graph& g, int batch, const std::vector<ValueId>& wanted, CpuPlanOptions o = {})
        : g_(g), batch_(batch), o_(std::move(o)), values_(size_t(g.values()), nullptr), own_(size_t(g.values())),
          readers_(size_t(g.values())), wanted_(size_t(g.values()), false), done_(size_t(g.nodes()), false) {
        ws_.pool = o_.pool;
        std::vector<bool> needed(size_t(g.values()), false);
        for (ValueId v : wanted) needed[size_t(v)] = wanted_[size_t(v)] = true;
        for (int n = g.nodes(); n-- > 0;) {
            const Node& node = g.node(n);
            bool run = false;
            for (ValueId v : node.outputs) run = run || needed[size_t(v)];
            if (!run) continue;
            order_.insert(order_.begin(), n);
            for (ValueId v : node.inputs) {
                needed[size_t(v)] = true;
                readers_[size_t(v)].insert(readers_[size_t(v)].begin(), n);
            }
            for (ValueId v : node.outputs) needed[size_t(v)] = true;  // an op writes all its outputs
        }
        for (auto& [v, m] : o_.bound) values_.at(size_t(v)) = m;
        if (o_.fuse)
            for (int n : order_) plan(n);
        std::vector<bool> aliased(size_t(g.values()), false);
        for (auto& a : aliases_) aliased[size_t(a.first)] = true;
        for (ValueId v = 0; v < g.values(); ++v) {
            if (!needed[size_t(v)] || values_[size_t(v)] || aliased[size_t(v)]) continue;
            const Value& x = g.value(v);
            own_[size_t(v)] = HostMatrix(int(x.shape.rows(batch)), int(x.shape.cols()), x.constant);
            values_[size_t(v)] = &own_[size_t(v)];
        }
        for (auto& [alias, of] : aliases_) values_[size_t(alias)] = values_[size_t(of)];
    }

    int batch() const { return batch_; }
    // A value's storage: the caller fills inputs and parameters, reads results.
    HostMatrix& operator[](ValueId v) {
        if (!values_.at(size_t(v))) throw ArgumentError("CpuPlan: " + g_.describe(v) + " is not in this plan");
        return *values_[size_t(v)];
    }
    bool has(ValueId v) const { return values_.at(size_t(v)) != nullptr; }

    // `step` numbers dropout's masks (the same as the GPU's).
    void run(long step = 0) {
        step_ = step;
        ++runs_;
        for (int n : order_) {
            const Node& node = g_.node(n);
            for (ValueId v : node.inputs) {
                const HostMatrix& m = *values_[size_t(v)];
                const Shape& s = g_.shape(v);
                if (m.rows != s.rows(batch_) || m.cols != s.cols())
                    throw ArgumentError("CpuPlan: " + g_.describe(v) + " holds " + std::to_string(m.rows) + "x" +
                                        std::to_string(m.cols) + " values, not " + std::to_string(s.rows(batch_)) +
                                        "x" + std::to_string(s.cols()));
            }
            if (fused_.count(n)) {
                fused_[n]();
            } else if (!done_[size_t(n)]) {
                OpContext c{*this, node};
                std::visit([&](const auto& o) { o.cpu(c); }, node.op);
            }
        }
    }

    // What an op's `cpu` sees.
    struct OpContext {
        CpuPlan& plan;
        const Node& node;
        const HostMatrix& in(int i) const { return *plan.values_[size_t(node.inputs[size_t(i)])]; }
        HostMatrix& out(int k) const { return *plan.values_[size_t(node.outputs[size_t(k)])]; }
        cpu::Workspace& ws() const { return plan.ws_; }
        std::vector<double>& acc() const { return plan.acc_; }
        std::vector<float>& scratch() const { return plan.scratch_; }
        long step() const { return plan.step_; }
        // Max pooling's argmax for input `x`, and whether this run's forward already wrote it.
        std::vector<int32_t>& argmax(ValueId x, bool* fresh = nullptr) const {
            auto& a = plan.argmax_[x];
            if (fresh) *fresh = a.run == plan.runs_;
            a.run = plan.runs_;
            return a.at;
        }
    };

private:
    template <class T>
    const T* opAt(int n) const {
        return std::get_if<T>(&g_.node(n).op);
    }
    const std::vector<int>& readers(ValueId v) const { return readers_[size_t(v)]; }
    int soleReader(ValueId v) const { return !wanted_[size_t(v)] && readers(v).size() == 1 ? readers(v)[0] : -1; }
    HostMatrix& at(ValueId v) { return *values_[size_t(v)]; }
    bool read(ValueId v) const { return wanted_[size_t(v)] || !readers(v).empty(); }

    // ---- the patterns: each decides now and stores what the run calls ----
    void plan(int n) {
        if (done_[size_t(n)]) return;
        const Node& node = g_.node(n);
        if (opAt<Reshape>(n) && !values_[size_t(node.outputs[0])]) {
            aliases_.push_back({node.outputs[0], node.inputs[0]});
            done_[size_t(n)] = true;
            return;
        }
        if (planProductOrConvolution(n) || planLossAndGradient(n) || planProductWithDerivative(n))
            done_[size_t(n)] = true;
    }

    bool planProductOrConvolution(int n) {
        const Node& node = g_.node(n);
        const auto* mm = opAt<MatMul>(n);
        const auto* conv = opAt<Conv>(n);
        if (!(mm && !mm->transA && !mm->transB) && !conv) return false;
        const int biasNode = soleReader(node.outputs[0]);
        if (biasNode < 0 || !opAt<BiasAdd>(biasNode) || g_.node(biasNode).inputs[0] != node.outputs[0]) return false;
        const ValueId z = g_.node(biasNode).outputs[0];
        int actNode = -1;
        std::vector<int> derivatives;
        for (int r : readers(z)) {
            if (opAt<Activate>(r) && actNode < 0) actNode = r;
            else if (opAt<ActivateGrad>(r) && g_.node(r).inputs[1] == z) derivatives.push_back(r);
            else actNode = -2;
        }
        if (actNode == -2 || wanted_[size_t(z)]) actNode = -1, derivatives.clear();
        const Activate act = actNode >= 0 ? *opAt<Activate>(actNode) : Activate{Activation::Linear, 0.01f};
        for (int d : derivatives)
            if (opAt<ActivateGrad>(d)->act != act.act || opAt<ActivateGrad>(d)->alpha != act.alpha) return false;
        const ValueId x = node.inputs[0], w = node.inputs[1], b = g_.node(biasNode).inputs[1];
        const ValueId y = actNode >= 0 ? g_.node(actNode).outputs[0] : z;
        const bool keepZ = !derivatives.empty() && !derivativeFromOutput(act.act, act.alpha);
        if (y != z && !keepZ && read(z)) aliases_.push_back({z, y});  // f'(Y) is f'(Z)
        if (mm) {
            fused_[n] = [this, x, w, b, y, z, keepZ, act] {
                const HostMatrix &X = at(x), &W = at(w);
                HostMatrix& Y = at(y);
                cpu::Epilogue e;
                e.bias = at(b).data.data();
                e.activation = act.act;
                e.alpha = act.alpha;
                e.preactivation = keepZ ? at(z).data.data() : nullptr;
                cpu::matmul(Y.rows, Y.cols, X.cols, X.data.data(), X.cols, false, W.data.data(), W.cols, false,
                            Y.data.data(), Y.cols, e, ws_);
            };
        } else {
            const Window win = conv->window;
            fused_[n] = [this, x, w, b, y, z, keepZ, act, win] {
                cpu::conv2d(at(x).data.data(), at(x).rows, win, at(w).data.data(), at(b).data.data(), act.act,
                            act.alpha, at(y).data.data(), keepZ ? at(z).data.data() : nullptr, ws_);
            };
        }
        done_[size_t(biasNode)] = true;
        if (actNode >= 0) done_[size_t(actNode)] = true;
        return true;
    }
    // A loss (its rows' losses unread) and its gradient: one pass.
    bool planLossAndGradient(int n) {
        const Node& node = g_.node(n);
        const bool softmax = opAt<SoftmaxCrossEntropy>(n) != nullptr;
        const auto* pointwise = opAt<PointwiseLossOp>(n);
        if ((!softmax && !pointwise) || read(node.outputs[0])) return false;
        int gradNode = -1;
        for (int r : readers(node.inputs[0])) {
            const Node& c = g_.node(r);
            const bool match = softmax ? opAt<SoftmaxCrossEntropyGrad>(r) != nullptr
                                       : opAt<PointwiseLossGrad>(r) && opAt<PointwiseLossGrad>(r)->kind == pointwise->kind;
            if (match && c.inputs[0] == node.inputs[0] && c.inputs[1] == node.inputs[1]) gradNode = r;
        }
        if (gradNode < 0) return false;
        const ValueId x = node.inputs[0], t = node.inputs[1], mean = node.outputs[1];
        const ValueId seed = g_.node(gradNode).inputs[2], dx = g_.node(gradNode).outputs[0];
        const cpu::PointwiseLoss kind = pointwise ? op_detail::cpuKind(pointwise->kind) : cpu::PointwiseLoss::SquaredError;
        fused_[n] = [this, softmax, kind, x, t, mean, seed, dx] {
            const HostMatrix &X = at(x), &T = at(t);
            HostMatrix& G = at(dx);
            cpu::LossSums s;
            if (softmax) {
                labels_.resize(size_t(X.rows));
                for (int r = 0; r < X.rows; ++r) labels_[size_t(r)] = op_detail::labelAt(T, r);
                s = cpu::softmaxCrossEntropy(X.data.data(), labels_.data(), X.rows, X.cols, G.data.data(), X.rows);
            } else {
                s = cpu::pointwiseLoss(kind, X.data.data(), T.data.data(), X.rows, X.cols, G.data.data(), X.rows);
            }
            at(mean).data[0] = float(s.loss / X.rows);
            const float scale = at(seed).data[0];
            if (scale != 1.0f)
                for (float& v : G.data) v *= scale;
        };
        done_[size_t(gradNode)] = true;
        return true;
    }
    bool planProductWithDerivative(int n) {
        const auto* mm = opAt<MatMul>(n);
        if (!mm || mm->transA || !mm->transB) return false;
        const Node& node = g_.node(n);
        const int d = soleReader(node.outputs[0]);
        const auto* ag = d >= 0 ? opAt<ActivateGrad>(d) : nullptr;
        if (!ag || g_.node(d).inputs[0] != node.outputs[0]) return false;
        const ValueId a = node.inputs[0], w = node.inputs[1], z = g_.node(d).inputs[1], dx = g_.node(d).outputs[0];
        const ActivateGrad act = *ag;
        fused_[n] = [this, a, w, z, dx, act] {
            const HostMatrix &A = at(a), &W = at(w);
            HostMatrix& Y = at(dx);
            cpu::Epilogue e;
            e.derivativeAt = at(z).data.data();
            e.derivative = act.act;
            e.alpha = act.alpha;
            cpu::matmul(Y.rows, Y.cols, A.cols, A.data.data(), A.cols, false, W.data.data(), W.cols, true,
                        Y.data.data(), Y.cols, e, ws_);
        };
        done_[size_t(d)] = true;
        return true;
    }

    struct Argmax {
        std::vector<int32_t> at;
        long run = -1;
    };

    const Graph& g_;
    int batch_;
    CpuPlanOptions o_;
    std::vector<HostMatrix*> values_;
    std::vector<HostMatrix> own_;
    std::vector<std::vector<int>> readers_;
    std::vector<bool> wanted_, done_;
    std::vector<int> order_;
    std::map<int, std::function<void()>> fused_;
    std::vector<std::pair<ValueId, ValueId>> aliases_;  // (value, the one whose storage it shares)
    std::map<ValueId, Argmax> argmax_;
    std::vector<int> labels_;
    cpu::Workspace ws_;
    std::vector<double> acc_;
    std::vector<float> scratch_;
    long step_ = 0, runs_ = 0;
};

}  // namespace gltrain::graph
