// Lost GL contexts: every entry throws ContextLostError while the context is
// lost and changes nothing; after Context::restoreContext() (natively a new
// EGL context: every texture and program really is gone) tensors of the old
// context say so, and a model rebuilds itself from its host-side snapshot —
// mid-fit it replays the steps since the snapshot, so training finishes with
// the weights an uninterrupted run reaches (bit for bit: the replay runs the
// same passes on the same values) and onStep sees every step once, in order.
//
// In a browser restoring is asynchronous (the webglcontextrestored event comes
// in a later task), so there only the lost half runs here;
// tests/web/api_tests.js covers the restore with WEBGL_lose_context.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gltrain/ops/elementwise.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace context_lost_test {

using namespace gltrain;
using gltrain::test::randomMatrix;

namespace {

template <class F>
std::string lostMessage(F&& f) {
    try {
        f();
    } catch (const ContextLostError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("(not a ContextLostError) ") + e.what();
    }
    return "(no exception)";
}

// 240 rows of 12 features in 3 classes, a little noisy.
void data(HostMatrix& x, std::vector<int>& y) {
    x = randomMatrix(240, 12, 61, -0.5f, 0.5f);
    y.resize(240);
    for (int r = 0; r < 240; ++r) {
        y[size_t(r)] = r % 3;
        x(r, r % 3) += 1.0f;
    }
}

void build(Sequential& m) {
    m.add(Dense{16, Activation::ReLU}).add(Dropout{0.1f}).add(Dense{3});
    CompileOptions c;
    c.optimizer.lr = 0.01f;
    c.seed = 7;
    m.compile(c);
}

}  // namespace

TEST(ContextLost, CallsWhileLostThrowAndChangeNothing) {
    ContextOptions gpu;
    gpu.backend = BackendPreference::Gpu;  // a CPU-backend model (Auto on a software renderer) needs no GL
    Context ctx(gpu);
    Tensor t(ctx, randomMatrix(5, 7, 1)), sum(ctx, 5, 7);
    PassList l;
    recordAdd(l, t, t, sum);  // recorded before the loss, run after it
    Sequential m(ctx, 12);
    build(m);
    HostMatrix x;
    std::vector<int> y;
    data(x, y);
    const HostMatrix before = m.predict(x);
    const std::vector<uint8_t> compiled = m.saveCheckpoint();
    ctx.loseContext();
    EXPECT_TRUE(ctx.lost());
    // The snapshot needs no GPU: the compiled state, made again on the host.
    EXPECT_EQ(m.snapshotCheckpoint(), compiled);
    for (const std::string& msg :
         {lostMessage([&] { t.download(); }), lostMessage([&] { t.upload(randomMatrix(5, 7, 2)); }),
          lostMessage([&] { Tensor u(ctx, 2, 2); }), lostMessage([&] { l.run(); }), lostMessage([&] { m.predict(x); }),
          lostMessage([&] { m.evaluate(x, y); }), lostMessage([&] { m.fit(x, y); }),
          lostMessage([&] { m.saveCheckpoint(); }), lostMessage([&] { m.weight("dense_0", "kernel"); })}) {
        EXPECT_NE(msg.find("the GL context is lost"), std::string::npos) << msg;
    }
    EXPECT_NE(lostMessage([&] { ctx.loseContext(); }).find("already lost"), std::string::npos);
#ifndef __EMSCRIPTEN__
    const Capabilities lostDevice = ctx.caps();
    EXPECT_EQ(lostDevice.restoresChecked, 0);
    ctx.restoreContext();
    EXPECT_FALSE(ctx.lost());
    // The restored context was queried again: the same device, so it carries on.
    EXPECT_EQ(ctx.caps().restoresChecked, 1);
    EXPECT_EQ(ctx.caps().renderer, lostDevice.renderer);
    EXPECT_EQ(ctx.caps().extensions, lostDevice.extensions);  // queried afresh, not appended to
    EXPECT_EQ(ctx.caps().float32Renderable, lostDevice.float32Renderable);
    EXPECT_EQ(ctx.caps().measuredMantissaBits, lostDevice.measuredMantissaBits);  // measured again: 0 until then
    EXPECT_NE(lostMessage([&] { t.download(); }).find("lost with the GL context"), std::string::npos);
    EXPECT_NE(lostMessage([&] { l.run(); }).find("lost with the GL context"), std::string::npos);
    // The model comes back from its snapshot (here: the compiled state) unchanged.
    EXPECT_EQ(m.predict(x).data, before.data);
    EXPECT_EQ(m.restorations(), 1);
    Tensor fresh(ctx, randomMatrix(5, 7, 3));
    EXPECT_EQ(fresh.download().data, randomMatrix(5, 7, 3).data);
    EXPECT_THROW(ctx.restoreContext(), ArgumentError);
#endif
}

#ifndef __EMSCRIPTEN__
namespace {
// 4 epochs in batches of `batch`, the context lost after each step of
// `losses` (.first), each time restored from the snapshot of step .second.
void expectFitResumesFromTheSnapshots(int batch, const std::vector<std::pair<long, long>>& losses, long totalSteps) {
    HostMatrix x;
    std::vector<int> y;
    data(x, y);
    FitOptions f;
    f.epochs = 4;
    f.batchSize = batch;
    f.snapshotEvery = 25;
    f.validationSplit = 0.0f;

    ContextOptions gpu;
    gpu.backend = BackendPreference::Gpu;  // Auto could train on the CPU backend on a software renderer
    Context ctx(gpu);
    Sequential a(ctx, 12);
    build(a);
    a.fit(x, y, f);
    const std::vector<uint8_t> uninterrupted = a.saveCheckpoint();
    const HostMatrix aPredicts = a.predict(x);

    Sequential b(ctx, 12);
    build(b);
    std::vector<long> reported;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { reported.push_back(s.step); };
    b.beginFit(x, y, f, cb);
    size_t next = 0;
    for (;;) {
        if (next < losses.size() && b.step() == losses[next].first) {
            ctx.loseContext();
            // What the restore will start from can be kept while the context is lost.
            const SafetensorsFile snap = parseSafetensors(b.snapshotCheckpoint(), "snapshot");
            EXPECT_EQ(snap.metadata.at("step"), std::to_string(losses[next].second));
            EXPECT_EQ(b.snapshotStep(), losses[next].second);
            EXPECT_THROW(b.stepOnce(), ContextLostError);
            EXPECT_THROW(b.trainFor(5), ContextLostError);
            EXPECT_TRUE(b.fitting()) << "the fit waits for the context";
            ctx.restoreContext();
            EXPECT_EQ(b.restore(), losses[next].second) << "the last snapshot before step " << losses[next].first;
            ++next;
            continue;
        }
        if (!b.stepOnce()) break;
    }
    EXPECT_EQ(next, losses.size());
    EXPECT_EQ(b.restorations(), 2);
    EXPECT_EQ(b.step(), totalSteps);
    ASSERT_EQ(reported.size(), size_t(totalSteps));
    for (size_t i = 0; i < reported.size(); ++i) ASSERT_EQ(reported[i], long(i + 1)) << "steps continuous";
    EXPECT_EQ(b.history().size(), 4u);
    EXPECT_EQ(b.saveCheckpoint(), uninterrupted) << "weights, optimizer state and step as without the loss";
    // The model that was not training comes back from its snapshot at the end of
    // its fit, once, on its first call after the losses.
    EXPECT_EQ(a.restorations(), 0);
    EXPECT_EQ(a.predict(x).data, aPredicts.data);
    EXPECT_EQ(a.restorations(), 1);

    // Natively the same path restores a model from a checkpoint file.
    const std::string path = ::testing::TempDir() + "gltrain_context_lost.safetensors";
    b.save(path);
    ctx.loseContext();
    ctx.restoreContext();
    Sequential c(ctx, 12);
    build(c);
    c.load(path);
    EXPECT_EQ(c.saveCheckpoint(), uninterrupted);
    std::remove(path.c_str());
}
}  // namespace
#endif

TEST(ContextLost, FitResumesFromTheSnapshotAndEndsWhereAnUninterruptedRunEnds) {
#ifdef __EMSCRIPTEN__
    GTEST_SKIP() << "restoring is asynchronous in a browser (tests/web/api_tests.js)";
#else
    // 30 steps an epoch. Lost at step 32 (the replay from the snapshot of step 25
    // passes the end of epoch 0 again) and at step 57 (7 steps past the snapshot of step 50).
    expectFitResumesFromTheSnapshots(8, {{32, 25}, {57, 50}}, 120);
#endif
}

// Batches of 7: 34 full steps and one of 2 rows an epoch (tests/fit_ragged_test.cpp).
// Lost right after each of the first two epochs' short steps: the replays run
// them, from their own plan, and the epochs' ends again.
TEST(ContextLost, FitWithAShortLastBatchResumesFromTheSnapshot) {
#ifdef __EMSCRIPTEN__
    GTEST_SKIP() << "restoring is asynchronous in a browser (tests/web/api_tests.js)";
#else
    expectFitResumesFromTheSnapshots(7, {{35, 25}, {70, 50}}, 140);
#endif
}

// An empty snapshot stands for the compiled state, which snapshotCheckpoint()
// makes on the host from the seed: byte for byte what saveCheckpoint() reads
// from the GPU, for every kind of variable (kernels, biases, BN's parameters
// and statistics, Adam's two slots).
// A state larger than GpuEngine::kSnapshotBytesPerStep is taken from its
// fenced reads over several steps, so no one step stalls for all of it
// (issue 41). Until the last part is in, the snapshot before it stays the
// one a lost context restores; the fit still ends where an uninterrupted one does
// (the snapshot it restores is of step 10 though steps 11-14 ran during its reads).
// Each snapshot, once in, is byte for byte the checkpoint of its step, never a
// mix of steps: so is the one a context lost mid-read restores.
TEST(ContextLost, ALargeSnapshotIsTakenOverSeveralSteps) {
#ifdef __EMSCRIPTEN__
    GTEST_SKIP() << "restoring is asynchronous in a browser (tests/web/api_tests.js)";
#else
    HostMatrix x;
    std::vector<int> y;
    data(x, y);
    auto make = [&](Sequential& m) {
        // 12-1024-1024-3 with Adam: 1,065,987 parameters, 3 values each: 12.8 MB, read
        // back from the GPU-side copy in parts of at most 4 MiB, one a step: at least 4 steps.
        m.add(Dense{1024, Activation::ReLU}).add(Dense{1024, Activation::ReLU}).add(Dense{3});
        CompileOptions c;
        c.seed = 3;
        m.compile(c);
    };
    FitOptions f;
    f.epochs = 1;
    f.batchSize = 8;  // 30 steps
    f.snapshotEvery = 10;
    ContextOptions gpu;
    gpu.backend = BackendPreference::Gpu;
    Context ctx(gpu);
    Sequential a(ctx, 12);
    make(a);
    a.beginFit(x, y, f);
    std::vector<uint8_t> atStep10, atStep20;
    while (a.stepOnce()) {
        if (a.step() == 10) atStep10 = a.saveCheckpoint();
        if (a.step() == 20) atStep20 = a.saveCheckpoint();
    }
    const std::vector<uint8_t> uninterrupted = a.saveCheckpoint();

    Sequential b(ctx, 12);
    make(b);
    b.beginFit(x, y, f);
    std::vector<long> snapshotAfter;  // snapshotStep() after each step
    bool lost = false;
    while (b.stepOnce()) {
        snapshotAfter.push_back(b.snapshotStep());
        if (b.step() == 22 && !lost) {
            // The snapshot of step 20 is still being taken (its reads began at step 21 at
            // the earliest): the one of step 10 is what the restore starts from.
            EXPECT_EQ(b.snapshotStep(), 10);
            EXPECT_TRUE(b.snapshotCheckpoint() == atStep10) << "the restore point is step 10's state, whole";
            ctx.loseContext();
            ctx.restoreContext();
            EXPECT_EQ(b.restore(), 10);
            lost = true;
        }
        // Step 20's snapshot again (the replay took it), read while steps 21-28 ran.
        if (b.step() == 29) EXPECT_TRUE(b.snapshotCheckpoint() == atStep20) << "snapshot of step " << b.snapshotStep();
    }
    ASSERT_GE(snapshotAfter.size(), 12u);
    EXPECT_EQ(snapshotAfter[9], 0) << "step 10's snapshot is not taken at once";
    EXPECT_EQ(snapshotAfter[10], 0) << "nor at the next step";
    EXPECT_EQ(snapshotAfter[11], 0) << "nor at the one after";
    EXPECT_EQ(snapshotAfter[19], 10) << "it is in before the next is due";
    EXPECT_EQ(b.step(), 30);
    EXPECT_EQ(b.saveCheckpoint(), uninterrupted);
#endif
}

TEST(ContextLost, TheCompiledStatesSnapshotIsMadeOnTheHostAsTheGpuHoldsIt) {
    ContextOptions gpu;
    gpu.backend = BackendPreference::Gpu;
    Context ctx(gpu);
    Sequential m(ctx, Shape3{9, 9, 2});
    m.add(Conv2D{3, 3, 1, Padding::Same}).add(BatchNormalization{}).add(ActivationLayer{Activation::ReLU});
    m.add(MaxPool2D{2}).add(Flatten{}).add(Dense{5, Activation::Tanh}).add(Dense{3});
    for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::SGD, OptimizerKind::RMSProp}) {
        CompileOptions c;
        c.optimizer.kind = kind;
        c.seed = 11;
        m.compile(c);
        EXPECT_EQ(m.snapshotStep(), 0);
        EXPECT_EQ(m.snapshotCheckpoint(), m.saveCheckpoint()) << optimizerName(kind);
    }
    Sequential notCompiled(ctx, 4);
    EXPECT_THROW(notCompiled.snapshotCheckpoint(), ArgumentError);
}

// What a restored device must still offer (restoreShortfalls), on the
// capabilities this device reports, with one figure changed at a time: no real
// device here can come back lacking them, so the rule is tested on its own;
// the restore above runs it on the real one.
TEST(ContextLost, ARestoredDeviceMustHoldWhatTheLostOneHeld) {
    ContextOptions gpu;
    gpu.backend = BackendPreference::Gpu;
    Context ctx(gpu);
    const Capabilities was = ctx.caps();
    const int inUse = ctx.maxTextureSize();
    EXPECT_TRUE(restoreShortfalls(was, was, inUse).empty());
    auto only = [&](auto change) {
        Capabilities now = was;
        change(now);
        const std::vector<std::string> s = restoreShortfalls(was, now, inUse);
        return s.size() == 1 ? s[0] : "(" + std::to_string(s.size()) + " shortfalls)";
    };
    // Another renderer, more of everything, other extensions: it carries on.
    EXPECT_EQ(only([](Capabilities& c) {
                  c.renderer = "another GPU";
                  c.maxDrawBuffers += 8;
                  c.extensions.clear();
              }),
              "(0 shortfalls)");
    EXPECT_EQ(only([](Capabilities& c) { c.float32Renderable = false; }), "RGBA32F render targets are not complete");
    EXPECT_EQ(only([&](Capabilities& c) { c.maxTextureSize = inUse / 2; }),
              "MAX_TEXTURE_SIZE is " + std::to_string(inUse / 2) + ", tensors are paged by " + std::to_string(inUse));
    EXPECT_EQ(only([](Capabilities& c) { c.maxArrayTextureLayers = 1; }),
              "MAX_ARRAY_TEXTURE_LAYERS is 1, was " + std::to_string(was.maxArrayTextureLayers));
    EXPECT_EQ(only([](Capabilities& c) { c.maxDrawBuffers = 4; }),
              "MAX_DRAW_BUFFERS is 4, was " + std::to_string(was.maxDrawBuffers));
    EXPECT_EQ(only([](Capabilities& c) { c.maxTextureImageUnits = 2; }),
              "MAX_TEXTURE_IMAGE_UNITS is 2, was " + std::to_string(was.maxTextureImageUnits));
    // The half-float backend needs RGBA16F targets, not RGBA32F ones.
    Capabilities half = was;
    half.backend = Backend::GpuFloat16;
    Capabilities noFloat32 = half;
    noFloat32.float32Renderable = false;
    EXPECT_TRUE(restoreShortfalls(half, noFloat32, inUse).empty());
    noFloat32.float16Renderable = false;
    EXPECT_EQ(restoreShortfalls(half, noFloat32, inUse),
              std::vector<std::string>{"RGBA16F render targets are not complete"});
    // Compute shaders matter only where the passes run as them.
    Capabilities compute = was, noCompute = was;
    compute.computeKernels = false;
    noCompute.computeShaders = false;
    EXPECT_TRUE(restoreShortfalls(compute, noCompute, inUse).empty());
    compute.computeKernels = true;
    EXPECT_EQ(restoreShortfalls(compute, noCompute, inUse),
              std::vector<std::string>{"no compute shaders (every pass runs as one)"});
    // The vertex outputs transform feedback captures matter only where matmul runs by feedback.
    Capabilities feedback = was, fewer = was;
    feedback.feedbackKernels = false;
    fewer.maxFeedbackComponents = was.maxFeedbackComponents - 4;
    EXPECT_TRUE(restoreShortfalls(feedback, fewer, inUse).empty());
    feedback.feedbackKernels = true;
    EXPECT_EQ(
        restoreShortfalls(feedback, fewer, inUse),
        std::vector<std::string>{"the feedback components limit is " + std::to_string(fewer.maxFeedbackComponents) +
                                 ", was " + std::to_string(was.maxFeedbackComponents)});
}

}  // namespace context_lost_test
}  // namespace
