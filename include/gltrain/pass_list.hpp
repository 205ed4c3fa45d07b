// PassList: an op (or a whole training step) recorded as passes, replayed by
// run(). Temporaries the passes need are owned here; both live in deques so
// the pointers passes hold stay valid as the list grows.
#pragma once
#include <algorithm>
#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "gltrain/pass.hpp"
#include "gltrain/pass_timing.hpp"

// Defines the immediate form of an op from its record* form: record into a
// throwaway list and run it once.
#define GLTRAIN_IMMEDIATE(name, record, params, args) \
    inline void name params {                         \
        PassList l;                                   \
        record args;                                  \
        l.run();                                      \
    }

namespace gltrain {

// Blocks until every command that writes `t` has run: a one-texel read
// (glFinish alone does not wait in every browser).
inline void waitFor(const Tensor& t) {
    float px[4];
    glBindFramebuffer(GL_FRAMEBUFFER, t.context().framebuffer());
    t.attachPage(0);
    glReadPixels(0, 0, 1, 1, GL_RGBA, GL_FLOAT, px);
}

class PassList {
public:
    PassList() = default;
    PassList(PassList&&) = default;
    PassList& operator=(PassList&&) = default;

    Pass& add(Pass p) {
        passes_.push_back(std::move(p));
        return passes_.back();
    }
    Tensor& temp(Context& ctx, int rows, int cols, Layout layout = Layout::Packed) {
        temps_.emplace_back(ctx, rows, cols, layout);
        return temps_.back();
    }
    void run() { run(0, passes_.size()); }
    // Runs passes [from, to).
    void run(size_t from, size_t to) {
        for (size_t i = from; i < std::min(to, passes_.size()); ++i) passes_[i].run();
    }
    size_t size() const { return passes_.size(); }

    // Where the time goes: runs the list `reps` times and returns each pass's
    // median time. Where the context has GPU timer queries
    // (Capabilities::timerQueries), each pass is timed on the GPU while the
    // list runs as in a step; otherwise (or if the GPU reports a disjoint
    // interval in every run) each pass is waited for (waitFor on its output)
    // and timed on the host, which adds a round trip to every pass. Used by
    // bench/ and Sequential::profileStep.
    std::vector<PassTiming> profile(int reps = 5) {
        run();  // compiles every program first
        if (passes_.empty()) return {};
        waitFor(*passes_.back().outputTensor());
        reps = std::max(1, reps);
        std::vector<std::vector<double>> times(passes_.size());
        const bool gpu = passes_.front().context().caps().timerQueries && timeOnGpu(reps, times);
        if (!gpu)
            for (int r = 0; r < reps; ++r) {
                size_t i = 0;
                for (auto& p : passes_) {
                    auto t0 = std::chrono::steady_clock::now();
                    p.run();
                    waitFor(*p.outputTensor());
                    times[i++].push_back(
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
                }
            }
        std::vector<PassTiming> out;
        size_t i = 0;
        for (auto& p : passes_) {
            auto& t = times[i++];
            std::sort(t.begin(), t.end());
            out.push_back({p.kernel(), t[t.size() / 2], gpu});
        }
        return out;
    }
    std::deque<Pass>& passes() { return passes_; }

private:
    // One TIME_ELAPSED query around each pass, `reps` runs of the list; a run
    // the GPU reports as disjoint (its timer was reset or its clock changed) is
    // dropped and run again, three times at most. False (times untouched) if
    // no run came through.
    bool timeOnGpu(int reps, std::vector<std::vector<double>>& times) {
        std::vector<QueryHandle> queries;
        for (size_t i = 0; i < passes_.size(); ++i) queries.push_back(QueryHandle::create());
        std::vector<std::vector<double>> got(passes_.size());
        GLint disjoint = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);  // clears the flag
        for (int r = 0, tries = 0; r < reps && tries < reps + 3; ++tries) {
            for (size_t i = 0; i < passes_.size(); ++i) {
                glBeginQuery(GL_TIME_ELAPSED_EXT, queries[i].get());
                passes_[i].run();
                glEndQuery(GL_TIME_ELAPSED_EXT);
            }
            std::vector<double> run(passes_.size());
            for (size_t i = 0; i < passes_.size(); ++i) {
                GLuint ns = 0;  // waits for the result; 32 bits of nanoseconds: up to 4.2 s a pass
                glGetQueryObjectuiv(queries[i].get(), GL_QUERY_RESULT, &ns);
                run[i] = double(ns) / 1e6;
            }
            glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
            if (disjoint) continue;
            for (size_t i = 0; i < passes_.size(); ++i) got[i].push_back(run[i]);
            ++r;
        }
        if (got.front().empty()) return false;
        times = std::move(got);
        return true;
    }

    std::deque<Pass> passes_;
    std::deque<Tensor> temps_;
};

}  // namespace gltrain
