// The training engine: Sequential, fit/evaluate/predict, step replay,
// checkpoints, bad numbers, shape errors.
#include <gtest/gtest.h>

#include <cstdio>

#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

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
    HostMatrix y = ref::addBias(ref::matmul(x, w), HostMatrix(1, 1, {0.75f}));
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
