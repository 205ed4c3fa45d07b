// The model compiler (graph/gpu_plan.hpp's patterns under Sequential): the
// passes of a training step on the benchmark workloads, so a lost fusion fails
// here (bench/COMPARE.md's W1, W2, W4), and which kernels the patterns leave.
// The counts are the hand-wired step's (d04173d, measured with this file):
// 21, 34 and 5 passes, plus the step guard's verdict and checks (ops/step_guard.hpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gltrain/sequential.hpp"
#include "reference_test_util.hpp"
#include "test_context.hpp"

namespace {
namespace graph_model_test {

using namespace gltrain;

HostMatrix randomRows(int rows, int cols, uint32_t seed) {
    return reftest::randomMatrix(rows, cols, seed).cast<float>();
}
std::vector<int> someLabels(int rows, int classes) {
    std::vector<int> l(static_cast<size_t>(rows));
    for (int i = 0; i < rows; ++i) l[size_t(i)] = (i * 7) % classes;
    return l;
}
std::map<std::string, int> kernelsOf(const std::vector<PassTiming>& passes) {
    std::map<std::string, int> k;
    for (auto& p : passes) ++k[p.kernel];
    return k;
}
std::string listed(const std::vector<PassTiming>& passes) {
    std::string s;
    for (auto& p : passes) s += p.kernel + " ";
    return s;
}

// W1: MLP 784-256-128-10 ReLU, softmax cross-entropy, Adam, batch 128.
TEST(GraphModel, W1StepKeepsItsPasses) {
    Context& ctx = test::context();
    Sequential m(ctx, 784);
    m.add(Dense{256, Activation::ReLU}).add(Dense{128, Activation::ReLU}).add(Dense{10});
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::Adam;
    m.compile(c);
    const auto passes = m.profileStep(randomRows(128, 784, 1), Targets(someLabels(128, 10)), 128, 1);
    EXPECT_LE(passes.size(), 24u) << listed(passes);  // 24 on llvmpipe; 23 with its compute kernels on
    // Each dense forward is one blocked product with its epilogue; the loss and its
    // gradient share their kernels; f'(Z) rides on the products making dZ.
    const auto k = kernelsOf(passes);
    EXPECT_EQ(k.count("forward/bias_add"), 0u) << listed(passes);
    EXPECT_EQ(k.count("backward/activation"), 0u) << listed(passes);
}

// W2: conv 8@5x5 ReLU, max pool 2, conv 16@5x5 ReLU, max pool 2, dense 10, Adam, batch 64.
TEST(GraphModel, W2StepKeepsItsPasses) {
    Context& ctx = test::context();
    Sequential m(ctx, Shape3{28, 28, 1});
    m.add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU})
        .add(MaxPool2D{2})
        .add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU})
        .add(MaxPool2D{2})
        .add(Flatten{})
        .add(Dense{10});
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::Adam;
    m.compile(c);
    const auto passes = m.profileStep(randomRows(64, 784, 2), Targets(someLabels(64, 10)), 64, 1);
    // 37 on software renderers; 39 where the filter gradient takes more slices.
    EXPECT_LE(passes.size(), ctx.caps().softwareRenderer ? 37u : 39u) << listed(passes);
    EXPECT_EQ(kernelsOf(passes).count("forward/channel_bias_add"), 0u) << listed(passes);
}

// W4: MLP 2-8-1 tanh, MSE, SGD 0.1, batch 4: the one-pass-per-parameter step.
TEST(GraphModel, W4StepKeepsItsPasses) {
    Context& ctx = test::context();
    Sequential m(ctx, 2);
    m.add(Dense{8, Activation::Tanh}).add(Dense{1});
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.1f;
    m.compile(c);
    const auto passes = m.profileStep(randomRows(4, 2, 3), Targets(randomRows(4, 1, 4)), 4, 1);
    EXPECT_EQ(passes.size(), 7u) << listed(passes);
}

}  // namespace graph_model_test
}  // namespace
