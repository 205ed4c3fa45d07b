// The step guard (ops/step_guard.hpp; cpu::Model::revert): a step whose
// update leaves a parameter, optimizer slot or moving average that is not
// finite never becomes the model's state, and under NanPolicy::Stop the step
// whose weights gave a non-finite loss is undone too — on the GPU (the small
// dense network's fused step and the general one) and on the CPU backend.
// Each case compares every tensor of the checkpoint with the state it must be.
#include <gtest/gtest.h>

#include <cmath>

#include "gltrain/ops/step_guard.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace step_guard_test {

using namespace gltrain;
using gltrain::test::randomMatrix;

struct Engine {
    const char* name;
    bool cpu;
    bool fusedSmallDense;  // the GPU's small dense step (recordSmallMlpStep), else the general one
    bool batchNorm;        // a BatchNormalization layer (moving averages; the general step)
};
const Engine kEngines[] = {{"gpu-small-dense", false, true, false},
                           {"gpu-general", false, false, false},
                           {"gpu-batchnorm", false, false, true},
                           {"cpu", true, false, false},
                           {"cpu-batchnorm", true, false, true}};

std::unique_ptr<Sequential> makeModel(const Engine& e, OptimizerKind kind, float lr, NanPolicy policy) {
    auto m = std::make_unique<Sequential>(e.cpu ? test::cpuContext() : test::context(), 5);
    m->add(Dense{6, e.batchNorm ? Activation::Linear : Activation::ReLU});
    if (e.batchNorm) m->add(BatchNormalization{}).add(ActivationLayer{Activation::ReLU});
    m->add(Dense{1});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = kind;
    c.optimizer.lr = lr;
    c.onNaN = policy;
    c.seed = 3;
    if (!e.fusedSmallDense) c.smallDenseStepMacs = 0;
    m->compile(c);
    return m;
}

// Every tensor of two checkpoints is the same, bit for bit.
void expectSameState(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    const SafetensorsFile fa = parseSafetensors(a), fb = parseSafetensors(b);
    ASSERT_EQ(fa.names, fb.names);
    for (const std::string& name : fa.names) EXPECT_TRUE(fa.at(name) == fb.at(name)) << name;
}

FitOptions everyStep() {
    FitOptions f;
    f.batchSize = 8;
    f.epochs = 1;  // 24 rows: 3 steps
    f.lossEvery = 1;
    f.shuffle = false;
    return f;
}

// An SGD-family step at lr 1e38 against targets of 100 overflows the output bias
// to Inf with a finite loss: before the guard judged the update's own outputs,
// that step was applied and only the next one's loss was NaN, so the weights kept
// (and checkpointed) were Inf. Every such step is undone: the state stays the
// initial one under Skip (3 steps: overflow, undone, overflow undone at the end)
// and under Stop.
TEST(StepGuard, AnUpdateThatOverflowsIsNotApplied) {
    const HostMatrix x = randomMatrix(24, 5, 71), y(24, 1, 100.0f);
    for (const Engine& e : kEngines)
        for (OptimizerKind kind : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov})
            for (NanPolicy policy : {NanPolicy::Skip, NanPolicy::Stop}) {
                SCOPED_TRACE(std::string(e.name) + " " + optimizerName(kind) +
                             (policy == NanPolicy::Skip ? " skip" : " stop"));
                auto m = makeModel(e, kind, 1e38f, policy);
                const std::vector<uint8_t> initial = m->saveCheckpoint();
                if (policy == NanPolicy::Stop) EXPECT_THROW(m->fit(x, Targets(y), everyStep()), TrainingError);
                else m->fit(x, Targets(y), everyStep());
                expectSameState(m->saveCheckpoint(), initial);
            }
}

// The data loss: resuming a good checkpoint with Adam at lr 1e20. The
// first step's weights (about 1e20) are finite but give an Inf loss at the next
// step; under Stop the fit stops there and that first step is undone: the model
// holds exactly the checkpoint it resumed from, and evaluates to a finite loss.
TEST(StepGuard, StopUndoesTheStepWhoseWeightsGaveANonFiniteLoss) {
    const HostMatrix x = randomMatrix(24, 5, 71), y = randomMatrix(24, 1, 72);
    for (const Engine& e : kEngines)
        for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::RMSProp}) {
            SCOPED_TRACE(std::string(e.name) + " " + optimizerName(kind));
            auto good = makeModel(e, kind, 0.01f, NanPolicy::Stop);
            good->fit(x, Targets(y), everyStep());
            const std::vector<uint8_t> resumed = good->saveCheckpoint();
            auto hot = makeModel(e, kind, 1e20f, NanPolicy::Stop);
            hot->loadCheckpoint(resumed, "good.safetensors");
            FitOptions f = everyStep();
            f.epochs = 2;
            EXPECT_THROW(hot->fit(x, Targets(y), f), TrainingError);
            expectSameState(hot->saveCheckpoint(), resumed);
            EXPECT_TRUE(std::isfinite(hot->evaluate(x, Targets(y)).loss));
        }
}

// Under Skip a non-finite loss skips its own step only (the weights that gave
// it may be fine: a bad batch), and training goes on from the state it left.
TEST(StepGuard, SkipKeepsTheStepBeforeABadLoss) {
    const HostMatrix x = randomMatrix(24, 5, 71), good = randomMatrix(24, 1, 72), bad(24, 1, 1e30f);
    for (const Engine& e : kEngines) {
        SCOPED_TRACE(e.name);
        auto m = makeModel(e, OptimizerKind::Adam, 0.01f, NanPolicy::Skip);
        m->fit(x, Targets(good), everyStep());
        const std::vector<uint8_t> trained = m->saveCheckpoint();
        FitOptions f = everyStep();
        f.epochs = 2;
        m->fit(x, Targets(bad), f);
        expectSameState(m->saveCheckpoint(), trained);
    }
}

// A lost context restores the last snapshot: never one of a state the guard
// is about to undo. Snapshots every step of a run whose every other step
// overflows: each one the fit holds loads (finite), and is the initial state.
TEST(StepGuard, SnapshotsSkipAStateAboutToBeUndone) {
    const HostMatrix x = randomMatrix(24, 5, 71), y(24, 1, 100.0f);
    auto m = makeModel(kEngines[1], OptimizerKind::SGD, 1e38f, NanPolicy::Skip);
    const std::vector<uint8_t> initial = m->saveCheckpoint();
    FitOptions f = everyStep();
    f.epochs = 4;
    f.snapshotEvery = 1;
    int checked = 0;
    Callbacks cb;
    cb.onStep = [&](const StepInfo&) {
        const std::vector<uint8_t> snap = m->snapshotCheckpoint();
        for (const std::string& name : parseSafetensors(snap).names)
            for (float v : parseSafetensors(snap).at(name).floats()) ASSERT_TRUE(std::isfinite(v)) << name;
        expectSameState(snap, initial);
        ++checked;
    };
    m->fit(x, Targets(y), f, cb);
    EXPECT_EQ(checked, 12);
    expectSameState(m->saveCheckpoint(), initial);
}

// The step check as a compute dispatch (update/step_check_groups, where compute
// kernels run) flags exactly what the fragment pass (update/step_check) flags:
// ten tensors (two passes, chained through ACC), packed and unpacked, of one
// row, of fewer rows than flags and of more, paged and not; clean, or with one
// NaN, +Inf or -Inf placed in a tensor's first, middle or last texel.
TEST(StepGuard, ComputeCheckFlagsWhatTheFragmentCheckFlags) {
    if (!test::computeContext().caps().computeShaders)
        GTEST_SKIP() << "no compute shaders here (" << test::computeContext().caps().computeReason << ")";
    struct Shape {
        int rows, cols;
        Layout layout;
    };
    const Shape shapes[] = {{300, 37, Layout::Packed}, {5, 3, Layout::Unpacked},   {1, 2048, Layout::Packed},
                            {1000, 4, Layout::Packed}, {257, 9, Layout::Unpacked}, {16, 16, Layout::Packed},
                            {2, 5, Layout::Packed},    {513, 1, Layout::Packed},   {40, 40, Layout::Packed},
                            {3, 3, Layout::Unpacked}};
    struct Bad {
        int tensor = -1, row = 0, col = 0;
        float value = 0.0f;
    };
    const Bad cases[] = {{},
                         {0, 299, 36, NAN},
                         {2, 0, 2047, INFINITY},
                         {9, 2, 2, -INFINITY},
                         {3, 999, 3, NAN},
                         {4, 256, 8, INFINITY},
                         {7, 300, 0, NAN},
                         {8, 20, 21, -INFINITY}};
    for (bool paged : {false, true}) {
        ContextOptions o;
        o.backend = BackendPreference::Gpu;
        o.compute = ComputePreference::Off;
        o.maxTextureSize = paged ? 64 : 0;
        Context fragment(o);
        Context& compute = test::computeContext(paged);
        auto flags = [&](Context& ctx, const Bad& bad, std::string* kernels) {
            ctx.makeCurrent();
            std::vector<Tensor> tensors;
            tensors.reserve(std::size(shapes));
            for (size_t i = 0; i < std::size(shapes); ++i) {
                HostMatrix h = test::randomMatrix(shapes[i].rows, shapes[i].cols, 40 + unsigned(i), -1e30f, 1e30f);
                if (bad.tensor == int(i)) h.data[size_t(bad.row) * size_t(h.cols) + size_t(bad.col)] = bad.value;
                tensors.emplace_back(ctx, h, shapes[i].layout);
            }
            std::vector<const Tensor*> written;
            for (const Tensor& t : tensors) written.push_back(&t);
            PingPong check = makeStepCheckState(ctx);
            PassList list;
            recordStepCheck(list, written, check);
            list.run();
            for (auto& p : list.passes()) *kernels += p.kernel() + " ";
            return check.back().download();
        };
        for (const Bad& bad : cases) {
            const std::string what = std::string(paged ? "paged" : "unpaged") + ", bad value in tensor " +
                                     std::to_string(bad.tensor) + " at (" + std::to_string(bad.row) + ", " +
                                     std::to_string(bad.col) + ")";
            std::string fragmentKernels, computeKernels;
            const HostMatrix byFragments = flags(fragment, bad, &fragmentKernels);
            const HostMatrix byCompute = flags(compute, bad, &computeKernels);
            EXPECT_EQ(fragmentKernels, "update/step_check update/step_check ") << what;
            EXPECT_EQ(computeKernels, "update/step_check_groups update/step_check_groups ") << what;
            EXPECT_EQ(byCompute.data, byFragments.data) << what;
            // Flag k looks at rows k, k + 256, ...: only the bad row's flag is set.
            for (int k = 0; k < kStepCheckRows * kStepCheckCols; ++k)
                EXPECT_EQ(byCompute.data[size_t(k)], bad.tensor >= 0 && k == bad.row % 256 ? 1.0f : 0.0f)
                    << what << ", flag " << k;
        }
    }
    test::context().makeCurrent();
}

}  // namespace step_guard_test
}  // namespace
