// GPU counter-based random fills against the CPU reference (ref::uniformFill,
// ref::normalFill, ref::dropoutMask) on packed, unpacked and paged tensors.
// Tolerances:
//   uniform and dropout: bit-equal (the generator is integer arithmetic and the
//     uniform's k * 2^-24 is exact; the fill's lo + (hi - lo) u is evaluated
//     with the reference's rounding).
//   normal: |gpu - ref| <= 2e-6 * stddev * max(1, |z|) per element, z = (ref - mean) / stddev.
//     lib/random evaluates log and cos(2 pi u) itself (series with exact range
//     reduction; SwiftShader's cos() was off by 2.4e-4), so the GPU is within
//     2.5e-7 of the exact value of z (measured over 1M samples on llvmpipe); most of
//     the 2e-6 is the reference's own float error (cos of the fp32-rounded 2 pi u2:
//     1.4e-6 at worst). Mean and stddev of 100k samples within 0.01 of 0 and 1
//     (the standard error of the mean is 0.003).
//   dropout keep rate of 100k draws within 0.01 of 1 - rate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gltrain/ops/random.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_random_test {

using namespace gltrain;
using gltrain::test::Case;
using gltrain::test::ctxFor;
using gltrain::test::name;

namespace {
const Case kCases[] = {
    {1, 1, Layout::Packed, false},     {1, 1, Layout::Unpacked, false},   {3, 5, Layout::Packed, false},
    {3, 5, Layout::Unpacked, false},   {127, 129, Layout::Packed, false}, {127, 129, Layout::Unpacked, false},
    {1000, 10, Layout::Packed, false}, {1, 1025, Layout::Packed, false},  {257, 63, Layout::Unpacked, false},
    {1, 1025, Layout::Packed, true},   {257, 63, Layout::Packed, true},   {70, 129, Layout::Unpacked, true}};

// Bitwise equality that also reports the first differing element.
::testing::AssertionResult bitEqual(const HostMatrix& gpu, const HostMatrix& ref) {
    if (gpu.rows != ref.rows || gpu.cols != ref.cols) return ::testing::AssertionFailure() << "shape differs";
    for (size_t i = 0; i < gpu.data.size(); ++i)
        if (std::memcmp(&gpu.data[i], &ref.data[i], sizeof(float)) != 0)
            return ::testing::AssertionFailure()
                   << "element " << i << ": gpu " << gpu.data[i] << " ref " << ref.data[i] << " (" << std::hexfloat
                   << gpu.data[i] << " vs " << ref.data[i] << std::defaultfloat << ")";
    return ::testing::AssertionSuccess();
}
// max |gpu - ref| / (stddev * max(1, |z|)), z = (ref - mean) / stddev.
double normalError(const HostMatrix& gpu, const HostMatrix& ref, double mean, double stddev) {
    double e = 0.0;
    for (size_t i = 0; i < gpu.data.size(); ++i) {
        const double z = (double(ref.data[i]) - mean) / stddev;
        e = std::max(e, std::fabs(double(gpu.data[i]) - double(ref.data[i])) / (stddev * std::max(1.0, std::fabs(z))));
    }
    return e;
}
constexpr uint32_t kSeed = 0xDEADBEEFu;  // above 2^24: both 16-bit halves matter
}  // namespace

TEST(KernelsRandom, UniformAndDropoutBitEqualToReference) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        Tensor out(ctx, c.rows, c.cols, c.layout);
        uniformFill(out, kSeed, 7, -0.5f, 2.5f);
        EXPECT_TRUE(bitEqual(out.download(), ref::uniformFill<float>(c.rows, c.cols, kSeed, 7, -0.5f, 2.5f)))
            << "uniform " << name(c);
        uniformFill(out, 42, 0, 0.0f, 1.0f);
        EXPECT_TRUE(bitEqual(out.download(), ref::uniformFill<float>(c.rows, c.cols, 42, 0, 0.0f, 1.0f)))
            << "uniform01 " << name(c);
        dropoutMask(out, kSeed, 3, 0.3f);
        EXPECT_TRUE(bitEqual(out.download(), ref::dropoutMask<float>(c.rows, c.cols, kSeed, 3, 0.3f)))
            << "dropout " << name(c);
    }
}

TEST(KernelsRandom, NormalWithinToleranceOfReference) {
    double worst = 0.0;
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        Tensor out(ctx, c.rows, c.cols, c.layout);
        normalFill(out, kSeed, 11, 0.25f, 2.0f);
        const double e =
            normalError(out.download(), ref::normalFill<float>(c.rows, c.cols, kSeed, 11, 0.25f, 2.0f), 0.25, 2.0);
        worst = std::max(worst, e);
        EXPECT_LE(e, 2e-6) << "normal " << name(c);
    }
    RecordProperty("worst_normal_error", std::to_string(worst));
}

TEST(KernelsRandom, StepUpdatesWithoutRecordingAgain) {
    Context& ctx = test::context();
    Tensor u(ctx, 127, 129), m(ctx, 127, 129, Layout::Unpacked);
    PassList list;
    Pass& pu = recordUniformFill(list, u, 5, 0, 0.0f, 1.0f);
    Pass& pm = recordDropoutMask(list, m, 6, 0, 0.5f);
    HostMatrix prev;
    for (int s : {1, 2, 1000, 1 << 24}) {
        pu.uniformInt("step", s);
        pm.uniformInt("step", s);
        list.run();
        HostMatrix cur = u.download();
        EXPECT_TRUE(bitEqual(cur, ref::uniformFill<float>(127, 129, 5, uint32_t(s), 0.0f, 1.0f))) << "step " << s;
        EXPECT_TRUE(bitEqual(m.download(), ref::dropoutMask<float>(127, 129, 6, uint32_t(s), 0.5f))) << "step " << s;
        if (!prev.data.empty()) {
            // Different steps give different numbers: equal values are 2^-24-rare.
            int same = 0;
            for (size_t i = 0; i < cur.data.size(); ++i) same += cur.data[i] == prev.data[i];
            EXPECT_LE(same, 2) << "step " << s;
        }
        prev = cur;
    }
}

TEST(KernelsRandom, SeedsAndStepsGiveDifferentStreams) {
    Context& ctx = test::context();
    Tensor a(ctx, 64, 64), b(ctx, 64, 64);
    auto sameCount = [&] {
        HostMatrix x = a.download(), y = b.download();
        int n = 0;
        for (size_t i = 0; i < x.data.size(); ++i) n += x.data[i] == y.data[i];
        return n;
    };
    uniformFill(a, 0x12345u, 0, 0.0f, 1.0f);
    uniformFill(b, 0x12345u + 0x10000u, 0, 0.0f, 1.0f);  // differs in the high half only
    EXPECT_LE(sameCount(), 2);
    uniformFill(b, 0x12345u, 1, 0.0f, 1.0f);
    EXPECT_LE(sameCount(), 2);
    uniformFill(b, 0x12345u, 0, 0.0f, 1.0f);
    EXPECT_EQ(sameCount(), 64 * 64);
}

TEST(KernelsRandom, SampleStatistics) {
    Context& ctx = test::context();
    Tensor z(ctx, 1000, 100), m(ctx, 1000, 100);
    normalFill(z, 2024, 1, 0.0f, 1.0f);
    double s = 0, s2 = 0;
    for (float v : z.download().data) {
        ASSERT_TRUE(std::isfinite(v));
        s += v;
        s2 += double(v) * v;
    }
    const double n = 1e5, mean = s / n, sd = std::sqrt(s2 / n - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.01);
    EXPECT_NEAR(sd, 1.0, 0.01);

    for (float rate : {0.1f, 0.5f, 0.9f}) {
        dropoutMask(m, 77, 3, rate);
        const float keep = 1.0f / (1.0f - rate);
        int kept = 0;
        for (float v : m.download().data) {
            ASSERT_TRUE(v == 0.0f || v == keep) << v;
            kept += v != 0.0f;
        }
        EXPECT_NEAR(kept / n, 1.0 - rate, 0.01) << "rate " << rate;
    }
    dropoutMask(m, 77, 3, 0.0f);  // rate 0 keeps everything, with scale 1
    for (float v : m.download().data) ASSERT_EQ(v, 1.0f);
}

TEST(KernelsRandom, LayoutAndPagingDoNotChangeValues) {
    const int rows = 129, cols = 130;
    HostMatrix ref;
    for (int dist = 0; dist < 3; ++dist) {
        HostMatrix first;
        for (int k = 0; k < 3; ++k) {
            Context& ctx = k == 2 ? test::smallContext() : test::context();
            Tensor out(ctx, rows, cols, k == 1 ? Layout::Unpacked : Layout::Packed);
            if (k == 2) ASSERT_TRUE(out.geometry().paged());
            if (dist == 0) uniformFill(out, 9, 9, -1.0f, 1.0f);
            if (dist == 1) normalFill(out, 9, 9, 0.0f, 1.0f);
            if (dist == 2) dropoutMask(out, 9, 9, 0.25f);
            HostMatrix got = out.download();
            if (k == 0) first = got;
            else EXPECT_TRUE(bitEqual(got, first)) << "dist " << dist << " variant " << k;
        }
    }
}

TEST(KernelsRandom, ArgumentErrors) {
    Context& ctx = test::context();
    Tensor out(ctx, 3, 3), empty;
    EXPECT_THROW(dropoutMask(out, 1, 0, 1.0f), ArgumentError);
    EXPECT_THROW(dropoutMask(out, 1, 0, -0.1f), ArgumentError);
    EXPECT_THROW(dropoutMask(out, 1, 0, std::nanf("")), ArgumentError);
    EXPECT_THROW(uniformFill(empty, 1, 0, 0.0f, 1.0f), ArgumentError);
    EXPECT_THROW(normalFill(out, 1, (1u << 24) + 1, 0.0f, 1.0f), ArgumentError);
}

}  // namespace kernels_random_test
}  // namespace
