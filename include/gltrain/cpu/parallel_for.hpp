// Element-wise and per-row work split over the CPU backend's threads: one
// contiguous range of items per thread, so each item is computed exactly as
// on one thread (the same bits on any thread count).
#pragma once
#include <cstddef>
#include <cstdint>

#include "gltrain/cpu/matmul.hpp"

namespace gltrain::cpu {

// fn(first, end) over [0, n) split among ws's threads, or at once on the
// caller when n * workPerItem (about the flops of an item) is below
// ws.parallelMinWork, where waking the threads would cost more than it saves.
template <class F>
void forParts(Workspace& ws, size_t n, double workPerItem, const F& fn) {
    const int threads = ws.pool ? ws.pool->size() : 1;
    if (threads == 1 || n < 2 || double(n) * workPerItem < ws.parallelMinWork) return fn(size_t(0), n);
    ws.pool->run([&](int t) {
        const size_t first = size_t(uint64_t(n) * uint64_t(t) / uint64_t(threads));
        const size_t end = size_t(uint64_t(n) * uint64_t(t + 1) / uint64_t(threads));
        if (first < end) fn(first, end);
    });
}

}  // namespace gltrain::cpu
