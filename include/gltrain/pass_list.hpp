// PassList: an op (or a whole training step) recorded as passes, replayed by
// run(). Temporaries the passes need are owned here; both live in deques so
// the pointers passes hold stay valid as the list grows.
#pragma once
#include <deque>

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
    void run() {
        for (auto& p : passes_) p.run();
    }
    size_t size() const { return passes_.size(); }
    std::deque<Pass>& passes() { return passes_; }

private:
    std::deque<Pass> passes_;
    std::deque<Tensor> temps_;
};

}  // namespace gltrain
