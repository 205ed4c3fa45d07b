// The production counter hash (gltrain/random.hpp) that the CPU backend, the
// initializers and the epoch shuffle draw from: the known values the oracle's
// copy (reference/random.hpp) is pinned to, and the same uniforms as the oracle.
#include <gtest/gtest.h>

#include <cstdint>

#include "gltrain/random.hpp"
#include "gltrain/reference/random.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace random_test {

// Known values (the list of reference_random_test.cpp; hash3 is constexpr).
static_assert(gltrain::pcg(0u) == 129708002u);
static_assert(gltrain::pcg(1u) == 2831084092u);
static_assert(gltrain::hash3(0u, 0u, 0u) == 2145236065u);
static_assert(gltrain::hash3(0u, 0u, 1u) == 3375797271u);
static_assert(gltrain::hash3(1u, 0u, 0u) == 594548367u);
static_assert(gltrain::hash3(0u, 1u, 0u) == 3414907750u);
static_assert(gltrain::hash3(42u, 7u, 123u) == 1443918556u);
static_assert(gltrain::hash3(12345u, 0u, 99u) == 1914082616u);
static_assert(gltrain::hash3(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu) == 3078439099u);

TEST(Random, UniformsEqualTheReferenceBitForBit) {
    EXPECT_EQ(gltrain::uniform01(42u, 7u, 123u), 0.336188436f);
    for (uint32_t seed : {0u, 1u, 0x5eed5eedu, 0xFFFFFFFFu})
        for (uint32_t step : {0u, 3u, 0xFFFFFFFFu})
            for (uint32_t i = 0; i < 4096; ++i) {
                ASSERT_EQ(gltrain::hash3(seed, step, i), gltrain::ref::hash3(seed, step, i))
                    << seed << " " << step << " " << i;
                ASSERT_EQ(gltrain::uniform01(seed, step, i), gltrain::ref::uniform01<float>(seed, step, i));
            }
}

}  // namespace random_test
}  // namespace
