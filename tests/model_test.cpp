// The training engine: Sequential, fit/evaluate/predict, step replay,
// checkpoints, bad numbers, shape errors.
#include <gtest/gtest.h>

#include <cstdio>

#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_test {

using namespace gltrain;
using gltrain::test::randomMatrix;

namespace {

HostMatrix xorX() { return HostMatrix(4, 2, {0, 0, 0, 1, 1, 0, 1, 1}); }
std::vector<int> xorY() { return {0, 1, 1, 0}; }

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

TEST(Model, XorReaches100Percent) {
    Context& ctx = test::context();
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
    HostMatrix p = m.predict(xorX());
    for (int r = 0; r < 4; ++r) EXPECT_EQ(p(r, 1) > p(r, 0), xorY()[size_t(r)] == 1) << "row " << r;
}

TEST(Model, LinearRegressionRecoversWeights) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(256, 3, 11), w(3, 1, {0.5f, -2.0f, 1.25f});
    HostMatrix y = ref::addBias(ref::matmul(x, w), HostMatrix(1, 1, std::vector<float>{0.75f}));
    Sequential m(ctx, 3);
    m.add(Dense{1, Activation::Linear, 0.01f, Initializer{Initializer::Zeros, 0}});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.2f;
    m.compile(c);
    FitOptions f;
    f.epochs = 150;
    f.batchSize = 64;
    f.lossEvery = 0;
    m.fit(x, Targets(y), f);
    HostMatrix got = m.weight(m.layerName(0), "kernel"), bias = m.weight(m.layerName(0), "bias");
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got.data[size_t(i)], w.data[size_t(i)], 1e-3);
    EXPECT_NEAR(bias.data[0], 0.75f, 1e-3);
}

TEST(Model, GpuTrainingMatchesCpuReferenceFor20Steps) { test::expectMlpAdamStepsMatchTheReference(test::context()); }

// 70 rows in batches of 16: each epoch 4 full steps and one of 6 rows, from
// the two plans beginFit records (the loss read every 50 steps: from the short one).
TEST(Model, SteadyStateAllocatesNothing) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(70, 8, 31);
    std::vector<int> y(70);
    for (int i = 0; i < 70; ++i) y[size_t(i)] = i % 4;
    Sequential m(ctx, 8);
    m.add(Dense{16, Activation::ReLU}).add(Dropout{0.25f}).add(Dense{4});
    CompileOptions c;
    c.clipNorm = 1.0f;
    m.compile(c);
    FitOptions f;
    f.epochs = 1000 / 5;
    f.batchSize = 16;
    f.lossEvery = 50;
    PoolStats at10{}, at1000{};
    size_t programsAt10 = 0, programsAt1000 = 0;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) {
        if (s.step == 10) at10 = ctx.pool().stats(), programsAt10 = ctx.shaders().compiledCount();
        if (s.step == 1000) at1000 = ctx.pool().stats(), programsAt1000 = ctx.shaders().compiledCount();
    };
    m.fit(x, y, f, cb);
    EXPECT_EQ(m.step(), 1000);
    EXPECT_GT(at10.live, 0u);
    EXPECT_EQ(at1000.live, at10.live);
    EXPECT_EQ(at1000.liveBytes, at10.liveBytes);
    EXPECT_EQ(at1000.created, at10.created) << "no texture created after step 10";
    EXPECT_EQ(programsAt1000, programsAt10) << "no shader compiled after step 10";
}

TEST(Model, CheckpointRoundTripAndResumeAreExact) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(48, 6, 41);
    std::vector<int> y(48);
    for (int i = 0; i < 48; ++i) y[size_t(i)] = (i * 5) % 3;
    auto build = [&](Sequential& m) {
        m.add(Dense{10, Activation::GELU}).add(Dropout{0.2f}).add(Dense{3});
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::AdamW;
        c.optimizer.weightDecay = 0.01f;
        c.seed = 9;
        m.compile(c);
    };
    FitOptions f;
    f.epochs = 6;
    f.batchSize = 16;  // 3 steps per epoch, 18 in all
    f.lossEvery = 0;
    Sequential a(ctx, 6);
    build(a);
    FitOptions first = f;
    first.epochs = 2;
    a.fit(x, y, first);
    std::vector<uint8_t> bytes = a.saveCheckpoint();
    a.fit(x, y, f);  // continues from step 6 to 18
    HostMatrix straight = a.predict(x);

    Sequential b(ctx, 6);
    build(b);
    b.loadCheckpoint(bytes);
    EXPECT_EQ(b.step(), 6);
    b.fit(x, y, f);
    EXPECT_EQ(b.step(), 18);
    EXPECT_EQ(b.predict(x).data, straight.data) << "resumed training must be bit-exact";

    // A round trip through a file (atomic save) gives identical predictions.
    std::string path = ::testing::TempDir() + "gltrain_ckpt.safetensors";
    b.save(path);
    Sequential c(ctx, 6);
    build(c);
    c.load(path);
    EXPECT_EQ(c.predict(x).data, straight.data);
    std::remove(path.c_str());
}

TEST(Model, CorruptOrMismatchedCheckpointLeavesModelUnchanged) {
    Context& ctx = test::context();
    Sequential m(ctx, 4);
    m.add(Dense{5, Activation::ReLU}).add(Dense{2});
    m.compile({});
    HostMatrix x = randomMatrix(3, 4, 51);
    HostMatrix before = m.predict(x);
    std::vector<uint8_t> good = m.saveCheckpoint();

    std::vector<uint8_t> truncated(good.begin(), good.begin() + std::ptrdiff_t(good.size() / 2));
    EXPECT_NE(message([&] { m.loadCheckpoint(truncated); }).find("<checkpoint>"), std::string::npos);
    EXPECT_EQ(m.predict(x).data, before.data);

    Sequential other(ctx, 4);
    other.add(Dense{6, Activation::ReLU}).add(Dense{2});
    other.compile({});
    std::string msg = message([&] { m.loadCheckpoint(other.saveCheckpoint()); });
    EXPECT_NE(msg.find("dense_0/kernel' has shape [4, 6], the model needs [4, 5]"), std::string::npos) << msg;
    EXPECT_EQ(m.predict(x).data, before.data);

    Sequential renamed(ctx, 4);
    renamed.add(Dense{5, Activation::ReLU, 0.01f, {}, {Initializer::Zeros, 0}, 0, "hidden"}).add(Dense{2});
    renamed.compile({});
    msg = message([&] { m.loadCheckpoint(renamed.saveCheckpoint()); });
    EXPECT_NE(msg.find("'dense_0/kernel' is missing"), std::string::npos) << msg;
    EXPECT_EQ(m.predict(x).data, before.data);
}

TEST(Model, NanLossStopsTrainingNamingTheStepAndKeepsWeights) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(8, 3, 61);
    HostMatrix y(8, 1, 1.0f);
    Sequential m(ctx, 3);
    m.add(Dense{1});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 1e18f;  // diverges: the loss overflows to Inf within a few steps
    m.compile(c);
    FitOptions f;
    f.epochs = 50;
    f.batchSize = 8;
    // The weights that gave the last finite loss: those before its step.
    HostMatrix before = m.weight(m.layerName(0), "kernel"), lastGood;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) {
        if (std::isfinite(s.loss)) lastGood = before;
        before = m.weight(m.layerName(0), "kernel");
    };
    std::string msg = message([&] { m.fit(x, Targets(y), f, cb); });
    EXPECT_NE(msg.find("the loss is"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at step " + std::to_string(m.step())), std::string::npos) << msg;
    // The update of the bad step was skipped on the GPU, and the step before it, whose
    // weights gave the bad loss, undone: the weights are those that gave the last good loss.
    HostMatrix now = m.weight(m.layerName(0), "kernel");
    for (float v : now.data) EXPECT_TRUE(std::isfinite(v));
    EXPECT_EQ(now.data, lastGood.data);
}

TEST(Model, ShapeErrorsAreReportedWhenBuilt) {
    Context& ctx = test::context();
    {
        Sequential m(ctx, 784);
        m.add(Dense{256, Activation::ReLU}).add(Dense{10, Activation::Linear, 0.01f, {}, {Initializer::Zeros, 0}, 128});
        std::string msg = message([&] { m.compile({}); });
        EXPECT_NE(msg.find("layer dense_1: expects input of size 128 but receives [batch, 256] from dense_0"),
                  std::string::npos)
            << msg;
        EXPECT_EQ(ctx.pool().stats().live,
                  ctx.pool().stats().live);  // nothing to check on the GPU: compile threw first
    }
    {
        Sequential m(ctx, 4);
        m.add(Dense{0});
        EXPECT_NE(message([&] { m.compile({}); }).find("units must be positive"), std::string::npos);
    }
    {
        Sequential m(ctx, 4);
        Softmax overHeight;
        overHeight.axis = 2;  // a flat input has axes 0 (the batch) and 1
        m.add(overHeight).add(Dense{3});
        EXPECT_NE(message([&] { m.compile({}); }).find("layer softmax_0: axis 2 is not an axis of its input"),
                  std::string::npos);
    }
    Sequential m(ctx, 4);
    m.add(Dense{3});
    m.compile({});
    HostMatrix x = randomMatrix(10, 4, 1);
    EXPECT_NE(message([&] {
                  m.fit(randomMatrix(10, 5, 1), std::vector<int>(10, 0));
              }).find("x has 5 columns, the model expects 4"),
              std::string::npos);
    EXPECT_NE(message([&] { m.fit(x, std::vector<int>(9, 0)); }).find("x has 10 rows but y has 9"), std::string::npos);
    EXPECT_NE(message([&] { m.fit(x, std::vector<int>(10, 3)); }).find("label 3 at row 0 is outside [0, 3)"),
              std::string::npos);
    HostMatrix bad = x;
    bad(2, 1) = std::nanf("");
    EXPECT_NE(message([&] { m.fit(bad, std::vector<int>(10, 0)); }).find("row 2, column 1 is NaN"), std::string::npos);
    FitOptions f;
    f.batchSize = 0;
    EXPECT_NE(message([&] { m.fit(x, std::vector<int>(10, 0), f); }).find("batchSize must be positive"),
              std::string::npos);
}

TEST(Model, InitialisersAreDeterministicAndPlatformIndependent) {
    // The same values natively and in Chromium: integer hashing plus one rounding
    // to float. The expected numbers were computed natively and are asserted in both worlds.
    HostMatrix gu = Initializer{Initializer::GlorotUniform, 0}.make(3, 2, 3, 2, 1, 0);
    HostMatrix hn = Initializer{Initializer::HeNormal, 0}.make(3, 2, 3, 2, 1, 0);
    HostMatrix again = Initializer{Initializer::HeNormal, 0}.make(3, 2, 3, 2, 1, 0);
    EXPECT_EQ(hn.data, again.data);
    const double limit = std::sqrt(6.0 / 5.0);
    for (float v : gu.data) EXPECT_LE(std::fabs(v), limit);
    std::printf("glorot_uniform[0..2] = %.9g %.9g %.9g, he_normal[0..2] = %.9g %.9g %.9g\n", double(gu.data[0]),
                double(gu.data[1]), double(gu.data[2]), double(hn.data[0]), double(hn.data[1]), double(hn.data[2]));
    EXPECT_EQ(gu.data,
              (std::vector<float>{-0.792162299f, 0.852371991f, -1.01431131f, gu.data[3], gu.data[4], gu.data[5]}));
    EXPECT_EQ(hn.data[0], 1.24493086f);
    EXPECT_EQ(hn.data[1], -1.62149322f);
    EXPECT_EQ(hn.data[2], -0.908042073f);
    // Statistics: He normal has std sqrt(2 / fanIn).
    HostMatrix big = Initializer{Initializer::HeNormal, 0}.make(200, 500, 200, 500, 7, 3);
    double sum = 0, sq = 0;
    for (float v : big.data) sum += v, sq += double(v) * v;
    double mean = sum / big.data.size(), sd = std::sqrt(sq / big.data.size() - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.002);
    EXPECT_NEAR(sd, std::sqrt(2.0 / 200.0), 0.002);
    // random_normal ignores the fans: normal(mean, stddev), GPT's normal(0, 0.02) here shifted to 0.5.
    HostMatrix rn = Initializer::randomNormal(0.02f, 0.5f).make(200, 500, 3, 2, 7, 3);
    sum = sq = 0;
    for (float v : rn.data) sum += v, sq += double(v) * v;
    mean = sum / rn.data.size(), sd = std::sqrt(sq / rn.data.size() - mean * mean);
    EXPECT_NEAR(mean, 0.5, 2e-4);
    EXPECT_NEAR(sd, 0.02, 2e-4);
    EXPECT_THROW(Initializer::randomNormal(-1.0f).make(2, 2, 2, 2, 1, 0), ArgumentError);
}

TEST(Model, LearningRateSchedules) {
    Schedule s;
    EXPECT_EQ(s.at(0.1f, 1000), 0.1f);
    s.kind = Schedule::Step;
    s.stepSize = 10;
    s.gamma = 0.5f;
    EXPECT_FLOAT_EQ(s.at(1.0f, 9), 1.0f);
    EXPECT_FLOAT_EQ(s.at(1.0f, 25), 0.25f);
    s.kind = Schedule::Exponential;
    EXPECT_FLOAT_EQ(s.at(1.0f, 5), std::pow(0.5f, 0.5f));
    s.kind = Schedule::Cosine;
    s.warmupSteps = 4;
    s.totalSteps = 104;
    s.minLr = 0.0f;
    EXPECT_FLOAT_EQ(s.at(1.0f, 0), 0.25f);
    EXPECT_FLOAT_EQ(s.at(1.0f, 3), 1.0f);
    EXPECT_FLOAT_EQ(s.at(1.0f, 54), 0.5f);
    EXPECT_NEAR(s.at(1.0f, 104), 0.0f, 1e-6);
    s.stepSize = 0;
    EXPECT_THROW(s.validate(), ArgumentError);
}

TEST(Model, ValidationSplitAsyncLossTrainForAndBce) {
    // Binary cross-entropy on one logit: points above the line x0 + x1 = 0 are 1.
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(200, 2, 71);
    HostMatrix y(200, 1);
    for (int i = 0; i < 200; ++i) y(i, 0) = x(i, 0) + x(i, 1) > 0 ? 1.0f : 0.0f;
    Sequential m(ctx, 2);
    m.add(Dense{8, Activation::Tanh}).add(Dense{1});
    CompileOptions c;
    c.loss = LossKind::BinaryCrossEntropy;
    c.optimizer.kind = OptimizerKind::RMSProp;
    c.optimizer.lr = 0.01f;
    c.schedule.kind = Schedule::Cosine;
    c.schedule.warmupSteps = 5;
    c.schedule.totalSteps = 400;
    m.compile(c);
    FitOptions f;
    f.epochs = 40;
    f.batchSize = 16;
    f.validationSplit = 0.2f;  // 160 training rows: 10 steps per epoch
    f.lossEvery = 3;
    f.asyncLoss = true;
    int steps = 0, lossesRead = 0;
    std::vector<EpochInfo> epochs;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) {
        ++steps;
        if (s.lossRead) {
            ++lossesRead;
            EXPECT_TRUE(std::isfinite(s.loss));
        }
    };
    cb.onEpoch = [&](const EpochInfo& e) { epochs.push_back(e); };
    m.beginFit(x, Targets(y), f, cb);
    // maxSteps ends a slice however long it may run.
    EXPECT_EQ(m.trainFor(1e9, 7), 7);
    EXPECT_EQ(m.step(), 7);
    EXPECT_THROW(m.trainFor(5.0, 0), ArgumentError);
    int calls = 0;
    while (m.fitting()) {
        EXPECT_GE(m.trainFor(5.0), 1);
        ++calls;
    }
    EXPECT_EQ(steps, 400);
    EXPECT_GT(lossesRead, 0);
    EXPECT_GT(calls, 1) << "trainFor returns control between slices";
    ASSERT_EQ(epochs.size(), 40u);
    EXPECT_TRUE(std::isfinite(epochs.back().valLoss));
    EXPECT_LT(epochs.back().valLoss, epochs.front().valLoss);
    EXPECT_LT(epochs.back().loss, 0.3f);
    HostMatrix p = m.predict(x);
    int correct = 0;
    for (int i = 0; i < 200; ++i) correct += (p(i, 0) > 0) == (y(i, 0) > 0.5f);
    EXPECT_GE(correct, 185);
}

TEST(Model, EndFitStopsEarlyAndKeepsTheLastStep) {
    // An aborted training loop (a JS AbortSignal, a Ctrl-C) ends the fit: the
    // model keeps the weights and step of the last completed step, and can be
    // recompiled or fitted again; a compile() during a fit is refused.
    Context& ctx = test::context();
    Sequential m(ctx, 2);
    m.add(Dense{8, Activation::Tanh}).add(Dense{2});
    m.compile({});
    FitOptions f;
    f.epochs = 100;
    f.batchSize = 4;
    m.beginFit(xorX(), xorY(), f);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(m.stepOnce());
    EXPECT_NE(message([&] { m.compile({}); }).find("a fit is in progress"), std::string::npos);
    EXPECT_TRUE(m.fitting()) << "the refused compile() leaves the fit running";
    ASSERT_TRUE(m.stepOnce());
    const HostMatrix before = m.predict(xorX());
    m.endFit();
    EXPECT_FALSE(m.fitting());
    EXPECT_FALSE(m.stepOnce());
    EXPECT_EQ(m.step(), 4);
    EXPECT_EQ(m.predict(xorX()).data, before.data);
    f.epochs = 5;  // counted from step 0, as Keras's initialEpoch: one more step (an epoch is 4/4 = 1 step)
    m.fit(xorX(), xorY(), f);
    EXPECT_EQ(m.step(), 5);
    m.compile({});
    EXPECT_EQ(m.step(), 0);
}

// A step whose loss is Inf changes no parameter under NanPolicy::Skip, whatever
// the optimizer (each update kernel selects the old values when its loss guard
// reads a non-finite loss): targets of 1e30 give an Inf squared error.
TEST(Model, NonFiniteLossKeepsTheParametersForEveryOptimizer) {
    HostMatrix x = randomMatrix(24, 5, 71), good = randomMatrix(24, 1, 72), bad(24, 1, 1e30f);
    struct Case {
        OptimizerKind kind;
        float momentum;
    };
    for (Case k :
         {Case{OptimizerKind::SGD, 0.9f}, Case{OptimizerKind::Momentum, 0.9f}, Case{OptimizerKind::Nesterov, 0.9f},
          Case{OptimizerKind::Adam, 0.9f}, Case{OptimizerKind::AdamW, 0.9f}, Case{OptimizerKind::RMSProp, 0.0f},
          Case{OptimizerKind::RMSProp, 0.9f}}) {
        SCOPED_TRACE(std::string(optimizerName(k.kind)) + " momentum " + std::to_string(k.momentum));
        Sequential m(test::context(), 5);
        m.add(Dense{6, Activation::ReLU}).add(Dense{1});
        CompileOptions c;
        c.loss = LossKind::MeanSquaredError;
        c.optimizer.kind = k.kind;
        c.optimizer.lr = 0.01f;
        c.optimizer.momentum = k.momentum;
        c.optimizer.weightDecay = 0.01f;
        c.onNaN = NanPolicy::Skip;
        c.seed = 3;
        m.compile(c);
        FitOptions f;
        f.batchSize = 8;
        f.epochs = 1;
        m.fit(x, Targets(good), f);
        // Every parameter and optimizer slot (the checkpoint holds both) stays as it was.
        const SafetensorsFile before = parseSafetensors(m.saveCheckpoint());
        f.epochs = 2;
        m.fit(x, Targets(bad), f);
        const SafetensorsFile after = parseSafetensors(m.saveCheckpoint());
        ASSERT_EQ(after.names, before.names);
        if (k.kind != OptimizerKind::SGD) EXPECT_GT(before.names.size(), 4u) << "the checkpoint holds optimizer slots";
        for (const std::string& name : before.names) EXPECT_TRUE(after.at(name) == before.at(name)) << name;
        f.epochs = 3;
        m.fit(x, Targets(good), f);  // and it trains on after the bad steps
        EXPECT_FALSE(parseSafetensors(m.saveCheckpoint()).at(before.names[0]) == before.at(before.names[0]));
    }
}

// resetOptimizer loads another optimizer's checkpoint: its weights and
// statistics, not its slots or step (refused without it: bad_input_test.cpp).
TEST(Model, ResetOptimizerLoadsTheWeightsOfAnotherOptimizersCheckpoint) {
    HostMatrix x = randomMatrix(24, 5, 71), y = randomMatrix(24, 1, 72);
    auto make = [&](OptimizerKind kind) {
        auto m = std::make_unique<Sequential>(test::context(), 5);
        m->add(Dense{6, Activation::ReLU}).add(Dense{1});
        CompileOptions c;
        c.loss = LossKind::MeanSquaredError;
        c.optimizer.kind = kind;
        c.optimizer.lr = 0.01f;
        c.seed = 3;
        m->compile(c);
        return m;
    };
    auto adam = make(OptimizerKind::Adam);
    FitOptions f;
    f.batchSize = 8;
    adam->fit(x, Targets(y), f);
    const std::vector<uint8_t> saved = adam->saveCheckpoint();
    auto rms = make(OptimizerKind::RMSProp);
    EXPECT_THROW(rms->loadCheckpoint(saved, "adam.safetensors"), ArgumentError);
    rms->loadCheckpoint(saved, "adam.safetensors", /*resetOptimizer=*/true);
    EXPECT_EQ(rms->step(), 0);
    EXPECT_EQ(rms->predict(x).data, adam->predict(x).data);
    const SafetensorsFile loaded = parseSafetensors(rms->saveCheckpoint());
    EXPECT_EQ(loaded.metadata.at("optimizer"), "rmsprop");
    for (const std::string& name : loaded.names)
        if (name.find("/slot") != std::string::npos)
            for (float v : loaded.at(name).floats()) ASSERT_EQ(v, 0.0f) << name;
    rms->fit(x, Targets(y), f);  // and it trains from there
    EXPECT_EQ(rms->step(), 3);
}

}  // namespace model_test
}  // namespace
