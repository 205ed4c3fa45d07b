// CPU reference: activation names, matmul, bias, element-wise ops,
// reductions, global norm, argmax, and the shape errors of every op.
#include <cmath>
#include <limits>
#include <vector>

#include "reference_test_util.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace reference_test {

namespace {

using namespace gltrain;
using namespace reftest;
namespace r = gltrain::ref;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- names

TEST(ReferenceActivationName, RoundTripsEveryActivation) {
    for (Activation a : kAllActivations) EXPECT_EQ(parseActivation(activationName(a)), a) << activationName(a);
    EXPECT_STREQ(activationName(Activation::LeakyReLU), "leaky_relu");
    EXPECT_EQ(parseActivation("ReLU"), Activation::ReLU);
    EXPECT_EQ(parseActivation("GELU"), Activation::GELU);
    EXPECT_EQ(parseActivation("SiLU"), Activation::Swish);  // an alias, read but never written
    EXPECT_STREQ(activationName(Activation::Swish), "swish");
}

TEST(ReferenceActivationName, UnknownNameListsTheValidOnes) {
    expectArgumentError([] { parseActivation("swoosh"); },
                        {"'swoosh'", "linear", "relu", "leaky_relu", "sigmoid", "tanh", "gelu", "softplus", "elu",
                         "selu", "relu6", "swish", "mish", "hard_sigmoid", "softsign", "gelu_exact", "silu"});
}

// ---------------------------------------------------------------- matmul

TEST(ReferenceMatmul, HandComputed) {
    const MatD A(2, 3, {1, 2, 3, 4, 5, 6});
    const MatD B(3, 2, {7, 8, 9, 10, 11, 12});
    const MatD expected(2, 2, {58, 64, 139, 154});
    EXPECT_TRUE(matricesNear(r::matmul(A, B), expected, 0.0));
    EXPECT_TRUE(matricesNear(r::matmulTN(MatD(3, 2, {1, 4, 2, 5, 3, 6}), B), expected, 0.0));
    EXPECT_TRUE(matricesNear(r::matmulNT(A, MatD(2, 3, {7, 9, 11, 8, 10, 12})), expected, 0.0));
    EXPECT_TRUE(matricesNear(r::matmul(MatF(1, 1, 3.f), MatF(1, 1, -2.f)), MatF(1, 1, -6.f), 0.0));
}

TEST(ReferenceMatmul, EmptyInnerDimensionGivesZeros) {
    EXPECT_TRUE(matricesNear(r::matmul(MatD(2, 0), MatD(0, 3)), MatD(2, 3), 0.0));
}

TEST(ReferenceMatmul, MatchesNaiveTripleLoop) {
    const MatD A = randomMatrix(7, 11, 1), B = randomMatrix(11, 5, 2);
    MatD C(7, 5);
    for (int i = 0; i < 7; ++i)
        for (int j = 0; j < 5; ++j) {
            long double s = 0;
            for (int k = 0; k < 11; ++k) s += (long double)A(i, k) * B(k, j);
            C(i, j) = double(s);
        }
    EXPECT_TRUE(matricesNear(r::matmul(A, B), C, 1e-14));
}

// matmulTN / matmulNT against matmul with an explicitly transposed operand.
// Both sum over k in the same order, so they agree to within the error an
// FMA contraction could introduce: K * eps * (|A| |B|)_ij.
template <class T>
void checkTransposedVariants(int M, int K, int N, uint32_t seed) {
    const HostMatrixT<T> A = randomMatrix(M, K, seed).template cast<T>();
    const HostMatrixT<T> B = randomMatrix(K, N, seed + 1).template cast<T>();
    HostMatrixT<T> absA = A, absB = B;
    for (T& v : absA.data) v = std::abs(v);
    for (T& v : absB.data) v = std::abs(v);
    const HostMatrixT<T> bound = r::matmul(absA, absB);
    const HostMatrixT<T> C = r::matmul(A, B);
    const HostMatrixT<T> tn = r::matmulTN(r::transpose(A), B);
    const HostMatrixT<T> nt = r::matmulNT(A, r::transpose(B));
    ASSERT_EQ(tn.rows, M);
    ASSERT_EQ(tn.cols, N);
    for (size_t i = 0; i < C.size(); ++i) {
        const double tol = 2.0 * K * std::numeric_limits<T>::epsilon() * double(bound.data[i]);
        EXPECT_NEAR(double(tn.data[i]), double(C.data[i]), tol) << M << "x" << K << "x" << N << " at " << i;
        EXPECT_NEAR(double(nt.data[i]), double(C.data[i]), tol) << M << "x" << K << "x" << N << " at " << i;
    }
}

TEST(ReferenceMatmul, TransposedVariantsMatchExplicitTranspose) {
    checkTransposedVariants<double>(1, 1, 1, 10);
    checkTransposedVariants<double>(3, 5, 7, 20);
    checkTransposedVariants<double>(127, 129, 3, 30);
    checkTransposedVariants<float>(127, 129, 3, 40);
    for (int K : {1, 3, 64, 1000}) {
        checkTransposedVariants<double>(5, K, 6, 50 + uint32_t(K));
        checkTransposedVariants<float>(5, K, 6, 60 + uint32_t(K));
    }
}

TEST(ReferenceMatmul, TransposeIsAnInvolution) {
    const MatD A = randomMatrix(3, 5, 3);
    const MatD At = r::transpose(A);
    EXPECT_EQ(At.rows, 5);
    EXPECT_EQ(At(4, 2), A(2, 4));
    EXPECT_TRUE(matricesNear(r::transpose(At), A, 0.0));
}

// ---------------------------------------------------------------- bias, element-wise

TEST(ReferenceBias, AddBiasBroadcastsTheRow) {
    const MatD X(3, 2, {1, 2, 3, 4, 5, 6});
    EXPECT_TRUE(matricesNear(r::addBias(X, MatD(1, 2, {10, 20})), MatD(3, 2, {11, 22, 13, 24, 15, 26}), 0.0));
    EXPECT_TRUE(matricesNear(r::biasGrad(X), MatD(1, 2, {9, 12}), 0.0));
    EXPECT_TRUE(matricesNear(r::biasGrad(MatD(0, 3)), MatD(1, 3), 0.0));
}

TEST(ReferenceBias, BiasGradIsTheGradientOfAddBias) {
    for (auto [rows, cols] : {std::pair{1, 1}, std::pair{3, 5}, std::pair{7, 4}}) {
        const MatD X = randomMatrix(rows, cols, 5), R = randomMatrix(rows, cols, 6);
        const MatD b = randomMatrix(1, cols, 7);
        const MatD numeric = numericGrad(b, [&](const MatD& bb) { return weightedSum(R, r::addBias(X, bb)); });
        EXPECT_TRUE(matricesNear(r::biasGrad(R), numeric, kGradAbsTol, kGradRelTol)) << rows << "x" << cols;
    }
}

TEST(ReferenceElementwise, HandComputed) {
    const MatF A(2, 2, {1, 2, 3, 4}), B(2, 2, {5, -1, 0.5f, 2});
    EXPECT_TRUE(matricesNear(r::add(A, B), MatF(2, 2, {6, 1, 3.5f, 6}), 0.0));
    EXPECT_TRUE(matricesNear(r::sub(A, B), MatF(2, 2, {-4, 3, 2.5f, 2}), 0.0));
    EXPECT_TRUE(matricesNear(r::mul(A, B), MatF(2, 2, {5, -2, 1.5f, 8}), 0.0));
    EXPECT_TRUE(matricesNear(r::scale(A, 0.5), MatF(2, 2, {0.5f, 1, 1.5f, 2}), 0.0));
    EXPECT_TRUE(matricesNear(r::axpy(2.0, A, B), MatF(2, 2, {7, 3, 6.5f, 10}), 0.0));
}

// ---------------------------------------------------------------- reductions

TEST(ReferenceReduce, HandComputed) {
    const MatD X(2, 3, {1, 5, 3, 4, 2, 6});
    EXPECT_TRUE(matricesNear(r::sumRows(X), MatD(2, 1, {9, 12}), 0.0));
    EXPECT_TRUE(matricesNear(r::meanRows(X), MatD(2, 1, {3, 4}), 0.0));
    EXPECT_TRUE(matricesNear(r::maxRows(X), MatD(2, 1, {5, 6}), 0.0));
    EXPECT_TRUE(matricesNear(r::sumCols(X), MatD(1, 3, {5, 7, 9}), 0.0));
    EXPECT_TRUE(matricesNear(r::meanCols(X), MatD(1, 3, {2.5, 3.5, 4.5}), 0.0));
    EXPECT_TRUE(matricesNear(r::maxCols(X), MatD(1, 3, {4, 5, 6}), 0.0));
    EXPECT_TRUE(matricesNear(r::sumAll(X), MatD(1, 1, 21), 0.0));
    EXPECT_TRUE(matricesNear(r::meanAll(X), MatD(1, 1, 3.5), 0.0));
    EXPECT_TRUE(matricesNear(r::maxAll(X), MatD(1, 1, 6), 0.0));
    EXPECT_TRUE(matricesNear(r::maxAll(MatF(1, 3, {-3, -1, -2})), MatF(1, 1, -1), 0.0));
}

TEST(ReferenceReduce, EmptySets) {
    EXPECT_TRUE(matricesNear(r::sumAll(MatD(0, 4)), MatD(1, 1, 0.0), 0.0));
    EXPECT_TRUE(matricesNear(r::sumRows(MatD(2, 0)), MatD(2, 1), 0.0));
    EXPECT_EQ(r::meanRows(MatD(0, 3)).rows, 0);  // no rows: nothing to average
    expectArgumentError([] { r::meanAll(MatD(0, 4)); }, {"ref::meanAll", "0x4"});
    expectArgumentError([] { r::maxAll(MatD(3, 0)); }, {"ref::maxAll", "3x0"});
    expectArgumentError([] { r::meanRows(MatD(2, 0)); }, {"ref::meanRows", "2x0"});
    expectArgumentError([] { r::maxRows(MatD(2, 0)); }, {"ref::maxRows", "2x0"});
    expectArgumentError([] { r::meanCols(MatD(0, 2)); }, {"ref::meanCols", "0x2"});
    expectArgumentError([] { r::maxCols(MatD(0, 2)); }, {"ref::maxCols", "0x2"});
}

// Documented: max propagates NaN wherever it sits, sums propagate by arithmetic.
TEST(ReferenceReduce, NaNPropagates) {
    const MatD X(2, 3, {kNaN, 1, 2, 3, 4, 5});
    const MatD rowsMax = r::maxRows(X), colsMax = r::maxCols(X);
    EXPECT_TRUE(std::isnan(rowsMax(0, 0)));
    EXPECT_EQ(rowsMax(1, 0), 5.0);
    EXPECT_TRUE(std::isnan(colsMax(0, 0)));
    EXPECT_EQ(colsMax(0, 1), 4.0);
    EXPECT_TRUE(std::isnan(r::maxAll(MatD(1, 3, {1, 2, kNaN}))(0, 0)));  // NaN last, not only first
    EXPECT_TRUE(std::isnan(r::sumAll(X)(0, 0)));
    EXPECT_TRUE(std::isnan(r::meanRows(X)(0, 0)));
    EXPECT_EQ(r::meanRows(X)(1, 0), 4.0);
}

// ---------------------------------------------------------------- global norm

TEST(ReferenceNorm, GlobalL2NormAndClipping) {
    MatD a(1, 1, 3.0), b(1, 2, {0.0, 4.0});
    EXPECT_DOUBLE_EQ(r::globalL2Norm({&a, &b}), 5.0);
    EXPECT_DOUBLE_EQ(r::clipByGlobalNorm({&a, &b}, 10.0), 5.0);  // below the limit: untouched
    EXPECT_EQ(a(0, 0), 3.0);
    EXPECT_DOUBLE_EQ(r::clipByGlobalNorm({&a, &b}, 1.0), 5.0);  // returns the norm before clipping
    EXPECT_DOUBLE_EQ(a(0, 0), 0.6);
    EXPECT_DOUBLE_EQ(b(0, 1), 0.8);
    EXPECT_NEAR(r::globalL2Norm({&a, &b}), 1.0, 1e-15);

    std::vector<MatF> grads{MatF(2, 2, {1, 1, 1, 1}), MatF(1, 1, 0)};
    EXPECT_FLOAT_EQ(r::globalL2Norm(grads), 2.0f);
    EXPECT_FLOAT_EQ(r::clipByGlobalNorm(grads, 1.0), 2.0f);
    EXPECT_FLOAT_EQ(grads[0](1, 1), 0.5f);
    EXPECT_FLOAT_EQ(r::globalL2Norm(std::vector<const MatF*>{&grads[0], &grads[1]}), 1.0f);
    expectArgumentError([&] { r::clipByGlobalNorm(grads, 0.0); }, {"ref::clipByGlobalNorm", "maxNorm"});
}

// ---------------------------------------------------------------- argmax, correctCount

TEST(ReferenceArgmax, TiesGoLowNaNNeverWins) {
    const MatD X(5, 3,
                 {1, 3, 3,           // tie -> lowest index
                  kNaN, 0, -1,       // NaN skipped
                  kNaN, kNaN, kNaN,  // nothing beats -inf -> 0
                  -kInf, -kInf, -kInf, 2, kNaN, 5});
    EXPECT_EQ(r::argmaxRows(X).data, (std::vector<int>{1, 1, 0, 0, 2}));
    EXPECT_EQ(r::argmaxRows(X).cols, 1);
    EXPECT_EQ(r::correctCount(X, {1, 0, 0, 0, 2}), 4);
    EXPECT_EQ(r::correctCount(MatF(2, 2, {0.1f, 0.9f, 0.8f, 0.2f}), {1, 1}), 1);
}

// ---------------------------------------------------------------- shape errors

TEST(ReferenceShapeErrors, MatmulMessageIsExact) {
    try {
        r::matmul(MatD(3, 4), MatD(5, 2));
        FAIL() << "expected ArgumentError";
    } catch (const ArgumentError& e) {
        EXPECT_STREQ(e.what(), "ref::matmul: A is 3x4 but B is 5x2 (A.cols must equal B.rows)");
    }
}

TEST(ReferenceShapeErrors, EveryOpNamesBothShapes) {
    const MatD a34(3, 4), a52(5, 2), a23(2, 3), a32(3, 2);
    expectArgumentError([&] { r::matmulTN(a34, a52); }, {"ref::matmulTN", "3x4", "5x2"});
    expectArgumentError([&] { r::matmulNT(a34, a52); }, {"ref::matmulNT", "3x4", "5x2"});
    expectArgumentError([&] { r::add(a23, a32); }, {"ref::add", "2x3", "3x2"});
    expectArgumentError([&] { r::sub(a23, a32); }, {"ref::sub", "2x3", "3x2"});
    expectArgumentError([&] { r::mul(a23, a32); }, {"ref::mul", "2x3", "3x2"});
    expectArgumentError([&] { r::axpy(1.0, a23, a32); }, {"ref::axpy", "2x3", "3x2"});
    expectArgumentError([&] { r::addBias(a34, MatD(1, 3)); }, {"ref::addBias", "3x4", "1x3"});
    expectArgumentError([&] { r::addBias(a34, MatD(2, 4)); }, {"ref::addBias", "3x4", "2x4"});
    expectArgumentError([&] { r::activationGrad(a23, a32, Activation::ReLU); }, {"ref::activationGrad", "2x3", "3x2"});
    expectArgumentError([&] { r::dense(a34, a52, MatD(1, 2), Activation::ReLU); }, {"ref::dense", "3x4", "5x2"});
    expectArgumentError([&] { r::dense(a34, MatD(4, 2), MatD(1, 3), Activation::ReLU); }, {"ref::dense", "4x2", "1x3"});
    expectArgumentError([&] { r::denseBackward(a34, a52, MatD(3, 2), MatD(3, 2), Activation::ReLU); },
                        {"ref::denseBackward", "3x4", "5x2"});
    expectArgumentError([&] { r::denseBackward(a34, MatD(4, 2), MatD(3, 3), MatD(3, 3), Activation::ReLU); },
                        {"ref::denseBackward", "3x3", "3x2"});
    expectArgumentError([&] { r::denseBackward(a34, MatD(4, 2), MatD(3, 2), MatD(2, 3), Activation::ReLU); },
                        {"ref::denseBackward", "2x3", "3x2"});
    expectArgumentError(
        [&] {
            r::softmaxCrossEntropy(MatD(3, 5), {0, 1});
        },
        {"ref::softmaxCrossEntropy", "3x5", "2 entries"});
    expectArgumentError([&] { r::softmaxCrossEntropyOneHot(a23, a32); },
                        {"ref::softmaxCrossEntropyOneHot", "2x3", "3x2"});
    expectArgumentError([&] { r::mse(a23, a32); }, {"ref::mse", "2x3", "3x2"});
    expectArgumentError([&] { r::binaryCrossEntropyWithLogits(a23, a32); },
                        {"ref::binaryCrossEntropyWithLogits", "2x3", "3x2"});
    expectArgumentError([&] { r::correctCount(a23, {0}); }, {"ref::correctCount", "2x3", "1 entries"});
}

TEST(ReferenceShapeErrors, LabelsOutOfRange) {
    expectArgumentError(
        [] {
            r::softmaxCrossEntropy(MatD(3, 5), {0, 5, 1});
        },
        {"ref::softmaxCrossEntropy", "label 5 at row 1", "[0, 5)", "3x5"});
    expectArgumentError([] { r::softmaxCrossEntropy(MatD(2, 5), {-1, 0}); }, {"label -1 at row 0", "[0, 5)"});
    expectArgumentError([] { r::correctCount(MatD(2, 3), {0, 3}); }, {"ref::correctCount", "label 3", "[0, 3)"});
}

TEST(ReferenceShapeErrors, EmptyLossInputs) {
    expectArgumentError([] { r::mse(MatD(0, 3), MatD(0, 3)); }, {"ref::mse", "0x3"});
    expectArgumentError([] { r::binaryCrossEntropyWithLogits(MatD(2, 0), MatD(2, 0)); },
                        {"ref::binaryCrossEntropyWithLogits", "2x0"});
}

}  // namespace

}  // namespace reference_test
}  // namespace
