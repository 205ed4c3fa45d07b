// Shared contexts for the test suite: creating one costs a context and a
// probe shader compile, so every test reuses these. Each accessor makes its
// context current, so tests may mix them.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gltrain/context.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/layout.hpp"

namespace gltrain::test {

// GLTRAIN_TEST_COMPUTE=on: the shared GPU contexts run compute kernels (every
// fragment kernel as a compute dispatch) even where Auto leaves them off, as on
// llvmpipe — the suite's GPU tests then check the compute forms there.
inline ComputePreference testCompute() {
    const char* v = std::getenv("GLTRAIN_TEST_COMPUTE");
    return v && std::string(v) == "on" ? ComputePreference::On : ComputePreference::Auto;
}

// The GPU engine's contexts: BackendPreference::Gpu, so a software renderer
// that measures slower than the CPU backend still tests the GPU.
inline Context& context() {
    static Context ctx([] {
        ContextOptions o;
        o.backend = BackendPreference::Gpu;
        o.compute = testCompute();
        return o;
    }());
    ctx.makeCurrent();
    return ctx;
}

// MAX_TEXTURE_SIZE forced down to 64, so modest shapes are split into pages.
inline Context& smallContext() {
    static Context ctx([] {
        ContextOptions o;
        o.backend = BackendPreference::Gpu;
        o.compute = testCompute();
        o.maxTextureSize = 64;
        return o;
    }());
    ctx.makeCurrent();
    return ctx;
}

// Two contexts from one set of options (`Make(maxTextureSize)`): full size, and
// `paged` with MAX_TEXTURE_SIZE forced to 64. Made on first use, then shared.
template <ContextOptions (*Make)(int)>
Context& contextPair(bool paged) {
    if (paged) {
        static Context small(Make(64));
        small.makeCurrent();
        return small;
    }
    static Context full(Make(0));
    full.makeCurrent();
    return full;
}

inline ContextOptions computeOptions(int maxTex) {
    ContextOptions o;
    o.backend = BackendPreference::Gpu;
    o.compute = ComputePreference::On;
    o.maxTextureSize = maxTex;
    return o;
}
inline ContextOptions feedbackOptions(int maxTex) {
    ContextOptions o;
    o.backend = BackendPreference::Gpu;
    o.feedback = FeedbackPreference::On;
    o.feedbackMinWork = 0;  // every shape
    o.maxTextureSize = maxTex;
    return o;
}

// Compute-shader kernels on wherever the device has them (native OpenGL ES 3.1;
// on llvmpipe too, where Auto leaves them off).
inline Context& computeContext(bool paged = false) { return contextPair<computeOptions>(paged); }

// The transform-feedback matmul on wherever the backend is gpu-float32 (Auto:
// SwiftShader only), for every shape.
inline Context& feedbackContext(bool paged = false) { return contextPair<feedbackOptions>(paged); }

// The CPU backend, without any GL context.
inline Context& cpuContext() {
    static Context ctx([] {
        ContextOptions o;
        o.backend = BackendPreference::Cpu;
        return o;
    }());
    return ctx;
}
// Both engines: the GPU's (context()) and the CPU backend, for tests that run on each.
inline std::vector<Context*> engines() { return {&context(), &cpuContext()}; }
// "gpu" or "cpu", for SCOPED_TRACE.
inline const char* engineName(const Context* c) { return c == &cpuContext() ? "cpu" : "gpu"; }

// One shape-and-layout case of the kernel tests; `small` runs it on
// smallContext(), so the tensor is split into pages.
struct Case {
    int rows, cols;
    Layout layout;
    bool small;
};
inline Context& ctxFor(const Case& c) { return c.small ? smallContext() : context(); }
inline std::string name(const Case& c) {
    return std::to_string(c.rows) + "x" + std::to_string(c.cols) + " " + layoutName(c.layout) +
           (c.small ? " paged" : "");
}

inline HostMatrix randomMatrix(int rows, int cols, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    HostMatrix m(rows, cols);
    for (auto& v : m.data) v = d(rng);
    return m;
}

// `rows` rows of `cols` values in [-1, 1) in 3 classes (row r: class r % 3),
// each class marked by `bump` added at column `markStride` * class.
struct ClassData {
    // The rows.
    HostMatrix x;
    // Their classes.
    std::vector<int> y;
    ClassData(int rows, int cols, unsigned seed, int markStride = 1, float bump = 1.0f)
        : x(randomMatrix(rows, cols, seed)) {
        for (int r = 0; r < x.rows; ++r) {
            y.push_back(r % 3);
            x(r, markStride * (r % 3)) += bump;
        }
    }
};

// What f throws, or "(no exception)".
inline std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

// Max |a - b| / max(1, max |b|): error relative to the magnitude of the result.
inline double relativeError(const HostMatrix& a, const HostMatrix& b) {
    double scale = 1.0, err = 0.0;
    for (float v : b.data) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
        err = std::max(err, double(std::fabs(a.data[i] - b.data[i])));
    return err / scale;
}

}  // namespace gltrain::test
