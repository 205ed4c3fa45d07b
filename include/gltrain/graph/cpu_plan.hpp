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
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/loss.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/graph/op_table.hpp"
#include "gltrain/graph/patterns.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/pass_timing.hpp"

namespace gltrain::graph {

struct CpuPlanOptions {
    bool fuse = false;
    std::map<ValueId, HostMatrix*> bound;  // matrices the caller owns (parameters, their gradients)
    cpu::ThreadPool* pool = nullptr;       // the context's threads (Context::cpuThreads), or null: the caller's alone
};

class CpuPlan {
public:
    CpuPlan(const Graph& g, int batch, const std::vector<ValueId>& wanted, CpuPlanOptions o = {})
        : g_(g),
          batch_(batch),
          o_(std::move(o)),
          p_(g, wanted),
          values_(size_t(g.values()), nullptr),
          own_(size_t(g.values())),
          done_(size_t(g.nodes()), false) {
        ws_.pool = o_.pool;
        for (auto& [v, m] : o_.bound) values_.at(size_t(v)) = m;
        if (o_.fuse)
            for (int n : p_.order) plan(n);
        std::vector<bool> aliased(size_t(g.values()), false);
        for (auto& a : aliases_) aliased[size_t(a.first)] = true;
        for (ValueId v = 0; v < g.values(); ++v) {
            if (!p_.needed[size_t(v)] || values_[size_t(v)] || aliased[size_t(v)]) continue;
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
        begin(step);
        for (int n : p_.order) runNode(n);
    }
    // Each node's time (a fused group's under its first node), the median of
    // `reps` runs, in plan order, on the host's clock.
    std::vector<PassTiming> profile(int reps, long step = 0) {
        std::map<int, std::vector<double>> ms;
        for (int r = 0; r < reps; ++r) {
            begin(step);
            for (int n : p_.order) {
                const auto t0 = std::chrono::steady_clock::now();
                if (runNode(n))
                    ms[n].push_back(
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
        }
        std::vector<PassTiming> out;
        for (int n : p_.order) {
            auto it = ms.find(n);
            if (it == ms.end()) continue;
            std::vector<double>& t = it->second;
            std::nth_element(t.begin(), t.begin() + std::ptrdiff_t(t.size() / 2), t.end());
            out.push_back(
                {"cpu/" + g_.node(n).name + " (" + opName(g_.node(n).op) + (fused_.count(n) ? ", fused" : "") + ")",
                 t[t.size() / 2], false});
        }
        return out;
    }

    // What an op's `cpu` sees.
    struct OpContext {
        CpuPlan& plan;
        const Node& node;
        const HostMatrix& in(int i) const { return *plan.values_[size_t(node.inputs[size_t(i)])]; }
        HostMatrix& out(int k) const { return *plan.values_[size_t(node.outputs[size_t(k)])]; }
        const Shape& shape(int i) const { return plan.g_.shape(node.inputs[size_t(i)]); }
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
    HostMatrix& at(ValueId v) { return *values_[size_t(v)]; }

    // The caller's matrices must still have their shapes (the plan's own do).
    void begin(long step) {
        step_ = step;
        ++runs_;
        for (auto& [v, m] : o_.bound) {
            const Shape& s = g_.shape(v);
            if (p_.needed[size_t(v)] && (m->rows != s.rows(batch_) || m->cols != s.cols()))
                throw ArgumentError("CpuPlan: " + g_.describe(v) + " holds " + std::to_string(m->rows) + "x" +
                                    std::to_string(m->cols) + " values, not " + std::to_string(s.rows(batch_)) + "x" +
                                    std::to_string(s.cols()));
        }
    }
    // Runs node n (its pattern's kernel, or its op's); false when another node's pattern ran it.
    bool runNode(int n) {
        if (auto f = fused_.find(n); f != fused_.end()) {
            f->second();
            return true;
        }
        if (done_[size_t(n)]) return false;
        OpContext c{*this, g_.node(n)};
        std::visit([&](const auto& o) { o.cpu(c); }, g_.node(n).op);
        return true;
    }

    // ---- the patterns: each decides now and stores what the run calls ----
    void plan(int n) {
        if (done_[size_t(n)]) return;
        const Node& node = g_.node(n);
        if (opOf<Reshape>(g_, n) && !values_[size_t(node.outputs[0])]) {
            aliases_.push_back({node.outputs[0], node.inputs[0]});
            done_[size_t(n)] = true;
            return;
        }
        if (planProduct(n) || planLossAndGradient(n) || planDerivativeEpilogue(n)) done_[size_t(n)] = true;
    }

    // MatMul or Conv -> BiasAdd -> (Activate): one kernel (graph/patterns.hpp).
    bool planProduct(int n) {
        const auto m = matchProduct(g_, p_, n);
        if (!m) return false;
        if (m->zIsY) aliases_.push_back({m->z, m->y});
        const ProductMatch pm = *m;
        const Window win = m->conv ? m->conv->window : Window{};
        fused_[n] = [this, pm, win] {
            float* z = pm.keepZ ? at(pm.z).data.data() : nullptr;
            if (pm.conv) {
                cpu::conv2d(at(pm.x).data.data(), at(pm.x).rows, win, at(pm.w).data.data(), at(pm.b).data.data(),
                            pm.act, pm.alpha, at(pm.y).data.data(), z, ws_);
                return;
            }
            const HostMatrix &X = at(pm.x), &W = at(pm.w);
            HostMatrix& Y = at(pm.y);
            cpu::Epilogue e;
            e.bias = at(pm.b).data.data();
            e.activation = pm.act;
            e.alpha = pm.alpha;
            e.preactivation = z;
            cpu::matmul(Y.rows, Y.cols, X.cols, X.data.data(), X.cols, false, W.data.data(), W.cols, false,
                        Y.data.data(), Y.cols, e, ws_);
        };
        done_[size_t(m->biasNode)] = true;
        if (m->actNode >= 0) done_[size_t(m->actNode)] = true;
        return true;
    }
    // A loss (its rows' losses unread) and its gradient: one pass over the logits.
    bool planLossAndGradient(int n) {
        const Node& node = g_.node(n);
        if ((!opOf<SoftmaxCrossEntropy>(g_, n) && !opOf<PointwiseLossOp>(g_, n)) || p_.read(node.outputs[0]))
            return false;
        const auto gradNode = matchLossGradient(g_, p_, n, done_);
        if (!gradNode) return false;
        const bool softmax = opOf<SoftmaxCrossEntropy>(g_, n) != nullptr;
        const cpu::PointwiseLoss kind =
            softmax ? cpu::PointwiseLoss::SquaredError : op_detail::cpuKind(opOf<PointwiseLossOp>(g_, n)->kind);
        const ValueId x = node.inputs[0], t = node.inputs[1], mean = node.outputs[1];
        const ValueId seed = g_.node(*gradNode).inputs[2], dx = g_.node(*gradNode).outputs[0];
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
        done_[size_t(*gradNode)] = true;
        return true;
    }
    // dZ·Wᵀ times the previous layer's f'(Z): the product's epilogue.
    bool planDerivativeEpilogue(int n) {
        const auto d = matchDerivativeEpilogue(g_, p_, n);
        if (!d) return false;
        const Node& node = g_.node(n);
        const ValueId a = node.inputs[0], w = node.inputs[1], z = g_.node(*d).inputs[1], dx = g_.node(*d).outputs[0];
        const ActivateGrad act = *opOf<ActivateGrad>(g_, *d);
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
        done_[size_t(*d)] = true;
        return true;
    }

    struct Argmax {
        std::vector<int32_t> at;
        long run = -1;
    };

    const Graph& g_;
    int batch_;
    CpuPlanOptions o_;
    PlanNodes p_;
    std::vector<HostMatrix*> values_;
    std::vector<HostMatrix> own_;
    std::vector<bool> done_;
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
