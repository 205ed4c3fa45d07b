// An epoch's short last batch (FitOptions::dropRemainder false, the default):
// the rows that do not fill a batch train as one more step, on the GPU engine
// (its own plan for that batch size, recorded at beginFit) and on the CPU
// backend. The oracle is the same model trained on those rows by fits of
// their own: the step after the full batches must be exactly a step on the
// remaining rows. Also: the epoch's loss weighs each step by its rows, its
// accuracy counts every row, a batch size above the row count trains one step
// of all rows, dropRemainder leaves the rows out, asynchronous loss reads take
// the short step's own loss, and shuffled epochs (a short batch whose gather
// chunk starts at its own first row) match the CPU backend.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace fit_ragged_test {

using namespace gltrain;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;

namespace {

std::vector<int> labelsFor(int n) {
    std::vector<int> y(size_t(n), 0);
    for (int i = 0; i < n; ++i) y[size_t(i)] = (i * 7 + i / 3) % 3;
    return y;
}
HostMatrix rowsOf(const HostMatrix& x, int r0, int n) {
    HostMatrix out(n, x.cols);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < x.cols; ++c) out(r, c) = x(r0 + r, c);
    return out;
}
std::vector<int> rowsOf(const std::vector<int>& y, int r0, int n) {
    return std::vector<int>(y.begin() + r0, y.begin() + r0 + n);
}

std::unique_ptr<Sequential> classifier(Context& ctx) {
    auto m = std::make_unique<Sequential>(ctx, 5);
    m->add(Dense{6, Activation::Tanh}).add(Dense{3});
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::Adam;  // its bias correction counts the steps
    c.optimizer.lr = 0.05f;
    c.seed = 12;
    m->compile(c);
    return m;
}

FitOptions inOrder(int epochs, int batch) {
    FitOptions f;
    f.epochs = epochs;
    f.batchSize = batch;
    f.shuffle = false;
    return f;
}

std::vector<float> stepLosses(Sequential& m, const HostMatrix& x, const std::vector<int>& y, const FitOptions& f) {
    std::vector<float> losses;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    m.fit(x, y, f, cb);
    return losses;
}

void expectShortBatchIsAStepOnTheRemainingRows(Context& ctx) {
    const HostMatrix x = randomMatrix(10, 5, 71);
    const std::vector<int> y = labelsFor(10);

    // One epoch of 10 rows in batches of 4: rows 0-3, 4-7, then 8-9.
    auto a = classifier(ctx);
    const std::vector<float> lossesA = stepLosses(*a, x, y, inOrder(1, 4));
    EXPECT_EQ(a->step(), 3);
    ASSERT_EQ(lossesA.size(), 3u);
    ASSERT_EQ(a->history().size(), 1u);
    const EpochInfo epochA = a->history()[0];

    // The same steps by two fits: rows 0-7 in batches of 4, then rows 8-9 as
    // one batch (epochs counts from the model's first epoch: the third).
    auto b = classifier(ctx);
    const std::vector<float> lossesB1 = stepLosses(*b, rowsOf(x, 0, 8), rowsOf(y, 0, 8), inOrder(1, 4));
    const float accuracyB1 = b->history().at(0).accuracy;
    const std::vector<uint8_t> afterFullBatches = b->saveCheckpoint();
    const std::vector<float> lossesB2 = stepLosses(*b, rowsOf(x, 8, 2), rowsOf(y, 8, 2), inOrder(3, 2));
    const float accuracyB2 = b->history().at(0).accuracy;
    ASSERT_EQ(b->step(), 3);
    EXPECT_EQ(a->saveCheckpoint(), b->saveCheckpoint()) << "weights, Adam's moments and step";
    ASSERT_EQ(lossesB1.size(), 2u);
    ASSERT_EQ(lossesB2.size(), 1u);
    EXPECT_EQ(lossesA[0], lossesB1[0]);
    EXPECT_EQ(lossesA[1], lossesB1[1]);
    EXPECT_EQ(lossesA[2], lossesB2[0]) << "the short step's loss is its own rows' mean";

    // The epoch: losses weighted by rows, accuracy over all 10 rows.
    const double weighted = (4.0 * lossesA[0] + 4.0 * lossesA[1] + 2.0 * lossesA[2]) / 10.0;
    EXPECT_NEAR(epochA.loss, weighted, 1e-6 * std::max(1.0, weighted));
    EXPECT_NEAR(epochA.accuracy, (8.0 * accuracyB1 + 2.0 * accuracyB2) / 10.0, 1e-6);

    // dropRemainder: the epoch is the two full batches.
    auto c = classifier(ctx);
    FitOptions dropped = inOrder(1, 4);
    dropped.dropRemainder = true;
    c->fit(x, y, dropped);
    EXPECT_EQ(c->step(), 2);
    EXPECT_EQ(c->saveCheckpoint(), afterFullBatches);
    EXPECT_EQ(c->history().at(0).accuracy, accuracyB1);
}

// A batch size above the row count: one step of all the rows an epoch.
void expectBatchAboveTheRowsTrainsOneStep(Context& ctx) {
    const HostMatrix x = randomMatrix(10, 5, 72);
    const std::vector<int> y = labelsFor(10);
    FitOptions big;
    big.epochs = 3;
    big.batchSize = 16;
    auto a = classifier(ctx);
    a->fit(x, y, big);
    FitOptions exact = big;
    exact.batchSize = 10;
    auto b = classifier(ctx);
    b->fit(x, y, exact);
    EXPECT_EQ(a->step(), 3);
    EXPECT_EQ(a->saveCheckpoint(), b->saveCheckpoint());
    ASSERT_EQ(a->history().size(), 3u);
    for (size_t e = 0; e < 3; ++e) {
        EXPECT_EQ(a->history()[e].loss, b->history()[e].loss) << "epoch " << e;
        EXPECT_EQ(a->history()[e].accuracy, b->history()[e].accuracy) << "epoch " << e;
    }
}

// FitOptions::steps: the fit ends at that global step, its last epoch cut short and
// reported with the steps it had: the same state as the first steps of a longer fit.
void expectStepsCutTheLastEpochShort(Context& ctx) {
    const HostMatrix x = randomMatrix(10, 5, 73);
    const std::vector<int> y = labelsFor(10);
    FitOptions f = inOrder(1, 4);  // 3 steps an epoch
    f.steps = 5;
    auto a = classifier(ctx);
    const std::vector<float> losses = stepLosses(*a, x, y, f);
    EXPECT_EQ(a->step(), 5);
    ASSERT_EQ(losses.size(), 5u);
    ASSERT_EQ(a->history().size(), 2u);
    EXPECT_EQ(a->history()[1].step, 5);
    EXPECT_NEAR(a->history()[1].loss, (losses[3] + losses[4]) / 2.0, 1e-6);
    auto b = classifier(ctx);
    b->beginFit(x, y, inOrder(2, 4));
    for (int i = 0; i < 5; ++i) b->stepOnce();
    b->endFit();
    EXPECT_EQ(a->saveCheckpoint(), b->saveCheckpoint());
    a->fit(x, y, f);  // there already
    EXPECT_EQ(a->step(), 5);
    f.steps = 7;
    a->fit(x, y, f);
    EXPECT_EQ(a->step(), 7);
}

}  // namespace

TEST(FitRagged, ShortLastBatchIsAStepOnTheRemainingRows) { expectShortBatchIsAStepOnTheRemainingRows(test::context()); }
TEST(FitRagged, ShortLastBatchIsAStepOnTheRemainingRowsOnTheCpu) {
    expectShortBatchIsAStepOnTheRemainingRows(test::cpuContext());
}
TEST(FitRagged, StepsCutTheLastEpochShort) { expectStepsCutTheLastEpochShort(test::context()); }
TEST(FitRagged, StepsCutTheLastEpochShortOnTheCpu) { expectStepsCutTheLastEpochShort(test::cpuContext()); }
TEST(FitRagged, BatchAboveTheRowCountTrainsOneStep) { expectBatchAboveTheRowsTrainsOneStep(test::context()); }
TEST(FitRagged, BatchAboveTheRowCountTrainsOneStepOnTheCpu) {
    expectBatchAboveTheRowsTrainsOneStep(test::cpuContext());
}

// 97 rows in batches of 47: two full steps and one of 3 rows an epoch,
// shuffled, with dropout and a validation set. The short batch's plan gathers
// 16 of its batches (48 rows) at a time, and its rows 94-96 cross the chunk
// boundary at 96, so its gather starts at its own first row. The GPU engine
// with synchronous and with asynchronous loss reads agrees with the CPU
// backend on every loss (by the step it belongs to), the epochs' loss,
// accuracy and validation figures, and the weights.
TEST(FitRagged, ShuffledEpochsMatchTheCpuBackend) {
    const HostMatrix x = randomMatrix(97, 5, 73), xv = randomMatrix(13, 5, 74);
    const std::vector<int> y = labelsFor(97), yv = labelsFor(13);
    struct Run {
        std::map<long, float> losses;  // by the step each belongs to
        std::vector<EpochInfo> history;
        HostMatrix kernel;
    };
    auto run = [&](Context& ctx, bool async) {
        Sequential m(ctx, 5);
        m.add(Dense{8, Activation::ReLU}).add(Dropout{0.25f}).add(Dense{3});
        CompileOptions c;
        c.optimizer.lr = 0.02f;
        c.seed = 9;
        m.compile(c);
        FitOptions f;
        f.epochs = 3;
        f.batchSize = 47;
        f.asyncLoss = async;
        const Targets validationTargets(yv);
        f.validationX = &xv;
        f.validationY = &validationTargets;
        Run r;
        Callbacks cb;
        cb.onStep = [&](const StepInfo& s) {
            if (s.lossRead) r.losses[s.lossStep] = s.loss;
        };
        m.fit(x, y, f, cb);
        EXPECT_EQ(m.step(), 9);
        r.history = m.history();
        r.kernel = m.weight(m.layerName(0), "kernel");
        return r;
    };
    const Run cpu = run(test::cpuContext(), false);
    for (bool async : {false, true}) {
        SCOPED_TRACE(async ? "asynchronous loss reads" : "synchronous loss reads");
        const Run gpu = run(test::context(), async);
        EXPECT_EQ(cpu.losses.size(), 9u);
        // Asynchronous reads are taken when their fence has signalled, or at an
        // epoch's end (in a browser only there): at least steps 1, 3 and 6.
        EXPECT_GE(gpu.losses.size(), async ? 3u : 9u);
        for (auto [step, loss] : gpu.losses) {
            ASSERT_TRUE(cpu.losses.count(step)) << "step " << step;
            EXPECT_NEAR(loss, cpu.losses.at(step), 1e-4 * std::max(1.0f, loss)) << "step " << step;
        }
        for (long shortStep : {3L, 6L})
            EXPECT_TRUE(gpu.losses.count(shortStep)) << "the short step " << shortStep << "'s loss was not reported";
        ASSERT_EQ(gpu.history.size(), 3u);
        ASSERT_EQ(cpu.history.size(), 3u);
        for (size_t e = 0; e < 3; ++e) {
            if (!async) EXPECT_NEAR(gpu.history[e].loss, cpu.history[e].loss, 1e-4) << "epoch " << e;
            EXPECT_NEAR(gpu.history[e].accuracy, cpu.history[e].accuracy, 1e-6) << "epoch " << e;
            EXPECT_NEAR(gpu.history[e].valLoss, cpu.history[e].valLoss, 1e-4) << "epoch " << e;
            EXPECT_NEAR(gpu.history[e].valAccuracy, cpu.history[e].valAccuracy, 1e-6) << "epoch " << e;
        }
        EXPECT_LE(maxRelDiff(gpu.kernel, cpu.kernel.cast<double>()), 1e-4);
    }
}

}  // namespace fit_ragged_test
}  // namespace
