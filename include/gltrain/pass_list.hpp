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

struct PassTiming {
    std::string kernel;
    double ms = 0;  // median over the runs
};

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

    // Where the time goes: runs the list `reps` times, waiting for each pass
    // (waitFor on its output), and returns each pass's median time. Slower
    // than run() by the waits; used by bench/ and Sequential::profileStep.
    std::vector<PassTiming> profile(int reps = 5) {
        std::vector<std::vector<double>> times(passes_.size());
        run();  // compiles every program first
        if (!passes_.empty()) waitFor(*passes_.back().outputTensor());
        for (int r = 0; r < std::max(1, reps); ++r) {
            size_t i = 0;
            for (auto& p : passes_) {
                auto t0 = std::chrono::steady_clock::now();
                p.run();
                waitFor(*p.outputTensor());
                times[i++].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
        }
        std::vector<PassTiming> out;
        size_t i = 0;
        for (auto& p : passes_) {
            auto& t = times[i++];
            std::sort(t.begin(), t.end());
            out.push_back({p.kernel(), t[t.size() / 2]});
        }
        return out;
    }
    std::deque<Pass>& passes() { return passes_; }

private:
    std::deque<Pass> passes_;
    std::deque<Tensor> temps_;
};

}  // namespace gltrain
