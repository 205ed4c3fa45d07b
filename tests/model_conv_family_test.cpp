// The convolution family in models: non-square, strided and dilated Conv2D,
// DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, Conv1D and the 1-D
// pooling layers, each trained one SGD step on the GPU
// and on the CPU backend against the same step composed from the reference
// ops in double; their shape rules and messages at compile; their TF.js
// configs and weights.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/tfjs_layers.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_conv_family_test {

using namespace gltrain;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;
using gltrain::test::sgd;

using gltrain::test::message;

using gltrain::test::engineName;
using gltrain::test::engines;

// One SGD step (lr 0.1, batch 5, softmax cross-entropy) of
//   conv 3x3 'same' tanh (4 filters) -> `layer` (tanh) -> Flatten -> Dense 3
// on `in`, against the reference in double: every parameter to 1e-4 of its
// largest value. The first convolution makes the layer's input gradient part
// of the step. `window` is the layer's geometry as the test works it out.
template <class L>
void expectConvStep(Context& ctx, L layer, Shape3 in, const Window& window) {
    const int N = 5, F = layer.filters;
    layer.activation = Activation::Tanh;
    Sequential m(ctx, in);
    m.add(Conv2D{4, 3, 1, Padding::Same, Activation::Tanh}).add(layer).add(Flatten{}).add(Dense{3});
    test::compileSgd(m, 0.1f);
    ASSERT_EQ(m.outputShape(1), window.out);
    const Window first = Window::make("first", in, 3, 3, 1, 1, Padding::Same, 4);
    const int K = window.kh * window.kw * 4;
    HostMatrix x = randomMatrix(N, in.size(), 41), w0 = randomMatrix(9 * in.channels, 4, 42),
               b0 = randomMatrix(1, 4, 43, -0.1f, 0.1f), w1 = randomMatrix(K, F, 44),
               b1 = randomMatrix(1, F, 45, -0.1f, 0.1f), w2 = randomMatrix(window.out.size(), 3, 46),
               b2 = randomMatrix(1, 3, 47, -0.1f, 0.1f);
    m.setWeight("conv2d_0", "kernel", w0);
    m.setWeight("conv2d_0", "bias", b0);
    const std::string name = m.layerName(1);
    m.setWeight(name, "kernel", w1);
    m.setWeight(name, "bias", b1);
    m.setWeight("dense_3", "kernel", w2);
    m.setWeight("dense_3", "bias", b2);
    const std::vector<int> labels = {0, 2, 1, 1, 0};
    test::fitOneBatch(m, x, labels);

    const MatD X = x.cast<double>(), W0 = w0.cast<double>(), B0 = b0.cast<double>(), W1 = w1.cast<double>(),
               B1 = b1.cast<double>(), W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z0 = ref::conv2d(X, W0, B0, first), A0 = ref::activate(Z0, Activation::Tanh);
    const MatD Z1 = ref::conv2d(A0, W1, B1, window), A1 = ref::activate(Z1, Activation::Tanh);
    const MatD logits = ref::addBias(ref::matmul(A1, W2), B2);
    const MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    const MatD dZ1 = ref::activationGrad(ref::matmulNT(dL, W2), Z1, Activation::Tanh);
    const MatD dZ0 = ref::activationGrad(ref::conv2dBackwardInput(dZ1, W1, window), Z0, Activation::Tanh);
    const double lr = 0.1;
    EXPECT_LE(maxRelDiff(m.weight("dense_3", "kernel"), sgd(W2, ref::matmulTN(A1, dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight(name, "kernel"), sgd(W1, ref::conv2dBackwardFilter(A0, dZ1, window), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight(name, "bias"), sgd(B1, ref::channelSum(dZ1, F), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W0, ref::conv2dBackwardFilter(X, dZ0, first), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "bias"), sgd(B0, ref::channelSum(dZ0, 4), lr)), 1e-4);
}

TEST(ModelConvFamily, NonSquareStridedAndDilatedConv2DStepsMatchTheReference) {
    struct Case {
        Conv2D layer;
        Shape3 in;
        Window window;  // over the first convolution's output (4 channels)
    };
    Conv2D nonSquare{5, {2, 3}, {2, 1}, Padding::Same};
    Conv2D dilated{3, {3, 2}, 1, Padding::Valid};
    dilated.dilationRate = {2, 3};
    Conv2D dilatedVec{8, 3, 1, Padding::Same};  // 4 channels in, 8 out: the 4-channel kernels
    dilatedVec.dilationRate = 2;
    const std::vector<Case> cases = {
        {nonSquare, {7, 6, 2}, Window::make("t", {7, 6, 4}, 2, 3, 2, 1, Padding::Same, 5)},
        {dilated, {9, 8, 1}, Window::make("t", {9, 8, 4}, 3, 2, 1, 1, Padding::Valid, 3, 2, 3)},
        {dilatedVec, {6, 7, 3}, Window::make("t", {6, 7, 4}, 3, 3, 1, 1, Padding::Same, 8, 2, 2)},
    };
    for (Context* ctx : engines())
        for (const Case& k : cases) {
            SCOPED_TRACE(std::string(engineName(ctx)) + " kernel " + k.layer.kernelSize.str() + " stride " +
                         k.layer.stride.str() + " dilation " + k.layer.dilationRate.str());
            expectConvStep(*ctx, k.layer, k.in, k.window);
        }
}

// x + b[c] over the C interleaved channels of image rows (b is 1 x C).
MatD channelBias(MatD x, const MatD& b) {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += b.data[i % size_t(b.cols)];
    return x;
}

// As expectConvStep, with a DepthwiseConv2D as the layer under test.
void expectDepthwiseStep(Context& ctx, DepthwiseConv2D layer, Shape3 in, const Window& window) {
    const int N = 5, M = layer.depthMultiplier, OC = window.out.channels;
    layer.activation = Activation::Tanh;
    Sequential m(ctx, in);
    m.add(Conv2D{4, 3, 1, Padding::Same, Activation::Tanh}).add(layer).add(Flatten{}).add(Dense{3});
    test::compileSgd(m, 0.1f);
    ASSERT_EQ(m.outputShape(1), window.out);
    ASSERT_EQ(m.layerName(1), "depthwise_conv2d_1");
    const Window first = Window::make("first", in, 3, 3, 1, 1, Padding::Same, 4);
    HostMatrix x = randomMatrix(N, in.size(), 51), w0 = randomMatrix(9 * in.channels, 4, 52),
               b0 = randomMatrix(1, 4, 53, -0.1f, 0.1f), w1 = randomMatrix(window.kh * window.kw * 4, M, 54),
               b1 = randomMatrix(1, OC, 55, -0.1f, 0.1f), w2 = randomMatrix(window.out.size(), 3, 56),
               b2 = randomMatrix(1, 3, 57, -0.1f, 0.1f);
    m.setWeight("conv2d_0", "kernel", w0);
    m.setWeight("conv2d_0", "bias", b0);
    m.setWeight("depthwise_conv2d_1", "depthwise_kernel", w1);
    m.setWeight("depthwise_conv2d_1", "bias", b1);
    m.setWeight("dense_3", "kernel", w2);
    m.setWeight("dense_3", "bias", b2);
    const std::vector<int> labels = {2, 0, 1, 2, 0};
    test::fitOneBatch(m, x, labels);

    const MatD X = x.cast<double>(), W0 = w0.cast<double>(), B0 = b0.cast<double>(), W1 = w1.cast<double>(),
               B1 = b1.cast<double>(), W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z0 = ref::conv2d(X, W0, B0, first), A0 = ref::activate(Z0, Activation::Tanh);
    const MatD Z1 = channelBias(ref::depthwiseConv2d(A0, W1, window), B1), A1 = ref::activate(Z1, Activation::Tanh);
    const MatD logits = ref::addBias(ref::matmul(A1, W2), B2);
    const MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    const MatD dZ1 = ref::activationGrad(ref::matmulNT(dL, W2), Z1, Activation::Tanh);
    const MatD dZ0 = ref::activationGrad(ref::depthwiseConv2dBackwardInput(dZ1, W1, window), Z0, Activation::Tanh);
    const double lr = 0.1;
    EXPECT_LE(maxRelDiff(m.weight("dense_3", "kernel"), sgd(W2, ref::matmulTN(A1, dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("depthwise_conv2d_1", "depthwise_kernel"),
                         sgd(W1, ref::depthwiseConv2dBackwardFilter(A0, dZ1, window), lr)),
              1e-4);
    EXPECT_LE(maxRelDiff(m.weight("depthwise_conv2d_1", "bias"), sgd(B1, ref::channelSum(dZ1, OC), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W0, ref::conv2dBackwardFilter(X, dZ0, first), lr)), 1e-4);
}

TEST(ModelConvFamily, DepthwiseConv2DStepsMatchTheReference) {
    DepthwiseConv2D plain{};
    DepthwiseConv2D wide{{2, 3}, 2, {2, 1}, Padding::Same};
    DepthwiseConv2D dilated{3, 3, 1, Padding::Valid};
    dilated.dilationRate = {2, 1};
    const std::vector<std::pair<DepthwiseConv2D, Window>> cases = {
        {plain, Window::make("t", {6, 5, 4}, 3, 3, 1, 1, Padding::Valid, 4)},
        {wide, Window::make("t", {6, 5, 4}, 2, 3, 2, 1, Padding::Same, 8)},
        {dilated, Window::make("t", {6, 5, 4}, 3, 3, 1, 1, Padding::Valid, 12, 2, 1)},
    };
    for (Context* ctx : engines())
        for (const auto& k : cases) {
            SCOPED_TRACE(std::string(engineName(ctx)) + " kernel " + k.first.kernelSize.str() + " multiplier " +
                         std::to_string(k.first.depthMultiplier));
            expectDepthwiseStep(*ctx, k.first, {6, 5, 2}, k.second);
        }
}

TEST(ModelConvFamily, DepthwiseConv2DShapesErrorsAndTfjs) {
    Context& ctx = test::cpuContext();
    Sequential m(ctx, Shape3{9, 8, 3});
    m.add(DepthwiseConv2D{{3, 2}, 2, 2, Padding::Same}).add(Flatten{}).add(Dense{2});
    m.compile({});
    EXPECT_EQ(m.outputShape(0), (Shape3{5, 4, 6}));
    EXPECT_EQ(parameterCount(m.layer(0), Shape3{9, 8, 3}), 3 * 2 * 3 * 2 + 6);
    const std::vector<LayerVariable> v = layerVariables(m.layer(0), Shape3{9, 8, 3});
    EXPECT_EQ(v[0].name, std::string("depthwise_kernel"));
    EXPECT_EQ(v[0].shape, (std::vector<int64_t>{3, 2, 3, 2}));
    EXPECT_EQ(v[1].shape, (std::vector<int64_t>{6}));

    Sequential bad(ctx, Shape3{4, 4, 2});
    bad.add(DepthwiseConv2D{5}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] {
                  bad.compile({});
              }).find("compile: layer depthwise_conv2d_0: a 5x5 window does not fit the input [4, 4, 2]"),
              std::string::npos)
        << message([&] { bad.compile({}); });
    Sequential flat(ctx, 16);
    flat.add(DepthwiseConv2D{}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] { flat.compile({}); }).find("layer depthwise_conv2d_0: needs image input"),
              std::string::npos);
    DepthwiseConv2D zero{};
    zero.depthMultiplier = 0;
    EXPECT_EQ(layerFieldProblem(Layer(zero)), "depthMultiplier must be positive, got 0");

    // TF.js: DepthwiseConv2D with depth_multiplier and depthwise_kernel, out and back in;
    // use_bias: false imports as C*M zeros.
    const TfjsArtifacts a = exportTfjs(m);
    auto json = nlohmann::json::parse(a.modelJson);
    const auto& layer = json["modelTopology"]["config"]["layers"][0];
    EXPECT_EQ(layer["class_name"], "DepthwiseConv2D");
    EXPECT_EQ(layer["config"]["depth_multiplier"], 2);
    EXPECT_EQ(layer["config"]["kernel_size"], (nlohmann::json{3, 2}));
    EXPECT_EQ(json["weightsManifest"][0]["weights"][0]["name"], "depthwise_conv2d_0/depthwise_kernel");
    EXPECT_EQ(json["weightsManifest"][0]["weights"][0]["shape"], (nlohmann::json{3, 2, 3, 2}));
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    const HostMatrix x = randomMatrix(3, 9 * 8 * 3, 58);
    EXPECT_EQ(imported->predict(x).data, m.predict(x).data);
    json["modelTopology"]["config"]["layers"][0]["config"]["use_bias"] = false;
    auto& weights = json["weightsManifest"][0]["weights"];
    weights.erase(weights.begin() + 1);  // the bias
    std::vector<uint8_t> data(a.weightData.begin(), a.weightData.begin() + 3 * 2 * 3 * 2 * 4);
    data.insert(data.end(), a.weightData.begin() + (3 * 2 * 3 * 2 + 6) * 4, a.weightData.end());
    auto noBias = importTfjs(ctx, json.dump(), data);
    EXPECT_EQ(noBias->weight("depthwise_conv2d_0", "bias").data, std::vector<float>(6, 0.0f));
}

// As expectConvStep, with a SeparableConv2D (depthwise `window`, then 1x1 to `filters`) as the layer under test.
void expectSeparableStep(Context& ctx, SeparableConv2D layer, Shape3 in, const Window& window) {
    const int N = 5, M = layer.depthMultiplier, F = layer.filters;
    layer.activation = Activation::Tanh;
    Sequential m(ctx, in);
    m.add(Conv2D{4, 3, 1, Padding::Same, Activation::Tanh}).add(layer).add(Flatten{}).add(Dense{3});
    test::compileSgd(m, 0.1f);
    const Window point = Window::make("point", window.out, 1, 1, 1, 1, Padding::Valid, F);
    ASSERT_EQ(m.outputShape(1), point.out);
    const Window first = Window::make("first", in, 3, 3, 1, 1, Padding::Same, 4);
    HostMatrix x = randomMatrix(N, in.size(), 61), w0 = randomMatrix(9 * in.channels, 4, 62),
               b0 = randomMatrix(1, 4, 63, -0.1f, 0.1f), wd = randomMatrix(window.kh * window.kw * 4, M, 64),
               wp = randomMatrix(window.out.channels, F, 65), b1 = randomMatrix(1, F, 66, -0.1f, 0.1f),
               w2 = randomMatrix(point.out.size(), 3, 67), b2 = randomMatrix(1, 3, 68, -0.1f, 0.1f);
    const std::string name = m.layerName(1);
    m.setWeight("conv2d_0", "kernel", w0);
    m.setWeight("conv2d_0", "bias", b0);
    m.setWeight(name, "depthwise_kernel", wd);
    m.setWeight(name, "pointwise_kernel", wp);
    m.setWeight(name, "bias", b1);
    m.setWeight("dense_3", "kernel", w2);
    m.setWeight("dense_3", "bias", b2);
    const std::vector<int> labels = {1, 0, 2, 2, 1};
    test::fitOneBatch(m, x, labels);

    const MatD X = x.cast<double>(), W0 = w0.cast<double>(), B0 = b0.cast<double>(), Wd = wd.cast<double>(),
               Wp = wp.cast<double>(), B1 = b1.cast<double>(), W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z0 = ref::conv2d(X, W0, B0, first), A0 = ref::activate(Z0, Activation::Tanh);
    const MatD D = ref::depthwiseConv2d(A0, Wd, window);
    const MatD Z1 = ref::conv2d(D, Wp, B1, point), A1 = ref::activate(Z1, Activation::Tanh);
    const MatD logits = ref::addBias(ref::matmul(A1, W2), B2);
    const MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    const MatD dZ1 = ref::activationGrad(ref::matmulNT(dL, W2), Z1, Activation::Tanh);
    const MatD dD = ref::conv2dBackwardInput(dZ1, Wp, point);
    const MatD dZ0 = ref::activationGrad(ref::depthwiseConv2dBackwardInput(dD, Wd, window), Z0, Activation::Tanh);
    const double lr = 0.1;
    EXPECT_LE(maxRelDiff(m.weight(name, "pointwise_kernel"), sgd(Wp, ref::conv2dBackwardFilter(D, dZ1, point), lr)),
              1e-4);
    EXPECT_LE(maxRelDiff(m.weight(name, "bias"), sgd(B1, ref::channelSum(dZ1, F), lr)), 1e-4);
    EXPECT_LE(
        maxRelDiff(m.weight(name, "depthwise_kernel"), sgd(Wd, ref::depthwiseConv2dBackwardFilter(A0, dD, window), lr)),
        1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W0, ref::conv2dBackwardFilter(X, dZ0, first), lr)), 1e-4);
}

TEST(ModelConvFamily, SeparableConv2DStepsMatchTheReference) {
    SeparableConv2D a{5};
    SeparableConv2D b{8, {3, 2}, {1, 2}, Padding::Same};
    b.depthMultiplier = 2;
    SeparableConv2D d{3, 3, 1, Padding::Same};
    d.dilationRate = 2;
    const std::vector<std::pair<SeparableConv2D, Window>> cases = {
        {a, Window::make("t", {6, 5, 4}, 3, 3, 1, 1, Padding::Valid, 4)},
        {b, Window::make("t", {6, 5, 4}, 3, 2, 1, 2, Padding::Same, 8)},
        {d, Window::make("t", {6, 5, 4}, 3, 3, 1, 1, Padding::Same, 4, 2, 2)},
    };
    for (Context* ctx : engines())
        for (const auto& k : cases) {
            SCOPED_TRACE(std::string(engineName(ctx)) + " filters " + std::to_string(k.first.filters) + " kernel " +
                         k.first.kernelSize.str());
            expectSeparableStep(*ctx, k.first, {6, 5, 2}, k.second);
        }
}

TEST(ModelConvFamily, SeparableConv2DVariablesAndTfjs) {
    Context& ctx = test::cpuContext();
    SeparableConv2D s{7, 3, 1, Padding::Same};
    s.depthMultiplier = 2;
    const std::vector<LayerVariable> v = layerVariables(s, Shape3{6, 6, 3});
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].name, std::string("depthwise_kernel"));
    EXPECT_EQ(v[0].shape, (std::vector<int64_t>{3, 3, 3, 2}));
    EXPECT_EQ(v[1].name, std::string("pointwise_kernel"));
    EXPECT_EQ(v[1].shape, (std::vector<int64_t>{1, 1, 6, 7}));
    EXPECT_EQ(v[2].shape, (std::vector<int64_t>{7}));
    EXPECT_EQ(parameterCount(s, Shape3{6, 6, 3}), 3 * 3 * 3 * 2 + 6 * 7 + 7);
    Sequential m(ctx, Shape3{6, 6, 3});
    m.add(s).add(Flatten{}).add(Dense{2});
    m.compile({});
    EXPECT_EQ(m.outputShape(0), (Shape3{6, 6, 7}));
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    EXPECT_EQ(json["modelTopology"]["config"]["layers"][0]["class_name"], "SeparableConv2D");
    EXPECT_EQ(json["weightsManifest"][0]["weights"][1]["name"], "separable_conv2d_0/pointwise_kernel");
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    const HostMatrix x = randomMatrix(3, 6 * 6 * 3, 69);
    EXPECT_EQ(imported->predict(x).data, m.predict(x).data);
    Sequential missing(ctx, Shape3{6, 6, 3});
    missing.add(SeparableConv2D{}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] { missing.compile({}); }).find("filters must be positive"), std::string::npos)
        << message([&] { missing.compile({}); });
}

// As expectConvStep, with a Conv2DTranspose as the layer under test; `window`
// is the convolution from its output back to its input.
void expectTransposeStep(Context& ctx, Conv2DTranspose layer, Shape3 in, const Window& window) {
    const int N = 5, F = layer.filters;
    layer.activation = Activation::Tanh;
    Sequential m(ctx, in);
    m.add(Conv2D{4, 3, 1, Padding::Same, Activation::Tanh}).add(layer).add(Flatten{}).add(Dense{3});
    test::compileSgd(m, 0.1f);
    ASSERT_EQ(m.outputShape(1), window.in);
    const Window first = Window::make("first", in, 3, 3, 1, 1, Padding::Same, 4);
    HostMatrix x = randomMatrix(N, in.size(), 71), w0 = randomMatrix(9 * in.channels, 4, 72),
               b0 = randomMatrix(1, 4, 73, -0.1f, 0.1f), w1 = randomMatrix(window.kh * window.kw * F, 4, 74),
               b1 = randomMatrix(1, F, 75, -0.1f, 0.1f), w2 = randomMatrix(window.in.size(), 3, 76),
               b2 = randomMatrix(1, 3, 77, -0.1f, 0.1f);
    m.setWeight("conv2d_0", "kernel", w0);
    m.setWeight("conv2d_0", "bias", b0);
    m.setWeight("conv2d_transpose_1", "kernel", w1);
    m.setWeight("conv2d_transpose_1", "bias", b1);
    m.setWeight("dense_3", "kernel", w2);
    m.setWeight("dense_3", "bias", b2);
    const std::vector<int> labels = {2, 1, 0, 0, 1};
    test::fitOneBatch(m, x, labels);

    const MatD X = x.cast<double>(), W0 = w0.cast<double>(), B0 = b0.cast<double>(), W1 = w1.cast<double>(),
               B1 = b1.cast<double>(), W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z0 = ref::conv2d(X, W0, B0, first), A0 = ref::activate(Z0, Activation::Tanh);
    const MatD Z1 = channelBias(ref::conv2dBackwardInput(A0, W1, window), B1);
    const MatD A1 = ref::activate(Z1, Activation::Tanh);
    const MatD logits = ref::addBias(ref::matmul(A1, W2), B2);
    const MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    const MatD dZ1 = ref::activationGrad(ref::matmulNT(dL, W2), Z1, Activation::Tanh);
    const MatD dA0 = ref::conv2d(dZ1, W1, MatD(1, 4), window);
    const MatD dZ0 = ref::activationGrad(dA0, Z0, Activation::Tanh);
    const double lr = 0.1;
    EXPECT_LE(
        maxRelDiff(m.weight("conv2d_transpose_1", "kernel"), sgd(W1, ref::conv2dBackwardFilter(dZ1, A0, window), lr)),
        1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_transpose_1", "bias"), sgd(B1, ref::channelSum(dZ1, F), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W0, ref::conv2dBackwardFilter(X, dZ0, first), lr)), 1e-4);
}

TEST(ModelConvFamily, Conv2DTransposeStepsMatchTheReference) {
    // Keras's sizes: 'same' in*s; 'valid' in*s + max(k - s, 0).
    const std::vector<std::pair<Conv2DTranspose, Window>> cases = {
        {Conv2DTranspose{3, 3, 2, Padding::Same}, Window::make("t", {6, 8, 3}, 3, 3, 2, 2, Padding::Same, 4)},
        {Conv2DTranspose{5, {2, 3}, {2, 1}}, Window::make("t", {6, 6, 5}, 2, 3, 2, 1, Padding::Valid, 4)},
        {Conv2DTranspose{8, 1, 3}, Window::make("t", {9, 12, 8}, 1, 1, 3, 3, Padding::Valid, 4)},
    };
    for (Context* ctx : engines())
        for (const auto& k : cases) {
            SCOPED_TRACE(std::string(engineName(ctx)) + " kernel " + k.first.kernelSize.str() + " stride " +
                         k.first.stride.str() + " " + paddingName(k.first.padding));
            ASSERT_EQ(k.second.out, (Shape3{3, 4, 4}));
            expectTransposeStep(*ctx, k.first, {3, 4, 2}, k.second);
        }
}

TEST(ModelConvFamily, Conv2DTransposeVariablesAndTfjs) {
    Context& ctx = test::cpuContext();
    const std::vector<LayerVariable> v = layerVariables(Conv2DTranspose{6, {3, 2}}, Shape3{4, 4, 3});
    EXPECT_EQ(v[0].shape, (std::vector<int64_t>{3, 2, 6, 3}));  // [kh, kw, filters, C]
    Sequential m(ctx, Shape3{4, 5, 3});
    m.add(Conv2DTranspose{6, {3, 2}, 2, Padding::Valid}).add(Flatten{}).add(Dense{2});
    m.compile({});
    EXPECT_EQ(m.outputShape(0), (Shape3{9, 10, 6}));
    const TfjsArtifacts a = exportTfjs(m);
    EXPECT_NE(a.modelJson.find("\"Conv2DTranspose\""), std::string::npos);
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    const HostMatrix x = randomMatrix(2, 4 * 5 * 3, 78);
    EXPECT_EQ(imported->predict(x).data, m.predict(x).data);
    Sequential flat(ctx, 12);
    flat.add(Conv2DTranspose{2}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] { flat.compile({}); }).find("layer conv2d_transpose_0: needs image input"),
              std::string::npos);
}

TEST(ModelConvFamily, Conv1DStepsMatchTheReference) {
    Conv1D a{5, 3, 2, Padding::Same};
    Conv1D b{8, 2, 1, Padding::Valid};
    b.dilationRate = 3;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        expectConvStep(*ctx, a, {1, 9, 2}, Window::make("t", {1, 9, 4}, 1, 3, 1, 2, Padding::Same, 5));
        expectConvStep(*ctx, b, {1, 9, 2}, Window::make("t", {1, 9, 4}, 1, 2, 1, 1, Padding::Valid, 8, 1, 3));
    }
}

// Conv1D (tanh) -> MaxPooling1D 3/2 'same' -> AveragePooling1D 2 -> Flatten -> Dense 3:
// one SGD step on [steps, channels] rows against the reference.
TEST(ModelConvFamily, Pool1DStepsMatchTheReference) {
    const Shape3 in{1, 11, 3};
    const int N = 4;
    const Window conv = Window::make("c", in, 1, 3, 1, 1, Padding::Same, 4);
    const Window maxp = Window::make("m", conv.out, 1, 3, 1, 2, Padding::Same, 4);
    const Window avgp = Window::make("a", maxp.out, 1, 2, 1, 2, Padding::Valid, 4);
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, in);
        m.add(Conv1D{4, 3, 1, Padding::Same, Activation::Tanh})
            .add(MaxPool1D{3, 2, Padding::Same})
            .add(AveragePool1D{2})
            .add(Flatten{})
            .add(Dense{3});
        test::compileSgd(m, 0.1f);
        ASSERT_EQ(m.outputShape(1), maxp.out);
        ASSERT_EQ(m.outputShape(2), avgp.out);
        EXPECT_EQ(m.layerName(1), "max_pool1d_1");
        HostMatrix x = randomMatrix(N, in.size(), 81), w0 = randomMatrix(9, 4, 82), b0 = randomMatrix(1, 4, 83),
                   w1 = randomMatrix(avgp.out.size(), 3, 84), b1 = randomMatrix(1, 3, 85);
        m.setWeight("conv1d_0", "kernel", w0);
        m.setWeight("conv1d_0", "bias", b0);
        m.setWeight("dense_4", "kernel", w1);
        m.setWeight("dense_4", "bias", b1);
        const std::vector<int> labels = {1, 2, 0, 1};
        test::fitOneBatch(m, x, labels);
        const MatD X = x.cast<double>(), W0 = w0.cast<double>(), W1 = w1.cast<double>();
        const MatD Z0 = ref::conv2d(X, W0, b0.cast<double>(), conv), A0 = ref::activate(Z0, Activation::Tanh);
        const MatD P1 = ref::pool2d(A0, maxp, PoolKind::Max), P2 = ref::pool2d(P1, avgp, PoolKind::Average);
        const MatD dL = ref::softmaxCrossEntropy(ref::addBias(ref::matmul(P2, W1), b1.cast<double>()), labels).grad;
        const MatD dP1 = ref::pool2dBackward(P1, ref::matmulNT(dL, W1), avgp, PoolKind::Average);
        const MatD dZ0 = ref::activationGrad(ref::pool2dBackward(A0, dP1, maxp, PoolKind::Max), Z0, Activation::Tanh);
        EXPECT_LE(maxRelDiff(m.weight("dense_4", "kernel"), sgd(W1, ref::matmulTN(P2, dL), 0.1)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("conv1d_0", "kernel"), sgd(W0, ref::conv2dBackwardFilter(X, dZ0, conv), 0.1)),
                  1e-4);
    }
}

TEST(ModelConvFamily, OneDimensionalLayersShapesErrorsAndTfjs) {
    Context& ctx = test::cpuContext();
    EXPECT_EQ(layerVariables(Conv1D{6, 4}, Shape3{1, 10, 3})[0].shape, (std::vector<int64_t>{4, 3, 6}));  // [k, C, F]
    Sequential image(ctx, Shape3{4, 4, 2});
    image.add(Conv1D{3}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] { image.compile({}); })
                  .find("layer conv1d_0: needs a sequence [steps, channels] (an image of height 1) but receives "
                        "[batch, 4, 4, 2] from the model input"),
              std::string::npos)
        << message([&] { image.compile({}); });
    Sequential pool(ctx, Shape3{3, 4, 2});
    pool.add(MaxPool1D{}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] { pool.compile({}); }).find("layer max_pool1d_0: needs a sequence"), std::string::npos);
    Conv1D both{3, 3, 2};
    both.dilationRate = 2;
    Sequential bad(ctx, Shape3{1, 9, 2});
    bad.add(both).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] { bad.compile({}); }).find("stride 2 and dilationRate 2 both exceed 1"), std::string::npos);

    // TF.js: [null, steps, channels] input, kernel_size [k], pool_size [k]; out and back in.
    Sequential m(ctx, Shape3{1, 12, 3});
    m.add(Conv1D{4, 3, 1, Padding::Same}).add(MaxPool1D{2}).add(AveragePool1D{3, 1}).add(Flatten{}).add(Dense{2});
    m.compile({});
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    const auto& layers = json["modelTopology"]["config"]["layers"];
    EXPECT_EQ(layers[0]["config"]["batch_input_shape"], (nlohmann::json{nullptr, 12, 3}));
    EXPECT_EQ(layers[0]["config"]["kernel_size"], (nlohmann::json{3}));
    EXPECT_EQ(layers[1]["class_name"], "MaxPooling1D");
    EXPECT_EQ(layers[1]["config"]["pool_size"], (nlohmann::json{2}));
    EXPECT_EQ(layers[2]["config"]["strides"], (nlohmann::json{1}));
    EXPECT_EQ(json["weightsManifest"][0]["weights"][0]["shape"], (nlohmann::json{3, 3, 4}));
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    EXPECT_EQ(imported->inputShape(), (Shape3{1, 12, 3}));
    const HostMatrix x = randomMatrix(2, 36, 86);
    EXPECT_EQ(imported->predict(x).data, m.predict(x).data);
}

TEST(ModelConvFamily, Conv2DShapesAndErrors) {
    Context& ctx = test::cpuContext();
    auto compileError = [&](Shape3 in, const Layer& layer) {
        Sequential m(ctx, in);
        m.add(layer).add(Flatten{}).add(Dense{2});
        return message([&] { m.compile({}); });
    };
    Conv2D both{4, 3, 2};
    both.dilationRate = {1, 2};
    EXPECT_NE(compileError({9, 9, 1}, both)
                  .find("compile: layer conv2d_0: stride 2 and dilationRate 1x2 both exceed 1 "
                        "along an axis (TensorFlow allows one or the other)"),
              std::string::npos)
        << compileError({9, 9, 1}, both);
    Conv2D wide{4, 3};
    wide.dilationRate = {1, 4};
    EXPECT_NE(compileError({9, 8, 1}, wide)
                  .find("compile: layer conv2d_0: a 3x3 window dilated 1x4 (spanning 3x9) "
                        "does not fit the input [9, 8, 1] with 'valid' padding"),
              std::string::npos)
        << compileError({9, 8, 1}, wide);
    // Keras's output sizes: valid (in - span) / s + 1, same ceil(in / s).
    Sequential m(ctx, Shape3{11, 10, 2});
    Conv2D a{3, {3, 1}, {2, 3}}, b{2, {2, 3}, 1, Padding::Same};
    b.dilationRate = {3, 2};
    m.add(a).add(b).add(Flatten{}).add(Dense{2});
    m.compile({});
    EXPECT_EQ(m.outputShape(0), (Shape3{5, 4, 3}));
    EXPECT_EQ(m.outputShape(1), (Shape3{5, 4, 2}));
    EXPECT_EQ(parameterCount(a, Shape3{11, 10, 2}), 3 * 1 * 2 * 3 + 3);
    EXPECT_EQ(layerVariables(b, Shape3{5, 4, 3})[0].shape, (std::vector<int64_t>{2, 3, 3, 2}));  // HWIO
}

TEST(ModelConvFamily, Conv2DSizesRoundTripThroughModelJsonAndTfjs) {
    Conv2D c{6, {2, 5}, {1, 3}, Padding::Same};
    c.dilationRate = {2, 1};
    const nlohmann::json j(layerToJson(c));
    EXPECT_EQ(j.at("kernelSize"), (nlohmann::json{2, 5}));
    EXPECT_EQ(j.at("stride"), (nlohmann::json{1, 3}));
    EXPECT_EQ(j.at("dilationRate"), (nlohmann::json{2, 1}));
    EXPECT_EQ(layerToJson(Conv2D{6, 4}).at("kernelSize"), 4);  // square: one number, as before
    const Conv2D back = std::get<Conv2D>(layerFromJson(j, "t"));
    EXPECT_EQ(back.kernelSize, (Size2{2, 5}));
    EXPECT_EQ(back.stride, (Size2{1, 3}));
    EXPECT_EQ(back.dilationRate, (Size2{2, 1}));
    EXPECT_EQ(message([] {
                  layerFromJson(nlohmann::json::parse(R"({"type": "conv2d", "filters": 2, "kernelSize": [3, 4, 5]})"),
                                "m.json", "layers[0]");
              }),
              "m.json: layers[0].kernelSize: expected a positive integer or [height, width], got an array of 3 values");

    // TF.js: kernel_size, strides and dilation_rate as [h, w], and back.
    Context& ctx = test::cpuContext();
    Sequential m(ctx, Shape3{9, 12, 2});
    m.add(c).add(Flatten{}).add(Dense{2});
    m.compile({});
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    const auto& conv = json["modelTopology"]["config"]["layers"][0]["config"];
    EXPECT_EQ(conv["kernel_size"], (nlohmann::json{2, 5}));
    EXPECT_EQ(conv["strides"], (nlohmann::json{1, 3}));
    EXPECT_EQ(conv["dilation_rate"], (nlohmann::json{2, 1}));
    const TfjsModel parsed = parseTfjs(a.modelJson, a.weightData);
    const Conv2D imported = std::get<Conv2D>(parsed.layers[0]);
    EXPECT_EQ(imported.kernelSize, (Size2{2, 5}));
    EXPECT_EQ(imported.stride, (Size2{1, 3}));
    EXPECT_EQ(imported.dilationRate, (Size2{2, 1}));
}

}  // namespace model_conv_family_test
}  // namespace
