// The compute-shader matmul (forward/matmul_tiled, OpenGL ES 3.1) against the
// CPU reference (double), as the fragment kernels are tested: every form, odd
// shapes and K (tiles of 64 and k slices of 16 cut short), packed operands
// (unpacked ones go to the fragment kernels), output row layouts, pages, the fused epilogues, and a training run that must
// agree with the fragment kernels step by step. Natively the suite runs it on
// llvmpipe (ContextOptions::compute = on); WebGL2 has no compute stage, so the
// browser run skips it and says why. Tolerance as kernels_matmul_test:
// max |gpu - ref| <= 1e-5 * max(1, max |ref|).
#include <gtest/gtest.h>

#include "gltrain/sequential.hpp"
#include "matmul_check.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_matmul_compute_test {

using namespace gltrain;
using gltrain::test::computeContext;
using gltrain::test::Form;
using gltrain::test::kernelsOf;

namespace {

#define REQUIRE_COMPUTE()                        \
    if (!computeContext().caps().computeShaders) \
    GTEST_SKIP() << "no compute shaders here (" << computeContext().caps().computeReason << ")"

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

    const Capabilities& autoCaps = test::context().caps();  // Auto, unless GLTRAIN_TEST_COMPUTE=on
    if (test::testCompute() == ComputePreference::Auto) {
        EXPECT_EQ(autoCaps.computeKernels, !autoCaps.softwareRenderer) << autoCaps.computeReason;
        if (autoCaps.softwareRenderer)
            EXPECT_NE(autoCaps.computeReason.find("software renderer"), std::string::npos) << autoCaps.computeReason;
    }

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
                test::checkMatmul(computeContext(), f, s.m, k, s.n, Layout::Packed, Layout::Packed);
                test::checkMatmul(computeContext(), f, s.m, k + 1, s.n, Layout::Packed, Layout::PackedRows8);
            }
    test::checkMatmul(computeContext(), Form::NN, 130, 97, 33, Layout::PackedRows4, Layout::PackedRows4);
    test::checkMatmul(computeContext(), Form::NN, 13, 9, 6, Layout::PackedRows4, Layout::PackedRows4);
}

TEST(ComputeKernels, LargeTileMatchesReferenceAcrossItsEdges) {
    // forward/matmul_tiled_large (128 x 128 tiles, 8 x 8 per thread in two
    // groups 64 apart, k slices of 16 in two buffers), forced: shapes that end
    // inside each half of a tile, just past a tile, one element past the
    // thread groups' split; K past one, two and an odd number of slices.
    REQUIRE_COMPUTE();
    MatmulOptions large;
    large.computeTile = ComputeTile::Large;
    struct MNK {
        int m, k, n;
    };
    const MNK shapes[] = {{1, 1, 1}, {130, 17, 129}, {65, 33, 200}, {257, 47, 63}, {128, 16, 128}};
    for (Form f : {Form::NN, Form::TN, Form::NT})
        for (MNK s : shapes) {
            test::checkMatmul(computeContext(), f, s.m, s.k, s.n, Layout::Packed, Layout::Packed, large);
            test::checkMatmul(computeContext(), f, s.m, s.k + 3, s.n, Layout::Packed, Layout::PackedRows8, large);
        }
    test::checkMatmul(computeContext(), Form::NN, 131, 97, 133, Layout::PackedRows4, Layout::PackedRows4, large);
    // Paged operands and output (MAX_TEXTURE_SIZE 64).
    test::checkMatmul(computeContext(true), Form::NN, 129, 70, 131, Layout::Packed, Layout::Packed, large);
    test::checkMatmul(computeContext(true), Form::NT, 130, 41, 129, Layout::Packed, Layout::PackedRows8, large);
    computeContext().makeCurrent();
}

TEST(ComputeKernels, TileChosenByShape) {
    // The large tile where the product has detail::kLargeTileMinWorkgroups of
    // its tiles, the small one below; the fused epilogues run in both.
    REQUIRE_COMPUTE();
    EXPECT_FALSE(detail::largeComputeTile(1024, 1024));  // 64 large tiles
    EXPECT_TRUE(detail::largeComputeTile(2048, 1024));   // 128
    EXPECT_TRUE(detail::largeComputeTile(4096, 4096));
    EXPECT_FALSE(detail::largeComputeTile(100, 100));
    Tensor a(computeContext(), 2048, 8), b(computeContext(), 8, 1024), c(computeContext(), 2048, 1024);
    EXPECT_EQ(kernelsOf(a, b, c), std::vector<std::string>{"forward/matmul_tiled_large"});
    MatmulOptions large;
    large.computeTile = ComputeTile::Large;
    EXPECT_EQ(kernelsOf(a, b, c, large), std::vector<std::string>{"forward/matmul_tiled_large"});
    MatmulOptions small;
    small.computeTile = ComputeTile::Small;
    EXPECT_EQ(kernelsOf(a, b, c, small), std::vector<std::string>{"forward/matmul_tiled"});
}

TEST(ComputeKernels, LongKInOneDispatchAndPagedTensors) {
    REQUIRE_COMPUTE();
    for (Form f : {Form::NN, Form::TN, Form::NT})
        test::checkMatmul(computeContext(), f, 33, 8192, 17, Layout::Packed, Layout::Packed);
    // MAX_TEXTURE_SIZE 64: operands and output split into pages.
    test::checkMatmul(computeContext(true), Form::NN, 127, 300, 129, Layout::Packed, Layout::Packed);
    test::checkMatmul(computeContext(true), Form::TN, 301, 70, 129, Layout::Packed, Layout::PackedRows8);
}

TEST(ComputeKernels, FusedEpilogues) {
    REQUIRE_COMPUTE();
    test::expectFusedEpilogues(computeContext(), Layout::Packed, {"forward/matmul_tiled"});
    MatmulOptions large;
    large.computeTile = ComputeTile::Large;
    test::expectFusedEpilogues(computeContext(), Layout::Packed, {"forward/matmul_tiled_large"}, large);
}

TEST(ComputeKernels, TrainingAgreesWithTheFragmentKernels) {
    // The same MLP on compute and on fragment kernels: the same losses step by
    // step, and the step really runs the compute kernel — between fragment
    // passes that read what it wrote.
    REQUIRE_COMPUTE();
    ContextOptions fragmentOptions;
    fragmentOptions.backend = BackendPreference::Gpu;
    fragmentOptions.compute = ComputePreference::Off;
    Context fragment(fragmentOptions);
    test::expectTrainingAgrees(computeContext(), fragment, "forward/matmul_tiled");
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

}  // namespace kernels_matmul_compute_test
}  // namespace
