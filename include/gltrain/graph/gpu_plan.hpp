// A graph recorded into a PassList for one batch size, op by op through each
// op's `gpu` — the unfused lowering, which the op table's tests check every
// op's kernels with. Inputs, parameters and constants get tensors the caller
// fills (in the layouts it asks for); each op allocates its outputs in the
// layout its kernel writes best.
#pragma once
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "gltrain/graph/graph.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain::graph {

class GpuPlan {
public:
    GpuPlan(Context& ctx, const Graph& g, int batch, const std::vector<ValueId>& wanted,
            const std::map<ValueId, Layout>& layouts = {})
        : ctx_(ctx), g_(g), batch_(batch), tensors_(size_t(g.values()), nullptr), consumers_(size_t(g.values()), 0) {
        std::vector<bool> needed(size_t(g.values()), false);
        for (ValueId v : wanted) needed[size_t(v)] = true;
        std::vector<int> order;
        for (int n = g.nodes(); n-- > 0;) {
            const Node& node = g.node(n);
            bool run = false;
            for (ValueId v : node.outputs) run = run || needed[size_t(v)];
            if (!run) continue;
            order.insert(order.begin(), n);
            for (ValueId v : node.inputs) {
                needed[size_t(v)] = true;
                ++consumers_[size_t(v)];
            }
        }
        for (ValueId v : wanted) ++consumers_[size_t(v)];
        for (ValueId v = 0; v < g.values(); ++v) {
            const Value& x = g.value(v);
            if (!needed[size_t(v)] || x.kind == ValueKind::Computed) continue;
            auto it = layouts.find(v);
            Tensor& t = make(v, it == layouts.end() ? Layout::Packed : it->second);
            if (x.kind == ValueKind::Constant) t.upload(HostMatrix(t.rows(), t.cols(), x.constant));
        }
        for (int n : order) {
            const Node& node = g.node(n);
            OpRecorder r{*this, node};
            std::visit([&](const auto& o) { o.gpu(r); }, node.op);
            for (ValueId v : node.outputs)
                if (consumers_[size_t(v)] && !tensors_[size_t(v)])
                    throw Error("GpuPlan: " + node.name + " (" + opName(node.op) + ") did not write " + g.describe(v));
        }
    }

    // A value's tensor: the caller uploads inputs and parameters and reads results.
    Tensor& operator[](ValueId v) {
        if (!tensors_.at(size_t(v))) throw ArgumentError("GpuPlan: " + g_.describe(v) + " is not in this plan");
        return *tensors_[size_t(v)];
    }
    bool has(ValueId v) const { return tensors_.at(size_t(v)) != nullptr; }
    PassList& passes() { return list_; }
    void run() { list_.run(); }

    // What an op's `gpu` sees.
    struct OpRecorder {
        GpuPlan& plan;
        const Node& node;
        PassList& list() const { return plan.list_; }
        Context& ctx() const { return plan.ctx_; }
        const Tensor& in(int i) const { return plan[node.inputs[size_t(i)]]; }
        const Shape& shape(int i) const { return plan.g_.shape(node.inputs[size_t(i)]); }
        // Output k's tensor, made on first use in `layout`.
        Tensor& out(int k, Layout layout = Layout::Packed) const {
            const ValueId v = node.outputs[size_t(k)];
            return plan.tensors_[size_t(v)] ? *plan.tensors_[size_t(v)] : plan.make(v, layout);
        }
        int rows(int k) const { return int(plan.g_.shape(node.outputs[size_t(k)]).rows(plan.batch_)); }
        // Whether anything reads output k (a kernel may then skip writing it).
        bool wants(int k) const { return plan.consumers_[size_t(node.outputs[size_t(k)])] > 0; }
        // A gradient seed: null when it is the constant 1 (the kernels' default scale).
        const Tensor* seed(int i) const {
            const Value& x = plan.g_.value(node.inputs[size_t(i)]);
            return x.kind == ValueKind::Constant && x.constant == 1.0f ? nullptr : &in(i);
        }
    };

private:
    Tensor& make(ValueId v, Layout layout) {
        const Shape& s = g_.shape(v);
        store_.emplace_back(ctx_, int(s.rows(batch_)), int(s.cols()), layout);
        return *(tensors_[size_t(v)] = &store_.back());
    }

    Context& ctx_;
    const Graph& g_;
    int batch_;
    PassList list_;
    std::deque<Tensor> store_;  // stable addresses: passes hold references
    std::vector<Tensor*> tensors_;
    std::vector<int> consumers_;
};

}  // namespace gltrain::graph
