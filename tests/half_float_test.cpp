// The half-float backend (RGBA16F render targets when RGBA32F is missing):
// the backend decision and its report, the kernels of dynamic loss scaling
// against their references, and training with RGBA32F forced off
// (ContextOptions::disableFloat32Render), which runs the fallback on any
// machine that renders RGBA16F (llvmpipe, SwiftShader).
//
// Tolerances: globalMaxAbs is exact (max and abs round nothing); the loss-scale
// step is exact (powers of two, and f / S rounds once in both); the scaled
// softmax cross-entropy gradient is the unscaled one times S to 1e-6 relative
// (S is a power of two: the scaling itself is exact).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "gltrain/backend.hpp"
#include "gltrain/idx.hpp"
#include "gltrain/ops/loss_scale.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/reference/loss_scale.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace half_float_test {

using namespace gltrain;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;

namespace {

// A context whose render targets are RGBA16F (RGBA32F forced off); made once.
Context& halfContext() {
    static Context ctx([] {
        ContextOptions o;
        o.backend = BackendPreference::Gpu;  // Auto could take the CPU backend on a software renderer
        o.disableFloat32Render = true;
        return o;
    }());
    ctx.makeCurrent();
    return ctx;
}

bool haveFashionMnist() {
    std::ifstream f(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz");
    return bool(f);
}

std::string report(const Capabilities& c) {
    std::ostringstream os;
    os << c;
    return os.str();
}

}  // namespace

TEST(Backend, Float32IsChosenWhenRenderable) {
    const Capabilities& c = test::context().caps();
    EXPECT_EQ(c.backend, Backend::GpuFloat32);
    EXPECT_EQ(test::context().renderFormat(), GLenum(GL_RGBA32F));
    EXPECT_NE(c.backendReason.find("EXT_color_buffer_float"), std::string::npos) << c.backendReason;
    EXPECT_NE(report(c).find("backend:                     gpu-float32"), std::string::npos) << report(c);
    EXPECT_EQ(test::context().exactIntegerLimit(), 16777216.0);
}

TEST(Backend, HalfFloatWhenFloat32IsForcedOffAndThePrecisionIsReported) {
    Context& ctx = halfContext();
    const Capabilities& c = ctx.caps();
    EXPECT_TRUE(c.float16Renderable);
    EXPECT_EQ(c.backend, Backend::GpuFloat16);
    EXPECT_EQ(ctx.renderFormat(), GLenum(GL_RGBA16F));
    EXPECT_NE(c.backendReason.find("disableFloat32Render"), std::string::npos) << c.backendReason;
    EXPECT_EQ(c.measuredMantissaBits, 10) << "half floats keep 10 mantissa bits";
    EXPECT_EQ(ctx.exactIntegerLimit(), 2048.0);
    const std::string r = report(c);
    for (const char* want : {"gpu-float16", "RGBA16F", "10 mantissa bits", "4.9e-04", "65504", "loss"})
        EXPECT_NE(r.find(want), std::string::npos) << want << " missing from\n" << r;
    std::cout << r;

    // Rendered values are rounded to half floats; sampled-only data keeps fp32.
    HostMatrix m(1, 3, std::vector<float>{1.0f / 3.0f, 1000.1f, 65504.0f});
    Tensor t(ctx, m);
    const HostMatrix back = t.download();
    EXPECT_EQ(back(0, 0), 0.333251953125f);  // the nearest half float
    EXPECT_EQ(back(0, 1), 1000.0f);
    EXPECT_EQ(back(0, 2), 65504.0f) << "the largest half float";
    EXPECT_EQ(t.geometry().layers(), 1);
    EXPECT_EQ(ctx.pool().stats().liveBytes % 8, 0u);
    Tensor sampled(ctx, m, Layout::Packed, TensorUse::Sampled);
    EXPECT_FALSE(sampled.renderable());
    try {
        sampled.download();
        FAIL() << "a sampled-only tensor cannot be read back on a half-float context";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("sampled-only"), std::string::npos) << e.what();
    }
}

TEST(Backend, NoFloatRenderTargetsIsAClearErrorNamingBothExtensions) {
    ContextOptions o;
    o.backend = BackendPreference::Gpu;  // Auto takes the CPU backend instead (cpu_model_test.cpp)
    o.disableFloat32Render = true;
    o.disableHalfFloatRender = true;
    try {
        Context ctx(o);
        FAIL() << "expected UnsupportedError";
    } catch (const UnsupportedError& e) {
        const std::string msg = e.what();
        for (const char* want : {"no float render targets", "EXT_color_buffer_float", "EXT_color_buffer_half_float",
                                 "disableFloat32Render", "disableHalfFloatRender"})
            EXPECT_NE(msg.find(want), std::string::npos) << want << " missing from: " << msg;
    }
    // The decision itself, from capabilities a device without the extensions reports.
    Capabilities none;
    none.renderer = "a phone";
    try {
        ContextOptions gpuOnly;
        gpuOnly.backend = BackendPreference::Gpu;
        chooseBackend(none, gpuOnly);
        FAIL() << "expected UnsupportedError";
    } catch (const UnsupportedError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("EXT_color_buffer_float is missing"), std::string::npos) << msg;
        EXPECT_NE(msg.find("EXT_color_buffer_half_float is missing"), std::string::npos) << msg;
    }
    Capabilities half = none;
    half.float16Renderable = half.colorBufferHalfFloat = true;
    half.extensions = {"EXT_color_buffer_half_float"};
    const BackendChoice b = chooseBackend(half, ContextOptions{});
    EXPECT_EQ(b.backend, Backend::GpuFloat16);
    EXPECT_NE(b.reason.find("EXT_color_buffer_float is missing"), std::string::npos) << b.reason;
    EXPECT_NE(b.reason.find("EXT_color_buffer_half_float"), std::string::npos) << b.reason;
}

TEST(LossScale, GlobalMaxAbsMatchesTheReference) {
    for (Context* ctx : {&test::context(), &test::smallContext()}) {
        ctx->makeCurrent();  // both accessors ran to make the list: the last one is current
        std::vector<HostMatrix> hs = {randomMatrix(127, 129, 31, -3.0f, -1.0f), randomMatrix(1, 7, 32),
                                      randomMatrix(70, 3, 33), randomMatrix(1, 1, 34)};
        hs[2](69, 2) = -5.5f;  // the largest magnitude, negative, in the last texel of a row
        const Layout layouts[] = {Layout::Packed, Layout::Unpacked, Layout::Packed, Layout::PackedRows4};
        std::vector<Tensor> ts;
        std::vector<const Tensor*> ptrs;
        std::vector<const HostMatrix*> hp;
        for (size_t i = 0; i < hs.size(); ++i) ts.emplace_back(*ctx, hs[i], layouts[i]);
        for (size_t i = 0; i < hs.size(); ++i) ptrs.push_back(&ts[i]), hp.push_back(&hs[i]);
        Tensor out(*ctx, 1, 1);
        globalMaxAbs(ptrs, out);
        EXPECT_EQ(out.download()(0, 0), ref::globalMaxAbs(hp));
        EXPECT_EQ(out.download()(0, 0), 5.5f);
        // Padding lanes and negatives never count; an inf or a NaN anywhere shows.
        hs[1](0, 3) = std::numeric_limits<float>::infinity();
        ts[1].upload(hs[1]);
        globalMaxAbs(ptrs, out);
        EXPECT_TRUE(std::isinf(out.download()(0, 0)));
        hs[0](100, 100) = std::nanf("");
        ts[0].upload(hs[0]);
        globalMaxAbs(ptrs, out);
        EXPECT_TRUE(std::isnan(out.download()(0, 0)));
        EXPECT_TRUE(std::isnan(ref::globalMaxAbs(hp)));
    }
}

TEST(LossScale, StepMatchesTheReference) {
    Context& ctx = halfContext();
    LossScaling cfg;
    cfg.growthInterval = 3;
    struct Case {
        float scale, good, gmax, loss, norm, maxNorm;
    };
    const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
    const Case cases[] = {
        {1024, 0, 3.0f, 0.5f, 0, 0},          // a good step: counts
        {1024, 2, 3.0f, 0.5f, 0, 0},          // the growthInterval-th good step: doubles
        {32768, 2, 3.0f, 0.5f, 0, 0},         // but not past 32768
        {1024, 2, inf, 0.5f, 0, 0},           // overflow: halves, skips
        {1024, 2, 65504.0f, 0.5f, 0, 0},      // saturated at the largest half float: overflow too
        {1, 1, nan, 0.5f, 0, 0},              // not below 1
        {256, 1, 3.0f, nan, 0, 0},            // a NaN loss skips without changing the scale
        {512, 0, 3.0f, 0.5f, 5120.0f, 2.0f},  // clipping: the norm is unscaled first (10 > 2: f = 0.2)
        {512, 0, 3.0f, 0.5f, 512.0f, 2.0f},   // norm 1 <= 2: no clipping
    };
    for (const Case& c : cases) {
        PingPong state(ctx, HostMatrix(1, 2, std::vector<float>{c.scale, c.good}));
        Tensor gmax(ctx, HostMatrix(1, 1, std::vector<float>{c.gmax})),
            loss(ctx, HostMatrix(1, 1, std::vector<float>{c.loss}));
        Tensor norm(ctx, HostMatrix(1, 1, std::vector<float>{c.norm}));
        Tensor factor(ctx, 1, 2), guard(ctx, 1, 2);
        PassList l;
        recordLossScaleStep(l, cfg, state, gmax, &loss, c.maxNorm > 0 ? &norm : nullptr, c.maxNorm, factor, guard);
        l.run();
        const ref::LossScaleStep want = ref::lossScaleStep({c.scale, c.good}, c.gmax, c.loss, cfg.growthInterval,
                                                           kMinLossScale, kMaxLossScale, kHalfMax, c.norm, c.maxNorm);
        const HostMatrix next = state.back().download();
        const std::string at = "scale " + std::to_string(c.scale) + " gmax " + std::to_string(c.gmax);
        EXPECT_EQ(next(0, 0), want.next.scale) << at;
        EXPECT_EQ(next(0, 1), want.next.goodSteps) << at;
        // The factor is stored as a half float: c / S rounds there.
        EXPECT_NEAR(factor.download()(0, 0), want.factor, want.factor * 1e-3) << at;
        EXPECT_EQ(std::isnan(guard.download()(0, 0)), want.skip) << at;
    }
    LossScaling bad;
    bad.initialScale = 1000.0f;
    EXPECT_THROW(bad.validate(), ArgumentError);
    bad = LossScaling{};
    bad.growthInterval = 4096;
    EXPECT_THROW(bad.validate(), ArgumentError);
}

TEST(LossScale, ScaledLossGradientIsTheGradientTimesTheScale) {
    Context& ctx = test::context();
    const HostMatrix logits = randomMatrix(37, 10, 41, -3.0f, 3.0f);
    HostMatrix labels(37, 1);
    for (int r = 0; r < 37; ++r) labels(r, 0) = float((r * 7) % 10);
    Tensor x(ctx, logits), y(ctx, labels, Layout::Unpacked), g(ctx, 37, 10), gs(ctx, 37, 10);
    Tensor scale(ctx, HostMatrix(1, 2, std::vector<float>{4096.0f, 0.0f}));
    softmaxCrossEntropy(x, y, g);
    PassList l;
    recordSoftmaxCrossEntropy(l, x, y, gs, nullptr, nullptr, &scale);
    l.run();
    const HostMatrix a = g.download(), b = gs.download();
    for (size_t i = 0; i < a.data.size(); ++i) EXPECT_NEAR(b.data[i], a.data[i] * 4096.0f, 1e-6 * 4096.0f) << i;
    Tensor pred(ctx, randomMatrix(9, 3, 42)), target(ctx, randomMatrix(9, 3, 43)), m(ctx, 9, 3), ms(ctx, 9, 3);
    mse(pred, target, &m);
    PassList l2;
    recordMse(l2, pred, target, &ms, nullptr, nullptr, &scale);
    l2.run();
    const HostMatrix c = m.download(), d = ms.download();
    for (size_t i = 0; i < c.data.size(); ++i) EXPECT_NEAR(d.data[i], c.data[i] * 4096.0f, 1e-6 * 4096.0f) << i;
}

TEST(HalfFloatTraining, XorReaches100Percent) {
    Context& ctx = halfContext();
    Sequential m(ctx, 2);
    m.add(Dense{16, Activation::Tanh}).add(Dense{2});
    CompileOptions c;
    c.optimizer.lr = 0.05f;
    c.seed = 3;
    m.compile(c);
    EXPECT_EQ(m.lossScale(), 1024.0f) << "on by default for half floats";
    FitOptions f;
    f.epochs = 300;
    f.batchSize = 4;
    f.lossEvery = 0;
    m.fit(HostMatrix(4, 2, {0, 0, 0, 1, 1, 0, 1, 1}), std::vector<int>{0, 1, 1, 0}, f);
    Evaluation e = m.evaluate(HostMatrix(4, 2, {0, 0, 0, 1, 1, 0, 1, 1}), std::vector<int>{0, 1, 1, 0});
    EXPECT_EQ(e.accuracy, 1.0f) << "loss " << e.loss;
    EXPECT_LT(e.loss, 0.05f);
    EXPECT_GE(m.lossScale(), 1024.0f) << "300 good steps: the scale grew";
}

TEST(HalfFloatTraining, OverflowSkipsTheStepAndHalvesTheScale) {
    // Targets of 100: the loss (about 1e4) fits in a half float, but its scaled
    // gradients (2 * 100 / 64 * 32768 per row, then summed over the batch) do
    // not: those steps are skipped, the scale falls, the weights stay finite.
    // (Targets of 1e4 would make the loss itself 1e8, past 65504: an Inf loss,
    // which NanPolicy::Stop stops on, as it should.)
    Context& ctx = halfContext();
    Sequential m(ctx, 3);
    m.add(Dense{1});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 1e-6f;
    c.lossScaling.initialScale = 32768.0f;
    m.compile(c);
    HostMatrix x = randomMatrix(64, 3, 51, 0.5f, 1.0f), y(64, 1, 100.0f);
    FitOptions f;
    f.epochs = 4;
    f.batchSize = 64;
    m.fit(x, y, f);
    EXPECT_LT(m.lossScale(), 32768.0f);
    for (float v : m.weight("dense_0", "kernel").data) EXPECT_TRUE(std::isfinite(v));
}

// Batch normalization on RGBA16F: after 12 steps the moving averages agree with
// the CPU backend's within half-float rounding (2e-2 of their scale), and so do
// the predictions that use them. A step with targets of 1e30 (uploaded inputs
// stay fp32: an Inf loss, which llvmpipe's half floats saturate at 65504, and
// overflowed gradients) is skipped by loss scaling's step guard, and leaves them
// exactly as they were; its loss reads as not finite, and NanPolicy::Stop stops on it.
TEST(HalfFloatTraining, BatchNormMovingAveragesTrackTheCpuBackend) {
    HostMatrix x = randomMatrix(48, 5, 81), good = randomMatrix(48, 1, 82), bad(48, 1, 1e30f);
    auto train = [&](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, 5);
        m->add(Dense{4, Activation::Linear}).add(BatchNormalization{0.8f}).add(Dense{1});
        CompileOptions c;
        c.loss = LossKind::MeanSquaredError;
        c.optimizer.kind = OptimizerKind::SGD;
        c.optimizer.lr = 0.05f;
        c.seed = 6;
        c.onNaN = NanPolicy::Skip;
        m->compile(c);
        FitOptions f;
        f.epochs = 2;
        f.batchSize = 8;
        m->fit(x, Targets(good), f);
        return m;
    };
    auto half = train(halfContext());
    auto cpu = train(test::cpuContext());
    const std::string bn = half->layerName(1);
    for (const char* which : {"moving_mean", "moving_variance"}) {
        const HostMatrix h = half->weight(bn, which), c = cpu->weight(bn, which);
        EXPECT_LE(maxRelDiff(h, c.cast<double>()), 2e-2) << which;
    }
    EXPECT_LE(maxRelDiff(half->predict(x), cpu->predict(x).cast<double>()), 2e-2);
    const HostMatrix mean = half->weight(bn, "moving_mean"), var = half->weight(bn, "moving_variance");
    FitOptions more;
    more.epochs = 3;
    more.batchSize = 8;
    std::vector<float> losses;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& st) { losses.push_back(st.loss); };
    half->fit(x, Targets(bad), more, cb);
    EXPECT_EQ(half->weight(bn, "moving_mean").data, mean.data);
    EXPECT_EQ(half->weight(bn, "moving_variance").data, var.data);
    // The loss is reported as not finite whether the driver saturated it at 65504
    // (llvmpipe: reported as Inf) or not (SwiftShader: NaN, from Inf - Inf in the
    // mean), so NanPolicy::Stop stops on it.
    ASSERT_EQ(losses.size(), 6u);
    for (float l : losses) EXPECT_FALSE(std::isfinite(l)) << l;
    Sequential stop(halfContext(), 5);
    stop.add(Dense{1});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    stop.compile(c);
    FitOptions once;
    once.batchSize = 8;
    try {
        stop.fit(x, Targets(bad), once);
        ADD_FAILURE() << "an overflowing loss did not stop training";
    } catch (const TrainingError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.find("fit: the loss is Inf at step 1") != std::string::npos ||
                    what.find("fit: the loss is NaN at step 1") != std::string::npos)
            << what;
    }
}

TEST(HalfFloatTraining, FashionMnistMlpReachesItsBand) {
    if (!haveFashionMnist()) GTEST_SKIP() << kFashionMnistDir << " is missing (dataset-fashion-mnist)";
    const Dataset train = loadFashionMnist(Split::Train), test = loadFashionMnist(Split::Test);
    const int n = 12000;  // the first 12,000 training images, 2 epochs: seconds on llvmpipe
    HostMatrix x(n, 784, std::vector<float>(train.images.data.begin(), train.images.data.begin() + size_t(n) * 784));
    std::vector<int> y(train.labels.begin(), train.labels.begin() + n);
    Context& ctx = halfContext();
    Sequential m(ctx, 784);
    m.add(Dense{64, Activation::ReLU}).add(Dense{10});
    m.compile({});  // Adam 1e-3
    FitOptions f;
    f.epochs = 2;
    f.batchSize = 64;
    f.lossEvery = 0;
    m.fit(x, y, f);
    const Evaluation e = m.evaluate(test.images, test.labels);
    std::cout << "half-float Fashion-MNIST 784-64-10, 2 epochs on 12,000 images: test accuracy " << e.accuracy
              << ", loss " << e.loss << ", loss scale " << m.lossScale() << "\n";
    // fp32 reaches about 0.83 here, half floats 0.80-0.82 (measured, llvmpipe); the band is 0.78.
    EXPECT_GE(e.accuracy, 0.78f);
}

}  // namespace half_float_test
}  // namespace
