// A graph run on the CPU for one batch size: a HostMatrix per value (sized
// once: a step allocates nothing but what a kernel's scratch first grows to)
// and the nodes a set of wanted values needs, in order, each through its op's
// `cpu` (gltrain/cpu's SIMD and threaded kernels).
#pragma once
#include <string>
#include <vector>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/graph/graph.hpp"
#include "gltrain/host_matrix.hpp"

namespace gltrain::graph {

class CpuPlan {
public:
    // `pool`: the context's threads (Context::cpuPool), or null for the caller's alone.
    CpuPlan(const Graph& g, int batch, const std::vector<ValueId>& wanted, cpu::ThreadPool* pool = nullptr)
        : g_(g), batch_(batch), values_(size_t(g.values())) {
        ws_.pool = pool;
        std::vector<bool> needed(size_t(g.values()), false);
        for (ValueId v : wanted) needed[size_t(v)] = true;
        std::vector<bool> run(size_t(g.nodes()), false);
        for (int n = g.nodes(); n-- > 0;) {
            const Node& node = g.node(n);
            for (ValueId v : node.outputs) run[size_t(n)] = run[size_t(n)] || needed[size_t(v)];
            if (!run[size_t(n)]) continue;
            order_.insert(order_.begin(), n);
            for (ValueId v : node.inputs) needed[size_t(v)] = true;
            for (ValueId v : node.outputs) needed[size_t(v)] = true;  // an op writes all its outputs
        }
        for (ValueId v = 0; v < g.values(); ++v) {
            if (!needed[size_t(v)]) continue;
            const Value& x = g.value(v);
            values_[size_t(v)] = HostMatrix(int(x.shape.rows(batch)), int(x.shape.cols()), x.constant);
        }
    }

    int batch() const { return batch_; }
    // A value's storage: the caller fills inputs and parameters, reads results.
    HostMatrix& operator[](ValueId v) { return values_.at(size_t(v)); }

    // `step` numbers dropout's masks (the same as the GPU's).
    void run(long step = 0) {
        step_ = step;
        for (int n : order_) {
            const Node& node = g_.node(n);
            for (size_t i = 0; i < node.inputs.size(); ++i) {
                const HostMatrix& m = values_[size_t(node.inputs[i])];
                const Shape& s = g_.shape(node.inputs[i]);
                if (m.rows != s.rows(batch_) || m.cols != s.cols())
                    throw ArgumentError("CpuPlan: " + g_.describe(node.inputs[i]) + " holds " + std::to_string(m.rows) +
                                        "x" + std::to_string(m.cols) + " values, not " +
                                        std::to_string(s.rows(batch_)) + "x" + std::to_string(s.cols()));
            }
            OpContext c{*this, node};
            std::visit([&](const auto& o) { o.cpu(c); }, node.op);
        }
    }

    // What an op's `cpu` sees.
    struct OpContext {
        CpuPlan& plan;
        const Node& node;
        const HostMatrix& in(int i) const { return plan.values_[size_t(node.inputs[size_t(i)])]; }
        HostMatrix& out(int k) const { return plan.values_[size_t(node.outputs[size_t(k)])]; }
        cpu::Workspace& ws() const { return plan.ws_; }
        std::vector<double>& acc() const { return plan.acc_; }
        std::vector<float>& scratch() const { return plan.scratch_; }
        long step() const { return plan.step_; }
    };

private:
    const Graph& g_;
    int batch_;
    std::vector<HostMatrix> values_;
    std::vector<int> order_;
    cpu::Workspace ws_;
    std::vector<double> acc_;
    std::vector<float> scratch_;
    long step_ = 0;
};

}  // namespace gltrain::graph
