// Convolutional models: one SGD step of a small CNN (conv, max pool, batch
// normalization, flatten, dense) against the same step composed from the CPU
// reference ops in double; shape errors at compile; checkpoints; and, natively,
// a deeper CNN with batch normalization beating the small one on real
// Fashion-MNIST data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "gltrain/idx.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_conv_test {

using namespace gltrain;
using gltrain::test::randomMatrix;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;

namespace {

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

TEST(ModelConv, OneSgdStepMatchesTheReference) { test::expectCnnSgdStepMatchesTheReference(test::context()); }

TEST(ModelConv, ShapeErrorsNameTheLayer) {
    Context& ctx = test::context();
    {
        Sequential m(ctx, Shape3{8, 8, 1});
        m.add(Conv2D{8, 3}).add(Dense{10});
        EXPECT_NE(
            message([&] { m.compile({}); })
                .find(
                    "layer dense_1: needs a flat input or a sequence [steps, features] but receives [batch, 6, 6, 8] from "
                    "conv2d_0; add a Flatten layer"),
            std::string::npos)
            << message([&] { m.compile({}); });
    }
    {
        Sequential m(ctx, Shape3{8, 8, 1});
        m.add(Conv2D{8, 5}).add(MaxPool2D{2}).add(Conv2D{4, 5}).add(Flatten{}).add(Dense{2});
        EXPECT_NE(
            message([&] {
                m.compile({});
            }).find("compile: layer conv2d_2: a 5x5 window does not fit the input [2, 2, 8] with 'valid' padding"),
            std::string::npos)
            << message([&] { m.compile({}); });
    }
    {
        Sequential m(ctx, 784);
        m.add(Conv2D{8, 5}).add(Flatten{}).add(Dense{2});
        EXPECT_NE(message([&] { m.compile({}); }).find("layer conv2d_0: needs image input"), std::string::npos)
            << message([&] { m.compile({}); });
    }
    {
        Sequential m(ctx, Shape3{8, 8, 1});
        m.add(Conv2D{0, 3}).add(Flatten{}).add(Dense{2});
        EXPECT_NE(message([&] { m.compile({}); }).find("layer conv2d_0: filters must be positive"), std::string::npos);
    }
    {
        Sequential m(ctx, Shape3{8, 8, 1});
        m.add(BatchNormalization{1.5f}).add(Flatten{}).add(Dense{2});
        EXPECT_NE(message([&] { m.compile({}); }).find("momentum must be in [0, 1)"), std::string::npos);
    }
}

TEST(ModelConv, CheckpointRoundTripKeepsPredictions) {
    Context& ctx = test::context();
    auto build = [&](Sequential& m) {
        m.add(Conv2D{4, 3, 2, Padding::Same, Activation::ReLU})
            .add(BatchNormalization{})
            .add(AveragePool2D{2, 1})
            .add(GlobalAveragePooling2D{})
            .add(Dense{3});
        m.compile({});
    };
    Sequential a(ctx, Shape3{7, 5, 3}), b(ctx, Shape3{7, 5, 3});
    build(a);
    build(b);
    HostMatrix x = randomMatrix(12, 105, 31);
    std::vector<int> y = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
    FitOptions f;
    f.batchSize = 4;
    f.epochs = 2;
    a.fit(x, y, f);
    auto bytes = a.saveCheckpoint();
    SafetensorsFile file = parseSafetensors(bytes, "mem");
    EXPECT_EQ(file.at("conv2d_0/kernel").shape, (std::vector<int64_t>{3, 3, 3, 4}));  // HWIO
    EXPECT_EQ(file.at("batch_normalization_1/moving_variance").shape, (std::vector<int64_t>{4}));
    b.loadCheckpoint(bytes);
    EXPECT_EQ(a.predict(x).data, b.predict(x).data);
    EXPECT_EQ(b.step(), a.step());
    // A checkpoint of another architecture is rejected and changes nothing.
    Sequential other(ctx, Shape3{7, 5, 3});
    other.add(Conv2D{5, 3, 2, Padding::Same}).add(Flatten{}).add(Dense{3});
    other.compile({});
    HostMatrix before = other.predict(x);
    EXPECT_NE(message([&] {
                  other.loadCheckpoint(bytes);
              }).find("conv2d_0/kernel' has shape [3, 3, 3, 4], the model needs [3, 3, 3, 5]"),
              std::string::npos)
        << message([&] { other.loadCheckpoint(bytes); });
    EXPECT_EQ(other.predict(x).data, before.data);
}

// A step whose loss is NaN or Inf changes nothing under NanPolicy Skip and Stop —
// batch normalization's moving averages included (they are updated after the
// loss is known, guarded by it as the parameters are) — on the GPU as on the CPU
// backend; under Ignore the averages move. The bad steps have targets of 1e30,
// whose squared error is Inf: the batch statistics themselves are fine.
// A 'same' window's geometry is worked out in 64 bits: a stride near INT_MAX
// (in + stride - 1) overflowed an int before (undefined behaviour, caught by
// the UBSan run), and is one output position per axis.
TEST(ModelConv, SameWindowWithAHugeStrideIsOnePosition) {
    const Window w = Window::make("test", {8, 5, 2}, 2, 3, 2147483620, 2147483647, Padding::Same, 4);
    EXPECT_EQ(w.out.height, 1);
    EXPECT_EQ(w.out.width, 1);
    EXPECT_EQ(w.out.channels, 4);
    EXPECT_EQ(w.padTop, 0);
    EXPECT_EQ(w.padLeft, 0);
}

TEST(ModelConv, NonFiniteLossKeepsBatchNormMovingAverages) {
    HostMatrix x = randomMatrix(32, 6, 41), good = randomMatrix(32, 1, 42), bad(32, 1, 1e30f);
    for (Context* ctx : {&test::context(), &test::cpuContext()})
        for (NanPolicy policy : {NanPolicy::Skip, NanPolicy::Stop, NanPolicy::Ignore}) {
            SCOPED_TRACE(std::string(ctx == &test::cpuContext() ? "cpu" : "gpu") + ", policy " +
                         std::to_string(int(policy)));
            Sequential m(*ctx, 6);
            m.add(Dense{5}).add(BatchNormalization{0.5f}).add(Dense{1});
            CompileOptions c;
            c.loss = LossKind::MeanSquaredError;
            c.optimizer.kind = OptimizerKind::SGD;
            c.optimizer.lr = 0.05f;
            c.onNaN = policy;
            m.compile(c);
            FitOptions f;
            f.batchSize = 8;
            f.epochs = 1;
            f.shuffle = false;
            // Four good steps: the averages leave their initial 0 and 1. Skip keeps the
            // state after them; Stop undoes the fourth too, whose weights gave the Inf loss.
            const std::string bn = m.layerName(1);
            HostMatrix mean, var, kernel;
            Callbacks cb;
            cb.onStep = [&](const StepInfo& s) {
                if (s.step == (policy == NanPolicy::Stop ? 3 : 4)) {
                    mean = m.weight(bn, "moving_mean");
                    var = m.weight(bn, "moving_variance");
                    kernel = m.weight(m.layerName(0), "kernel");
                }
            };
            m.fit(x, Targets(good), f, cb);
            EXPECT_NE(mean.data, std::vector<float>(5, 0.0f));
            f.epochs = 2;  // one more epoch (epochs counts from the model's first)
            if (policy == NanPolicy::Stop) {
                const std::string msg = message([&] { m.fit(x, Targets(bad), f); });
                EXPECT_NE(msg.find("fit: the loss is Inf"), std::string::npos) << msg;
            } else {
                m.fit(x, Targets(bad), f);
            }
            if (policy == NanPolicy::Ignore) {
                EXPECT_NE(m.weight(bn, "moving_mean").data, mean.data);
                continue;
            }
            EXPECT_EQ(m.weight(bn, "moving_mean").data, mean.data);
            EXPECT_EQ(m.weight(bn, "moving_variance").data, var.data);
            EXPECT_EQ(m.weight(m.layerName(0), "kernel").data, kernel.data);
        }
}

#ifndef __EMSCRIPTEN__
// Native only: at software-renderer speed this takes about a minute here and
// several in the browser, where the web pages train the same models (#6).
TEST(ModelConv, DeeperCnnWithBatchNormBeatsTheSmallCnn) {
    if (!std::ifstream(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz"))
        FAIL() << "Fashion-MNIST is missing from " << kFashionMnistDir << " (scripts/setup.sh installs it)";
    Context& ctx = test::context();
    auto head = [](Dataset d, int n) {
        d.images.data.resize(size_t(n) * size_t(d.images.cols));
        d.images.rows = n;
        d.labels.resize(size_t(n));
        return d;
    };
    Dataset train = head(loadFashionMnist(Split::Train), 3200), test = head(loadFashionMnist(Split::Test), 2000);
    auto run = [&](bool deep) {
        Sequential m(ctx, Shape3{28, 28, 1});
        if (deep) {
            m.add(Conv2D{32, 3, 1, Padding::Same}).add(BatchNormalization{0.9f}).add(ActivationLayer{Activation::ReLU});
            m.add(MaxPool2D{2});
            m.add(Conv2D{64, 3, 1, Padding::Same}).add(BatchNormalization{0.9f}).add(ActivationLayer{Activation::ReLU});
            m.add(MaxPool2D{2}).add(Flatten{}).add(Dense{10});
        } else {
            // As examples/fashion_mnist --model cnn.
            const Initializer he{Initializer::HeUniform};
            m.add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU, 0.01f, he}).add(MaxPool2D{2});
            m.add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU, 0.01f, he}).add(MaxPool2D{2});
            m.add(Flatten{}).add(Dense{10});
        }
        m.compile({});
        FitOptions f;
        f.batchSize = 64;
        f.epochs = 1;
        f.lossEvery = 0;
        m.fit(train.images, train.labels, f);
        return m.evaluate(test.images, test.labels).accuracy;
    };
    float small = run(false), deep = run(true);
    std::printf("3200 samples, 1 epoch: small CNN %.3f, deeper CNN with batch norm %.3f\n", small, deep);
    EXPECT_GT(deep, small);
}
#endif

}  // namespace model_conv_test
}  // namespace
