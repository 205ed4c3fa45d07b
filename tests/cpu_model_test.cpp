// Sequential on the CPU engine (engine/cpu_engine.hpp, cpu/model.hpp): training
// steps against the reference ops composed in double and against the GPU
// engine, the same API (fit, evaluate, predict, weights, callbacks, NaN
// policy, validation), checkpoints that load across backends, backend choice
// and its report, and learning XOR and (natively) Fashion-MNIST.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/backend_choice.hpp"
#include "gltrain/idx.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace cpu_model_test {

using namespace gltrain;
using gltrain::test::randomMatrix;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;

namespace {

using gltrain::test::message;
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
// The step check's kernel on test::context() (ops/step_guard.hpp: compute where compute kernels run).
std::string stepCheckKernel() {
    return test::context().caps().computeKernels ? "update/step_check_groups" : "update/step_check";
}

HostMatrix xorX() { return HostMatrix(4, 2, {0, 0, 0, 1, 1, 0, 1, 1}); }
std::vector<int> xorY() { return {0, 1, 1, 0}; }

// XOR to 100 % in 300 epochs of batch 4 (Adam 0.05): the fallback's training check.
void expectXorReaches100Percent(Context& ctx) {
    Sequential m(ctx, 2);
    m.add(Dense{16, Activation::Tanh}).add(Dense{2});
    CompileOptions c;
    c.optimizer.lr = 0.05f;
    c.seed = 3;
    m.compile(c);
    FitOptions f;
    f.epochs = 300;
    f.batchSize = 4;
    f.lossEvery = 0;
    m.fit(xorX(), xorY(), f);
    Evaluation e = m.evaluate(xorX(), xorY());
    EXPECT_EQ(e.accuracy, 1.0f) << "loss " << e.loss;
    EXPECT_LT(e.loss, 0.05f);
    EXPECT_EQ(m.history().size(), 300u);
}

}  // namespace

TEST(CpuModel, ContextWithoutGlReportsTheCpuBackend) {
    Context& ctx = test::cpuContext();
    EXPECT_EQ(ctx.backend(), Backend::Cpu);
    EXPECT_FALSE(ctx.hasGl());
    EXPECT_TRUE(contains(ctx.caps().backendReason, "asked for")) << ctx.caps().backendReason;
    EXPECT_FALSE(ctx.lost());
    // Tensors need GL: a clear error, not a crash.
    const std::string m = message([&] { Tensor t(ctx, 2, 2); });
    EXPECT_TRUE(contains(m, "Tensor: this Context has no GL context (backend cpu")) << m;
    EXPECT_THROW(ctx.loseContext(), UnsupportedError);
}

// Auto with both float render formats switched off: the CPU backend, and the
// reason names what is missing; Gpu with the same switches refuses.
TEST(CpuModel, AutoFallsBackToTheCpuWithoutFloatRenderTargets) {
    ContextOptions o;
    o.disableFloat32Render = o.disableHalfFloatRender = true;
    Context ctx(o);
    EXPECT_EQ(ctx.backend(), Backend::Cpu);
    EXPECT_FALSE(ctx.hasGl());
    EXPECT_TRUE(contains(ctx.caps().backendReason, "no float render targets")) << ctx.caps().backendReason;
    expectXorReaches100Percent(ctx);
    o.backend = BackendPreference::Gpu;
    EXPECT_THROW(Context{o}, UnsupportedError);
}

// Auto on a software renderer: makeContext times one matmul both ways and says
// so, whichever wins. A Context made directly runs no op to decide: it keeps
// the GPU it can render with, and its report speaks of no timing.
TEST(CpuModel, AutoOnASoftwareRendererReportsTheMeasurement) {
    const std::unique_ptr<Context> ctx = makeContext();
    if (!ctx->caps().softwareRenderer) GTEST_SKIP() << "renderer " << ctx->caps().renderer << " is not software";
    EXPECT_TRUE(contains(ctx->caps().backendReason, "matmul took")) << ctx->caps().backendReason;
    EXPECT_TRUE(ctx->hasGl());  // either way, tensors keep working
    Tensor t(*ctx, HostMatrix(1, 3, 2.0f));
    EXPECT_EQ(t.download().data[2], 2.0f);
    Context plain;
    EXPECT_NE(plain.backend(), Backend::Cpu) << plain.caps().backendReason;
    EXPECT_FALSE(contains(plain.caps().backendReason, "matmul took")) << plain.caps().backendReason;
    test::context();
}

// Auto costs a start-up probe only where it can choose: on a software
// renderer whose GPU the Context took. A hardware GPU is never timed, so auto
// starts there exactly as gpu does (issue 41); the probe itself compiles
// only what its matmul needs, beside what any GPU Context compiles.
TEST(CpuModel, AutoTimesTheEnginesOnlyOnASoftwareRenderer) {
    Capabilities hardware, software;
    software.softwareRenderer = true;
    ContextOptions automatic, gpu, cpu;
    gpu.backend = BackendPreference::Gpu;
    cpu.backend = BackendPreference::Cpu;
    EXPECT_FALSE(timesBothEngines(automatic, hardware, Backend::GpuFloat32));
    EXPECT_FALSE(timesBothEngines(automatic, hardware, Backend::GpuFloat16));
    EXPECT_TRUE(timesBothEngines(automatic, software, Backend::GpuFloat32));
    EXPECT_TRUE(timesBothEngines(automatic, software, Backend::GpuFloat16));
    EXPECT_FALSE(timesBothEngines(automatic, software, Backend::Cpu)) << "no float render targets: nothing to time";
    EXPECT_FALSE(timesBothEngines(gpu, software, Backend::GpuFloat32));
    EXPECT_FALSE(timesBothEngines(cpu, software, Backend::Cpu));

    const std::unique_ptr<Context> chosen = makeContext();
    if (!chosen->caps().softwareRenderer || !chosen->hasGl())
        GTEST_SKIP() << "renderer " << chosen->caps().renderer << " is not software";
    Context plain(gpu);
    Tensor a(plain, HostMatrix(128, 256), Layout::PackedRows4), b(plain, HostMatrix(256, 128), Layout::PackedRows4),
        c(plain, 128, 128, Layout::PackedRows4);
    PassList probe;
    recordMatmul(probe, a, b, c);  // the probe's product and read (src/backend_choice.cpp)
    probe.run();
    (void)c.download();
    EXPECT_EQ(chosen->shaders().compiledCount(), plain.shaders().compiledCount());
}

// The GPU engine's reference checks (model_reference_steps.hpp), on the CPU backend.
TEST(CpuModel, TrainingMatchesTheReferenceFor20Steps) { test::expectMlpAdamStepsMatchTheReference(test::cpuContext()); }
TEST(CpuModel, CnnStepMatchesTheReference) { test::expectCnnSgdStepMatchesTheReference(test::cpuContext()); }

// The same model, seed and data on both backends: shuffled batches, dropout
// masks, clipping and a schedule line up, so the per-step losses agree to
// 1e-4 relative and the weights after 30 steps to 1e-4 (fp32 on both sides,
// summed in different orders).
TEST(CpuModel, StepsMatchTheGpuEngine) {
    HostMatrix x = randomMatrix(96, 12, 51);
    std::vector<int> y(96);
    for (int i = 0; i < 96; ++i) y[size_t(i)] = (i * 7 + i / 5) % 4;
    auto run = [&](Context& ctx, std::vector<float>& losses) {
        auto m = std::make_unique<Sequential>(ctx, 12);
        m->add(Dense{16, Activation::ReLU}).add(Dropout{0.25f}).add(Dense{9, Activation::GELU}).add(Dense{4});
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::RMSProp;
        c.optimizer.lr = 0.01f;
        c.clipNorm = 0.5f;
        c.schedule.kind = Schedule::Exponential;
        c.schedule.gamma = 0.5f;
        c.schedule.stepSize = 10;
        c.seed = 5;
        m->compile(c);
        FitOptions f;
        f.epochs = 10;
        f.batchSize = 32;  // 3 steps per epoch
        Callbacks cb;
        cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
        m->fit(x, y, f, cb);
        return m;
    };
    std::vector<float> onCpu, onGpu;
    auto a = run(test::cpuContext(), onCpu);
    auto b = run(test::context(), onGpu);
    ASSERT_EQ(onCpu.size(), 30u);
    ASSERT_EQ(onGpu.size(), 30u);
    for (size_t i = 0; i < 30; ++i)
        EXPECT_NEAR(onCpu[i], onGpu[i], 1e-4 * std::max(1.0f, onGpu[i])) << "step " << i + 1;
    for (size_t l : {0u, 2u, 3u})
        EXPECT_LE(maxRelDiff(a->weight(a->layerName(l), "kernel"), b->weight(b->layerName(l), "kernel").cast<double>()),
                  1e-4)
            << "layer " << l;
    Evaluation ea = a->evaluate(x, y), eb = b->evaluate(x, y);
    EXPECT_NEAR(ea.loss, eb.loss, 1e-4 * std::max(1.0f, eb.loss));
    EXPECT_EQ(ea.accuracy, eb.accuracy);
}

// The GPU engine gathers a training step's batch with up to 16 others at once
// and reads it as a row window: batch 1 on 37 rows makes three chunks an epoch
// (16, 16 and a last one reaching past the data), reshuffled every epoch; a
// profileStep between steps gathers other rows into the same plan. Then, from
// a checkpoint of step 0 (SGD: the step restarts), an epoch of batch 4 on x and
// one on x2: the same epoch and chunk on other data must be gathered again.
// Losses agree with the CPU backend, which picks each batch by itself.
TEST(CpuModel, BatchesGatheredInChunksMatchTheCpuBackend) {
    HostMatrix x = randomMatrix(37, 5, 53), x2 = randomMatrix(37, 5, 54);
    std::vector<int> y(37);
    for (int i = 0; i < 37; ++i) y[size_t(i)] = (i * 5 + i / 3) % 3;
    auto run = [&](Context& ctx, bool profile) {
        Sequential m(ctx, 5);
        m.add(Dense{6, Activation::Tanh}).add(Dense{3});
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::SGD;
        c.optimizer.lr = 0.05f;
        c.seed = 8;
        m.compile(c);
        const std::vector<uint8_t> start = m.saveCheckpoint();
        std::vector<float> losses;
        Callbacks cb;
        cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
        FitOptions f;
        f.epochs = 3;
        f.batchSize = 1;
        m.beginFit(x, y, f, cb);
        for (int i = 0; m.stepOnce(); ++i)
            if (profile && (i == 20 || i == 50)) m.profileStep(x2, y, 1, 1);
        f.epochs = 1;
        f.batchSize = 4;
        for (const HostMatrix* data : {&x, &x2}) {
            m.loadCheckpoint(start);
            EXPECT_EQ(m.step(), 0);
            m.fit(*data, y, f, cb);
        }
        return losses;
    };
    std::vector<float> onCpu = run(test::cpuContext(), false), onGpu = run(test::context(), true);
    ASSERT_EQ(onCpu.size(), 3u * 37u + 2u * 10u);  // batches of 4: 9 full and one of a row
    ASSERT_EQ(onGpu.size(), onCpu.size());
    for (size_t i = 0; i < onCpu.size(); ++i)
        EXPECT_NEAR(onCpu[i], onGpu[i], 1e-4 * std::max(1.0f, onGpu[i])) << "step " << i + 1;
}

// MSE and BCE models of two dense layers, in batches of 8. By default the
// step is small enough to be recomputed by the loss pass and each
// parameter's update (ops/mlp.hpp: 5 passes, nothing else). With
// smallDenseStepMacs 0 it takes the general step: a last layer that is linear
// writes the loss gradient in its own pass (recordDenseLossGrad; no
// loss/pointwise_grad pass), others leave it to a pass of its own. Every way,
// every step's loss agrees with the CPU backend's, as do the weights after them.
TEST(CpuModel, LossGradientInTheLastLayerMatchesTheCpuBackend) {
    HostMatrix x = randomMatrix(48, 6, 55), y = randomMatrix(48, 2, 56, 0.0f, 1.0f);
    for (bool recomputed : {true, false})
        for (LossKind loss : {LossKind::MeanSquaredError, LossKind::BinaryCrossEntropy})
            for (Activation last : {Activation::Linear, Activation::Tanh}) {
                const std::string what = std::string(loss == LossKind::MeanSquaredError ? "mse" : "bce") +
                                         ", last layer " + activationName(last) +
                                         (recomputed ? ", recomputed" : ", general");
                auto run = [&](Context& ctx, std::vector<float>& losses) {
                    auto m = std::make_unique<Sequential>(ctx, 6);
                    m->add(Dense{5, Activation::ReLU}).add(Dense{2, last});
                    CompileOptions c;
                    c.loss = loss;
                    c.optimizer.kind = OptimizerKind::Momentum;
                    c.optimizer.lr = 0.05f;
                    c.seed = 9;
                    if (!recomputed) c.smallDenseStepMacs = 0;
                    m->compile(c);
                    FitOptions f;
                    f.epochs = 4;
                    f.batchSize = 8;
                    Callbacks cb;
                    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
                    m->fit(x, Targets(y), f, cb);
                    return m;
                };
                std::vector<float> onCpu, onGpu;
                auto a = run(test::cpuContext(), onCpu);
                auto b = run(test::context(), onGpu);
                ASSERT_EQ(onGpu.size(), 24u) << what;
                ASSERT_EQ(onCpu.size(), onGpu.size()) << what;
                for (size_t i = 0; i < onGpu.size(); ++i)
                    EXPECT_NEAR(onCpu[i], onGpu[i], 1e-4 * std::max(1.0f, onGpu[i])) << what << ", step " << i + 1;
                for (size_t l : {0u, 1u})
                    EXPECT_LE(maxRelDiff(a->weight(a->layerName(l), "kernel"),
                                         b->weight(b->layerName(l), "kernel").cast<double>()),
                              1e-4)
                        << what << ", layer " << l;
                const auto passes = b->profileStep(x, Targets(y), 8, 1);
                if (recomputed) {
                    // The loss, the step guard, the four updates, then the check of what they
                    // wrote (ops/step_guard.hpp: one pass for up to 8 tensors).
                    ASSERT_EQ(passes.size(), 7u) << what;
                    EXPECT_EQ(passes[0].kernel, "loss/mlp_loss") << what;
                    EXPECT_EQ(passes[1].kernel, "update/step_guard") << what;
                    for (size_t i = 2; i < 6; ++i) EXPECT_EQ(passes[i].kernel, "update/momentum") << what;
                    EXPECT_EQ(passes[6].kernel, stepCheckKernel()) << what;  // W0, b0, W1, b1
                } else {
                    bool gradPass = false, mlp = false;
                    for (auto& p : passes)
                        gradPass |= p.kernel == "loss/pointwise_grad", mlp |= p.kernel == "loss/mlp_loss";
                    EXPECT_EQ(gradPass, last != Activation::Linear) << what;
                    EXPECT_FALSE(mlp) << what;
                }
            }
}

// A small softmax classifier (with and without a final Softmax layer) takes the
// recomputed step too: the loss pass, the correct count's and one update per
// parameter (2 + 4 passes). Its losses, weights and epoch accuracies agree with
// the CPU backend's and with the general step's.
TEST(CpuModel, SmallSoftmaxClassifierTakesTheRecomputedStep) {
    HostMatrix x = randomMatrix(48, 5, 71);
    std::vector<int> y(48);
    for (int i = 0; i < 48; ++i)
        y[size_t(i)] = int(x.data[size_t(i) * 5] > 0.0f) + int(x.data[size_t(i) * 5 + 1] > 0.3f);
    for (bool softmaxLayer : {false, true}) {
        struct Run {
            std::vector<float> losses, accuracies;
            std::unique_ptr<Sequential> m;
        };
        auto run = [&](Context& ctx, bool recomputed) {
            Run r;
            r.m = std::make_unique<Sequential>(ctx, 5);
            r.m->add(Dense{6, Activation::Tanh}).add(Dense{3});
            if (softmaxLayer) r.m->add(Softmax{});
            CompileOptions c;
            c.optimizer.kind = OptimizerKind::Adam;
            c.optimizer.lr = 0.02f;
            c.seed = 4;
            if (!recomputed) c.smallDenseStepMacs = 0;
            r.m->compile(c);
            FitOptions f;
            f.epochs = 5;
            f.batchSize = 8;
            Callbacks cb;
            cb.onStep = [&](const StepInfo& s) { r.losses.push_back(s.loss); };
            cb.onEpoch = [&](const EpochInfo& e) { r.accuracies.push_back(e.accuracy); };
            r.m->fit(x, y, f, cb);
            return r;
        };
        const std::string what = softmaxLayer ? "with a Softmax layer" : "logits out";
        Run cpu = run(test::cpuContext(), true), small = run(test::context(), true),
            general = run(test::context(), false);
        ASSERT_EQ(small.losses.size(), 30u) << what;
        for (const Run* other : {&cpu, &general}) {
            ASSERT_EQ(other->losses.size(), small.losses.size()) << what;
            for (size_t i = 0; i < small.losses.size(); ++i)
                EXPECT_NEAR(other->losses[i], small.losses[i], 1e-4 * std::max(1.0f, small.losses[i]))
                    << what << ", step " << i + 1;
            // Each epoch counts 48 rows; a near-tie may round either way on another engine: one row.
            ASSERT_EQ(other->accuracies.size(), small.accuracies.size()) << what;
            for (size_t i = 0; i < small.accuracies.size(); ++i)
                EXPECT_NEAR(other->accuracies[i], small.accuracies[i], 1.01 / 48) << what << ", epoch " << i;
            for (size_t l : {0u, 1u})
                EXPECT_LE(maxRelDiff(other->m->weight(other->m->layerName(l), "kernel"),
                                     small.m->weight(small.m->layerName(l), "kernel").cast<double>()),
                          1e-4)
                    << what << ", layer " << l;
        }
        EXPECT_LT(small.losses.back(), small.losses.front()) << what;
        EXPECT_GT(small.accuracies.back(), 0.6f) << what;
        const auto passes = small.m->profileStep(x, y, 8, 1);
        // The loss, the count, the step guard, the four updates, then the check of
        // what they wrote (ops/step_guard.hpp: the parameters and Adam's v, one pass).
        ASSERT_EQ(passes.size(), 8u) << what;
        EXPECT_EQ(passes[0].kernel, "loss/mlp_loss") << what;
        EXPECT_EQ(passes[1].kernel, "loss/mlp_correct") << what;
        EXPECT_EQ(passes[2].kernel, "update/step_guard") << what;
        for (size_t i = 3; i < 7; ++i) EXPECT_EQ(passes[i].kernel, "update/adam") << what;
        for (size_t i = 7; i < passes.size(); ++i) EXPECT_EQ(passes[i].kernel, stepCheckKernel()) << what;
        const Evaluation e = small.m->evaluate(x, y);
        EXPECT_NEAR(e.accuracy, general.m->evaluate(x, y).accuracy, 1.01 / 48) << what;
    }
}

// CompileOptions::smallDenseStepMacs bounds the recomputed step: 0 keeps a
// model the default would recompute on the general step; negative is refused.
TEST(CpuModel, SmallDenseStepMacsChoosesTheStep) {
    HostMatrix x = randomMatrix(16, 2, 57), y = randomMatrix(16, 1, 58);
    for (int64_t limit : {CompileOptions{}.smallDenseStepMacs, int64_t(0)}) {
        Sequential m(test::context(), 2);
        m.add(Dense{8, Activation::Tanh}).add(Dense{1});
        CompileOptions c;
        c.loss = LossKind::MeanSquaredError;
        c.smallDenseStepMacs = limit;
        m.compile(c);
        bool recomputed = false;
        for (auto& p : m.profileStep(x, Targets(y), 4, 1)) recomputed |= p.kernel == "loss/mlp_loss";
        EXPECT_EQ(recomputed, limit > 0) << limit;
    }
    Sequential m(test::context(), 2);
    m.add(Dense{1});
    CompileOptions c;
    c.smallDenseStepMacs = -1;
    EXPECT_THROW(m.compile(c), ArgumentError);
}

// A checkpoint is the same file on both backends: trained on one, loaded on
// the other, the predictions agree to 1e-5 and training resumes from its step.
TEST(CpuModel, CheckpointsLoadAcrossBackends) {
    HostMatrix x = randomMatrix(40, 6, 61);
    std::vector<int> y(40);
    for (int i = 0; i < 40; ++i) y[size_t(i)] = i % 3;
    auto build = [&](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, Shape3{1, 6, 1});
        m->add(Conv2D{3, 2, 1, Padding::Same, Activation::Tanh}).add(BatchNormalization{0.9f}).add(Flatten{});
        m->add(Dense{3});
        CompileOptions c;
        c.seed = 4;
        m->compile(c);
        return m;
    };
    FitOptions f;
    f.epochs = 3;
    f.batchSize = 8;
    for (bool fromCpu : {true, false}) {
        Context& from = fromCpu ? test::cpuContext() : test::context();
        Context& to = fromCpu ? test::context() : test::cpuContext();
        auto a = build(from);
        a->fit(x, y, f);
        const std::vector<uint8_t> bytes = a->saveCheckpoint();
        auto b = build(to);
        b->loadCheckpoint(bytes);
        EXPECT_EQ(b->step(), a->step());
        const HostMatrix pa = a->predict(x), pb = b->predict(x);
        EXPECT_LE(maxRelDiff(pb, pa.cast<double>()), 1e-5) << (fromCpu ? "CPU -> GPU" : "GPU -> CPU");
        // Saved again on the other backend, the same tensors come back.
        const SafetensorsFile fa = parseSafetensors(bytes, "a"), fb = parseSafetensors(b->saveCheckpoint(), "b");
        EXPECT_EQ(fa.names, fb.names);
        for (const std::string& name : fa.names) {
            EXPECT_EQ(fa.at(name).shape, fb.at(name).shape) << name;
            EXPECT_EQ(fa.at(name).floats(), fb.at(name).floats()) << name;
        }
        FitOptions more = f;
        more.epochs = 4;
        b->fit(x, y, more);
        EXPECT_EQ(b->step(), 20);
    }
}

TEST(CpuModel, XorReaches100Percent) { expectXorReaches100Percent(test::cpuContext()); }

// The rest of the API on the CPU backend: non-blocking steps, validation split,
// epoch reports, MSE and BCE, a NaN stop that keeps the last good weights,
// and the errors of a CPU model (profiles are of GPU passes).
TEST(CpuModel, ApiMatchesTheGpuEngine) {
    Sequential m(test::cpuContext(), 3);
    m.add(Dense{1, Activation::Linear, 0.01f, Initializer{Initializer::Zeros, 0}});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.2f;
    m.compile(c);
    HostMatrix x = randomMatrix(256, 3, 11), w(3, 1, {0.5f, -2.0f, 1.25f});
    HostMatrix yv = ref::addBias(ref::matmul(x, w), HostMatrix(1, 1, std::vector<float>{0.75f}));
    FitOptions f;
    f.epochs = 150;
    f.batchSize = 64;
    f.validationSplit = 0.25f;  // 192 rows train: 3 steps per epoch
    int epochs = 0;
    Callbacks cb;
    cb.onEpoch = [&](const EpochInfo& e) {
        ++epochs;
        EXPECT_EQ(e.step, 3L * (e.epoch + 1));
        EXPECT_TRUE(std::isfinite(e.valLoss));
    };
    m.beginFit(x, Targets(yv), f, cb);
    EXPECT_TRUE(m.fitting());
    while (m.trainFor(5.0) > 0 && m.fitting()) {
    }
    EXPECT_FALSE(m.fitting());
    EXPECT_EQ(epochs, 150);
    EXPECT_EQ(m.step(), 450);
    HostMatrix got = m.weight(m.layerName(0), "kernel");
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got.data[size_t(i)], w.data[size_t(i)], 1e-3);
    EXPECT_NEAR(m.weight(m.layerName(0), "bias").data[0], 0.75f, 1e-3);
    EXPECT_LT(m.history().back().valLoss, 1e-5);
    EXPECT_TRUE(std::isnan(m.history().back().accuracy));  // regression: no accuracy

    // A learning rate that blows up: the loss goes to Inf, training stops naming
    // the step, and the weights of the last good step stay (finite).
    Sequential bad(test::cpuContext(), 3);
    bad.add(Dense{1});
    CompileOptions big = c;
    big.optimizer.lr = 1e18f;
    bad.compile(big);
    FitOptions once;
    once.epochs = 50;
    once.batchSize = 64;
    const std::string msg = message([&] { bad.fit(x, Targets(yv), once); });
    EXPECT_TRUE(contains(msg, "fit: the loss is")) << msg;
    EXPECT_TRUE(contains(msg, "training stopped and the weights of the last good step are kept")) << msg;
    for (float v : bad.weight(bad.layerName(0), "kernel").data) EXPECT_TRUE(std::isfinite(v));
    EXPECT_FALSE(bad.fitting());

    // profileStep: each op of the step's graph timed on the host; the model does not change.
    const HostMatrix before = m.weight(m.layerName(0), "kernel");
    const long stepBefore = m.step();
    const std::vector<PassTiming> parts = m.profileStep(x, Targets(yv), 8, 3);
    ASSERT_FALSE(parts.empty());
    bool matmul = false;
    for (const PassTiming& t : parts) {
        EXPECT_EQ(t.kernel.rfind("cpu/", 0), 0u) << t.kernel;
        EXPECT_GE(t.ms, 0.0) << t.kernel;
        EXPECT_FALSE(t.gpuTimer);
        matmul = matmul || contains(t.kernel, "matmul");
    }
    EXPECT_TRUE(matmul) << parts.front().kernel;
    EXPECT_EQ(m.step(), stepBefore);
    EXPECT_EQ(m.weight(m.layerName(0), "kernel").data, before.data);
    EXPECT_TRUE(contains(message([&] { m.profileStep(x, Targets(yv), 8, 0); }), "reps must be >= 1"));
    EXPECT_EQ(message([&] { m.setWeight(m.layerName(0), "kernel", HostMatrix(2, 1)); }),
              "setWeight: " + m.layerName(0) + "/kernel is 3x1, got 2x1");
}

#ifndef __EMSCRIPTEN__
// Natively: the 784-256-128-10 MLP on the CPU backend, 2 epochs on 12,000
// Fashion-MNIST images (batch 128, Adam 1e-3), then the 10,000 test images:
// at least 80 %. (The full 60,000 for 2 epochs are the CTest gate
// fashion_mnist_mlp_cpu: >= 85 %.)
TEST(CpuModel, FashionMnistMlpLearns) {
    if (!std::ifstream(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz"))
        FAIL() << "Fashion-MNIST is missing from " << kFashionMnistDir << " (scripts/setup.sh installs it)";
    Dataset train = loadFashionMnist(Split::Train), test = loadFashionMnist(Split::Test);
    train.images.data.resize(size_t(12000) * size_t(train.images.cols));
    train.images.rows = 12000;
    train.labels.resize(12000);
    // The fallback as a user meets it: Auto on a device without float render targets.
    ContextOptions o;
    o.disableFloat32Render = o.disableHalfFloatRender = true;
    Context ctx(o);
    ASSERT_EQ(ctx.backend(), Backend::Cpu) << ctx.caps().backendReason;
    Sequential m(ctx, 784);
    m.add(Dense{256, Activation::ReLU}).add(Dense{128, Activation::ReLU}).add(Dense{10});
    m.compile({});
    FitOptions f;
    f.batchSize = 128;
    f.epochs = 2;
    f.lossEvery = 0;
    m.fit(train.images, train.labels, f);
    const Evaluation e = m.evaluate(test.images, test.labels);
    EXPECT_GE(e.accuracy, 0.80f) << "loss " << e.loss;
}
#endif

}  // namespace cpu_model_test
}  // namespace
