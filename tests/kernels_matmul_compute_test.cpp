// The compute-shader matmul (forward/matmul_tiled, OpenGL ES 3.1) against the
// CPU reference (double), as the fragment kernels are tested: every form, odd
// shapes and K (tiles of 64 and k slices of 16 cut short), packed operands
// (unpacked ones go to the fragment kernels), output row layouts, pages, the fused epilogues, and a training run that must
// agree with the fragment kernels step by step. Natively the suite runs it on
// llvmpipe (ContextOptions::compute = on); WebGL2 has no compute stage, so the
// browser run skips it and says why. Tolerance as kernels_matmul_test:
// max |gpu - ref| <= 1e-5 * max(1, max |ref|).
#include <gtest/gtest.h>

#include "gltrain/ops/matmul.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

using namespace gltrain;
using gltrain::test::computeContext;
using gltrain::test::randomMatrix;
using gltrain::test::relativeError;

namespace {

#define REQUIRE_COMPUTE()                                                                                  \
    if (!computeContext().caps().computeShaders)                                                          \
    GTEST_SKIP() << "no compute shaders here (" << computeContext().caps().computeReason << ")"

enum class Form { NN, TN, NT };
const char* formName(Form f) { return f == Form::NN ? "A·B" : f == Form::TN ? "Aᵀ·B" : "A·Bᵀ"; }

void check(Context& ctx, Form f, int m, int k, int n, Layout in, Layout out) {
    HostMatrix a = f == Form::TN ? randomMatrix(k, m, unsigned(m + k)) : randomMatrix(m, k, unsigned(m + k));
    HostMatrix b = f == Form::NT ? randomMatrix(n, k, unsigned(n + 1)) : randomMatrix(k, n, unsigned(n + 1));
    auto ad = a.cast<double>(), bd = b.cast<double>();
    auto want = (f == Form::NN ? ref::matmul(ad, bd) : f == Form::TN ? ref::matmulTN(ad, bd) : ref::matmulNT(ad, bd))
                    .cast<float>();
    Tensor ta(ctx, a, in), tb(ctx, b, in), tc(ctx, m, n, out);
    MatmulOptions o;
    o.transA = f == Form::TN;
    o.transB = f == Form::NT;
    matmul(ta, tb, tc, o);
    EXPECT_LE(relativeError(tc.download(), want), 1e-5) << formName(f) << " M=" << m << " K=" << k << " N=" << n << " "
                                                        << layoutName(in) << " -> " << layoutName(out);
}

// The kernels one recorded matmul runs.
std::vector<std::string> kernelsOf(const Tensor& a, const Tensor& b, Tensor& c) {
    PassList l;
    recordMatmul(l, a, b, c);
    std::vector<std::string> names;
    for (auto& p : l.passes()) names.push_back(p.kernel());
    return names;
}

}  // namespace

TEST(ComputeKernels, WhoRunsThem) {
    // On: wherever the device has compute shaders. Auto: not on a software
    // renderer. Off: never. The choice and its reason are in the capabilities.
    REQUIRE_COMPUTE();
    const Capabilities& on = computeContext().caps();
    EXPECT_TRUE(on.computeKernels) << on.computeReason;
    Tensor a(computeContext(), 8, 8), b(computeContext(), 8, 8), c(computeContext(), 8, 8);
    EXPECT_EQ(kernelsOf(a, b, c), std::vector<std::string>{"forward/matmul_tiled"});
    Tensor u(computeContext(), 8, 8, Layout::Unpacked);  // an unpacked operand: the general fragment kernel
    EXPECT_EQ(kernelsOf(u, b, c), std::vector<std::string>{"forward/matmul"});

    const Capabilities& autoCaps = test::context().caps();
    EXPECT_EQ(autoCaps.computeKernels, !autoCaps.softwareRenderer) << autoCaps.computeReason;
    if (autoCaps.softwareRenderer)
        EXPECT_NE(autoCaps.computeReason.find("software renderer"), std::string::npos) << autoCaps.computeReason;

    ContextOptions o;
    o.backend = BackendPreference::Gpu;
    o.compute = ComputePreference::Off;
    Context off(o);
    EXPECT_FALSE(off.caps().computeKernels);
    EXPECT_NE(off.caps().computeReason.find("compute = off"), std::string::npos) << off.caps().computeReason;
    Tensor x(off, 8, 8), y(off, 8, 8), z(off, 8, 8);
    EXPECT_EQ(kernelsOf(x, y, z), std::vector<std::string>{"forward/matmul"});
    computeContext().makeCurrent();
}

TEST(ComputeKernels, MatmulMatchesReferenceInEveryFormAndLayout) {
    // Each layout combination is a shader variant, and a compute shader costs
    // llvmpipe seconds to compile: the input helpers are the fragment kernels'
    // (tested with them), so the variants here are the staging forms and the
    // output row layouts.
    REQUIRE_COMPUTE();
    struct MN {
        int m, n;
    };
    // (A dispatch costs llvmpipe ~0.1 s too, so the shapes are a chosen few: one
    // element, a row, a column, exact tiles, tiles cut short by one.)
    const MN shapes[] = {{1, 1}, {1, 33}, {33, 1}, {64, 64}, {65, 63}, {257, 63}};
    for (Form f : {Form::NN, Form::TN, Form::NT})
        for (MN s : shapes)
            for (int k : {3, 16, 1000}) {
                check(computeContext(), f, s.m, k, s.n, Layout::Packed, Layout::Packed);
                check(computeContext(), f, s.m, k + 1, s.n, Layout::Packed, Layout::PackedRows8);
            }
    check(computeContext(), Form::NN, 130, 97, 33, Layout::PackedRows4, Layout::PackedRows4);
    check(computeContext(), Form::NN, 13, 9, 6, Layout::PackedRows4, Layout::PackedRows4);
}

TEST(ComputeKernels, LongKInOneDispatchAndPagedTensors) {
    REQUIRE_COMPUTE();
    for (Form f : {Form::NN, Form::TN, Form::NT}) check(computeContext(), f, 33, 8192, 17, Layout::Packed, Layout::Packed);
    // MAX_TEXTURE_SIZE 64: operands and output split into pages.
    check(computeContext(true), Form::NN, 127, 300, 129, Layout::Packed, Layout::Packed);
    check(computeContext(true), Form::TN, 301, 70, 129, Layout::Packed, Layout::PackedRows8);
}

TEST(ComputeKernels, FusedEpilogues) {
    // Y = f(X·W + b) and (dZ·Wᵀ) ⊙ f'(Z) for the backward, for a few activations
    // (lib/activation is shared with the fragment kernels and tested with them).
    REQUIRE_COMPUTE();
    Context& ctx = computeContext();
    HostMatrix x = randomMatrix(129, 97, 1), w = randomMatrix(97, 67, 2, -0.1f, 0.1f), b = randomMatrix(1, 67, 3),
               zprev = randomMatrix(129, 97, 4, -3, 3);
    Tensor tx(ctx, x), tw(ctx, w), tb(ctx, b), ty(ctx, 129, 67), tz(ctx, zprev), dx(ctx, 129, 97);
    for (Activation act : {Activation::ReLU, Activation::LeakyReLU, Activation::GELU}) {
        dense(tx, tw, tb, act, ty, 0.2f);
        auto want = ref::dense(x.cast<double>(), w.cast<double>(), b.cast<double>(), act, 0.2).cast<float>();
        EXPECT_LE(relativeError(ty.download(), want), 1e-5) << activationName(act);
        MatmulOptions o;
        o.transB = true;
        o.act = act;
        o.actAlpha = 0.2f;
        o.dactZ = &tz;
        matmul(ty, tw, dx, o);
        auto g = ref::activationGrad(ref::matmulNT(want.cast<double>(), w.cast<double>()), zprev.cast<double>(), act, 0.2);
        EXPECT_LE(relativeError(dx.download(), g.cast<float>()), 1e-5) << activationName(act);
    }
}

TEST(ComputeKernels, TrainingAgreesWithTheFragmentKernels) {
    // The same MLP, seed and batches on compute and on fragment kernels: the
    // losses agree to 1e-4 relative at every step (the kernels sum in different
    // orders), and the step really runs the compute kernel — between fragment
    // passes that read what it wrote.
    REQUIRE_COMPUTE();
    HostMatrix x = randomMatrix(96, 37, 5);
    std::vector<int> y(96);
    for (int i = 0; i < 96; ++i) y[size_t(i)] = (i * 5) % 4;
    auto train = [&](Context& ctx) {
        Sequential m(ctx, 37);
        m.add(Dense{70, Activation::ReLU}).add(Dense{33, Activation::Tanh}).add(Dense{4});
        CompileOptions c;
        c.seed = 9;
        c.optimizer.lr = 0.01f;
        m.compile(c);
        std::vector<float> losses;
        FitOptions f;
        f.epochs = 10;
        f.batchSize = 32;
        f.shuffle = false;
        Callbacks cb;
        cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
        m.fit(x, y, f, cb);
        std::vector<std::string> kernels;
        for (auto& t : m.profileStep(x, y, 32, 1)) kernels.push_back(t.kernel);
        return std::make_pair(losses, kernels);
    };
    auto fragment = train(test::context());
    auto compute = train(computeContext());
    ASSERT_EQ(compute.first.size(), 30u);
    ASSERT_EQ(fragment.first.size(), 30u);
    for (size_t i = 0; i < 30; ++i)
        EXPECT_NEAR(compute.first[i], fragment.first[i], 1e-4 * std::max(1.0f, std::fabs(fragment.first[i]))) << "step " << i + 1;
    EXPECT_LT(compute.first.back(), compute.first.front());
    EXPECT_NE(std::find(compute.second.begin(), compute.second.end(), "forward/matmul_tiled"), compute.second.end());
    if (!test::context().caps().computeKernels)
        EXPECT_EQ(std::find(fragment.second.begin(), fragment.second.end(), "forward/matmul_tiled"), fragment.second.end());
}

TEST(ComputeKernels, MlpStepsMatchTheReference) {
    // The reference check every engine meets (model_reference_steps.hpp).
    REQUIRE_COMPUTE();
    test::expectMlpAdamStepsMatchTheReference(computeContext());
}

TEST(ComputeKernels, CnnStepMatchesTheReference) {
    REQUIRE_COMPUTE();
    test::expectCnnSgdStepMatchesTheReference(computeContext());
}
