// The op table, checked generically: every op of graph/op_table.hpp on each
// of its examples (odd shapes), with nothing written per op here.
//   - its CPU kernel against the double-precision oracle (reference/graph_ops.hpp);
//   - its GPU kernels against the oracle, with inputs packed, unpacked and
//     row-interleaved, and on a context whose textures are paged (64 texels);
//   - differentiable ops: the gradient autodiff builds from the op's `grad`,
//     run by the oracle, against central differences in double, and that
//     gradient graph run on the CPU and the GPU against the oracle.
// Tolerances: float kernels against double |a - b| <= 2e-4 + 2e-4 |b| (a
// few float roundings of sums over at most ~100 terms); the finite
// differences (h = 1e-5 in double) |a - b| <= 1e-6 + 1e-5 |b|.
// Graph-level behaviour (shape errors, summed gradients, frozen parameters,
// what is not computed) has its own tests below.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "gltrain/graph/autodiff.hpp"
#include "gltrain/graph/cpu_plan.hpp"
#include "gltrain/graph/gpu_plan.hpp"
#include "gltrain/reference/graph_ops.hpp"
#include "reference_test_util.hpp"
#include "test_context.hpp"

namespace {
namespace graph_ops_test {

using namespace gltrain;
using namespace gltrain::graph;
using MatD = HostMatrixT<double>;

constexpr double kKernelTol = 2e-4;

// One op on fresh inputs: the graph, its input values, their fills.
struct Case {
    Graph g;
    std::vector<ValueId> inputs, outputs;
    std::vector<InputSpec> specs;
    std::string name;
};

template <class OpT>
Case makeCase(const Example<OpT>& e, size_t index, bool trainable) {
    Case c;
    c.name = std::string(OpT::kName) + " example " + std::to_string(index);
    c.specs = e.inputs;
    for (size_t i = 0; i < e.inputs.size(); ++i) {
        const std::string n = "in" + std::to_string(i);
        const bool grad = trainable && (OpT::kGradInputs >> i & 1u);
        c.inputs.push_back(grad ? c.g.parameter(n, e.inputs[i].shape) : c.g.input(n, e.inputs[i].shape));
    }
    c.outputs = c.g.add(e.op, c.inputs, "op");
    return c;
}

MatD randomFill(const InputSpec& s, int rows, int cols, std::mt19937& rng) {
    MatD m(rows, cols);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> unit(0.0, 1.0), positive(0.5, 2.0);
    std::uniform_int_distribution<int> label(0, std::max(0, s.classes - 1)), masked(-1, std::max(0, s.classes - 1));
    for (double& v : m.data) {
        switch (s.fill) {
            case Fill::Normal: v = normal(rng); break;
            case Fill::Labels: v = label(rng); break;
            case Fill::Unit: v = unit(rng); break;
            case Fill::Positive: v = positive(rng); break;
            case Fill::MaskedLabels: v = masked(rng); break;
        }
        if (s.fill != Fill::Labels) v = double(float(v));  // representable in float: every engine sees the same numbers
    }
    return m;
}

// Random values for every non-computed value of `g` (inputs and parameters), by the case's fills.
std::map<ValueId, MatD> randomValues(const Graph& g, const Case& c, int batch, uint32_t seed) {
    std::mt19937 rng(seed);
    std::map<ValueId, MatD> vals;
    for (ValueId v = 0; v < g.values(); ++v) {
        const Value& x = g.value(v);
        if (x.kind != ValueKind::Input && x.kind != ValueKind::Parameter) continue;
        InputSpec spec{x.shape};
        for (size_t i = 0; i < c.inputs.size(); ++i)
            if (c.inputs[i] == v) spec = c.specs[i];
        vals[v] = randomFill(spec, int(x.shape.rows(batch)), int(x.shape.cols()), rng);
    }
    return vals;
}

ref::RefPlan<double> runRef(const Graph& g, int batch, const std::map<ValueId, MatD>& vals) {
    ref::RefPlan<double> p(g, batch);
    for (auto& [v, m] : vals) p[v] = m;
    p.run();
    return p;
}

void expectNear(const HostMatrix& got, const MatD& want, const std::string& what) {
    EXPECT_TRUE(reftest::matricesNear(got.cast<double>(), want, kKernelTol, kKernelTol)) << what;
}

void checkCpu(const Graph& g, const std::vector<ValueId>& wanted, int batch, const std::map<ValueId, MatD>& vals,
              const std::string& what) {
    auto want = runRef(g, batch, vals);
    CpuPlan p(g, batch, wanted);
    for (auto& [v, m] : vals)
        if (p.has(v)) p[v] = m.template cast<float>();
    p.run();
    for (ValueId v : wanted) expectNear(p[v], want[v], what + ", CPU, " + g.describe(v));
}

void checkGpu(Context& ctx, const Graph& g, const std::vector<ValueId>& wanted, int batch,
              const std::map<ValueId, MatD>& vals, Layout layout, const std::string& what) {
    auto want = runRef(g, batch, vals);
    GpuPlanOptions o;  // one op at a time
    for (auto& [v, m] : vals) o.layouts[v] = layout;
    GpuPlan p(ctx, g, batch, wanted, o);
    for (auto& [v, m] : vals)
        if (p.has(v)) p[v].upload(m.template cast<float>());
    p.run();
    for (ValueId v : wanted)
        expectNear(p[v].download(), want[v],
                   what + ", GPU " + layoutName(layout) + (ctx.caps().maxTextureSize <= 64 ? " paged" : "") + ", " +
                       g.describe(v));
}

template <class F>
void forEachExample(F&& f) {
    forEachType(OpTypes{}, [&](auto* tag) {
        using OpT = std::remove_pointer_t<decltype(tag)>;
        const auto examples = OpT::examples();
        ASSERT_FALSE(examples.empty()) << OpT::kName << " has no examples";
        for (size_t i = 0; i < examples.size(); ++i) f(examples[i], i);
    });
}

TEST(GraphOps, EveryOpOnTheCpuMatchesTheOracle) {
    forEachExample([](const auto& e, size_t i) {
        Case c = makeCase(e, i, false);
        for (int batch : {1, 5}) checkCpu(c.g, c.outputs, batch, randomValues(c.g, c, batch, 7 + i), c.name);
    });
}

TEST(GraphOps, EveryOpOnTheGpuMatchesTheOracle) {
    const Layout layouts[] = {Layout::Packed, Layout::Unpacked, Layout::PackedRows4};
    int turn = 0;
    forEachExample([&](const auto& e, size_t i) {
        Case c = makeCase(e, i, false);
        const Layout layout = layouts[turn++ % 3];
        checkGpu(test::context(), c.g, c.outputs, 5, randomValues(c.g, c, 5, 11 + i), layout, c.name);
        // Past 64 rows of a 64-texel maximum: paged tensors.
        checkGpu(test::smallContext(), c.g, c.outputs, 67, randomValues(c.g, c, 67, 13 + i), Layout::Packed, c.name);
    });
}

// L = sum_k <output_k, R_k> over the outputs a gradient may flow from, R_k
// random inputs ("seed<k>"): autodiff seeded with R_k gives dL/d(input).
struct GradCase {
    Case c;
    std::vector<std::pair<ValueId, ValueId>> seeds;
    std::map<ValueId, ValueId> grads;
};
template <class OpT>
GradCase makeGradCase(const Example<OpT>& e, size_t i) {
    GradCase gc{makeCase(e, i, true), {}, {}};
    for (size_t k = 0; k < gc.c.outputs.size(); ++k)
        if (OpT::kGradOutputs >> k & 1u)
            gc.seeds.push_back(
                {gc.c.outputs[k], gc.c.g.input("seed" + std::to_string(k), gc.c.g.shape(gc.c.outputs[k]))});
    gc.grads = backward(gc.c.g, gc.seeds);
    return gc;
}

double seededLoss(const Graph& g, int batch, const std::map<ValueId, MatD>& vals,
                  const std::vector<std::pair<ValueId, ValueId>>& seeds) {
    auto p = runRef(g, batch, vals);
    double l = 0;
    for (auto [out, seed] : seeds)
        for (size_t j = 0; j < p[out].data.size(); ++j) l += p[out].data[j] * p[seed].data[j];
    return l;
}

TEST(GraphOps, EveryGradientMatchesFiniteDifferences) {
    int differentiable = 0;
    forEachExample([&](const auto& e, size_t i) {
        using OpT = std::decay_t<decltype(e.op)>;
        if constexpr (OpT::kGradOutputs != 0) {
            ++differentiable;
            GradCase gc = makeGradCase(e, i);
            const Graph& g = gc.c.g;
            const int batch = 3;
            const auto vals = randomValues(g, gc.c, batch, 17 + uint32_t(i));
            auto analytic = runRef(g, batch, vals);
            std::vector<ValueId> gradients;
            for (size_t in = 0; in < gc.c.inputs.size(); ++in) {
                if (!(OpT::kGradInputs >> in & 1u)) continue;
                const ValueId x = gc.c.inputs[in];
                ASSERT_TRUE(gc.grads.count(x)) << gc.c.name << ": no gradient for input " << in;
                gradients.push_back(gc.grads.at(x));
                const MatD& dx = analytic[gc.grads.at(x)];
                const size_t n = vals.at(x).data.size(), stride = std::max<size_t>(1, n / 24);
                for (size_t j = 0; j < n; j += stride) {
                    auto lossAt = [&](double d) {
                        auto moved = vals;
                        moved[x].data[j] += d;
                        return seededLoss(g, batch, moved, gc.seeds);
                    };
                    const double h = 1e-5, fd = (lossAt(h) - lossAt(-h)) / (2 * h);
                    EXPECT_NEAR(dx.data[j], fd, 1e-6 + 1e-5 * std::fabs(fd))
                        << gc.c.name << ": d/d(input " << in << ")[" << j << "]";
                }
            }
            checkCpu(g, gradients, batch, vals, gc.c.name + " gradient");
            checkGpu(test::context(), g, gradients, 5, randomValues(g, gc.c, 5, 19 + uint32_t(i)), Layout::Packed,
                     gc.c.name + " gradient");
            checkGpu(test::smallContext(), g, gradients, 67, randomValues(g, gc.c, 67, 23 + uint32_t(i)),
                     Layout::Packed, gc.c.name + " gradient");
        }
    });
    EXPECT_GE(differentiable, 10);
}

// ---- the graph itself ----

// A shape error names the node, its op, and where each input came from.
TEST(Graph, ShapeErrorsNameTheNodeAndItsInputs) {
    Graph g;
    const ValueId x = g.input("x", Shape::batched({7}));
    const ValueId w = g.parameter("dense_1/kernel", Shape{5, 3});
    try {
        g.add(MatMul{}, {x, w}, "dense_1");
        FAIL() << "no error";
    } catch (const ShapeError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("dense_1 (matmul)"), std::string::npos) << m;
        EXPECT_NE(m.find("the input x [B, 7]"), std::string::npos) << m;
        EXPECT_NE(m.find("the parameter dense_1/kernel [5, 3]"), std::string::npos) << m;
        EXPECT_NE(m.find("inner sizes differ"), std::string::npos) << m;
    }
    const ValueId h = g.add1(Activate{Activation::ReLU}, {x}, "act");
    try {
        g.add(Conv{Window::make("c", {2, 2, 1}, 1, 1, 1, 1, Padding::Valid, 1)}, {h, w}, "conv");
        FAIL() << "no error";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("output 0 of act (activate) [B, 7]"), std::string::npos) << e.what();
    }
}

// A value read by two nodes gets the sum of both gradients (a residual
// connection: y = x W + relu(x W) V), checked against central differences.
TEST(Graph, AValueUsedTwiceGetsTheSumOfItsGradients) {
    Graph g;
    const ValueId x = g.input("x", Shape::batched({4}));
    const ValueId w = g.parameter("w", Shape{4, 3}), v = g.parameter("v", Shape{3, 3});
    const ValueId h = g.add1(MatMul{}, {x, w}, "h");
    const ValueId r = g.add1(Activate{Activation::Tanh}, {h}, "r");
    const ValueId y = g.add1(graph::Add{}, {h, g.add1(MatMul{}, {r, v}, "rv")}, "y");
    const ValueId seed = g.input("seed", g.shape(y));
    const auto grads = backward(g, {{y, seed}});
    int adds = 0;
    for (int n = 0; n < g.nodes(); ++n) adds += g.node(n).backward && std::holds_alternative<graph::Add>(g.node(n).op);
    EXPECT_EQ(adds, 1) << "h's two gradients are summed once";
    Case c;
    const auto vals = randomValues(g, c, 3, 5);
    auto analytic = runRef(g, 3, vals);
    for (ValueId p : {w, v})
        for (size_t j = 0; j < vals.at(p).data.size(); ++j) {
            auto lossAt = [&](double d) {
                auto moved = vals;
                moved[p].data[j] += d;
                return seededLoss(g, 3, moved, {{y, seed}});
            };
            const double fd = (lossAt(1e-5) - lossAt(-1e-5)) / 2e-5;
            EXPECT_NEAR(analytic[grads.at(p)].data[j], fd, 1e-6 + 1e-5 * std::fabs(fd))
                << g.describe(p) << "[" << j << "]";
        }
}

// Nothing is computed for what needs no gradient: the data, a frozen
// parameter, and (so) the first layer's input.
TEST(Graph, NoGradientForDataOrFrozenParameters) {
    Graph g;
    const ValueId x = g.input("x", Shape::batched({6}));
    const ValueId w1 = g.parameter("w1", Shape{6, 5}, false), w2 = g.parameter("w2", Shape{5, 2});
    const ValueId h = g.add1(Activate{Activation::ReLU}, {g.add1(MatMul{}, {x, w1}, "frozen")}, "frozen");
    const ValueId y = g.add1(MatMul{}, {h, w2}, "trained");
    EXPECT_FALSE(g.value(h).requiresGrad);
    const auto grads = backward(g, {{y, g.constant("one", g.shape(y), 1.0f)}});
    EXPECT_EQ(grads.count(w2), 1u);
    EXPECT_EQ(grads.count(w1), 0u);
    EXPECT_EQ(grads.count(x), 0u);
    EXPECT_EQ(grads.count(h), 0u);
    int backwardNodes = 0;
    for (int n = 0; n < g.nodes(); ++n) backwardNodes += g.node(n).backward;
    EXPECT_EQ(backwardNodes, 1) << "only w2's gradient, h^T dY";
    // A trainable value through an op that gives no gradient for it is an error, not a silent zero.
    Graph l;
    const ValueId logits = l.input("logits", Shape::batched({3}));
    const ValueId target = l.parameter("target", Shape::batched({3}));
    const auto loss = l.add(PointwiseLossOp{}, {logits, target}, "loss");
    try {
        backward(l, {{loss[1], l.constant("one", Shape{1}, 1.0f)}});
        FAIL() << "no error";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("no gradient for its input 1, the parameter target"), std::string::npos)
            << e.what();
    }
}

// Only the caller's bound matrices can change size after a CpuPlan is made
// (the plan's own never do): run() checks those, once per run, and refuses
// a resized one by name before any node runs.
TEST(Graph, CpuPlanRefusesABoundMatrixResizedAfterItWasMade) {
    Graph g;
    const ValueId x = g.input("x", Shape::batched({3}));
    const ValueId w = g.parameter("w", Shape{3, 2});
    const ValueId y = g.add(MatMul{}, {x, w}, "dense")[0];
    HostMatrix bound(3, 2, 0.5f);
    CpuPlanOptions o;
    o.bound[w] = &bound;
    CpuPlan p(g, 4, {y}, o);
    p[x] = HostMatrix(4, 3, 1.0f);
    p.run();
    EXPECT_FLOAT_EQ(p[y].data[0], 1.5f);
    bound = HostMatrix(2, 3, 0.5f);
    p[y].data.assign(p[y].data.size(), 7.0f);
    try {
        p.run();
        ADD_FAILURE() << "a resized bound matrix ran";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("CpuPlan: "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(" holds 2x3 values, not 3x2"), std::string::npos) << e.what();
    }
    EXPECT_EQ(p[y].data[0], 7.0f);  // nothing ran
}

}  // namespace graph_ops_test
}  // namespace
