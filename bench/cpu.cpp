// CPU backend benchmark: GFLOP/s of the CPU matmul (both kernel widths where
// the CPU has AVX2; on one thread and, natively, on one per hardware thread)
// on the shapes of the MLP and square sizes, and ms
// per training step of W1 (MLP 784-256-128-10 ReLU, softmax cross-entropy,
// Adam 1e-3, batch 128, the loss read every step) and W2 (conv 8@5x5 ReLU,
// max pool, conv 16@5x5 ReLU, max pool, dense 10; Adam, batch 64) through
// Sequential on a Context with BackendPreference::Cpu — as a user runs it
// (ContextOptions::cpuThreads 1, then the default).
// Also prints what BackendPreference::Auto chooses here, and why. Medians after
// warm-up; wall-clock time, so on a shared machine the figures move between
// runs (compare rows of one run). No pass or fail.
//   bench_cpu [--steps N] [--threads N] [--profile]
#include <gltrain/backend_choice.hpp>
#include <gltrain/cpu/matmul.hpp>
#include <gltrain/reference/random.hpp>  // ref::uniformFill: the operands
#include <gltrain/sequential.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace gltrain;

namespace {

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// The CPU backend on `threads` threads (ContextOptions::cpuThreads).
ContextOptions cpuOptions(int threads) {
    ContextOptions o;
    o.backend = BackendPreference::Cpu;
    o.cpuThreads = threads;
    return o;
}

void matmulRow(const char* label, int m, int k, int n, bool ta, bool tb, bool wide, cpu::ThreadPool* pool) {
    const HostMatrix a = ref::uniformFill<float>(ta ? k : m, ta ? m : k, 1, 0, -1.0f, 1.0f);
    const HostMatrix b = ref::uniformFill<float>(tb ? n : k, tb ? k : n, 2, 0, -1.0f, 1.0f);
    HostMatrix c(m, n);
    cpu::Workspace ws;
    ws.wide = wide;
    ws.pool = pool;
    const int reps = std::max(3, int(2e8 / (2.0 * m * n * k)));
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
        const auto t0 = Clock::now();
        cpu::matmul(m, n, k, a.data.data(), a.cols, ta, b.data.data(), b.cols, tb, c.data.data(), n, {}, ws);
        if (r > 0) t.push_back(ms(t0, Clock::now()));  // the first run packs into fresh memory
    }
    const double med = median(t);
    std::printf("| %-26s | %5dx%5dx%5d | %-8s | %7d | %8.3f | %7.1f |\n", label, m, k, n, wide ? "8 (AVX2)" : "4",
                pool ? pool->size() : 1, med, 2.0 * m * n * k / med / 1e6);
}

// W1 (cnn false) or W2 compiled on `ctx`, with 8 batches of data in x, y.
std::unique_ptr<Sequential> workload(Context& ctx, bool cnn, HostMatrix& x, std::vector<int>& y) {
    const int rows = (cnn ? 64 : 128) * 8;
    x = ref::uniformFill<float>(rows, 784, 3, 0, 0.0f, 1.0f);
    y.resize(static_cast<size_t>(rows));
    for (int i = 0; i < rows; ++i) y[size_t(i)] = (i * 7) % 10;
    std::unique_ptr<Sequential> m;
    if (cnn) {
        m = std::make_unique<Sequential>(ctx, Shape3{28, 28, 1});
        const Initializer he{Initializer::HeUniform};
        m->add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU, 0.01f, he}).add(MaxPool2D{2});
        m->add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU, 0.01f, he}).add(MaxPool2D{2});
        m->add(Flatten{}).add(Dense{10});
    } else {
        m = std::make_unique<Sequential>(ctx, 784);
        m->add(Dense{256, Activation::ReLU}).add(Dense{128, Activation::ReLU}).add(Dense{10});
    }
    m->compile({});
    return m;
}

// Median ms between consecutive steps of a fit (after `warmup` steps) on `ctx`.
double stepMs(Context& ctx, bool cnn, int steps, int warmup, float* lastLoss) {
    const int batch = cnn ? 64 : 128;
    HostMatrix x;
    std::vector<int> y;
    std::unique_ptr<Sequential> m = workload(ctx, cnn, x, y);
    FitOptions f;
    f.batchSize = batch;
    f.epochs = (steps + warmup + 7) / 8;
    f.lossEvery = 1;
    std::vector<double> t;
    Clock::time_point last = Clock::now();
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) {
        const auto now = Clock::now();
        if (s.step > warmup) t.push_back(ms(last, now));
        last = now;
        *lastLoss = s.loss;
    };
    m->fit(x, y, f, cb);
    return median(t);
}

#ifndef __EMSCRIPTEN__
// CPU time of the calling thread or of the whole process, in ms.
double cpuMs(clockid_t clock) {
    timespec t;
    clock_gettime(clock, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}
#endif

// Where a step's time goes (--profile): each op of W1 and W2 (Sequential::profileStep,
// the median of 30 runs) on one thread and on all, then the whole step, whose
// remainder is the update and the step's bookkeeping. Natively also the CPU time
// a step takes on the calling thread and on all threads: the caller's is about
// what a step would take on a machine with a free core per thread (the others
// work only while the caller does its share), whatever the load — a measure of
// how much of the step is split that other work on the machine does not blur.
void profile(int steps, int most) {
    for (int threads : {1, most}) {
        Context ctx(cpuOptions(threads));
        for (bool cnn : {false, true}) {
            HostMatrix x;
            std::vector<int> y;
            std::unique_ptr<Sequential> m = workload(ctx, cnn, x, y);
            std::printf("\n%s, %d thread(s)\n", cnn ? "W2" : "W1", ctx.cpuThreads().size());
            double sum = 0;
            for (const PassTiming& p : m->profileStep(x, y, cnn ? 64 : 128, 30)) {
                std::printf("  %7.3f ms  %s\n", p.ms, p.kernel.c_str());
                sum += p.ms;
            }
            float loss = 0;
#ifndef __EMSCRIPTEN__
            const double caller0 = cpuMs(CLOCK_THREAD_CPUTIME_ID), all0 = cpuMs(CLOCK_PROCESS_CPUTIME_ID);
#endif
            const double step = stepMs(ctx, cnn, steps, 5, &loss);
            std::printf("  %7.3f ms  ops; %.3f ms the step; %.3f ms the rest\n", sum, step, step - sum);
#ifndef __EMSCRIPTEN__
            const double fitSteps = double((steps + 5 + 7) / 8 * 8);  // stepMs's epochs of 8 batches
            std::printf("  CPU per step: %.3f ms the caller, %.3f ms all threads\n",
                        (cpuMs(CLOCK_THREAD_CPUTIME_ID) - caller0) / fitSteps,
                        (cpuMs(CLOCK_PROCESS_CPUTIME_ID) - all0) / fitSteps);
#endif
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    int steps = 50, most = 0;  // most: the threads of the "all" rows (0: one per hardware thread)
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) most = std::atoi(argv[++i]);
    try {
        for (int i = 1; i < argc; ++i)
            if (!std::strcmp(argv[i], "--profile")) return profile(steps, most), 0;
#ifdef __EMSCRIPTEN__
        const char* where = "WebAssembly SIMD128 (em++ -msimd128), no threads";
#else
        const char* where =
            cpu::hasAvx2Fma() ? "native x86-64, AVX2 + FMA kernels chosen at run time" : "native, SSE2 kernels";
#endif
        cpu::ThreadPool all(most);  // one thread per hardware thread (the caller alone without threads)
        std::printf("# CPU backend benchmark (%s)\n\n", where);
        std::printf("| matmul                     | M x K x N         | lanes    | threads | ms       | GFLOP/s |\n");
        std::printf("|---|---|---|---|---|---|\n");
        for (bool wide : {false, true}) {
            if (wide && !cpu::hasAvx2Fma()) continue;
            for (cpu::ThreadPool* pool : {static_cast<cpu::ThreadPool*>(nullptr), &all}) {
                if (pool && pool->size() == 1) continue;
                matmulRow("MLP forward X W1", 128, 784, 256, false, false, wide, pool);
                matmulRow("MLP weight grad X^T dZ", 784, 128, 256, true, false, wide, pool);
                matmulRow("MLP input grad dZ W^T", 128, 256, 784, false, true, wide, pool);
                for (int n : {256, 512, 1024}) matmulRow("square", n, n, n, false, false, wide, pool);
                // The reference character transformer's products (2048 tokens, width 128, 512 hidden).
                matmulRow("transformer X Wqkv", 2048, 128, 384, false, false, wide, pool);
                matmulRow("transformer H W2", 2048, 512, 128, false, false, wide, pool);
                matmulRow("transformer grad dZ W1^T", 2048, 512, 128, false, true, wide, pool);
                matmulRow("transformer grad X^T dZ", 128, 2048, 512, true, false, wide, pool);
            }
        }
        std::printf("\n| training step (Sequential, backend cpu) | threads | ms/step (median of %d) | last loss |\n",
                    steps);
        std::printf("|---|---|---|---|\n");
        for (int threads : {1, most}) {
            Context cpu(cpuOptions(threads));
            const int n = cpu.cpuThreads().size();
            if (threads != 1 && n == 1) break;  // the same as the row above
            float loss = 0;
            const double w1 = stepMs(cpu, false, steps, 5, &loss);
            std::printf("| W1 MLP 784-256-128-10, batch 128, Adam | %d | %.2f | %.4f |\n", n, w1, loss);
            const double w2 = stepMs(cpu, true, steps, 5, &loss);
            std::printf("| W2 CNN conv8-pool-conv16-pool-dense10, batch 64, Adam | %d | %.2f | %.4f |\n", n, w2, loss);
        }
        // What Auto decides here (it needs GL: absent, it says so).
        Context automatic;
        chooseFasterBackend(automatic);
        std::printf("\nBackendPreference::Auto here: %s (%s)\n", backendName(automatic.backend()),
                    automatic.caps().backendReason.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_cpu: %s\n", e.what());
        return 1;
    }
    return 0;
}
