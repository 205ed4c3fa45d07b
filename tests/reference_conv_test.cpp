// CPU reference: convolution, pooling and batch normalization. Forward values
// by hand on tiny cases, every backward by central differences in double
// (tolerances: reference_test_util.hpp), over odd shapes, strides and both
// paddings.
#include <string>
#include <tuple>
#include <vector>

#include "reference_test_util.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace reference_conv_test {

namespace {

using namespace gltrain;
using namespace reftest;
namespace r = gltrain::ref;

struct ConvCase {
    Shape3 in;
    int k, stride;
    Padding padding;
    int filters, batch;
};
const ConvCase kConvCases[] = {
    {{7, 5, 3}, 3, 2, Padding::Same, 2, 1},   // the example: 1x7x5x3, 3x3, stride 2, same
    {{6, 6, 1}, 5, 1, Padding::Valid, 3, 2},  // 5x5 valid, one input channel
    {{5, 4, 2}, 1, 1, Padding::Same, 3, 2},   // 1x1
    {{4, 3, 2}, 7, 1, Padding::Same, 1, 1},   // window larger than the image
    {{5, 5, 4}, 3, 2, Padding::Valid, 4, 2},
};
std::string name(const ConvCase& c) {
    return c.in.str() + " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " " + paddingName(c.padding);
}
Window windowOf(const ConvCase& c, int outChannels) {
    return Window::make("test", c.in, c.k, c.k, c.stride, c.stride, c.padding, outChannels);
}

TEST(ReferenceConv, WindowFollowsTensorFlowSizes) {
    Window w = Window::make("t", {7, 5, 3}, 3, 3, 2, 2, Padding::Same, 4);
    EXPECT_EQ(w.out, (Shape3{4, 3, 4}));
    EXPECT_EQ(w.padTop, 1);   // total (4-1)*2+3-7 = 2
    EXPECT_EQ(w.padLeft, 1);  // total (3-1)*2+3-5 = 2
    w = Window::make("t", {28, 28, 1}, 5, 5, 1, 1, Padding::Valid, 8);
    EXPECT_EQ(w.out, (Shape3{24, 24, 8}));
    w = Window::make("t", {6, 6, 1}, 2, 2, 2, 2, Padding::Same, 1);
    EXPECT_EQ(w.out, (Shape3{3, 3, 1}));
    EXPECT_EQ(w.padTop, 0);
    w = Window::make("t", {5, 5, 1}, 4, 4, 1, 1, Padding::Same, 1);
    EXPECT_EQ(w.padTop, 1);  // total 3: one before, two after (TensorFlow)
    EXPECT_THROW(Window::make("conv", {3, 3, 1}, 5, 5, 1, 1, Padding::Valid, 1), ArgumentError);
    EXPECT_THROW(Window::make("conv", {3, 3, 1}, 3, 3, 0, 1, Padding::Valid, 1), ArgumentError);
}

TEST(ReferenceConv, HandComputedValues) {
    // 1 sample, 3x3x1 image, 2x2 filter of ones, valid, stride 1; bias 0.5.
    const MatD X(1, 9, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    const MatD W(4, 1, {1, 1, 1, 1}), b(1, 1, 0.5);
    Window w = Window::make("t", {3, 3, 1}, 2, 2, 1, 1, Padding::Valid, 1);
    EXPECT_TRUE(matricesNear(r::conv2d(X, W, b, w), MatD(1, 4, {12.5, 16.5, 24.5, 28.5}), 1e-12));
    // Same padding, stride 2: windows at (0,0) with one pixel of padding before? total = 1*2+2-3 = 1 -> 0 before.
    Window s = Window::make("t", {3, 3, 1}, 2, 2, 2, 2, Padding::Same, 1);
    EXPECT_TRUE(matricesNear(r::conv2d(X, W, b, s), MatD(1, 4, {12.5, 9.5, 15.5, 9.5}), 1e-12));
    Window p = Window::make("t", {3, 3, 1}, 2, 2, 1, 1, Padding::Valid, 1);
    EXPECT_TRUE(matricesNear(r::pool2d(X, p, PoolKind::Max), MatD(1, 4, {5, 6, 8, 9}), 0.0));
    EXPECT_TRUE(matricesNear(r::pool2d(X, p, PoolKind::Average), MatD(1, 4, {3, 4, 6, 7}), 1e-15));
    // Same-padded average pooling counts only the in-bounds taps.
    EXPECT_TRUE(matricesNear(r::pool2d(X, s, PoolKind::Average), MatD(1, 4, {3, 4.5, 7.5, 9}), 1e-15));
}

TEST(ReferenceConv, GradientsMatchFiniteDifferences) {
    for (const ConvCase& c : kConvCases) {
        Window w = windowOf(c, c.filters);
        const MatD X = randomMatrix(c.batch, c.in.size(), 1);
        const MatD W = randomMatrix(c.k * c.k * c.in.channels, c.filters, 2);
        const MatD b = randomMatrix(1, c.filters, 3);
        const MatD R = randomMatrix(c.batch, w.out.size(), 4);
        auto loss = [&](const MatD& x, const MatD& wt, const MatD& bb) {
            return weightedSum(R, r::conv2d(x, wt, bb, w));
        };
        EXPECT_TRUE(matricesNear(r::conv2dBackwardInput(R, W, w),
                                 numericGrad(X, [&](const MatD& x) { return loss(x, W, b); }), kGradAbsTol,
                                 kGradRelTol))
            << name(c);
        EXPECT_TRUE(matricesNear(r::conv2dBackwardFilter(X, R, w),
                                 numericGrad(W, [&](const MatD& wt) { return loss(X, wt, b); }), kGradAbsTol,
                                 kGradRelTol))
            << name(c);
        EXPECT_TRUE(matricesNear(r::channelSum(R, c.filters),
                                 numericGrad(b, [&](const MatD& bb) { return loss(X, W, bb); }), kGradAbsTol,
                                 kGradRelTol))
            << name(c);
    }
}

TEST(ReferencePool, GradientsMatchFiniteDifferences) {
    for (const ConvCase& c : kConvCases) {
        if (c.k > c.in.height || c.k > c.in.width) continue;
        Window w = windowOf(c, c.in.channels);
        // Distinct values spaced >> h, so no max changes under the perturbation.
        MatD X(c.batch, c.in.size());
        for (size_t i = 0; i < X.data.size(); ++i) X.data[i] = double((i * 37) % 101) * 0.01;
        const MatD R = randomMatrix(c.batch, w.out.size(), 5);
        for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
            auto f = [&](const MatD& x) { return weightedSum(R, r::pool2d(x, w, kind)); };
            EXPECT_TRUE(matricesNear(r::pool2dBackward(X, R, w, kind), numericGrad(X, f, 1e-5), kGradAbsTol, 1e-6))
                << name(c) << (kind == PoolKind::Max ? " max" : " average");
        }
    }
}

TEST(ReferencePool, MaxTiesGoToTheFirstTapInRowMajorOrder) {
    const MatD X(1, 4, {1, 3, 3, 3});  // 2x2x1, one 2x2 window
    Window w = Window::make("t", {2, 2, 1}, 2, 2, 1, 1, Padding::Valid, 1);
    EXPECT_TRUE(matricesNear(r::pool2dBackward(X, MatD(1, 1, 1.0), w, PoolKind::Max), MatD(1, 4, {0, 1, 0, 0}), 0.0));
}

TEST(ReferenceBatchNorm, NormalisesEachChannel) {
    // 2 samples, 2 pixels, 2 channels: channel 0 = {1, 3, 5, 7}, channel 1 = {2, 2, 2, 2}.
    const MatD X(2, 4, {1, 2, 3, 2, 5, 2, 7, 2});
    auto s = r::batchStats(X, 2);
    EXPECT_TRUE(matricesNear(s.mean, MatD(1, 2, {4, 2}), 1e-15));
    EXPECT_TRUE(matricesNear(s.var, MatD(1, 2, {5, 0}), 1e-15));
    MatD Y = r::batchNormApply(X, s.mean, s.var, MatD(1, 2, {2, 1}), MatD(1, 2, {1, -1}), 0.0 + 1e-12);
    EXPECT_NEAR(Y(0, 0), 2 * (1 - 4) / std::sqrt(5.0) + 1, 1e-9);
    EXPECT_NEAR(Y(1, 3), -1, 1e-9);
}

TEST(ReferenceBatchNorm, GradientsMatchFiniteDifferences) {
    const double eps = 1e-3;
    for (const auto& shape : std::vector<std::tuple<int, int, int>>{{3, 1, 5}, {2, 6, 3}, {4, 3, 4}}) {
        // (Plain variables: C++17 lambdas cannot capture structured bindings.)
        const int rows = std::get<0>(shape), pixels = std::get<1>(shape), channels = std::get<2>(shape);
        const MatD X = randomMatrix(rows, pixels * channels, 6, -2, 2);
        const MatD gamma = randomMatrix(1, channels, 7, 0.5, 1.5), beta = randomMatrix(1, channels, 8);
        const MatD R = randomMatrix(rows, pixels * channels, 9);
        auto f = [&](const MatD& x, const MatD& g, const MatD& b) {
            auto s = r::batchStats(x, channels);
            return weightedSum(R, r::batchNormApply(x, s.mean, s.var, g, b, eps));
        };
        auto grads = r::batchNormBackward(X, R, gamma, eps);
        const std::string where = std::to_string(rows) + "x" + std::to_string(pixels) + "x" + std::to_string(channels);
        EXPECT_TRUE(
            matricesNear(grads.dX, numericGrad(X, [&](const MatD& x) { return f(x, gamma, beta); }), 1e-8, 1e-5))
            << where;
        EXPECT_TRUE(matricesNear(grads.dGamma, numericGrad(gamma, [&](const MatD& g) { return f(X, g, beta); }),
                                 kGradAbsTol, kGradRelTol))
            << where;
        EXPECT_TRUE(matricesNear(grads.dBeta, numericGrad(beta, [&](const MatD& b) { return f(X, gamma, b); }),
                                 kGradAbsTol, kGradRelTol))
            << where;
    }
}

}  // namespace

}  // namespace reference_conv_test
}  // namespace
