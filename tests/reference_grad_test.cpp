// CPU reference: activations, dense layer, softmax and losses. Forward values
// by hand, every backward by central differences in double precision, and
// the numerical edge cases (±1e4 logits, NaN).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "reference_test_util.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace reference_grad_test {

namespace {

using namespace gltrain;
using namespace reftest;
namespace r = gltrain::ref;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::pair<int, int> kShapes[] = {{1, 1}, {3, 5}, {7, 4}};

bool allFinite(const MatD& m) {
    for (double v : m.data)
        if (!std::isfinite(v)) return false;
    return true;
}
bool allFinite(const MatF& m) { return allFinite(m.cast<double>()); }

// Moves values off the ReLU/LeakyReLU kink at 0, where the derivative jumps
// and a central difference straddling it would be meaningless.
MatD awayFromZero(MatD m) {
    for (double& v : m.data)
        if (std::fabs(v) < 0.05) v += v < 0 ? -0.1 : 0.1;
    return m;
}

// ---------------------------------------------------------------- activations

TEST(ReferenceActivation, HandComputedValues) {
    const MatD Z(1, 5, {-2, -0.5, 0, 0.5, 2});
    const double a = 0.1;
    EXPECT_TRUE(matricesNear(r::activate(Z, Activation::Linear), Z, 0.0));
    EXPECT_TRUE(matricesNear(r::activate(Z, Activation::ReLU), MatD(1, 5, {0, 0, 0, 0.5, 2}), 0.0));
    EXPECT_TRUE(matricesNear(r::activate(Z, Activation::LeakyReLU, a), MatD(1, 5, {-0.2, -0.05, 0, 0.5, 2}), 1e-16));
    EXPECT_TRUE(matricesNear(
        r::activate(Z, Activation::Sigmoid),
        MatD(1, 5, {0.11920292202211755, 1 - 0.6224593312018546, 0.5, 0.6224593312018546, 0.8807970779778823}), 1e-15));
    EXPECT_TRUE(matricesNear(
        r::activate(Z, Activation::Tanh),
        MatD(1, 5, {-0.9640275800758169, -0.46211715726000974, 0, 0.46211715726000974, 0.9640275800758169}), 1e-15));
    // GELU(1) = 0.5 (1 + tanh(sqrt(2/pi) * 1.044715))
    const MatD g = r::activate(MatD(1, 3, {-1, 1, 2}), Activation::GELU);
    EXPECT_TRUE(matricesNear(g, MatD(1, 3, {-0.15880800939172324, 0.8411919906082768, 1.954597694087775}), 1e-15));
    const MatD s = r::activate(MatD(1, 4, {0, -2, 1e4, -50}), Activation::Softplus);
    EXPECT_TRUE(
        matricesNear(s, MatD(1, 4, {0.6931471805599453, 0.1269280110429725, 1e4, 1.9287498479639178e-22}), 0.0, 1e-15));
}

// The newer activations at -1.5, 0.7 and 3 (and past their clips), against values computed
// independently in Python's math module (erf, expm1, log1p).
TEST(ReferenceActivation, HandComputedValuesOfTheNewerOnes) {
    const MatD Z(1, 3, {-1.5, 0.7, 3});
    auto near = [&](Activation act, std::vector<double> want, double alpha = 0.01) {
        EXPECT_TRUE(matricesNear(r::activate(Z, act, alpha), MatD(1, 3, std::move(want)), 1e-15, 1e-15))
            << activationName(act);
    };
    near(Activation::ELU, {-0.3884349199257851, 0.7, 3}, 0.5);
    near(Activation::SELU, {-1.3658143533672527, 0.7354906911488363, 3.1521029620664414});
    near(Activation::ReLU6, {0, 0.7, 3});
    near(Activation::Swish, {-0.2736382857095345, 0.46773144051771626, 2.8577223804673});
    near(Activation::Mish, {-0.29809974216680674, 0.5611483776438518, 2.9865350049679575});
    near(Activation::HardSigmoid, {0.19999999999999996, 0.64, 1});
    near(Activation::Softsign, {-0.6, 0.4117647058823529, 0.75});
    near(Activation::GELUExact, {-0.10021080190328713, 0.5306254434438489, 2.99595030590511});
    // The clips: ReLU6 at 6, HardSigmoid at 0 and 1.
    EXPECT_EQ(r::activate(MatD(1, 1, 7.5), Activation::ReLU6)(0, 0), 6.0);
    EXPECT_EQ(r::activate(MatD(1, 1, -3.0), Activation::HardSigmoid)(0, 0), 0.0);
    // GELUExact keeps its tail where 1 + erf would round to 0: -10 Phi(-10) = -7.6198530241605e-23.
    EXPECT_NEAR(r::activate(MatD(1, 1, -10.0), Activation::GELUExact)(0, 0), -7.6198530241605e-23, 1e-35);
}

TEST(ReferenceActivation, DerivativesAtZeroFollowTheDocumentedConvention) {
    const MatD Z(1, 1, 0.0), dY(1, 1, 1.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::ReLU)(0, 0), 0.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::LeakyReLU, 0.2)(0, 0), 0.2);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::Linear)(0, 0), 1.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::Sigmoid)(0, 0), 0.25);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::Tanh)(0, 0), 1.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::GELU)(0, 0), 0.5);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::Softplus)(0, 0), 0.5);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::ELU, 0.3)(0, 0), 0.3);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::ReLU6)(0, 0), 0.0);
    EXPECT_EQ(r::activationGrad(dY, MatD(1, 1, 6.0), Activation::ReLU6)(0, 0), 0.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::HardSigmoid)(0, 0), 0.2);
    EXPECT_EQ(r::activationGrad(dY, MatD(1, 1, 2.5), Activation::HardSigmoid)(0, 0), 0.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::Swish)(0, 0), 0.5);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::Softsign)(0, 0), 1.0);
    EXPECT_EQ(r::activationGrad(dY, Z, Activation::GELUExact)(0, 0), 0.5);
    EXPECT_NEAR(r::activationGrad(dY, Z, Activation::Mish)(0, 0), 0.6, 1e-15);  // tanh(log 2) = 3/5
    EXPECT_NEAR(r::activationGrad(dY, Z, Activation::SELU)(0, 0), 1.7580993408473766, 1e-15);
}

TEST(ReferenceActivation, GradMatchesFiniteDifferences) {
    const double alpha = 0.1;
    for (Activation act : kAllActivations)
        for (auto [rows, cols] : kShapes) {
            const MatD Z = awayFromZero(randomMatrix(rows, cols, 11, -3, 3));
            const MatD R = randomMatrix(rows, cols, 12);  // dY
            const MatD numeric =
                numericGrad(Z, [&](const MatD& z) { return weightedSum(R, r::activate(z, act, alpha)); });
            EXPECT_TRUE(matricesNear(r::activationGrad(R, Z, act, alpha), numeric, kGradAbsTol, kGradRelTol))
                << activationName(act) << " " << rows << "x" << cols;
        }
}

TEST(ReferenceActivation, ExtremeInputsStayFinite) {
    const MatF Z(1, 6, {-1e4f, -100.f, -30.f, 30.f, 100.f, 1e4f});
    const MatF ones(1, 6, 1.0f);
    for (Activation act : kAllActivations) {
        EXPECT_TRUE(allFinite(r::activate(Z, act))) << activationName(act);
        EXPECT_TRUE(allFinite(r::activationGrad(ones, Z, act))) << activationName(act);
    }
    const MatF sig = r::activate(Z, Activation::Sigmoid);
    EXPECT_EQ(sig(0, 0), 0.0f);
    EXPECT_EQ(sig(0, 5), 1.0f);
    EXPECT_EQ(r::activate(Z, Activation::Softplus)(0, 5), 1e4f);
    EXPECT_EQ(r::activate(Z, Activation::GELU)(0, 5), 1e4f);
    // GELU's derivative where z^3 overflows float stays 0 / 1 rather than NaN.
    const MatF huge(1, 2, {-1e30f, 1e30f});
    EXPECT_TRUE(matricesNear(r::activationGrad(MatF(1, 2, 1.0f), huge, Activation::GELU), MatF(1, 2, {0.f, 1.f}), 0.0));
}

TEST(ReferenceActivation, NaNPropagatesThroughEveryForward) {
    const MatD Z(1, 1, kNaN);
    for (Activation act : kAllActivations) EXPECT_TRUE(std::isnan(r::activate(Z, act)(0, 0))) << activationName(act);
}

// ---------------------------------------------------------------- dense

TEST(ReferenceDense, HandComputedForward) {
    const MatD X(2, 2, {1, -1, 2, 0.5});
    const MatD W(2, 3, {1, 0, -2, 1, 3, 1});
    const MatD b(1, 3, {0.5, -1, 0});
    // X W = [[0, -3, -3], [2.5, 1.5, -3.5]], + b = [[0.5, -4, -3], [3, 0.5, -3.5]]
    EXPECT_TRUE(matricesNear(r::densePreactivation(X, W, b), MatD(2, 3, {0.5, -4, -3, 3, 0.5, -3.5}), 0.0));
    EXPECT_TRUE(matricesNear(r::dense(X, W, b, Activation::ReLU), MatD(2, 3, {0.5, 0, 0, 3, 0.5, 0}), 0.0));
}

TEST(ReferenceDense, BackwardMatchesFiniteDifferences) {
    for (Activation act : kAllActivations)
        for (auto [n, in, out] : {std::tuple{1, 1, 1}, std::tuple{7, 4, 5}, std::tuple{3, 5, 2}}) {
            const MatD X = randomMatrix(n, in, 21, -2, 2), W = randomMatrix(in, out, 22), b = randomMatrix(1, out, 23);
            const MatD R = randomMatrix(n, out, 24);
            const MatD Z = r::densePreactivation(X, W, b);
            const r::DenseGrads<double> g = r::denseBackward(X, W, Z, R, act, 0.1);
            const auto loss = [&](const MatD& x, const MatD& w, const MatD& bb) {
                return weightedSum(R, r::dense(x, w, bb, act, 0.1));
            };
            const std::string what = std::string(activationName(act)) + " " + std::to_string(n) + "x" +
                                     std::to_string(in) + "x" + std::to_string(out);
            EXPECT_TRUE(matricesNear(g.dX, numericGrad(X, [&](const MatD& x) { return loss(x, W, b); }), kGradAbsTol,
                                     kGradRelTol))
                << "dX " << what;
            EXPECT_TRUE(matricesNear(g.dW, numericGrad(W, [&](const MatD& w) { return loss(X, w, b); }), kGradAbsTol,
                                     kGradRelTol))
                << "dW " << what;
            EXPECT_TRUE(matricesNear(g.db, numericGrad(b, [&](const MatD& bb) { return loss(X, W, bb); }), kGradAbsTol,
                                     kGradRelTol))
                << "db " << what;
        }
}

// ---------------------------------------------------------------- softmax + cross-entropy

TEST(ReferenceSoftmax, HandComputed) {
    const MatD P = r::softmaxRows(MatD(2, 3, {1, 2, 3, 0, 0, 0}));
    EXPECT_TRUE(matricesNear(
        P, MatD(2, 3, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1 / 3.0, 1 / 3.0, 1 / 3.0}), 1e-16,
        1e-15));
    // Shift invariance: softmax(x + 1000) == softmax(x).
    EXPECT_TRUE(
        matricesNear(r::softmaxRows(MatD(1, 3, {1001, 1002, 1003})), r::softmaxRows(MatD(1, 3, {1, 2, 3})), 1e-15));
}

TEST(ReferenceSoftmax, CrossEntropyHandComputed) {
    const MatD logits(2, 3, {1, 2, 3, 1, 2, 3});
    const r::RowLoss<double> ce = r::softmaxCrossEntropy(logits, {2, 0});
    EXPECT_TRUE(matricesNear(ce.lossPerRow, MatD(2, 1, {0.4076059644443803, 2.40760596444438}), 1e-15));
    EXPECT_NEAR(ce.mean(), (0.4076059644443803 + 2.40760596444438) / 2, 1e-15);
    // grad = (p - onehot) / N
    EXPECT_TRUE(matricesNear(ce.grad,
                             MatD(2, 3,
                                  {0.09003057317038046 / 2, 0.24472847105479767 / 2, (0.6652409557748219 - 1) / 2,
                                   (0.09003057317038046 - 1) / 2, 0.24472847105479767 / 2, 0.6652409557748219 / 2}),
                             1e-16));
    // The one-hot form agrees with the label form.
    const r::RowLoss<double> oh = r::softmaxCrossEntropyOneHot(logits, MatD(2, 3, {0, 0, 1, 1, 0, 0}));
    EXPECT_TRUE(matricesNear(oh.lossPerRow, ce.lossPerRow, 1e-15));
    EXPECT_TRUE(matricesNear(oh.grad, ce.grad, 1e-16));
}

TEST(ReferenceSoftmax, CrossEntropyGradMatchesFiniteDifferences) {
    for (auto [n, c] : {std::pair{1, 1}, std::pair{3, 5}, std::pair{7, 4}}) {
        const MatD logits = randomMatrix(n, c, 31, -3, 3);
        std::vector<int> labels(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) labels[size_t(i)] = (3 * i + 1) % c;
        const MatD numeric =
            numericGrad(logits, [&](const MatD& x) { return r::softmaxCrossEntropy(x, labels).mean(); });
        EXPECT_TRUE(matricesNear(r::softmaxCrossEntropy(logits, labels).grad, numeric, kGradAbsTol, kGradRelTol))
            << "labels " << n << "x" << c;

        // Label-smoothed targets: rows sum to 1, so grad = (p - t) / N is exact.
        MatD targets(n, c, 0.1 / c);
        for (int i = 0; i < n; ++i) targets(i, labels[size_t(i)]) += 0.9;
        const MatD numericOh =
            numericGrad(logits, [&](const MatD& x) { return r::softmaxCrossEntropyOneHot(x, targets).mean(); });
        EXPECT_TRUE(
            matricesNear(r::softmaxCrossEntropyOneHot(logits, targets).grad, numericOh, kGradAbsTol, kGradRelTol))
            << "one-hot " << n << "x" << c;
    }
}

template <class T>
void checkHugeLogits() {
    using M = HostMatrixT<T>;
    const M logits(3, 3, {T(1e4), T(-1e4), T(0), T(-1e4), T(-1e4), T(-1e4), T(1e4), T(1e4), T(-1e4)});
    const M P = r::softmaxRows(logits);
    EXPECT_TRUE(allFinite(P.template cast<double>()));
    EXPECT_EQ(P(0, 0), T(1));
    EXPECT_EQ(P(0, 1), T(0));
    EXPECT_NEAR(double(P(1, 0)), 1.0 / 3, 1e-6);
    EXPECT_EQ(P(2, 0), T(0.5));
    const r::RowLoss<T> ce = r::softmaxCrossEntropy(logits, {1, 2, 0});
    EXPECT_TRUE(allFinite(ce.lossPerRow.template cast<double>()));
    EXPECT_TRUE(allFinite(ce.grad.template cast<double>()));
    EXPECT_NEAR(double(ce.lossPerRow(0, 0)), 2e4, 1e-3);  // lse = 1e4, logit = -1e4
    EXPECT_NEAR(double(ce.lossPerRow(1, 0)), std::log(3.0), 1e-3);
    EXPECT_NEAR(double(ce.lossPerRow(2, 0)), std::log(2.0), 1e-3);
    const r::RowLoss<T> oh = r::softmaxCrossEntropyOneHot(logits, M(3, 3, {0, 1, 0, 0, 0, 1, 1, 0, 0}));
    EXPECT_TRUE(matricesNear(oh.lossPerRow, ce.lossPerRow, 0.0));
}

TEST(ReferenceSoftmax, HugeLogitsStayFinite) {
    checkHugeLogits<float>();
    checkHugeLogits<double>();
}

// Documented: a NaN anywhere in a row makes that whole row of softmax, the
// row's loss and its gradient NaN; other rows are untouched.
TEST(ReferenceSoftmax, NaNPoisonsItsRowOnly) {
    for (int nanCol : {0, 1, 2}) {
        MatD logits(2, 3, {1, 2, 3, 1, 2, 3});
        logits(0, nanCol) = kNaN;
        const MatD P = r::softmaxRows(logits);
        for (int c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(P(0, c))) << nanCol << " " << c;
        EXPECT_TRUE(matricesNear(MatD(1, 3, {P(1, 0), P(1, 1), P(1, 2)}),
                                 MatD(1, 3, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}), 1e-15));
        const r::RowLoss<double> ce = r::softmaxCrossEntropy(logits, {0, 0});
        EXPECT_TRUE(std::isnan(ce.lossPerRow(0, 0)));
        EXPECT_TRUE(std::isfinite(ce.lossPerRow(1, 0)));
        EXPECT_TRUE(std::isnan(ce.grad(0, 2)));
        EXPECT_TRUE(std::isfinite(ce.grad(1, 2)));
    }
}

TEST(ReferenceSoftmax, LogSumExp) {
    EXPECT_TRUE(matricesNear(r::logSumExpRows(MatD(2, 2, {0, 0, 1e4, 1e4})),
                             MatD(2, 1, {std::log(2.0), 1e4 + std::log(2.0)}), 1e-12));
}

// ---------------------------------------------------------------- MSE, BCE

TEST(ReferenceLoss, MseHandComputed) {
    const r::ScalarLoss<double> l = r::mse(MatD(2, 2, {1, 2, 3, 4}), MatD(2, 2, {0, 2, 5, 4}));
    EXPECT_DOUBLE_EQ(l.loss, 1.25);  // (1 + 0 + 4 + 0) / 4
    EXPECT_TRUE(matricesNear(l.grad, MatD(2, 2, {0.5, 0, -1, 0}), 0.0));
    const r::ScalarLoss<float> f = r::mse(MatF(1, 1, 3.f), MatF(1, 1, 1.f));
    EXPECT_EQ(f.loss, 4.f);
    EXPECT_EQ(f.grad(0, 0), 4.f);
}

TEST(ReferenceLoss, BceWithLogitsHandComputed) {
    const r::ScalarLoss<double> l = r::binaryCrossEntropyWithLogits(MatD(1, 2, {0, 2}), MatD(1, 2, {1, 0}));
    // (log 2 + (2 + log1p(e^-2))) / 2
    EXPECT_NEAR(l.loss, 1.410037595801459, 1e-15);
    EXPECT_TRUE(matricesNear(l.grad, MatD(1, 2, {-0.25, 0.44039853898894116}), 1e-16));
    // Stable at ±1e4 in float: loss is |x| when the target is wrong, 0 when right.
    const r::ScalarLoss<float> big =
        r::binaryCrossEntropyWithLogits(MatF(1, 4, {1e4f, -1e4f, 1e4f, -1e4f}), MatF(1, 4, {0, 1, 1, 0}));
    EXPECT_FLOAT_EQ(big.loss, 5e3f);
    EXPECT_TRUE(matricesNear(big.grad, MatF(1, 4, {0.25f, -0.25f, 0, 0}), 0.0));
}

TEST(ReferenceLoss, GradsMatchFiniteDifferences) {
    for (auto [n, c] : kShapes) {
        const MatD pred = randomMatrix(n, c, 41, -3, 3), target = randomMatrix(n, c, 42, -1, 1);
        EXPECT_TRUE(matricesNear(r::mse(pred, target).grad,
                                 numericGrad(pred, [&](const MatD& p) { return r::mse(p, target).loss; }), kGradAbsTol,
                                 kGradRelTol))
            << "mse " << n << "x" << c;
        const MatD probs = randomMatrix(n, c, 43, 0, 1);  // soft targets in [0, 1)
        EXPECT_TRUE(matricesNear(
            r::binaryCrossEntropyWithLogits(pred, probs).grad,
            numericGrad(pred, [&](const MatD& x) { return r::binaryCrossEntropyWithLogits(x, probs).loss; }),
            kGradAbsTol, kGradRelTol))
            << "bce " << n << "x" << c;
    }
}

}  // namespace

}  // namespace reference_grad_test
}  // namespace
