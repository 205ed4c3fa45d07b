// The CPU backend's threads (cpu/thread_pool.hpp): a pool runs every thread's
// share of a job exactly once, and products, convolutions, pooling, bias
// gradients and training steps split across 2, 3 or 5 threads give the same
// bits as on one (each element is still summed by one thread in the same
// order), whichever side of C the product is cut along. The kernel tests split
// every product (parallelMinWork = 0); the training test's work is over the
// default 2^20 multiply-adds. Natively and in the threaded browser build
// (gltrain_thread_tests); the single-threaded browser build skips them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <thread>

#include "cpu_test_util.hpp"
#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/cpu/pooling.hpp"
#include "gltrain/sequential.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace cpu_threads_test {

using namespace gltrain;

namespace {

bool haveThreads() { return cpu::ThreadPool(2).size() == 2; }
#define REQUIRE_THREADS() \
    if (!haveThreads()) GTEST_SKIP() << "built without threads (WebAssembly): a pool is the caller alone"

const int kThreadCounts[] = {2, 3, 5};

// C = op(A) op(B) with every epilogue input, on one thread or on `pool`.
struct Product {
    int m, k, n;
    bool ta, tb;
    HostMatrix run(cpu::ThreadPool* pool, bool wide, HostMatrix* z, HostMatrix* dz) const {
        HostMatrix A = cputest::random(ta ? k : m, ta ? m : k, 1 + uint32_t(m));
        HostMatrix B = cputest::random(tb ? n : k, tb ? k : n, 2 + uint32_t(n));
        HostMatrix bias = cputest::random(1, n, 3), at = cputest::random(m, n, 4, -2.0f, 2.0f);
        HostMatrix C = cputest::random(m, n, 5);
        cpu::Workspace ws;
        ws.wide = wide;
        ws.pool = pool;
        ws.parallelMinWork = 0;
        cpu::Epilogue e;  // bias, Z, GELU: the unfused epilogue; C += first
        e.accumulate = true;
        e.bias = bias.data.data();
        e.preactivation = z->data.data();
        e.activation = Activation::GELU;
        cpu::matmul(m, n, k, A.data.data(), A.cols, ta, B.data.data(), B.cols, tb, C.data.data(), n, e, ws);
        cpu::Epilogue g;  // bias, ReLU and ReLU' at: the fused one
        g.bias = bias.data.data();
        g.activation = Activation::ReLU;
        g.derivativeAt = at.data.data();
        g.derivative = Activation::ReLU;
        cpu::matmul(m, n, k, A.data.data(), A.cols, ta, B.data.data(), B.cols, tb, dz->data.data(), n, g, ws);
        return C;
    }
};

}  // namespace

TEST(CpuThreads, PoolRunsEachThreadOncePerJob) {
    REQUIRE_THREADS();
    for (int threads : {1, 2, 3, 5}) {
        cpu::ThreadPool pool(threads);
        ASSERT_EQ(pool.size(), threads);
        std::atomic<int> hits[5] = {};
        for (int job = 0; job < 500; ++job) pool.run([&](int t) { hits[t].fetch_add(1); });
        for (int t = 0; t < 5; ++t) EXPECT_EQ(hits[t].load(), t < threads ? 500 : 0) << threads << " threads, t " << t;
    }
    EXPECT_GE(cpu::ThreadPool(0).size(), 1);  // one per hardware thread
}

// Rows when M >= N, columns otherwise; odd sizes cut strips and K blocks.
TEST(CpuThreads, ProductsAreBitIdenticalOnAnyThreadCount) {
    REQUIRE_THREADS();
    const Product cases[] = {{1, 1, 1, false, false},       {3, 5, 7, true, true},       {127, 1025, 5, false, false},
                             {128, 784, 256, false, false}, {5, 300, 1025, false, true}, {129, 17, 1025, true, false},
                             {1025, 33, 129, true, true},   {7, 3, 257, false, false}};
    for (bool wide : {false, cpu::hasAvx2Fma()})
        for (const Product& p : cases) {
            HostMatrix z1(p.m, p.n), dz1(p.m, p.n);
            const HostMatrix c1 = p.run(nullptr, wide, &z1, &dz1);
            for (int threads : kThreadCounts) {
                cpu::ThreadPool pool(threads);
                HostMatrix z(p.m, p.n), dz(p.m, p.n);
                const HostMatrix c = p.run(&pool, wide, &z, &dz);
                const std::string at = std::to_string(p.m) + "x" + std::to_string(p.k) + "x" + std::to_string(p.n) +
                                       " transA " + std::to_string(p.ta) + " transB " + std::to_string(p.tb) +
                                       " wide " + std::to_string(wide) + ", " + std::to_string(threads) + " threads";
                EXPECT_EQ(c.data, c1.data) << at;
                EXPECT_EQ(z.data, z1.data) << at;
                EXPECT_EQ(dz.data, dz1.data) << at;
            }
        }
}

// Products that only store or add their sum, with a C too narrow to cut
// evenly and a long sum (a filter gradient's shape; a C of one strip), are
// split along k (gemm_detail::splitSum): the same bits as on one thread, with
// C stored and with C added to.
TEST(CpuThreads, ProductsSplitAlongTheSumAreBitIdentical) {
    REQUIRE_THREADS();
    struct Case {
        int m, k, n;
    };
    const Case cases[] = {{8, 4608, 25}, {3, 2000, 5}, {7, 3000, 10}};
    for (bool wide : {false, cpu::hasAvx2Fma()})
        for (const Case& p : cases) {
            const HostMatrix A = cputest::random(p.k, p.m, 1), B = cputest::random(p.k, p.n, 2);
            const HostMatrix C0 = cputest::random(p.m, p.n, 3);
            auto run = [&](cpu::ThreadPool* pool, bool accumulate, size_t* partials) {
                cpu::Workspace ws;
                ws.wide = wide;
                ws.pool = pool;
                ws.parallelMinWork = 0;
                cpu::Epilogue e;
                e.accumulate = accumulate;
                HostMatrix C = C0;
                cpu::matmul(p.m, p.n, p.k, A.data.data(), p.m, true, B.data.data(), p.n, false, C.data.data(), p.n, e,
                            ws);
                *partials = ws.partials.size();
                return C;
            };
            for (bool accumulate : {false, true}) {
                size_t none = 0, split = 0;
                const HostMatrix one = run(nullptr, accumulate, &none);
                for (int threads : kThreadCounts) {
                    cpu::ThreadPool pool(threads);
                    size_t partials = 0;
                    const HostMatrix got = run(&pool, accumulate, &partials);
                    const std::string at = std::to_string(p.m) + "x" + std::to_string(p.k) + "x" + std::to_string(p.n) +
                                           " wide " + std::to_string(wide) + " accumulate " +
                                           std::to_string(accumulate) + ", " + std::to_string(threads) + " threads";
                    split += partials;
                    EXPECT_EQ(got.data, one.data) << at;
                }
                EXPECT_GT(split, 0u) << p.m << "x" << p.k << "x" << p.n << " wide " << wide
                                     << ": never split along the sum";
            }
        }
}

TEST(CpuThreads, ConvolutionsAreBitIdenticalOnAnyThreadCount) {
    REQUIRE_THREADS();
    struct Conv {
        int n;
        Shape3 in;
        int k, filters;
    };
    // (One image: the input gradient splits its chunks' products instead of the images.)
    const Conv cases[] = {{6, {13, 11, 3}, 5, 10},
                          {2, {9, 8, 4}, 3, 1},
                          {3, {6, 6, 17}, 1, 40},
                          {1, {13, 11, 3}, 5, 10},
                          {8, {24, 24, 1}, 5, 8}};  // W2's first layer: its filter gradient is split along the sum
    for (const Conv& c : cases) {
        const Window w = Window::make("test", c.in, c.k, c.k, 1, 1, Padding::Same, c.filters);
        const int K = c.k * c.k * c.in.channels, n = c.n;
        HostMatrix X = cputest::random(n, w.in.size(), 1), W = cputest::random(K, c.filters, 2);
        HostMatrix b = cputest::random(1, c.filters, 3), dY = cputest::random(n, w.out.size(), 4);
        // Max pooling 2x2 (and its gradient) of the convolution's output, and the bias gradient.
        const Window pw = Window::make("pool", w.out, 2, 2, 2, 2, Padding::Same, c.filters);
        HostMatrix dP = cputest::random(n, pw.out.size(), 5);
        auto run = [&](cpu::ThreadPool* pool) {
            cpu::Workspace ws;
            ws.pool = pool;
            ws.parallelMinWork = 0;
            std::vector<HostMatrix> out{HostMatrix(n, w.out.size()),  HostMatrix(n, w.out.size()),
                                        HostMatrix(K, c.filters),     HostMatrix(n, w.in.size()),
                                        HostMatrix(n, pw.out.size()), HostMatrix(n, w.out.size()),
                                        HostMatrix(1, c.filters)};
            cpu::conv2d(X.data.data(), n, w, W.data.data(), b.data.data(), Activation::ReLU, 0.0f, out[0].data.data(),
                        out[1].data.data(), ws);
            cpu::conv2dBackwardFilter(X.data.data(), dY.data.data(), n, w, out[2].data.data(), ws);
            cpu::conv2dBackwardInput(dY.data.data(), W.data.data(), n, w, out[3].data.data(), ws);
            std::vector<int32_t> argmax(size_t(n) * size_t(pw.out.size()));
            cpu::pool2d(out[0].data.data(), n, pw, PoolKind::Max, out[4].data.data(), argmax.data(), ws);
            cpu::pool2dBackward(dP.data.data(), argmax.data(), n, pw, PoolKind::Max, out[5].data.data(), ws);
            std::vector<double> acc;
            std::vector<float> rowSum;
            cpu::channelSum(dY.data.data(), n, w.out.size(), c.filters, out[6].data.data(), acc, rowSum, ws);
            return out;
        };
        const auto one = run(nullptr);
        for (int threads : kThreadCounts) {
            cpu::ThreadPool pool(threads);
            const auto got = run(&pool);
            for (size_t i = 0; i < got.size(); ++i)
                EXPECT_EQ(got[i].data, one[i].data)
                    << "output " << i << " (Y, Z, dW, dX, pool, its dX, dB) of " << c.in.str() << " k" << c.k << " F"
                    << c.filters << ", " << threads << " threads";
        }
    }
}

// A model on the CPU backend: ten Adam steps of an MLP, a CNN and the
// benchmark's W2 CNN, on 1, 2 and 3 threads. Their products, the update
// (over 2^20 with the MLPs' parameters), W2's pooling, its convolutions'
// input gradients, activation gradients and bias gradients are large enough
// to be split.
TEST(CpuThreads, TrainingIsBitIdenticalOnAnyThreadCount) {
    REQUIRE_THREADS();
    enum Net { Mlp, Cnn, W2 };
    auto train = [](int threads, Net net) {
        ContextOptions o;
        o.backend = BackendPreference::Cpu;
        o.cpuThreads = threads;
        Context ctx(o);
        // Products of 64x300x256 (MLP), 9216x18x16 and 64x2304x128 (CNN) multiply-adds, all over 2^20.
        const Shape3 in = net == W2 ? Shape3{28, 28, 1} : net == Cnn ? Shape3{12, 12, 2} : Shape3{1, 1, 300};
        Sequential m(ctx, in);
        if (net == W2) {
            m.add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2});
            m.add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2}).add(Flatten{}).add(Dense{10});
        } else {
            if (net == Cnn) m.add(Conv2D{16, 3, 1, Padding::Same, Activation::ReLU}).add(Flatten{});
            m.add(Dense{net == Cnn ? 128 : 256, Activation::ReLU}).add(Dense{7});
        }
        m.compile();
        HostMatrix x = cputest::random(128, in.size(), 11);
        std::vector<int> y(128);
        for (int i = 0; i < 128; ++i) y[size_t(i)] = i % 7;
        FitOptions f;
        f.epochs = 5;
        f.batchSize = 64;
        m.fit(x, y, f);
        return m.predict(x);
    };
    const char* names[] = {"MLP", "CNN", "W2"};
    for (Net net : {Mlp, Cnn, W2}) {
        const HostMatrix one = train(1, net);
        for (int threads : {2, 3}) EXPECT_EQ(train(threads, net).data, one.data) << names[net] << ", " << threads;
    }
}

// The capability report says how many threads the CPU backend trains on and
// why: the plan at creation, what the pool got once made.
TEST(CpuThreads, CapabilitiesSayHowManyThreadsAndWhy) {
    auto caps = [](int threads, bool makePool) {
        ContextOptions o;
        o.backend = BackendPreference::Cpu;
        o.cpuThreads = threads;
        Context ctx(o);
        if (makePool) ctx.cpuThreads();
        return ctx.caps();
    };
    std::ostringstream report;
    report << caps(3, false);
#if GLTRAIN_HAVE_THREADS
    EXPECT_EQ(caps(3, false).cpuThreads, 3);
    EXPECT_EQ(caps(3, true).cpuThreads, 3);
    EXPECT_EQ(caps(3, true).cpuThreadsReason, "as asked (ContextOptions::cpuThreads)");
    EXPECT_NE(report.str().find("CPU threads:                 3: as asked"), std::string::npos) << report.str();
    const int hardware = int(std::thread::hardware_concurrency());
    const Capabilities automatic = caps(0, true);
    EXPECT_EQ(automatic.cpuThreads, std::clamp(hardware, 1, cpu::ThreadPool::kAutoMax));
    EXPECT_EQ(automatic.cpuThreadsReason.rfind("one per hardware thread (" + std::to_string(hardware), 0), 0u)
        << automatic.cpuThreadsReason;
#else
    EXPECT_EQ(caps(3, true).cpuThreads, 1);
    EXPECT_NE(report.str().find("CPU threads:                 1: this WebAssembly build has no threads"),
              std::string::npos)
        << report.str();
#endif
}

#ifdef __EMSCRIPTEN_PTHREADS__
// In the browser a thread runs only on a Web Worker started with the module
// (gltrain_thread_tests starts 7): past them the pool keeps those it got.
TEST(CpuThreads, BrowserPoolKeepsTheWorkersThereAre) {
    cpu::ThreadPool pool(16);
    EXPECT_EQ(pool.size(), 8);
    EXPECT_NE(pool.reason().find("only 8 of 16 (as asked (ContextOptions::cpuThreads)): the page had 7 free Web "
                                 "Workers"),
              std::string::npos)
        << pool.reason();
    std::atomic<int> ran{0};
    pool.run([&](int) { ++ran; });
    EXPECT_EQ(ran.load(), 8);
}
#endif

}  // namespace cpu_threads_test
}  // namespace
