// The compiler's patterns, matched once for both engines: which nodes of a
// plan run as one kernel. graph/gpu_plan.hpp and graph/cpu_plan.hpp each
// emit a match with their own kernels (the matmul epilogues of ops/matmul.hpp
// and cpu/matmul.hpp, the fused losses); a match only reads the graph and
// who reads each value.
#pragma once
#include <optional>
#include <vector>

#include "gltrain/graph/graph.hpp"

namespace gltrain::graph {

// Linear's, ReLU's and LeakyReLU's (slope >= 0) derivative at Z equals their
// derivative at Y = f(Z) (Y > 0 exactly where Z > 0; NaN stays NaN), so such
// layers keep no Z: the backward reads f'(Y).
inline bool derivativeFromOutput(Activation a, float alpha) {
    return a == Activation::Linear || a == Activation::ReLU || (a == Activation::LeakyReLU && alpha >= 0.0f);
}

// The nodes a plan runs for its wanted values, in graph order, and who reads what.
struct PlanNodes {
    std::vector<int> order;
    std::vector<std::vector<int>> readers;  // per value: the plan's nodes reading it, in order
    std::vector<bool> wanted, needed;       // per value: the caller reads it; the plan holds it

    PlanNodes(const Graph& g, const std::vector<ValueId>& wantedValues)
        : readers(size_t(g.values())), wanted(size_t(g.values()), false), needed(size_t(g.values()), false) {
        for (ValueId v : wantedValues) needed[size_t(v)] = wanted[size_t(v)] = true;
        for (int n = g.nodes(); n-- > 0;) {
            const Node& node = g.node(n);
            bool run = false;
            for (ValueId v : node.outputs) run = run || needed[size_t(v)];
            if (!run) continue;
            order.insert(order.begin(), n);
            for (ValueId v : node.inputs) {
                needed[size_t(v)] = true;
                readers[size_t(v)].insert(readers[size_t(v)].begin(), n);
            }
            for (ValueId v : node.outputs) needed[size_t(v)] = true;  // a kernel writes all its outputs
        }
    }
    bool read(ValueId v) const { return wanted[size_t(v)] || !readers[size_t(v)].empty(); }
    // The one node reading v, if nothing else reads or wants it; else -1.
    int soleReader(ValueId v) const {
        return !wanted[size_t(v)] && readers[size_t(v)].size() == 1 ? readers[size_t(v)][0] : -1;
    }
};

template <class T>
const T* opOf(const Graph& g, int n) {
    return std::get_if<T>(&g.node(n).op);
}

// MatMul (untransposed) or Conv -> BiasAdd -> (Activate): one kernel with the
// bias and activation in its epilogue. Z (the bias's output) is kept only
// when the backward's f'(Z) cannot be read from Y; otherwise Z is Y.
struct ProductMatch {
    const Conv* conv = nullptr;       // null: a MatMul
    int biasNode = -1, actNode = -1;  // actNode -1: linear
    ValueId x = kNoValue, w = kNoValue, b = kNoValue, z = kNoValue, y = kNoValue;
    Activation act = Activation::Linear;
    float alpha = 0.01f;
    bool keepZ = false;  // write Z as well as Y
    bool zIsY = false;   // something reads Z, and Y serves (f'(Y) is f'(Z))
};
inline std::optional<ProductMatch> matchProduct(const Graph& g, const PlanNodes& p, int n) {
    const Node& node = g.node(n);
    const auto* mm = opOf<MatMul>(g, n);
    ProductMatch m;
    m.conv = opOf<Conv>(g, n);
    if (!(mm && !mm->transA && !mm->transB) && !m.conv) return std::nullopt;
    m.biasNode = p.soleReader(node.outputs[0]);
    if (m.biasNode < 0 || !opOf<BiasAdd>(g, m.biasNode) || g.node(m.biasNode).inputs[0] != node.outputs[0])
        return std::nullopt;
    m.z = g.node(m.biasNode).outputs[0];
    // The activation, and the backward's f'(Z) readers of z; anything else reading z
    // needs Z itself: then the activation stays a kernel of its own.
    std::vector<int> derivatives;
    for (int r : p.readers[size_t(m.z)]) {
        if (opOf<Activate>(g, r) && m.actNode < 0) m.actNode = r;
        else if (opOf<ActivateGrad>(g, r) && g.node(r).inputs[1] == m.z) derivatives.push_back(r);
        else m.actNode = -2;
    }
    if (m.actNode == -2 || p.wanted[size_t(m.z)]) m.actNode = -1, derivatives.clear();
    if (m.actNode >= 0) {
        const Activate& a = *opOf<Activate>(g, m.actNode);
        m.act = a.act;
        m.alpha = a.alpha;
    }
    for (int d : derivatives)
        if (opOf<ActivateGrad>(g, d)->act != m.act || opOf<ActivateGrad>(g, d)->alpha != m.alpha) return std::nullopt;
    m.x = node.inputs[0];
    m.w = node.inputs[1];
    m.b = g.node(m.biasNode).inputs[1];
    m.y = m.actNode >= 0 ? g.node(m.actNode).outputs[0] : m.z;
    m.keepZ = !derivatives.empty() && !derivativeFromOutput(m.act, m.alpha);
    m.zIsY = m.y != m.z && !m.keepZ && p.read(m.z);
    return m;
}

// A loss and its gradient node on the same prediction and target (not yet
// taken by another pattern): one kernel. Returns the gradient node. The
// gradient's seed must be known before the loss runs: the constant 1 or an
// input (loss scaling), not a value autodiff computes after it (a weighted
// output's loss; its two kernels run apart then).
inline std::optional<int> matchLossGradient(const Graph& g, const PlanNodes& p, int n, const std::vector<bool>& done) {
    const Node& node = g.node(n);
    const bool softmax = opOf<SoftmaxCrossEntropy>(g, n) != nullptr;
    const auto* pointwise = opOf<PointwiseLossOp>(g, n);
    if (!softmax && !pointwise) return std::nullopt;
    for (int r : p.readers[size_t(node.inputs[0])]) {
        const Node& c = g.node(r);
        const bool match =
            softmax ? opOf<SoftmaxCrossEntropyGrad>(g, r) != nullptr
                    : opOf<PointwiseLossGrad>(g, r) && opOf<PointwiseLossGrad>(g, r)->kind == pointwise->kind;
        if (match && !done[size_t(r)] && c.inputs[0] == node.inputs[0] && c.inputs[1] == node.inputs[1] &&
            g.value(c.inputs[2]).kind != ValueKind::Computed)
            return r;
    }
    return std::nullopt;
}

// dZ·Wᵀ read only by the previous layer's f'(Z): the product's backward
// epilogue multiplies by it. Returns the ActivateGrad node.
inline std::optional<int> matchDerivativeEpilogue(const Graph& g, const PlanNodes& p, int n) {
    const auto* mm = opOf<MatMul>(g, n);
    if (!mm || mm->transA || !mm->transB) return std::nullopt;
    const ValueId out = g.node(n).outputs[0];
    const int d = p.soleReader(out);
    if (d < 0 || !opOf<ActivateGrad>(g, d) || g.node(d).inputs[0] != out) return std::nullopt;
    return d;
}

// The whole forward pass a chain of dense layers — from x, an optional
// Reshape to rows, then per layer MatMul(h, kernel) -> BiasAdd(bias) ->
// (Activate), ending at the logits — with only the loss and the correct
// count beside it: what ops/mlp.hpp's step of one pass per parameter
// computes. Empty for any other graph.
struct DenseLink {
    ValueId kernel = kNoValue, bias = kNoValue;
    Activation act = Activation::Linear;
    float alpha = 0.0f;
};
inline std::optional<std::vector<DenseLink>> matchDenseChain(const Graph& g, ValueId x, ValueId logits) {
    std::vector<std::vector<int>> readers(size_t(g.values()));
    std::vector<bool> inChain(size_t(g.nodes()), false);
    for (int n = 0; n < g.nodes(); ++n)
        if (!g.node(n).backward)
            for (ValueId v : g.node(n).inputs) readers[size_t(v)].push_back(n);
    auto sole = [&](ValueId v, ValueId from) {
        if (readers[size_t(v)].size() != 1) return -1;
        const int n = readers[size_t(v)][0];
        return g.node(n).inputs[0] == from ? n : -1;
    };
    // Trained parameters: the step updates every one (a frozen one is the general step's).
    auto isParameter = [&](ValueId v) { return g.value(v).kind == ValueKind::Parameter && g.value(v).requiresGrad; };
    std::vector<DenseLink> chain;
    ValueId cur = x;
    while (cur != logits) {
        int n = sole(cur, cur);
        if (n < 0) return std::nullopt;
        if (opOf<Reshape>(g, n) && chain.empty() && g.shape(g.node(n).outputs[0]).rank() == 2) {
            inChain[size_t(n)] = true;
            cur = g.node(n).outputs[0];
            continue;
        }
        const auto* mm = opOf<MatMul>(g, n);
        if (!mm || mm->transA || mm->transB || !isParameter(g.node(n).inputs[1])) return std::nullopt;
        const int b = sole(g.node(n).outputs[0], g.node(n).outputs[0]);
        if (b < 0 || !opOf<BiasAdd>(g, b) || !isParameter(g.node(b).inputs[1])) return std::nullopt;
        inChain[size_t(n)] = inChain[size_t(b)] = true;
        DenseLink link{g.node(n).inputs[1], g.node(b).inputs[1]};
        cur = g.node(b).outputs[0];
        if (cur != logits) {
            const int a = sole(cur, cur);
            if (a >= 0 && opOf<Activate>(g, a)) {
                inChain[size_t(a)] = true;
                link.act = opOf<Activate>(g, a)->act;
                link.alpha = opOf<Activate>(g, a)->alpha;
                cur = g.node(a).outputs[0];
            }
        }
        chain.push_back(link);
    }
    // Besides the chain: the loss, the accuracy, and a final Softmax's probabilities (predict's:
    // the step reads the logits before them).
    auto finalSoftmax = [&](int n) { return opOf<SoftmaxRows>(g, n) && g.node(n).inputs[0] == logits; };
    for (int n = 0; n < g.nodes(); ++n)
        if (!g.node(n).backward && !inChain[size_t(n)] && !opOf<SoftmaxCrossEntropy>(g, n) &&
            !opOf<PointwiseLossOp>(g, n) && !opOf<CorrectCount>(g, n) && !finalSoftmax(n))
            return std::nullopt;
    if (chain.empty()) return std::nullopt;
    return chain;
}

}  // namespace gltrain::graph
