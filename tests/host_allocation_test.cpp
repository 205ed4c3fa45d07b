// The steady state allocates nothing on the host: training steps (the GPU
// engine and the CPU backend), with the loss read every step, make no heap
// allocation on the thread that runs them once the first steps have sized
// every buffer (model_test's SteadyStateAllocatesNothing checks textures and
// programs; this file checks the heap).
//
// How: this file replaces the global operator new for the whole test binary.
// The replacement allocates with malloc as the default one does and only
// counts, on the calling thread, while a counter is armed. Allocations made by
// C code (Mesa, the browser's WebGL) do not pass through it and are not
// counted: the claim is about gltrain's own code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <vector>

#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
// The replaced operators must be global, and so must the counter they update.
namespace host_allocation_counter {
thread_local bool armed = false;
thread_local long allocations = 0;
}  // namespace host_allocation_counter

// Every unaligned form, so that whatever one form allocates another may free
// (AddressSanitizer checks the pairing); the aligned forms stay the library's.
void* operator new(std::size_t n) {
    if (host_allocation_counter::armed) ++host_allocation_counter::allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    if (host_allocation_counter::armed) ++host_allocation_counter::allocations;
    return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {
namespace host_allocation_test {

using namespace gltrain;

namespace {

// Counts operator new calls on this thread while alive.
struct AllocationCounter {
    AllocationCounter() { host_allocation_counter::allocations = 0, host_allocation_counter::armed = true; }
    ~AllocationCounter() { host_allocation_counter::armed = false; }
    long count() const { return host_allocation_counter::allocations; }
};

// A model, its data and how it is fitted.
struct Case {
    const char* name;
    std::function<std::unique_ptr<Sequential>(Context&)> build;  // added and compiled
    Targets y;
    bool asyncLoss = false;
};

// 20 warm-up steps, then 40 counted (all within the first epoch: 1024 rows in
// batches of 16 are 64 steps, so no epoch's end and its history entry fall
// among them), the loss read every step.
void expectStepsAllocateNothing(Context& ctx, const Case& c, int features) {
    HostMatrix x = test::randomMatrix(1024, features, 7);
    std::unique_ptr<Sequential> model = c.build(ctx);
    Sequential& m = *model;
    FitOptions f;
    f.epochs = 1;
    f.batchSize = 16;
    f.lossEvery = 1;
    f.asyncLoss = c.asyncLoss;
    long steps = 0, losses = 0;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { ++steps, losses += s.lossRead; };
    m.beginFit(x, c.y, f, cb);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(m.stepOnce());
    long counted;
    {
        AllocationCounter counter;
        for (int i = 0; i < 40; ++i) m.stepOnce();
        counted = counter.count();
    }
    EXPECT_EQ(steps, 60);
    // (Browsers signal fences between event-loop turns only, so a synchronous
    // loop takes its asynchronous losses at the epoch's end.)
    if (!c.asyncLoss) EXPECT_EQ(losses, 60) << "the losses were read";
    EXPECT_EQ(counted, 0) << c.name << ": heap allocations in 40 steady-state steps on the "
                          << backendName(ctx.caps().backend) << " backend";
    m.endFit();
}

std::vector<int> labels(int classes) {
    std::vector<int> y(1024);
    for (int i = 0; i < 1024; ++i) y[size_t(i)] = i % classes;
    return y;
}

// Dense with dropout (softmax cross-entropy, the loss read at once or through
// a fence), and a small dense MSE model (the one-pass-per-parameter step).
std::vector<Case> denseCases() {
    auto mlp = [](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, 12);
        m->add(Dense{16, Activation::ReLU}).add(Dropout{0.25f}).add(Dense{5});
        m->compile();
        return m;
    };
    auto small = [](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, 12);
        m->add(Dense{8, Activation::Tanh}).add(Dense{1});
        CompileOptions o;
        o.loss = LossKind::MeanSquaredError;
        o.optimizer.kind = OptimizerKind::SGD;
        m->compile(o);
        return m;
    };
    return {{"dense, softmax cross-entropy", mlp, labels(5)},
            {"dense, softmax cross-entropy, asyncLoss", mlp, labels(5), true},
            {"small dense, MSE", small, test::randomMatrix(1024, 1, 9)}};
}

// Conv2D, pooling and flatten on 6x6x1 images.
Case cnnCase() {
    auto cnn = [](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, Shape3{6, 6, 1});
        m->add(Conv2D{4, 3, 1, Padding::Same, Activation::ReLU}).add(MaxPool2D{2}).add(Flatten{}).add(Dense{3});
        m->compile();
        return m;
    };
    return {"conv2d, max pool, dense", cnn, labels(3)};
}

// Models whose steps split their work over two threads (over 2^20
// multiply-adds' worth at batch 16): an MLP's products and update, and W2's
// CNN's pooling, convolution gradients, activation and bias gradients.
std::vector<Case> splitCases() {
    auto mlp = [](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, 784);
        m->add(Dense{256, Activation::ReLU}).add(Dense{10});
        m->compile();
        return m;
    };
    auto cnn = [](Context& ctx) {
        auto m = std::make_unique<Sequential>(ctx, Shape3{28, 28, 1});
        m->add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2});
        m->add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2}).add(Flatten{}).add(Dense{10});
        m->compile();
        return m;
    };
    return {{"MLP 784-256-10 on 2 threads", mlp, labels(10)}, {"W2 CNN on 2 threads", cnn, labels(10)}};
}

}  // namespace

TEST(HostAllocation, CounterCountsThisThreadsAllocations) {
    AllocationCounter c;
    std::vector<int> v(3);
    EXPECT_EQ(c.count(), 1);
}

TEST(HostAllocation, GpuStepsAllocateNothing) {
    for (const Case& c : denseCases()) expectStepsAllocateNothing(test::context(), c, 12);
    expectStepsAllocateNothing(test::context(), cnnCase(), 36);
}

TEST(HostAllocation, CpuStepsAllocateNothing) {
    for (const Case& c : denseCases()) expectStepsAllocateNothing(test::cpuContext(), c, 12);
    expectStepsAllocateNothing(test::cpuContext(), cnnCase(), 36);
    ContextOptions o;  // (where threads are not built, the caller alone: the same steps)
    o.backend = BackendPreference::Cpu;
    o.cpuThreads = 2;
    Context threaded(o);
    for (const Case& c : splitCases()) expectStepsAllocateNothing(threaded, c, 784);
}

}  // namespace host_allocation_test
}  // namespace
