// The transform-feedback matmul (forward/matmul_feedback + forward/matmul_epilogue)
// against the CPU reference (double): every form, odd shapes and K (blocks of
// 8 or 12 rows x 2 texels cut short, K not a multiple of 4), operand and output row
// layouts, paged operands, the fused epilogues, and a training run that must
// agree with the fragment kernels step by step. Natively it runs on llvmpipe
// (ContextOptions::feedback = on); in Chromium on SwiftShader, where Auto turns
// it on for every test. Tolerance as kernels_matmul_test:
// max |gpu - ref| <= 1e-5 * max(1, max |ref|).
#include <gtest/gtest.h>

#include "gltrain/sequential.hpp"
#include "matmul_check.hpp"
#include "model_reference_steps.hpp"
#include "reference_test_util.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_matmul_feedback_test {

using namespace gltrain;
using gltrain::test::feedbackContext;
using gltrain::test::Form;
using gltrain::test::kernelsOf;

namespace {

const std::vector<std::string> kFeedback = {"forward/matmul_feedback", "forward/matmul_epilogue"};

}  // namespace

TEST(FeedbackKernels, WhoRunsThem) {
    // On: wherever the backend is gpu-float32 and compute kernels do not run
    // matmul. Auto: SwiftShader only. Off: never. Where it fits: packed operands,
    // not both transposed, the staging row within the texture size; K past
    // kFeedbackMaxK runs in slices summed by forward/binary.
    Context& ctx = feedbackContext();
    const Capabilities& on = ctx.caps();
    if (on.computeKernels) GTEST_SKIP() << "compute kernels run matmul here";
    EXPECT_TRUE(on.feedbackKernels) << on.feedbackReason;
    Tensor a(ctx, 8, 8), b(ctx, 8, 8), c(ctx, 8, 8);
    EXPECT_EQ(kernelsOf(a, b, c), kFeedback);
    Tensor u(ctx, 8, 8, Layout::Unpacked);
    EXPECT_EQ(kernelsOf(u, b, c), std::vector<std::string>{"forward/matmul"});
    MatmulOptions both;
    both.transA = both.transB = true;
    EXPECT_EQ(kernelsOf(a, b, c, both), std::vector<std::string>{"forward/matmul"});
    const int kMax = detail::kFeedbackMaxK;
    Tensor longA(ctx, 8, 2 * kMax + 4), longB(ctx, 2 * kMax + 4, 8);
    const std::vector<std::string> threeSlices = {"forward/matmul_feedback", "forward/matmul_feedback",
                                                  "forward/binary",          "forward/matmul_feedback",
                                                  "forward/binary",          "forward/matmul_epilogue"};
    EXPECT_EQ(kernelsOf(longA, longB, c), threeSlices) << "K past 2 kFeedbackMaxK: three slices, summed";
    EXPECT_EQ(detail::feedbackSliceK(kMax), kMax);
    EXPECT_EQ(detail::feedbackSliceK(kMax + 1), kMax / 2 + 8) << "equal slices, multiples of 8";
    EXPECT_EQ(detail::feedbackSliceK(2 * kMax + 4), 688) << "2052 in three: 684, rounded up to 8";

    // ContextOptions::feedbackMinWork: smaller products into a row-interleaved C
    // keep the block kernel; a Packed C (which it cannot write) takes feedback
    // at any size.
    ContextOptions big;
    big.backend = BackendPreference::Gpu;
    big.feedback = FeedbackPreference::On;
    big.feedbackMinWork = 8 * 8 * 8;
    Context sized(big);
    Tensor p(sized, 8, 8), q(sized, 8, 8), r(sized, 8, 8, Layout::PackedRows4), s(sized, 8, 7), t(sized, 7, 8);
    Tensor packedC(sized, 8, 8);
    EXPECT_EQ(kernelsOf(p, q, r), kFeedback);
    EXPECT_EQ(kernelsOf(s, t, r), std::vector<std::string>{"forward/matmul_block"});
    EXPECT_EQ(kernelsOf(s, t, packedC), kFeedback);
    // The layout of a tensor made to be multiplied follows: Packed here.
    EXPECT_EQ(matmulLayout(sized, 64), Layout::Packed);
    big.feedbackMinWork = -1;
    EXPECT_THROW(Context bad(big), ArgumentError);

    const Capabilities& autoCaps = test::context().caps();
    const bool swiftShader = autoCaps.renderer.find("SwiftShader") != std::string::npos;
    if (!autoCaps.computeKernels) EXPECT_EQ(autoCaps.feedbackKernels, swiftShader) << autoCaps.feedbackReason;
    // The block: 12 rows where a vertex can capture 24 vec4s (SwiftShader: 32), else the
    // 8 every OpenGL ES 3.0 device can (64 components; llvmpipe's limit).
    EXPECT_GE(on.maxFeedbackComponents, 64);
    EXPECT_EQ(detail::feedbackBlockRows(ctx), on.maxFeedbackComponents >= 96 ? 12 : 8);
    if (swiftShader) EXPECT_EQ(detail::feedbackBlockRows(ctx), 12) << on.maxFeedbackComponents;

    ContextOptions o;
    o.backend = BackendPreference::Gpu;
    o.feedback = FeedbackPreference::Off;
    Context off(o);
    EXPECT_FALSE(off.caps().feedbackKernels);
    EXPECT_NE(off.caps().feedbackReason.find("feedback = off"), std::string::npos) << off.caps().feedbackReason;
    Tensor x(off, 8, 8), y(off, 8, 8), z(off, 8, 8);
    EXPECT_EQ(kernelsOf(x, y, z), std::vector<std::string>{"forward/matmul"});
    // Without feedback a tensor made to be multiplied is what the block kernel writes.
    EXPECT_EQ(matmulLayout(off, 3), Layout::Packed);
    EXPECT_EQ(matmulLayout(off, 4), Layout::PackedRows4);
    EXPECT_EQ(matmulLayout(off, 64), off.caps().maxDrawBuffers >= 8 ? Layout::PackedRows8 : Layout::PackedRows4);
    ctx.makeCurrent();
}

// The feedback kernel writes a staging tensor, then C: no one pass both reads
// and writes C, so matmul itself refuses a C that is also an operand — on the
// feedback context and on the shared one (natively: the fragment kernels).
// (The shared contexts only: Chromium loses the oldest WebGL context past 16.)
TEST(FeedbackKernels, RefusesAnOutputThatIsAlsoAnOperand) {
    for (Context* c : {&feedbackContext(), &test::context()}) {
        c->makeCurrent();
        Tensor a(*c, 8, 8), b(*c, 8, 8), z(*c, 1, 8), row(*c, 1, 8);
        reftest::expectArgumentError([&] { matmul(a, a, a); }, {"matmul: an output is also input 'A'"});
        reftest::expectArgumentError([&] { matmul(b, a, a); }, {"an output is also input 'B'"});
        MatmulOptions withBias;
        withBias.bias = &z;
        reftest::expectArgumentError([&] { matmul(row, b, z, withBias); }, {"an output is also input 'bias'"});
    }
}

TEST(FeedbackKernels, MatmulMatchesReferenceInEveryFormAndLayout) {
    Context& ctx = feedbackContext();
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    struct MN {
        int m, n;
    };
    // One element, a row, a column, whole blocks (8 or 12 rows x 8 columns), blocks cut short.
    const MN shapes[] = {{1, 1}, {1, 33}, {33, 1}, {16, 16}, {24, 16}, {17, 9}, {25, 9}, {127, 5}, {5, 127}};
    for (Form f : {Form::NN, Form::TN, Form::NT})
        for (MN s : shapes)
            for (int k : {1, 3, 8, 129}) test::checkMatmul(ctx, f, s.m, k, s.n, Layout::Packed, Layout::Packed);
    for (Form f : {Form::NN, Form::TN, Form::NT}) {
        test::checkMatmul(ctx, f, 130, 97, 33, Layout::PackedRows4, Layout::PackedRows8);
        test::checkMatmul(ctx, f, 13, 1024, 6, Layout::PackedRows8,
                          Layout::PackedRows4);  // K = kFeedbackMaxK in one draw
    }
}

TEST(FeedbackKernels, LongKRunsInSlicesThatAddUp) {
    // K past kFeedbackMaxK: two or three slices, K not a multiple of 4 or 8 (the
    // last slice's tail), every form, a fused epilogue on the summed staging.
    Context& ctx = feedbackContext();
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    const int kMax = detail::kFeedbackMaxK;
    for (Form f : {Form::NN, Form::TN, Form::NT})
        for (int k : {kMax + 1, kMax + 8, 2 * kMax + 13})
            test::checkMatmul(ctx, f, 13, k, 9, Layout::Packed, Layout::Packed);
    test::checkMatmul(ctx, Form::NN, 25, kMax + 3, 17, Layout::PackedRows8, Layout::PackedRows4);
}

TEST(FeedbackKernels, TooWideForStagingTakesTheBlockKernelAndACopy) {
    // MAX_TEXTURE_SIZE 64: a 300-column Packed C has no staging row, so the
    // block kernel writes a row-interleaved temporary and forward/unary copies
    // it into C (the one-texel kernel ran it 2x slower on SwiftShader).
    Context& ctx = feedbackContext(true);
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    Tensor a(ctx, 40, 70), b(ctx, 70, 300), c(ctx, 40, 300), tiny(ctx, 3, 300), a3(ctx, 3, 70);
    EXPECT_EQ(kernelsOf(a, b, c), (std::vector<std::string>{"forward/matmul_block", "forward/unary"}));
    EXPECT_EQ(kernelsOf(a3, b, tiny), std::vector<std::string>{"forward/matmul"}) << "under 4 rows: no blocks";
    for (Form f : {Form::NN, Form::TN, Form::NT})
        test::checkMatmul(ctx, f, 37, 70, 300, Layout::Packed, Layout::Packed);
}

TEST(FeedbackKernels, PagedOperands) {
    // MAX_TEXTURE_SIZE 64: operands split into pages; an output narrow enough
    // for its staging row (<= 16 columns: 2 blocks of 12 x 2 texels) runs the
    // feedback kernel, a wider one (paged too) the fragment kernels.
    Context& ctx = feedbackContext(true);
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    Tensor a(ctx, 300, 300), b(ctx, 300, 16), c(ctx, 300, 16), wide(ctx, 300, 300);
    EXPECT_EQ(kernelsOf(a, b, c), kFeedback);
    EXPECT_NE(kernelsOf(a, a, wide), kFeedback);
    for (Form f : {Form::NN, Form::TN, Form::NT})
        test::checkMatmul(ctx, f, 127, 300, 13, Layout::Packed, Layout::Packed);
    test::checkMatmul(ctx, Form::NN, 301, 70, 15, Layout::PackedRows8, Layout::PackedRows4);
}

TEST(FeedbackKernels, FusedEpilogues) {
    // Bias and activation, or f'(Z), in the epilogue pass.
    Context& ctx = feedbackContext();
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    test::expectFusedEpilogues(ctx, Layout::PackedRows8, kFeedback);
}

TEST(FeedbackKernels, TrainingAgreesWithTheFragmentKernels) {
    // With and without the feedback kernels: the same losses step by step.
    Context& ctx = feedbackContext();
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    ContextOptions offOptions;
    offOptions.backend = BackendPreference::Gpu;
    offOptions.feedback = FeedbackPreference::Off;
    Context off(offOptions);
    test::expectTrainingAgrees(ctx, off, "forward/matmul_feedback");
}

TEST(FeedbackKernels, MlpStepsMatchTheReference) {
    Context& ctx = feedbackContext();
    if (!ctx.caps().feedbackKernels) GTEST_SKIP() << ctx.caps().feedbackReason;
    test::expectMlpAdamStepsMatchTheReference(ctx);
}

}  // namespace kernels_matmul_feedback_test
}  // namespace
