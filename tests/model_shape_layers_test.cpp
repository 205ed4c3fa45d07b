// Layers that rearrange or normalise values without weights of their own, in
// models: one SGD step on each engine (the GPU's kernels and the CPU backend)
// against the same step composed in double from the reference ops, and their
// shape errors at compile.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gltrain/reference.hpp"
#include "gltrain/reference/graph_ops.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_shape_layers_test {

using namespace gltrain;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;
using gltrain::test::sgd;

using gltrain::test::message;

// Conv2D (linear) -> Softmax over the height of the 4x3x3 image -> Flatten -> Dense 3 -> Softmax (the
// loss's): one SGD step, then a prediction, against the reference in double (1e-4 of the largest value:
// fp32 against double).
void expectSoftmaxOverHeightStep(Context& ctx) {
    const Shape3 in{4, 3, 2};
    const int N = 5, F = 3;
    Sequential m(ctx, in);
    Softmax overHeight;
    overHeight.axis = 1;
    m.add(Conv2D{F, 3, 1, Padding::Same}).add(overHeight).add(Flatten{}).add(Dense{3}).add(Softmax{});
    test::compileSgd(m, 0.5f);
    const HostMatrix x = randomMatrix(N, in.size(), 31), w1 = randomMatrix(18, F, 32), b1 = randomMatrix(1, F, 33);
    const HostMatrix w2 = randomMatrix(36, 3, 34), b2 = randomMatrix(1, 3, 35);
    m.setWeight("conv2d_0", "kernel", w1);
    m.setWeight("conv2d_0", "bias", b1);
    m.setWeight("dense_3", "kernel", w2);
    m.setWeight("dense_3", "bias", b2);
    const std::vector<int> labels = {0, 2, 1, 1, 0};
    test::fitOneBatch(m, x, labels);

    const double lr = 0.5;
    const Window conv = Window::make("conv", in, 3, 3, 1, 1, Padding::Same, F);
    const graph::SoftmaxAxis axis{{in.height, in.width * F}};
    const MatD X = x.cast<double>(), W1 = w1.cast<double>(), B1 = b1.cast<double>();
    const MatD W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z = ref::conv2d(X, W1, B1, conv);
    const MatD S = ref::run<double>(axis, {&Z})[0];
    const MatD logits = ref::addBias(ref::matmul(S, W2), B2);
    const MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    const MatD dS = ref::matmulNT(dL, W2);
    const MatD dZ = ref::run<double>(graph::SoftmaxAxisGrad{axis.axis}, {&S, &dS})[0];
    EXPECT_LE(maxRelDiff(m.weight("dense_3", "kernel"), sgd(W2, ref::matmulTN(S, dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("dense_3", "bias"), sgd(B2, ref::biasGrad(dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W1, ref::conv2dBackwardFilter(X, dZ, conv), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "bias"), sgd(B1, ref::channelSum(dZ, F), lr)), 1e-4);
    // predict() applies both softmaxes with the new weights.
    const MatD Zn =
        ref::conv2d(X, sgd(W1, ref::conv2dBackwardFilter(X, dZ, conv), lr), sgd(B1, ref::channelSum(dZ, F), lr), conv);
    const MatD Sn = ref::run<double>(axis, {&Zn})[0];
    const MatD Pn = ref::softmaxRows(
        ref::addBias(ref::matmul(Sn, sgd(W2, ref::matmulTN(S, dL), lr)), sgd(B2, ref::biasGrad(dL), lr)));
    EXPECT_LE(maxRelDiff(m.predict(x), Pn), 1e-4);
}

TEST(ModelShapeLayers, SoftmaxOverAnImageAxisStepMatchesTheReference) {
    expectSoftmaxOverHeightStep(test::context());
    expectSoftmaxOverHeightStep(test::cpuContext());
}

// Conv2D (linear) -> GlobalMaxPooling2D -> Dense 3: one SGD step against the reference in double
// (the max pool's gradient goes to each channel's largest value only).
void expectGlobalMaxPoolingStep(Context& ctx) {
    const Shape3 in{5, 4, 2};
    const int N = 4, F = 3;
    Sequential m(ctx, in);
    m.add(Conv2D{F, 3, 1, Padding::Valid}).add(GlobalMaxPooling2D{}).add(Dense{3});
    test::compileSgd(m, 0.5f);
    ASSERT_EQ(m.outputShape(1), (Shape3{1, 1, F}));
    const HostMatrix x = randomMatrix(N, in.size(), 41), w1 = randomMatrix(18, F, 42), b1 = randomMatrix(1, F, 43);
    const HostMatrix w2 = randomMatrix(F, 3, 44), b2 = randomMatrix(1, 3, 45);
    m.setWeight("conv2d_0", "kernel", w1);
    m.setWeight("conv2d_0", "bias", b1);
    m.setWeight("dense_2", "kernel", w2);
    m.setWeight("dense_2", "bias", b2);
    const std::vector<int> labels = {2, 0, 1, 2};
    test::fitOneBatch(m, x, labels);

    const double lr = 0.5;
    const Window conv = Window::make("conv", in, 3, 3, 1, 1, Padding::Valid, F);
    const Window pool = Window::make("pool", conv.out, conv.out.height, conv.out.width, 1, 1, Padding::Valid, F);
    const MatD X = x.cast<double>(), W1 = w1.cast<double>(), B1 = b1.cast<double>();
    const MatD W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z = ref::conv2d(X, W1, B1, conv), P = ref::pool2d(Z, pool, PoolKind::Max);
    const MatD dL = ref::softmaxCrossEntropy(ref::addBias(ref::matmul(P, W2), B2), labels).grad;
    const MatD dZ = ref::pool2dBackward(Z, ref::matmulNT(dL, W2), pool, PoolKind::Max);
    EXPECT_LE(maxRelDiff(m.weight("dense_2", "kernel"), sgd(W2, ref::matmulTN(P, dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("dense_2", "bias"), sgd(B2, ref::biasGrad(dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W1, ref::conv2dBackwardFilter(X, dZ, conv), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "bias"), sgd(B1, ref::channelSum(dZ, F), lr)), 1e-4);
}

TEST(ModelShapeLayers, GlobalMaxPoolingStepMatchesTheReference) {
    expectGlobalMaxPoolingStep(test::context());
    expectGlobalMaxPoolingStep(test::cpuContext());
}

TEST(ModelShapeLayers, GlobalMaxPoolingNeedsAnImage) {
    Sequential m(test::context(), 6);
    m.add(GlobalMaxPooling2D{}).add(Dense{2});
    EXPECT_NE(message([&] { m.compile({}); }).find("layer global_max_pooling2d_0: needs image input"),
              std::string::npos);
}

TEST(ModelShapeLayers, SoftmaxAxisErrorsNameTheLayer) {
    Context& ctx = test::context();
    auto compileError = [&](Shape3 in, std::vector<Layer> layers) {
        return message([&] {
            Sequential m(ctx, in);
            for (Layer& l : layers) std::visit([&](auto& layer) { m.add(layer); }, l);
            m.compile({});
        });
    };
    Softmax byWidth;
    byWidth.axis = 2;
    Softmax batch;
    batch.axis = 0;
    EXPECT_NE(
        compileError({4, 4, 2}, {batch, Flatten{}, Dense{2}})
            .find("layer softmax_0: axis 0 is not an axis of its input: it receives [batch, 4, 4, 2] from the model "
                  "input (1 to 3 or -3 to -1; 0 is the batch)"),
        std::string::npos);
    // Last, it is the loss's: over the last axis of a flat output only.
    EXPECT_NE(compileError({4, 4, 2}, {Conv2D{2, 1}, byWidth}).find("layer softmax_1: as the last layer"),
              std::string::npos);
    EXPECT_EQ(compileError({4, 4, 2}, {Conv2D{2, 1}, byWidth, Flatten{}, Dense{2}}), "(no exception)");
}

}  // namespace model_shape_layers_test
}  // namespace
