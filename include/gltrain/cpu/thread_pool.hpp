// The CPU backend's threads: a fixed set of workers that run one job beside
// the calling thread (fork and join per call). A job is a callable run once
// per thread, t = 0 on the caller; it is passed by reference, so running one
// allocates nothing (the steady state of training must not). Jobs must not
// throw. One job at a time: the CPU backend's products are issued from one
// thread, the one that trains.
//
// WebAssembly built without threads (this project's browser build) has no
// std::thread: there a pool is the caller alone.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define GLTRAIN_HAVE_THREADS 0
#else
#define GLTRAIN_HAVE_THREADS 1
#endif

namespace gltrain::cpu {

class ThreadPool {
public:
    // threads: how many run a job, the caller included; 0 = one per hardware
    // thread (at most kAutoMax). Fewer are made where threads are not built.
    static constexpr int kAutoMax = 8;
    explicit ThreadPool(int threads = 0) {
#if GLTRAIN_HAVE_THREADS
        if (threads <= 0) threads = std::clamp(int(std::thread::hardware_concurrency()), 1, kAutoMax);
        for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
#else
        (void)threads;
#endif
    }
    ~ThreadPool() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& w : workers_) w.join();
    }
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(workers_.size()) + 1; }

    // Runs job(t) for t in [0, size()), t = 0 here, and returns once all have.
    template <class F>
    void run(const F& job) {
        if (workers_.empty()) return job(0);
        {
            std::lock_guard<std::mutex> lock(m_);
            job_ = &job;
            call_ = [](const void* j, int t) { (*static_cast<const F*>(j))(t); };
            pending_ = int(workers_.size());
            ++generation_;
        }
        wake_.notify_all();
        job(0);
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [&] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    void work(int t) {
        long seen = 0;
        for (;;) {
            const void* job;
            void (*call)(const void*, int);
            {
                std::unique_lock<std::mutex> lock(m_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
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
    long generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace gltrain::cpu
