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
#include "test_context.hpp"

using namespace gltrain;
using gltrain::test::randomMatrix;
using MatD = HostMatrixT<double>;

namespace {

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

double maxRelDiff(const HostMatrix& got, const MatD& want) {
    double scale = 1e-3, err = 0;
    for (double v : want.data) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < got.data.size(); ++i) err = std::max(err, std::fabs(double(got.data[i]) - want.data[i]));
    return err / scale;
}

}  // namespace

TEST(ModelConv, OneSgdStepMatchesTheReference) {
    Context& ctx = test::context();
    const Shape3 in{6, 6, 2};
    const int N = 5;
    Sequential m(ctx, in);
    m.add(Conv2D{4, 3, 1, Padding::Same, Activation::ReLU})
        .add(MaxPool2D{2})
        .add(BatchNormalization{})
        .add(Flatten{})
        .add(Dense{3});
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.1f;
    m.compile(c);
    ASSERT_EQ(m.layerName(2), "batch_normalization_2");
    ASSERT_EQ(m.outputShape(1), (Shape3{3, 3, 4}));

    HostMatrix x = randomMatrix(N, in.size(), 21), w1 = randomMatrix(18, 4, 22), b1 = randomMatrix(1, 4, 23, -0.1f, 0.1f);
    HostMatrix gamma = randomMatrix(1, 4, 24, 0.5f, 1.5f), beta = randomMatrix(1, 4, 25);
    HostMatrix w2 = randomMatrix(36, 3, 26), b2 = randomMatrix(1, 3, 27);
    m.setWeight("conv2d_0", "kernel", w1);
    m.setWeight("conv2d_0", "bias", b1);
    m.setWeight("batch_normalization_2", "gamma", gamma);
    m.setWeight("batch_normalization_2", "beta", beta);
    m.setWeight("dense_4", "kernel", w2);
    m.setWeight("dense_4", "bias", b2);
    const std::vector<int> labels = {0, 2, 1, 1, 0};
    FitOptions f;
    f.batchSize = N;
    f.shuffle = false;
    m.fit(x, labels, f);

    // The same step in double.
    const double lr = 0.1, eps = 1e-3;
    Window conv = Window::make("conv", in, 3, 3, 1, 1, Padding::Same, 4);
    Window pool = Window::make("pool", conv.out, 2, 2, 2, 2, Padding::Valid, 4);
    MatD X = x.cast<double>(), W1 = w1.cast<double>(), B1 = b1.cast<double>(), G = gamma.cast<double>();
    MatD W2 = w2.cast<double>(), B2 = b2.cast<double>();
    MatD Z1 = ref::conv2d(X, W1, B1, conv), A1 = ref::activate(Z1, Activation::ReLU);
    MatD P = ref::pool2d(A1, pool, PoolKind::Max);
    auto stats = ref::batchStats(P, 4);
    MatD Y = ref::batchNormApply(P, stats.mean, stats.var, G, beta.cast<double>(), eps);
    MatD logits = ref::addBias(ref::matmul(Y, W2), B2);
    MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    MatD dW2 = ref::matmulTN(Y, dL), dB2 = ref::biasGrad(dL), dY = ref::matmulNT(dL, W2);
    auto bn = ref::batchNormBackward(P, dY, G, eps);
    MatD dZ1 = ref::activationGrad(ref::pool2dBackward(A1, bn.dX, pool, PoolKind::Max), Z1, Activation::ReLU);
    MatD dW1 = ref::conv2dBackwardFilter(X, dZ1, conv), dB1 = ref::channelSum(dZ1, 4);
    auto sgd = [&](MatD w, const MatD& g) {
        for (size_t i = 0; i < w.data.size(); ++i) w.data[i] -= lr * g.data[i];
        return w;
    };
    // fp32 on the GPU vs double: 1e-4 of the largest value.
    EXPECT_LE(maxRelDiff(m.weight("dense_4", "kernel"), sgd(W2, dW2)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("dense_4", "bias"), sgd(B2, dB2)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "gamma"), sgd(G, bn.dGamma)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "beta"), sgd(beta.cast<double>(), bn.dBeta)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W1, dW1)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "bias"), sgd(B1, dB1)), 1e-4);
    // Moving averages: momentum 0.99 from (0, 1), the variance unbiased over M = 5 * 9 values.
    MatD mm(1, 4), mv(1, 4);
    for (int k = 0; k < 4; ++k) {
        mm(0, k) = 0.01 * stats.mean(0, k);
        mv(0, k) = 0.99 + 0.01 * stats.var(0, k) * 45.0 / 44.0;
    }
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "moving_mean"), mm), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "moving_variance"), mv), 1e-4);

    // Inference normalises with the moving averages.
    HostMatrix p = m.predict(x);
    MatD Z1n = ref::conv2d(X, sgd(W1, dW1), sgd(B1, dB1), conv);
    MatD Pn = ref::pool2d(ref::activate(Z1n, Activation::ReLU), pool, PoolKind::Max);
    MatD Yn = ref::batchNormApply(Pn, mm, mv, sgd(G, bn.dGamma), sgd(beta.cast<double>(), bn.dBeta), eps);
    MatD out = ref::addBias(ref::matmul(Yn, sgd(W2, dW2)), sgd(B2, dB2));
    EXPECT_LE(maxRelDiff(p, out), 1e-4);
}

TEST(ModelConv, ShapeErrorsNameTheLayer) {
    Context& ctx = test::context();
    {
        Sequential m(ctx, Shape3{8, 8, 1});
        m.add(Conv2D{8, 3}).add(Dense{10});
        EXPECT_NE(message([&] { m.compile({}); })
                      .find("layer dense_1: needs a flat input but receives [batch, 6, 6, 8] from conv2d_0; add a Flatten layer"),
                  std::string::npos)
            << message([&] { m.compile({}); });
    }
    {
        Sequential m(ctx, Shape3{8, 8, 1});
        m.add(Conv2D{8, 5}).add(MaxPool2D{2}).add(Conv2D{4, 5}).add(Flatten{}).add(Dense{2});
        EXPECT_NE(message([&] { m.compile({}); })
                      .find("compile: layer conv2d_2: a 5x5 window does not fit the input [2, 2, 8] with 'valid' padding"),
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
        EXPECT_NE(message([&] { m.compile({}); }).find("momentum must be in [0, 1]"), std::string::npos);
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
    EXPECT_NE(message([&] { other.loadCheckpoint(bytes); }).find("conv2d_0/kernel' has shape [3, 3, 3, 4], the model needs [3, 3, 3, 5]"),
              std::string::npos)
        << message([&] { other.loadCheckpoint(bytes); });
    EXPECT_EQ(other.predict(x).data, before.data);
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
