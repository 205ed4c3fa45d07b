// The CPU backend's threads: a fixed set of workers that run one job beside
// the calling thread (fork and join per call). A job is a callable run once
// per thread, t = 0 on the caller; it is passed by reference, so running one
// allocates nothing (the steady state of training must not). Jobs must not
// throw. One job at a time: the CPU backend's products are issued from one
// thread, the one that trains.
//
// In the browser there are two builds. The single-threaded one (no
// SharedArrayBuffer: pages that are not cross-origin isolated) has no
// std::thread, and there a pool is the caller alone. The threaded one
// (Emscripten pthreads, GLTRAIN_WEB_THREADS) runs each thread in a Web Worker
// started with the module (web/gltrain_js.cmake: PTHREAD_POOL_SIZE). There a
// caller on the page's main thread may block in run(): Emscripten 3.1.6
// (ALLOW_BLOCKING_ON_MAIN_THREAD=1, its default) spins where Atomics.wait is
// not allowed, and the workers need nothing from the main thread while they
// work. A thread for which no started worker is left cannot be waited for
// (its worker would load only once the event loop turns): the pool makes no
// more threads than there are free started workers, and says so in reason().
// (The module is linked with PTHREAD_POOL_SIZE_STRICT=2, so that a thread
// started past them elsewhere fails instead of hanging.)
//
// Waiting: a worker that finished a job first polls for the next one a while
// (kSpin polls, tens of microseconds) before it sleeps on the condition
// variable: a training step forks its ops a few microseconds apart (W2: over
// a dozen a step), and waking a sleeping Web Worker (Atomics.notify) or thread
// costs about as much as a small product. The poll is bounded, so a pool with
// nothing to do soon sleeps and leaves the cores to other work.
#pragma once
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define GLTRAIN_HAVE_THREADS 0
#else
#define GLTRAIN_HAVE_THREADS 1
#endif
#ifdef __EMSCRIPTEN_PTHREADS__
#include <emscripten/em_asm.h>
#endif

namespace gltrain::cpu {

class ThreadPool {
public:
    // threads: how many run a job, the caller included; 0 = one per hardware
    // thread (at most kAutoMax). Fewer are made where threads are not built.
    static constexpr int kAutoMax = 8;

    // How many threads a pool asked for `threads` means to run, and why, in
    // words for the capability report (before any thread is made).
    struct Plan {
        int threads = 1;
        std::string reason;
    };
    static Plan plan(int threads) {
#if GLTRAIN_HAVE_THREADS
        if (threads > 0) return {threads, "as asked (ContextOptions::cpuThreads)"};
        const int hardware = int(std::thread::hardware_concurrency());
#ifdef __EMSCRIPTEN__
        const std::string source = ": navigator.hardwareConcurrency";
#else
        const std::string source;
#endif
        return {std::clamp(hardware, 1, kAutoMax), "one per hardware thread (" + std::to_string(hardware) + source +
                                                       "), at most " + std::to_string(kAutoMax)};
#else
        (void)threads;
        return {1, "this WebAssembly build has no threads"};
#endif
    }

    explicit ThreadPool(int threads = 0) {
        const Plan p = plan(threads);
        reason_ = p.reason;
        int made = p.threads;
#ifdef __EMSCRIPTEN_PTHREADS__
        // Web Workers started with the module and running no thread now.
        const int free = EM_ASM_INT({ return PThread.unusedWorkers.length; });
        if (made - 1 > free) {
            made = free + 1;
            reason_ = "only " + std::to_string(made) + " of " + std::to_string(p.threads) + " (" + p.reason +
                      "): the page had " + std::to_string(free) +
                      " free Web Workers (the module starts one per hardware thread beside the caller's, at most " +
                      std::to_string(kAutoMax - 1) + "; other contexts may hold some)";
        }
#endif
        for (int t = 1; t < made; ++t) workers_.emplace_back([this, t] { work(t); });
    }
    ~ThreadPool() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_.store(true);
        }
        wake_.notify_all();
        for (auto& w : workers_) w.join();
    }
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(workers_.size()) + 1; }
    // Why size() threads run (for the capability report).
    const std::string& reason() const { return reason_; }

    // Runs job(t) for t in [0, size()), t = 0 here, and returns once all have.
    template <class F>
    void run(const F& job) {
        if (workers_.empty()) return job(0);
        {
            std::lock_guard<std::mutex> lock(m_);
            job_ = &job;
            call_ = [](const void* j, int t) { (*static_cast<const F*>(j))(t); };
            pending_ = int(workers_.size());
            generation_.fetch_add(1);
        }
        wake_.notify_all();
        job(0);
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [&] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    static constexpr int kSpin = 20000;

    void work(int t) {
        long seen = 0;
        for (;;) {
            for (int i = 0; i < kSpin && generation_.load() == seen && !stop_.load(); ++i) {
            }
            const void* job;
            void (*call)(const void*, int);
            {
                std::unique_lock<std::mutex> lock(m_);
                wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
                if (stop_.load()) return;
                seen = generation_.load();
                job = job_, call = call_;
            }
            call(job, t);
            std::lock_guard<std::mutex> lock(m_);
            if (--pending_ == 0) done_.notify_one();
        }
    }

    std::mutex m_;
    std::condition_variable wake_, done_;
    const void* job_ = nullptr;
    void (*call_)(const void*, int) = nullptr;
    // Written under m_; atomic so that a worker may poll them without it.
    std::atomic<long> generation_{0};
    int pending_ = 0;
    std::atomic<bool> stop_{false};
    std::string reason_;
    std::vector<std::thread> workers_;
};

}  // namespace gltrain::cpu
