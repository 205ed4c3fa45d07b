// How kernels read texels (ContextOptions::fetch): texelFetch, or texture() at
// the texel's centre. Both must read the same texel, so every kernel gives the
// same numbers either way. The shared test context reads the way Auto chooses
// here (natively on llvmpipe: texelFetch; in Chromium on SwiftShader:
// texture()); these tests run the other way against the CPU reference and
// against the shared context: matmul in every form and row layout, paged
// operands, row windows, the transform-feedback matmul, an MLP and a CNN.
#include <gtest/gtest.h>

#include <sstream>

#include "gltrain/sequential.hpp"
#include "matmul_check.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_fetch_test {

using namespace gltrain;
using gltrain::test::Form;

namespace {

// The other way of reading from what Auto chose for the shared context.
ContextOptions otherFetch(int maxTex, bool feedback = false) {
    ContextOptions o;
    o.backend = BackendPreference::Gpu;
    o.fetch = test::context().caps().sampledFetch ? FetchPreference::TexelFetch : FetchPreference::Sampled;
    o.compute = test::testCompute();  // the same kernels as the shared context's, read the other way
    o.maxTextureSize = maxTex;
    if (feedback) {
        o.feedback = FeedbackPreference::On;
        o.feedbackMinWork = 0;
    }
    return o;
}
ContextOptions otherFetchOptions(int maxTex) { return otherFetch(maxTex); }
Context& otherContext(bool paged = false) { return test::contextPair<otherFetchOptions>(paged); }

}  // namespace

TEST(Fetch, WhoReadsHow) {
    // Auto: texture() on SwiftShader only; the forced ways everywhere; the report says which and why.
    const Capabilities& autoCaps = test::context().caps();
    const bool swiftShader = autoCaps.renderer.find("SwiftShader") != std::string::npos;
    EXPECT_EQ(autoCaps.sampledFetch, swiftShader) << autoCaps.fetchReason;
    std::ostringstream report;
    report << autoCaps;
    EXPECT_NE(report.str().find(swiftShader ? "texel reads:                 texture()"
                                            : "texel reads:                 texelFetch"),
              std::string::npos)
        << report.str();

    Context& other = otherContext();
    EXPECT_NE(other.caps().sampledFetch, autoCaps.sampledFetch);
    EXPECT_NE(other.caps().fetchReason.find(other.caps().sampledFetch ? "fetch = sampled" : "fetch = texelFetch"),
              std::string::npos)
        << other.caps().fetchReason;

    ContextOptions bad;
    bad.fetch = FetchPreference(7);
    try {
        Context c(bad);
        FAIL() << "an out-of-range FetchPreference was accepted";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("is not a FetchPreference"), std::string::npos) << e.what();
    }
    test::context();
}

TEST(Fetch, MatmulMatchesTheReferenceTheOtherWay) {
    Context& ctx = otherContext();
    for (Form f : {Form::NN, Form::TN, Form::NT}) {
        for (int k : {1, 3, 129}) test::checkMatmul(ctx, f, 17, k, 9, Layout::Packed, Layout::Packed);
        test::checkMatmul(ctx, f, 1, 5, 1, Layout::Unpacked, Layout::Unpacked);
        test::checkMatmul(ctx, f, 130, 97, 33, Layout::PackedRows4, Layout::PackedRows8);
        test::checkMatmul(ctx, f, 127, 33, 5, Layout::PackedRows8, Layout::PackedRows4);
    }
    // Pages (MAX_TEXTURE_SIZE 64): texture() maps the texel inside its page.
    Context& paged = otherContext(true);
    for (Form f : {Form::NN, Form::TN, Form::NT})
        test::checkMatmul(paged, f, 301, 300, 70, Layout::Packed, Layout::PackedRows8);
    test::context();
}

TEST(Fetch, RowWindowsReadTheirOwnRows) {
    // A window's rows are an offset into its base's texels: the same elements either way.
    Context& ctx = otherContext();
    HostMatrix x = test::randomMatrix(37, 11, 3), wx = test::randomMatrix(11, 6, 4);
    Tensor base(ctx, x, Layout::PackedRows4), w(ctx, wx), out(ctx, 13, 6);
    Tensor rows = Tensor::rowWindow(base, 21, 13);
    matmul(rows, w, out);
    HostMatrix got = out.download();
    Context& ours = test::context();
    Tensor base2(ours, x, Layout::PackedRows4), w2(ours, wx), out2(ours, 13, 6);
    matmul(Tensor::rowWindow(base2, 21, 13), w2, out2);
    EXPECT_EQ(got.data, out2.download().data);
}

TEST(Fetch, FeedbackMatmulTheOtherWay) {
    // The vertex kernel reads the other way too (natively forced on: llvmpipe).
    ContextOptions o = otherFetch(0, true);
    Context ctx(o);
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    for (Form f : {Form::NN, Form::TN, Form::NT}) {
        test::checkMatmul(ctx, f, 17, 129, 9, Layout::Packed, Layout::Packed);
        test::checkMatmul(ctx, f, 130, 97, 33, Layout::PackedRows4, Layout::PackedRows8);
    }
    test::context();
}

TEST(Fetch, ModelsMatchTheReferenceTheOtherWay) {
    test::expectMlpAdamStepsMatchTheReference(otherContext());
    test::expectCnnSgdStepMatchesTheReference(otherContext());
    test::context();
}

TEST(Fetch, TrainingGivesTheSameLossesEitherWay) {
    // The same texels, the same arithmetic: an MLP's losses over 30 steps agree
    // (to 1e-5: compilers may still order a sum differently).
    std::vector<float> other = test::mlpLosses(otherContext(), "").first;
    std::vector<float> ours = test::mlpLosses(test::context(), "").first;
    ASSERT_EQ(other.size(), 30u);
    ASSERT_EQ(ours.size(), 30u);
    for (size_t i = 0; i < 30; ++i)
        EXPECT_NEAR(other[i], ours[i], 1e-5 * std::max(1.0f, std::fabs(ours[i]))) << "step " << i + 1;
    EXPECT_LT(ours.back(), ours.front());
}

}  // namespace kernels_fetch_test
}  // namespace
