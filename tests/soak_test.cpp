// The short soak (bench/soak.hpp; bench_soak runs the 20,000-step form): a
// small MLP trains for 2,000 steps after warm-up (each epoch ending in a short
// batch), with dropout, clipping, async loss reads and a validation pass every
// epoch. Between the snapshot after warm-up and the one at the end nothing may
// grow: textures (live, free, ever created), pool bytes and compiled programs
// are equal, GL reports no error, and host RSS grows by at most kRssToleranceKiB.
//
// RSS tolerance, 4 MiB: malloc arenas and Mesa's caches settle during
// warm-up, later steps allocate nothing that outlives them; measured growth
// over 2,000 steps on llvmpipe is a few hundred KiB at most (a leak of even
// 2 KiB a step would exceed it). RSS is not checked where there is no /proc
// (the browser) nor under AddressSanitizer, whose quarantine holds freed
// memory on purpose and grows RSS by design.
#include <gtest/gtest.h>

#include "../bench/soak.hpp"
#include "test_context.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define GLTRAIN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLTRAIN_TEST_ASAN 1
#endif
#endif

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace soak_test {

using namespace gltrain;
namespace {

constexpr long kRssToleranceKiB = 4096;

TEST(Soak, TwoThousandStepsStayFlat) {
    Context& ctx = test::context();
    soak::Options o;
    o.steps = 2000;
    o.layers = {64, 48, 32, 10};  // small enough for CI in a software renderer, every pass of the big MLP
    o.batch = 32;
    o.rows = 500;           // 15 full batches and a short one of 20: both training plans
    o.validationRows = 80;  // 2 full batches and a ragged one: both evaluation plans
    o.lossEvery = 25;
    const soak::Result r = soak::run(ctx, o);
    const soak::Snapshot &a = r.start, &b = r.end;
    SCOPED_TRACE("start " + soak::describe(a));
    SCOPED_TRACE("end   " + soak::describe(b));
    EXPECT_EQ(b.step - a.step, 2000);
    EXPECT_GT(a.liveTextures, 0u);
    EXPECT_EQ(b.liveTextures, a.liveTextures);
    EXPECT_EQ(b.freeTextures, a.freeTextures);
    EXPECT_EQ(b.createdTextures, a.createdTextures) << "a texture was created after warm-up";
    EXPECT_EQ(b.gpuBytes, a.gpuBytes);
    EXPECT_EQ(b.programs, a.programs) << "a shader was compiled after warm-up";
    EXPECT_EQ(a.glError, GLenum(GL_NO_ERROR)) << glErrorName(a.glError);
    EXPECT_EQ(b.glError, GLenum(GL_NO_ERROR)) << glErrorName(b.glError);
    EXPECT_GT(r.lossReads, 0);
    EXPECT_TRUE(std::isfinite(r.lastLoss));
    EXPECT_LT(r.lastLoss, r.firstLoss) << "the soak model should still be learning";
#ifndef GLTRAIN_TEST_ASAN
    if (a.rssKiB >= 0 && b.rssKiB >= 0) {
        EXPECT_LE(b.rssKiB - a.rssKiB, kRssToleranceKiB)
            << "host RSS grew from " << a.rssKiB << " to " << b.rssKiB << " KiB over 2000 steps";
    }
#endif
}

}  // namespace

}  // namespace soak_test
}  // namespace
