// The startup matmul of BackendPreference::Auto, timed on the GPU and on the
// CPU backend (see backend_speed.hpp). 128x256x128 is a hidden layer of the
// models gltrain trains (and a few ms either way on a software renderer).
#include "backend_speed.hpp"

#include <algorithm>
#include <chrono>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/random.hpp"

namespace gltrain {

namespace {
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
}  // namespace

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
    s.cpuMs = fastestMs([&] {
        cpu::matmul(M, N, K, a.data.data(), K, false, b.data.data(), N, false, c.data.data(), N, {}, ws);
    });
    return s;
}

}  // namespace gltrain
