// GPU matmul (A·B, Aᵀ·B, A·Bᵀ), the fused dense forward and the fused
// backward epilogue against the CPU reference (computed in double), over the
// shapes and K values the kernels issue names, packed, unpacked and paged.
// Tolerance: max |gpu - ref| <= 1e-5 * max(1, max |ref|) — fp32 accumulation
// over K <= 4096 random-sign terms stays well inside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "gltrain/ops/elementwise.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_matmul_test {

using namespace gltrain;
using gltrain::test::randomMatrix;
using gltrain::test::relativeError;

namespace {

struct MN {
    int m, n;
};
const MN kShapes[] = {{1, 1}, {1, 33}, {33, 1}, {3, 5}, {127, 129}, {257, 63}, {1000, 10}};
const int kKs[] = {1, 3, 64, 1000, 4096};

enum class Form { NN, TN, NT };
const char* formName(Form f) { return f == Form::NN ? "A·B" : f == Form::TN ? "Aᵀ·B" : "A·Bᵀ"; }

// Operands stored as the form reads them, and the double-precision reference.
struct Problem {
    HostMatrix a, b;
    HostMatrix want;
};
Problem makeProblem(Form f, int m, int k, int n, unsigned seed) {
    HostMatrix a = f == Form::TN ? randomMatrix(k, m, seed) : randomMatrix(m, k, seed);
    HostMatrix b = f == Form::NT ? randomMatrix(n, k, seed + 1) : randomMatrix(k, n, seed + 1);
    auto ad = a.cast<double>(), bd = b.cast<double>();
    auto c = f == Form::NN ? ref::matmul(ad, bd) : f == Form::TN ? ref::matmulTN(ad, bd) : ref::matmulNT(ad, bd);
    return {a, b, c.cast<float>()};
}

void check(Context& ctx, Form f, int m, int k, int n, Layout layout, int maxK = 4096, Layout outLayout = Layout(-1)) {
    if (int(outLayout) < 0) outLayout = layout;
    Problem p = makeProblem(f, m, k, n, unsigned(m * 7 + k * 3 + n));
    Tensor ta(ctx, p.a, layout), tb(ctx, p.b, layout), tc(ctx, m, n, outLayout);
    MatmulOptions o;
    o.transA = f == Form::TN;
    o.transB = f == Form::NT;
    o.maxKPerPass = maxK;
    matmul(ta, tb, tc, o);
    EXPECT_LE(relativeError(tc.download(), p.want), 1e-5)
        << formName(f) << " M=" << m << " K=" << k << " N=" << n << " " << layoutName(layout) << " -> "
        << layoutName(outLayout) << " maxK=" << maxK;
}

}  // namespace

class KernelsMatmul : public ::testing::TestWithParam<Form> {};

TEST_P(KernelsMatmul, PackedMatchesReference) {
    for (MN s : kShapes)
        for (int k : kKs) check(test::context(), GetParam(), s.m, k, s.n, Layout::Packed);
}

TEST_P(KernelsMatmul, UnpackedMatchesReference) {
    for (MN s : kShapes)
        for (int k : {1, 3, 64, 1000}) check(test::context(), GetParam(), s.m, k, s.n, Layout::Unpacked);
}

TEST_P(KernelsMatmul, RegisterBlockedMatchesReference) {
    // PackedRows4 / PackedRows8 output: the 4x4 / 8x4 blocked kernel, from packed operands, from
    // operands of the output's layout and from the other row-interleaved layout.
    for (Layout out : {Layout::PackedRows4, Layout::PackedRows8}) {
        const Layout other = out == Layout::PackedRows4 ? Layout::PackedRows8 : Layout::PackedRows4;
        for (MN s : kShapes)
            for (int k : {1, 3, 64, 1000}) {
                check(test::context(), GetParam(), s.m, k, s.n, out);
                check(test::context(), GetParam(), s.m, k, s.n, Layout::Packed, 4096, out);
                check(test::context(), GetParam(), s.m, k, s.n, other, 4096, out);
            }
        check(test::context(), GetParam(), 33, 8192, 17, out, 2800);  // K-split through blocked partials
        check(test::smallContext(), GetParam(), 301, 300, 129, out);  // paged
        check(test::context(), GetParam(), 13, 9, 6, out);            // rows past the last block of 8
    }
}

TEST_P(KernelsMatmul, PagedMatchesReference) {
    for (Layout l : {Layout::Packed, Layout::Unpacked}) {
        check(test::smallContext(), GetParam(), 127, 300, 129, l);
        check(test::smallContext(), GetParam(), 1, 1000, 300, l);
    }
}

TEST_P(KernelsMatmul, KSplitMatchesOnePass) {
    // 8192 long: split into 2, 3 and 8 accumulating passes.
    for (int maxK : {4096, 2800, 1024}) check(test::context(), GetParam(), 33, 8192, 17, Layout::Packed, maxK);
    check(test::context(), GetParam(), 5, 1001, 7, Layout::Packed, 64);  // ragged last slice
}

INSTANTIATE_TEST_SUITE_P(Forms, KernelsMatmul, ::testing::Values(Form::NN, Form::TN, Form::NT), [](const auto& info) {
    return std::string(info.param == Form::NN ? "NN" : info.param == Form::TN ? "TN" : "NT");
});

TEST(KernelsDense, FusedForwardMatchesReference) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(129, 784, 1), w = randomMatrix(784, 257, 2, -0.1f, 0.1f), b = randomMatrix(1, 257, 3);
    Tensor tx(ctx, x), tw(ctx, w), tb(ctx, b), ty(ctx, 129, 257);
    for (Activation act : kAllActivations) {
        dense(tx, tw, tb, act, ty, 0.2f);
        auto want = ref::dense(x.cast<double>(), w.cast<double>(), b.cast<double>(), act, 0.2).cast<float>();
        EXPECT_LE(relativeError(ty.download(), want), 1e-5) << activationName(act);
    }
}

TEST(KernelsDense, FusedForwardWithKSplit) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(7, 5000, 4), w = randomMatrix(5000, 9, 5, -0.1f, 0.1f), b = randomMatrix(1, 9, 6);
    Tensor tx(ctx, x), tw(ctx, w), tb(ctx, b), ty(ctx, 7, 9);
    MatmulOptions o;
    o.bias = &tb;
    o.act = Activation::Tanh;
    o.maxKPerPass = 1024;
    matmul(tx, tw, ty, o);
    auto want = ref::dense(x.cast<double>(), w.cast<double>(), b.cast<double>(), Activation::Tanh, 0.01).cast<float>();
    EXPECT_LE(relativeError(ty.download(), want), 1e-5);
}

TEST(KernelsDense, BackwardEpilogueAppliesActivationDerivative) {
    // dX of the previous layer in one pass: (dZ · Wᵀ) ⊙ f'(Zprev).
    Context& ctx = test::context();
    HostMatrix dz = randomMatrix(65, 10, 7), w = randomMatrix(128, 10, 8), zprev = randomMatrix(65, 128, 9, -3, 3);
    Tensor tdz(ctx, dz), tw(ctx, w), tz(ctx, zprev), out(ctx, 65, 128);
    for (Activation act : kAllActivations) {
        MatmulOptions o;
        o.transB = true;
        o.act = act;
        o.actAlpha = 0.1f;
        o.dactZ = &tz;
        matmul(tdz, tw, out, o);
        auto dx = ref::matmulNT(dz.cast<double>(), w.cast<double>());
        auto want = ref::activationGrad(dx, zprev.cast<double>(), act, 0.1).cast<float>();
        EXPECT_LE(relativeError(out.download(), want), 1e-5) << activationName(act);
    }
}

TEST(KernelsDense, BlockedFusedForwardAndBackwardEpilogue) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(130, 97, 11), w = randomMatrix(97, 33, 12), b = randomMatrix(1, 33, 13),
               zprev = randomMatrix(130, 97, 14, -3, 3);
    for (Layout l : {Layout::PackedRows4, Layout::PackedRows8}) {
        Tensor tx(ctx, x, l), tw(ctx, w, l), tb(ctx, b), ty(ctx, 130, 33, l);
        for (Activation act : {Activation::ReLU, Activation::GELU}) {
            dense(tx, tw, tb, act, ty);
            auto want = ref::dense(x.cast<double>(), w.cast<double>(), b.cast<double>(), act, 0.01).cast<float>();
            EXPECT_LE(relativeError(ty.download(), want), 1e-5) << activationName(act) << " " << layoutName(l);
            // dX of the previous layer: (Y · Wᵀ) ⊙ f'(Zprev), blocked.
            Tensor tz(ctx, zprev, l), dx(ctx, 130, 97, l);
            MatmulOptions o;
            o.transB = true;
            o.act = act;
            o.dactZ = &tz;
            matmul(ty, tw, dx, o);
            auto g = ref::activationGrad(ref::matmulNT(want.cast<double>(), w.cast<double>()), zprev.cast<double>(),
                                         act, 0.01);
            EXPECT_LE(relativeError(dx.download(), g.cast<float>()), 1e-5)
                << activationName(act) << " " << layoutName(l);
        }
    }
}

TEST(KernelsDense, BackwardMatchesReferenceDenseBackward) {
    // The three passes a dense layer's backward records: dW = Xᵀ·dZ, db = column sum
    // (tested with reductions), dX = dZ·Wᵀ; dZ = dY ⊙ f'(Z) fused into the previous pass.
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(33, 20, 1), w = randomMatrix(20, 7, 2), b = randomMatrix(1, 7, 3),
               dy = randomMatrix(33, 7, 4);
    auto xd = x.cast<double>(), wd = w.cast<double>(), bd = b.cast<double>();
    auto z = ref::densePreactivation(xd, wd, bd);
    auto g = ref::denseBackward(xd, wd, z, dy.cast<double>(), Activation::Sigmoid);
    Tensor tx(ctx, x), tw(ctx, w), tzz(ctx, z.cast<float>()), tdy(ctx, dy), dzt(ctx, 33, 7), dw(ctx, 20, 7),
        dx(ctx, 33, 20);
    activationGrad(tdy, tzz, Activation::Sigmoid, dzt);
    MatmulOptions tn;
    tn.transA = true;
    matmul(tx, dzt, dw, tn);
    MatmulOptions nt;
    nt.transB = true;
    matmul(dzt, tw, dx, nt);
    EXPECT_LE(relativeError(dw.download(), g.dW.cast<float>()), 1e-5);
    EXPECT_LE(relativeError(dx.download(), g.dX.cast<float>()), 1e-5);
}

TEST(KernelsMatmulErrors, ShapesAreChecked) {
    Context& ctx = test::context();
    Tensor a(ctx, 3, 4), b(ctx, 5, 2), c(ctx, 3, 2);
    try {
        matmul(a, b, c);
        FAIL();
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("inner dimensions differ: A (A is 3x4) · B (B is 5x2)"), std::string::npos)
            << e.what();
    }
    Tensor b2(ctx, 4, 2), wrong(ctx, 2, 3);
    EXPECT_THROW(matmul(a, b2, wrong), ArgumentError);
    MatmulOptions o;
    o.maxKPerPass = 6;
    EXPECT_THROW(matmul(a, b2, c, o), ArgumentError);
}

// PassList::profile times each pass: by GPU timer queries where the context has
// them (natively on llvmpipe and NVIDIA: EXT_disjoint_timer_query), else on the
// host with each pass waited for (in a browser). Either way a product with
// 512x the work of another must time longer, and every time is positive.
TEST(PassListProfile, TimesEachPassByTheContextsClock) {
    Context& ctx = test::context();
    Tensor sa(ctx, randomMatrix(16, 16, 1)), sb(ctx, randomMatrix(16, 16, 2)), sc(ctx, 16, 16);
    Tensor la(ctx, randomMatrix(128, 128, 3)), lb(ctx, randomMatrix(128, 128, 4)), lc(ctx, 128, 128);
    PassList list;
    recordMatmul(list, sa, sb, sc);
    const size_t small = list.size();
    recordMatmul(list, la, lb, lc);
    const auto times = list.profile(3);
    ASSERT_EQ(times.size(), list.size());
    double smallMs = 0, largeMs = 0;
    for (size_t i = 0; i < times.size(); ++i) {
        EXPECT_EQ(times[i].gpuTimer, ctx.caps().timerQueries) << ctx.caps().timerReason;
        EXPECT_GT(times[i].ms, 0.0) << times[i].kernel;
        (i < small ? smallMs : largeMs) += times[i].ms;
    }
    EXPECT_GT(largeMs, smallMs) << "16^3 against 128^3 multiply-adds";
    HostMatrix want = ref::matmul(la.download().cast<double>(), lb.download().cast<double>()).cast<float>();
    EXPECT_LE(relativeError(lc.download(), want), 1e-5) << "the profiled runs compute the product";
#ifndef __EMSCRIPTEN__
    // Mesa and NVIDIA advertise EXT_disjoint_timer_query; a software renderer's queries are not used.
    EXPECT_EQ(ctx.caps().timerQueries, !ctx.caps().softwareRenderer) << ctx.caps().timerReason;
#endif
}

// Whatever the clock, a profile covers the pass's work: a product that takes
// at least ~10 ms waited for (or N = 2048) is not profiled at a small part of
// that. (llvmpipe's timer queries, used once, read 1% of it.)
TEST(PassListProfile, CoversThePassesWork) {
    Context& ctx = test::context();
    for (int n = 128;; n *= 2) {
        Tensor a(ctx, randomMatrix(n, n, 5)), b(ctx, randomMatrix(n, n, 6)), c(ctx, n, n);
        PassList list;
        MatmulOptions o;
        o.maxKPerPass = n;  // one pass
        recordMatmul(list, a, b, c, o);
        list.run();
        waitFor(c);
        std::vector<double> waited;
        for (int r = 0; r < 3; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            list.run();
            waitFor(c);
            waited.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(waited.begin(), waited.end());
        if (waited[1] < 10 && n < 2048) continue;
        const auto times = list.profile(3);
        double profiled = 0;
        for (auto& t : times) profiled += t.ms;
        EXPECT_GE(profiled, 0.25 * waited[1])
            << n << "^3 by " << (times.front().gpuTimer ? "GPU timer queries" : "the host clock") << ": " << profiled
            << " ms profiled, " << waited[1] << " ms waited for";
        break;
    }
}

}  // namespace kernels_matmul_test
}  // namespace
