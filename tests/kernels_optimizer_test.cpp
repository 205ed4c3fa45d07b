// Optimizer update passes (one fused, multiple-render-target pass per
// parameter) against the CPU reference, step for step, over several steps
// with ping-pong swaps. Tolerance: 2e-6 relative to max(1, |p|) after 5
// steps (sqrt/division rounding differ between GLSL and libm). A bias's
// gradient given as rows to sum (GradientForm::ColumnSum) is checked the same
// way against the reference fed the column sums (in double).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gltrain/ops/optimizer.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_optimizer_test {

using namespace gltrain;
using gltrain::test::randomMatrix;
using gltrain::test::relativeError;

namespace {

// sumRows > 0: the parameter is 1 x cols and the update gets sumRows x cols
// rows in gradLayout whose column sums are the gradient.
// on: the context instead of test::context() / test::smallContext().
void runAgainstReference(OptimizerKind kind, float momentum, Layout layout, bool small, int rows, int cols,
                         int sumRows = 0, Layout gradLayout = Layout::Packed, Context* on = nullptr) {
    Context& ctx = on ? *on : small ? test::smallContext() : test::context();
    OptimizerConfig c;
    c.kind = kind;
    c.lr = 0.01f;
    c.weightDecay = 0.05f;
    c.momentum = momentum;
    c.eps = 1e-7f;
    HostMatrix p = randomMatrix(rows, cols, 1);
    PingPong param(ctx, p, layout);
    std::vector<PingPong> slots;
    slots.reserve(size_t(c.stateSlots()));
    for (int i = 0; i < c.stateSlots(); ++i) slots.emplace_back(ctx, HostMatrix(rows, cols), layout);
    std::vector<PingPong*> slotPtrs;
    for (auto& s : slots) slotPtrs.push_back(&s);
    Tensor grad(ctx, sumRows ? sumRows : rows, cols, sumRows ? gradLayout : layout);
    PassList list;
    Pass& update = recordOptimizerUpdate(list, c, param, grad, slotPtrs, nullptr, nullptr,
                                         sumRows ? GradientForm::ColumnSum : GradientForm::Same);
    // The kernel runs as a compute dispatch exactly where the context runs compute kernels.
    EXPECT_EQ(update.isCompute(), ctx.caps().computeKernels) << optimizerName(kind);

    HostMatrix refP = p;
    ref::MomentumState<float> ms(p);
    ref::AdamState<float> as(p);
    ref::RmspropState<float> rs(p);
    for (int t = 1; t <= 5; ++t) {
        HostMatrix g = randomMatrix(sumRows ? sumRows : rows, cols, unsigned(100 + t));
        grad.upload(g);
        if (sumRows) {
            HostMatrix sum(1, cols);
            for (int j = 0; j < cols; ++j) {
                double acc = 0;
                for (int i = 0; i < sumRows; ++i) acc += g(i, j);
                sum(0, j) = float(acc);
            }
            g = sum;
        }
        setStep(update, c, t, c.lr);
        list.run();
        param.swap();
        for (auto& s : slots) s.swap();
        switch (kind) {
            case OptimizerKind::SGD: ref::sgdStep(refP, g, {c.lr, c.weightDecay}); break;
            case OptimizerKind::Momentum:
            case OptimizerKind::Nesterov:
                ref::momentumStep(refP, g, ms, {c.lr, c.momentum, c.weightDecay, kind == OptimizerKind::Nesterov});
                break;
            case OptimizerKind::Adam:
            case OptimizerKind::AdamW: {
                ref::AdamConfig ac;
                ac.lr = c.lr;
                ac.beta1 = c.beta1;
                ac.beta2 = c.beta2;
                ac.eps = c.eps;
                ac.weightDecay = c.weightDecay;
                if (kind == OptimizerKind::Adam) ref::adamStep(refP, g, as, t, ac);
                else ref::adamWStep(refP, g, as, t, ac);
                break;
            }
            case OptimizerKind::RMSProp: {
                ref::RmspropConfig rc;
                rc.lr = c.lr;
                rc.rho = c.rho;
                rc.eps = c.eps;
                rc.weightDecay = c.weightDecay;
                rc.momentum = momentum;
                ref::rmspropStep(refP, g, rs, rc);
                break;
            }
        }
        EXPECT_LE(relativeError(param.front().download(), refP), 2e-6)
            << optimizerName(kind) << " step " << t << " " << layoutName(layout) << (small ? " paged" : "")
            << (sumRows ? " column sum of " + std::to_string(sumRows) + " rows, " + layoutName(gradLayout) : "");
    }
}

}  // namespace

TEST(KernelsOptimizer, EveryOptimizerMatchesReference) {
    for (OptimizerKind k : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov, OptimizerKind::Adam,
                            OptimizerKind::AdamW, OptimizerKind::RMSProp}) {
        runAgainstReference(k, 0.9f, Layout::Packed, false, 127, 129);
        runAgainstReference(k, 0.9f, Layout::Unpacked, false, 3, 5);
    }
    runAgainstReference(OptimizerKind::RMSProp, 0.0f, Layout::Packed, false, 33, 7);
}

// The same kernels as compute dispatches (one invocation per texel, outputs
// as images): every optimizer, packed, row-interleaved, unpacked and paged
// parameters (llvmpipe with ContextOptions::compute = on).
TEST(KernelsOptimizer, ComputeUpdatesMatchReference) {
    if (!test::computeContext().caps().computeShaders)
        GTEST_SKIP() << "no compute shaders here (" << test::computeContext().caps().computeReason << ")";
    Context& ctx = test::computeContext();
    for (OptimizerKind k : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov, OptimizerKind::Adam,
                            OptimizerKind::AdamW, OptimizerKind::RMSProp}) {
        runAgainstReference(k, 0.9f, Layout::Packed, false, 127, 259, 0, Layout::Packed, &ctx);
        runAgainstReference(k, 0.9f, Layout::Unpacked, false, 3, 5, 0, Layout::Packed, &ctx);
        runAgainstReference(k, 0.9f, Layout::Packed, false, 1, 129, 127, Layout::PackedRows8, &ctx);
    }
    runAgainstReference(OptimizerKind::RMSProp, 0.0f, Layout::Packed, false, 33, 7, 0, Layout::Packed, &ctx);
    runAgainstReference(OptimizerKind::Adam, 0.9f, Layout::PackedRows8, false, 67, 33, 0, Layout::Packed, &ctx);
    runAgainstReference(OptimizerKind::Adam, 0.9f, Layout::Packed, false, 129, 300, 0, Layout::Packed,
                        &test::computeContext(true));
    test::computeContext().makeCurrent();
}

// The loss guard in a compute update: a finite loss applies the step, NaN keeps
// the parameter and moments, -Inf writes nothing (the back buffer stays).
TEST(KernelsOptimizer, ComputeUpdateHonoursTheLossGuard) {
    if (!test::computeContext().caps().computeShaders)
        GTEST_SKIP() << "no compute shaders here (" << test::computeContext().caps().computeReason << ")";
    Context& ctx = test::computeContext();
    OptimizerConfig c;
    c.kind = OptimizerKind::Adam;
    c.lr = 0.5f;
    const HostMatrix p0(2, 5, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), back(2, 5, std::vector<float>(10, -7.0f));
    PingPong param(ctx, p0), m(ctx, HostMatrix(2, 5)), v(ctx, HostMatrix(2, 5));
    Tensor grad(ctx, HostMatrix(2, 5, std::vector<float>(10, 1.0f))), loss(ctx, HostMatrix(1, 1, 0.5f));
    PassList list;
    EXPECT_TRUE(recordOptimizerUpdate(list, c, param, grad, {&m, &v}, nullptr, &loss).isCompute());
    auto stepWith = [&](float l) {
        loss.upload(HostMatrix(1, 1, l));
        param.back().upload(back);
        list.run();
        return param.back().download().data;
    };
    const std::vector<float> stepped = stepWith(0.5f);  // Adam's first step: p - lr * sign(g)
    for (size_t i = 0; i < stepped.size(); ++i) EXPECT_NEAR(stepped[i], p0.data[i] - 0.5f, 1e-5f);
    EXPECT_EQ(stepWith(std::nanf("")), p0.data);
    EXPECT_EQ(stepWith(-std::numeric_limits<float>::infinity()), back.data);
}

TEST(KernelsOptimizer, PagedParameters) {
    runAgainstReference(OptimizerKind::Adam, 0.9f, Layout::Packed, true, 129, 300);
    runAgainstReference(OptimizerKind::Momentum, 0.9f, Layout::Unpacked, true, 70, 65);
}

// A bias's update sums its gradient's rows itself: every optimizer, both
// layouts of the parameter, gradients in every layout (dZ comes blocked from a
// matmul), 1 row, odd counts and the longest column allowed.
TEST(KernelsOptimizer, ColumnSumGradientsMatchReference) {
    for (OptimizerKind k : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov, OptimizerKind::Adam,
                            OptimizerKind::AdamW, OptimizerKind::RMSProp}) {
        runAgainstReference(k, 0.9f, Layout::Packed, false, 1, 129, 127, Layout::Packed);
        runAgainstReference(k, 0.9f, Layout::Unpacked, false, 1, 5, 3, Layout::Packed);
    }
    runAgainstReference(OptimizerKind::SGD, 0.0f, Layout::Packed, false, 1, 10, 1, Layout::Packed);
    runAgainstReference(OptimizerKind::Adam, 0.0f, Layout::Packed, false, 1, 7, 5, Layout::Unpacked);
    runAgainstReference(OptimizerKind::Adam, 0.0f, Layout::Packed, false, 1, 33, 13, Layout::PackedRows4);
    runAgainstReference(OptimizerKind::SGD, 0.0f, Layout::Packed, false, 1, 3, kColumnSumMaxRows, Layout::PackedRows8);
    runAgainstReference(OptimizerKind::Momentum, 0.9f, Layout::Packed, true, 1, 300, 129, Layout::Packed);
}

TEST(KernelsOptimizer, ColumnSumGradientIsScaledAndChecked) {
    Context& ctx = test::context();
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    c.lr = 0.5f;
    PingPong param(ctx, HostMatrix(1, 3, {1, 2, 3}));
    Tensor rows(ctx, HostMatrix(2, 3, {1, 1, 1, 1, 1, 1})), scale(ctx, HostMatrix(1, 1, 0.25f));
    PassList list;
    recordOptimizerUpdate(list, c, param, rows, {}, &scale, nullptr, GradientForm::ColumnSum);
    list.run();
    param.swap();
    EXPECT_EQ(param.front().download().data, (std::vector<float>{0.75f, 1.75f, 2.75f}));

    PingPong matrix(ctx, 2, 3);
    EXPECT_THROW(recordOptimizerUpdate(list, c, matrix, rows, {}, nullptr, nullptr, GradientForm::ColumnSum),
                 ArgumentError);  // a column sum is a 1 x C parameter's
    Tensor wrongCols(ctx, 2, 4), tooLong(ctx, kColumnSumMaxRows + 1, 3);
    EXPECT_THROW(recordOptimizerUpdate(list, c, param, wrongCols, {}, nullptr, nullptr, GradientForm::ColumnSum),
                 ArgumentError);
    EXPECT_THROW(recordOptimizerUpdate(list, c, param, tooLong, {}, nullptr, nullptr, GradientForm::ColumnSum),
                 ArgumentError);
}

TEST(KernelsOptimizer, GradientScaleIsApplied) {
    Context& ctx = test::context();
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    c.lr = 0.5f;
    PingPong param(ctx, HostMatrix(1, 3, {1, 2, 3}));
    Tensor grad(ctx, HostMatrix(1, 3, {2, 2, 2})), scale(ctx, HostMatrix(1, 1, 0.25f));
    PassList list;
    recordOptimizerUpdate(list, c, param, grad, {}, &scale);
    list.run();
    param.swap();
    EXPECT_EQ(param.front().download().data, (std::vector<float>{0.75f, 1.75f, 2.75f}));
}

TEST(KernelsOptimizer, BadConfigurationsAreRejected) {
    Context& ctx = test::context();
    PingPong param(ctx, 2, 2);
    Tensor grad(ctx, 2, 2), wrong(ctx, 2, 3);
    PassList list;
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    EXPECT_THROW(recordOptimizerUpdate(list, c, param, wrong, {}), ArgumentError);
    c.kind = OptimizerKind::Adam;
    EXPECT_THROW(recordOptimizerUpdate(list, c, param, grad, {}), ArgumentError);  // needs 2 slots
    c.kind = OptimizerKind::SGD;
    c.lr = -1.0f;
    EXPECT_THROW(recordOptimizerUpdate(list, c, param, grad, {}), ArgumentError);
    c.lr = 0.1f;
    c.beta2 = 1.0f;
    EXPECT_THROW(recordOptimizerUpdate(list, c, param, grad, {}), ArgumentError);
}

}  // namespace kernels_optimizer_test
}  // namespace
