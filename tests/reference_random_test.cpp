// CPU reference: the counter-based generator the GLSL kernels reproduce.
// The known hash values below are the cross-check for the GPU test: a shader
// computing hash3 with the same inputs must produce exactly these numbers.
#include <cmath>
#include <cstdint>

#include "reference_test_util.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace reference_random_test {

namespace {

using namespace gltrain;
using namespace reftest;
namespace r = gltrain::ref;

// Known values (also checked at compile time: hash3 is constexpr).
static_assert(r::pcg(0u) == 129708002u);
static_assert(r::pcg(1u) == 2831084092u);
static_assert(r::hash3(0u, 0u, 0u) == 2145236065u);
static_assert(r::hash3(0u, 0u, 1u) == 3375797271u);
static_assert(r::hash3(1u, 0u, 0u) == 594548367u);
static_assert(r::hash3(0u, 1u, 0u) == 3414907750u);
static_assert(r::hash3(42u, 7u, 123u) == 1443918556u);
static_assert(r::hash3(12345u, 0u, 99u) == 1914082616u);
static_assert(r::hash3(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu) == 3078439099u);

TEST(ReferenceRandom, KnownHashValues) {
    EXPECT_EQ(r::pcg(0u), 129708002u);
    EXPECT_EQ(r::pcg(1u), 2831084092u);
    EXPECT_EQ(r::hash3(0u, 0u, 0u), 2145236065u);
    EXPECT_EQ(r::hash3(0u, 0u, 1u), 3375797271u);
    EXPECT_EQ(r::hash3(1u, 0u, 0u), 594548367u);
    EXPECT_EQ(r::hash3(0u, 1u, 0u), 3414907750u);
    EXPECT_EQ(r::hash3(42u, 7u, 123u), 1443918556u);
    EXPECT_EQ(r::hash3(12345u, 0u, 99u), 1914082616u);
    EXPECT_EQ(r::hash3(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu), 3078439099u);
}

TEST(ReferenceRandom, KnownUniformValuesAreExact) {
    // float(h >> 8) * 2^-24, exactly representable: compare with ==.
    EXPECT_EQ(r::uniform01(0u, 0u, 0u), float(2145236065u >> 8) / 16777216.0f);
    EXPECT_EQ(r::uniform01(42u, 7u, 123u), float(1443918556u >> 8) / 16777216.0f);
    EXPECT_EQ(r::uniform01(42u, 7u, 123u), 0.336188436f);
    EXPECT_EQ(r::uniform01<double>(42u, 7u, 123u), double(1443918556u >> 8) / 16777216.0);
    // The float and double fills agree bit for bit on [0, 1).
    const MatF f = r::uniformFill<float>(3, 5, 9u, 4u, 0.0, 1.0);
    const MatD d = r::uniformFill<double>(3, 5, 9u, 4u, 0.0, 1.0);
    for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(double(f.data[i]), d.data[i]);
}

TEST(ReferenceRandom, KnownNormalValues) {
    // z = sqrt(-2 ln u1) cos(2 pi u2) from hash3 at 2i and 2i+1. The GPU
    // matches these to a few ulps (its log/cos are not correctly rounded).
    EXPECT_NEAR(r::normal(0u, 0u, 0u), 0.264179409f, 1e-6f);
    EXPECT_NEAR(r::normal(42u, 7u, 123u), -0.708933175f, 1e-6f);
    // u1's "+ 0.5" is an fp32 addition, as in the GLSL: for h >> 8 >= 2^23 it
    // rounds to even, which is why it is not computed in double here.
    const uint32_t k1 = r::hash3(42u, 7u, 246u) >> 8;
    ASSERT_GE(k1, 1u << 23);  // this case exercises the rounding
    EXPECT_NE(double(float(k1) + 0.5f), double(k1) + 0.5);
    const double u1 = double((float(k1) + 0.5f) / 16777216.0f);
    const double u2 = double(r::hash3(42u, 7u, 247u) >> 8) / 16777216.0;
    EXPECT_NEAR(r::normal<double>(42u, 7u, 123u), std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2),
                1e-12);
    // 2 * index wraps mod 2^32 like a GLSL uint: index 2^31 reads hashes 0 and 1.
    EXPECT_EQ(r::normal(5u, 6u, 0x80000000u), r::normal(5u, 6u, 0u));
}

TEST(ReferenceRandom, FillsUseRowMajorIndex) {
    const MatF u = r::uniformFill<float>(3, 4, 42u, 7u, -2.0, 2.0);
    const MatF n = r::normalFill<float>(3, 4, 42u, 7u, 1.0, 0.5);
    for (int row = 0; row < 3; ++row)
        for (int c = 0; c < 4; ++c) {
            const uint32_t idx = uint32_t(row * 4 + c);
            EXPECT_EQ(u(row, c), -2.0f + 4.0f * r::uniform01(42u, 7u, idx));
            EXPECT_EQ(n(row, c), 1.0f + 0.5f * r::normal(42u, 7u, idx));
        }
}

TEST(ReferenceRandom, DeterministicAndStepsDiffer) {
    const MatF a = r::uniformFill<float>(50, 40, 3u, 10u, 0.0, 1.0);
    EXPECT_TRUE(matricesNear(a, r::uniformFill<float>(50, 40, 3u, 10u, 0.0, 1.0), 0.0));
    EXPECT_TRUE(matricesNear(r::normalFill<float>(5, 7, 3u, 10u, 0.0, 1.0),
                             r::normalFill<float>(5, 7, 3u, 10u, 0.0, 1.0), 0.0));
    const MatF nextStep = r::uniformFill<float>(50, 40, 3u, 11u, 0.0, 1.0);
    const MatF otherSeed = r::uniformFill<float>(50, 40, 4u, 10u, 0.0, 1.0);
    int sameStep = 0, sameSeed = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        sameStep += a.data[i] == nextStep.data[i];
        sameSeed += a.data[i] == otherSeed.data[i];
    }
    EXPECT_LE(sameStep, 2);  // 2000 draws from 2^24 values: a collision is rare
    EXPECT_LE(sameSeed, 2);
}

TEST(ReferenceRandom, MomentsOf100kDraws) {
    const int n = 100000;
    const MatF u = r::uniformFill<float>(1, n, 2024u, 1u, 0.0, 1.0);
    const MatF z = r::normalFill<float>(1, n, 2024u, 1u, 0.0, 1.0);
    double su = 0, suu = 0, sz = 0, szz = 0, umin = 1, umax = 0;
    for (int i = 0; i < n; ++i) {
        su += u.data[size_t(i)];
        suu += double(u.data[size_t(i)]) * u.data[size_t(i)];
        sz += z.data[size_t(i)];
        szz += double(z.data[size_t(i)]) * z.data[size_t(i)];
        umin = std::fmin(umin, u.data[size_t(i)]);
        umax = std::fmax(umax, u.data[size_t(i)]);
    }
    const double mu = su / n, vu = suu / n - mu * mu, mz = sz / n, vz = szz / n - mz * mz;
    // Standard errors: uniform mean 0.0009, variance 0.0001; normal mean 0.0032, variance 0.0045.
    EXPECT_NEAR(mu, 0.5, 0.005);
    EXPECT_NEAR(vu, 1.0 / 12, 0.002);
    EXPECT_NEAR(mz, 0.0, 0.02);
    EXPECT_NEAR(vz, 1.0, 0.03);
    EXPECT_GE(umin, 0.0);
    EXPECT_LT(umax, 1.0);
    for (float v : z.data) ASSERT_TRUE(std::isfinite(v));
}

TEST(ReferenceRandom, DropoutKeepsOneMinusRate) {
    const int n = 100000;
    const float rate = 0.3f;
    const MatF m = r::dropoutMask<float>(100, n / 100, 77u, 5u, rate);
    int kept = 0;
    double sum = 0;
    for (size_t i = 0; i < m.size(); ++i) {
        const float v = m.data[i];
        ASSERT_TRUE(v == 0.0f || v == 1.0f / (1.0f - rate)) << v;
        kept += v != 0.0f;
        sum += v;
        // The spec, element by element.
        ASSERT_EQ(v != 0.0f, r::uniform01(77u, 5u, uint32_t(i)) >= rate);
    }
    EXPECT_NEAR(double(kept) / n, 0.7, 0.01);
    EXPECT_NEAR(sum / n, 1.0, 0.015);  // inverted dropout keeps the mean
    EXPECT_TRUE(matricesNear(r::dropoutMask<double>(4, 5, 1u, 1u, 0.0), MatD(4, 5, 1.0), 0.0));
    expectArgumentError([] { r::dropoutMask<float>(2, 2, 1u, 1u, 1.0); }, {"ref::dropoutMask", "rate"});
    expectArgumentError([] { r::dropoutMask<float>(2, 2, 1u, 1u, -0.1); }, {"ref::dropoutMask", "rate"});
}

}  // namespace

}  // namespace reference_random_test
}  // namespace
