// chooseFasterBackend (backend_choice.hpp): the startup matmul of
// BackendPreference::Auto, timed on the GPU and on the CPU backend.
// 128x256x128 is a hidden layer of the models gltrain trains (and a few ms
// either way on a software renderer).
#include "gltrain/backend_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/random.hpp"

namespace gltrain {

namespace {

struct BackendSpeed {
    std::string shape;  // "128x256x128"
    double gpuMs = 0, cpuMs = 0;
};

template <class F>
double fastestMs(F&& f) {
    f();  // warm-up
    double best = 1e300;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// Operands in [-1, 1) from the counter hash: the same on every run.
HostMatrix operand(int rows, int cols, uint32_t seed) {
    HostMatrix m(rows, cols);
    for (size_t i = 0; i < m.data.size(); ++i) m.data[i] = -1.0f + 2.0f * uniform01(seed, 0, uint32_t(i));
    return m;
}

// One M x K x N matmul as a training step runs it: on the GPU (the
// register-blocked pass into PackedRows4, completed by reading the result
// back) and with the CPU backend's kernel; each timed 3 times after a warm-up
// (shader compile, first packing), the fastest kept.
BackendSpeed measureBackendSpeed(Context& ctx) {
    const int M = 128, K = 256, N = 128;
    const HostMatrix a = operand(M, K, 1);
    const HostMatrix b = operand(K, N, 2);
    BackendSpeed s;
    s.shape = std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
    {
        Tensor ta(ctx, a, Layout::PackedRows4), tb(ctx, b, Layout::PackedRows4), tc(ctx, M, N, Layout::PackedRows4);
        PassList list;
        recordMatmul(list, ta, tb, tc);
        s.gpuMs = fastestMs([&] {
            list.run();
            (void)tc.download();  // the work is done when the result is here
        });
    }
    HostMatrix c(M, N);
    cpu::Workspace ws;
    ws.pool = &ctx.cpuThreads();  // as the CPU backend would run it
    s.cpuMs = fastestMs(
        [&] { cpu::matmul(M, N, K, a.data.data(), K, false, b.data.data(), N, false, c.data.data(), N, {}, ws); });
    return s;
}

std::string formatMs(double ms) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f ms", ms);
    return b;
}

}  // namespace

bool timesBothEngines(const ContextOptions& options, const Capabilities& caps, Backend backend) {
    return options.backend == BackendPreference::Auto && caps.softwareRenderer && backend != Backend::Cpu;
}

void chooseFasterBackend(Context& ctx) {
    const Capabilities& c = ctx.caps();
    if (!timesBothEngines(ctx.options(), c, ctx.backend())) return;
    const BackendSpeed s = measureBackendSpeed(ctx);
    const std::string measured = "a " + s.shape + " matmul took " + formatMs(s.gpuMs) + " on the GPU (" + c.renderer +
                                 ", a software renderer) and " + formatMs(s.cpuMs) + " on the CPU backend";
    if (s.cpuMs < s.gpuMs)
        ctx.setBackend(Backend::Cpu,
                       measured + ": models train on the CPU (ContextOptions::backend = gpu keeps the GPU)");
    else ctx.setBackend(ctx.backend(), c.backendReason + "; " + measured + ": the GPU stays");
}

std::unique_ptr<Context> makeContext(ContextOptions options) {
    auto ctx = std::make_unique<Context>(std::move(options));
    chooseFasterBackend(*ctx);
    return ctx;
}

}  // namespace gltrain
