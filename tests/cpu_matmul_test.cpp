// The CPU backend's matrix product (cpu/matmul.hpp) against ref::matmul run in
// double, on odd shapes that cut every block (1, 3, 5, 127, 257 and 1025 cross
// MR, NR, the 256-wide K and N blocks), all four transpose combinations, both
// kernel widths (the 8-wide AVX2 one only where the CPU has it), and every
// epilogue. Tolerance: max |C - C_double| <= 1e-5 * max(1, max |C_double|),
// the GPU matmul's bound (float sums over up to 1025 terms in [-1, 1]).
#include <gtest/gtest.h>

#include "cpu_test_util.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/reference.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace cpu_matmul_test {

using namespace gltrain;
using cputest::d;
using cputest::MatD;
using cputest::relError;

namespace {

struct Shape {
    int m, k, n;
};
const Shape kShapes[] = {{1, 1, 1},   {3, 5, 7},       {5, 127, 3},  {127, 1025, 5}, {33, 300, 129},
                         {7, 3, 257}, {128, 784, 256}, {1, 1025, 1}, {129, 17, 1025}};

MatD product(const MatD& A, const MatD& B, bool ta, bool tb) {
    return ref::matmul(ta ? ref::transpose(A) : A, tb ? ref::transpose(B) : B);
}

void checkAll(bool wide) {
    for (const Shape& s : kShapes)
        for (int t = 0; t < 4; ++t) {
            const bool ta = t & 1, tb = t & 2;
            HostMatrix A = cputest::random(ta ? s.k : s.m, ta ? s.m : s.k, 1 + uint32_t(s.m));
            HostMatrix B = cputest::random(tb ? s.n : s.k, tb ? s.k : s.n, 2 + uint32_t(s.n));
            HostMatrix C(s.m, s.n);
            cpu::Workspace ws;
            ws.wide = wide;
            cpu::matmul(s.m, s.n, s.k, A.data.data(), A.cols, ta, B.data.data(), B.cols, tb, C.data.data(), s.n, {},
                        ws);
            EXPECT_LE(relError(C, product(d(A), d(B), ta, tb)), 1e-5)
                << s.m << "x" << s.k << "x" << s.n << " transA " << ta << " transB " << tb << " wide " << wide;
        }
}

}  // namespace

TEST(CpuMatmul, PortableKernelMatchesReference) { checkAll(false); }

TEST(CpuMatmul, WideKernelMatchesReference) {
    if (!cpu::hasAvx2Fma()) GTEST_SKIP() << "no AVX2 + FMA on this CPU (or not x86-64): the portable kernel runs";
    checkAll(true);
}

// Bias + every activation, Z kept; the derivative epilogue; accumulation into C.
TEST(CpuMatmul, EpiloguesMatchReference) {
    for (bool wide : {false, cpu::hasAvx2Fma()})
        for (Activation act : kAllActivations) {
            const int M = 37, K = 300, N = 19;
            HostMatrix A = cputest::random(M, K, 3), B = cputest::random(K, N, 4), b = cputest::random(1, N, 5);
            HostMatrix C(M, N), Z(M, N);
            cpu::Workspace ws;
            ws.wide = wide;
            cpu::Epilogue e;
            e.bias = b.data.data();
            e.preactivation = Z.data.data();
            e.activation = act;
            e.alpha = 0.1f;
            cpu::matmul(M, N, K, A.data.data(), K, false, B.data.data(), N, false, C.data.data(), N, e, ws);
            MatD z = ref::addBias(ref::matmul(d(A), d(B)), d(b));
            EXPECT_LE(relError(Z, z), 1e-5) << activationName(act);
            EXPECT_LE(relError(C, ref::activate(z, act, 0.1)), 1e-5) << activationName(act);

            // dX = (dY W^T) ⊙ f'(Z): the backward pass's fused form.
            HostMatrix dY = cputest::random(M, N, 6), W = cputest::random(K, N, 7), dX(M, K);
            HostMatrix Zp = cputest::random(M, K, 8, -3.0f, 3.0f);
            cpu::Epilogue g;
            g.derivativeAt = Zp.data.data();
            g.derivative = act;
            g.alpha = 0.1f;
            cpu::matmul(M, K, N, dY.data.data(), N, false, W.data.data(), N, true, dX.data.data(), K, g, ws);
            EXPECT_LE(relError(dX, ref::activationGrad(ref::matmul(d(dY), ref::transpose(d(W))), d(Zp), act, 0.1)),
                      1e-5)
                << activationName(act);
        }
    // C += A B.
    HostMatrix A = cputest::random(9, 513, 9), B = cputest::random(513, 11, 10), C = cputest::random(9, 11, 11);
    MatD want = ref::add(d(C), ref::matmul(d(A), d(B)));
    cpu::Workspace ws;
    cpu::Epilogue acc;
    acc.accumulate = true;
    cpu::matmul(9, 11, 513, A.data.data(), 513, false, B.data.data(), 11, false, C.data.data(), 11, acc, ws);
    EXPECT_LE(relError(C, want), 1e-5);
}

TEST(CpuMatmul, EmptyInnerSizeGivesZerosOrKeepsC) {
    HostMatrix C = cputest::random(3, 4, 1);
    cpu::Workspace ws;
    cpu::Epilogue acc;
    acc.accumulate = true;
    HostMatrix keep = C;
    cpu::matmul(3, 4, 0, nullptr, 0, false, nullptr, 4, false, C.data.data(), 4, acc, ws);
    EXPECT_EQ(C.data, keep.data);
    cpu::matmul(3, 4, 0, nullptr, 0, false, nullptr, 4, false, C.data.data(), 4, {}, ws);
    for (float v : C.data) EXPECT_EQ(v, 0.0f);
}

TEST(CpuMatmul, ShapeMismatchNamesBothShapes) {
    try {
        cpu::matmul(HostMatrix(2, 3), HostMatrix(4, 5));
        FAIL() << "no error";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("op(A) is 2x3 but op(B) is 4x5"), std::string::npos) << e.what();
    }
}

}  // namespace cpu_matmul_test
}  // namespace
