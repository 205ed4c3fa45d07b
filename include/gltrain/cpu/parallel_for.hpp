// Element-wise and per-row work split over the CPU backend's threads: one
// contiguous range of items per thread, so each item is computed exactly as
// on one thread (the same bits on any thread count).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gltrain/cpu/matmul.hpp"

namespace gltrain::cpu {

// How many parts forParts cuts n items of `workPerItem` (about the multiply-adds
// of an item) into: one per thread of ws's pool, or 1 (the caller alone) when
// n * workPerItem is below ws.parallelMinWork, where waking the threads would
// cost more than it saves. Memory-bound passes count an element as tens of
// multiply-adds (about the time it takes: a product runs a multiply-add in a
// few hundredths of a nanosecond, a pass over arrays larger than the cache
// moves an element in about one).
inline int partsOf(const Workspace& ws, size_t n, double workPerItem) {
    const int threads = ws.pool ? ws.pool->size() : 1;
    if (threads == 1 || n < 2 || double(n) * workPerItem < ws.parallelMinWork) return 1;
    return int(std::min(size_t(threads), n));
}

// fn(first, end) over [0, n) split into partsOf(ws, n, workPerItem) contiguous
// ranges, one per thread; or fn(first, end, t), t the thread's index (0: the
// caller), for work that needs scratch of its own (ws.panels[t], sized here).
template <class F>
void forParts(Workspace& ws, size_t n, double workPerItem, const F& fn) {
    const int parts = partsOf(ws, n, workPerItem);
    auto call = [&](size_t first, size_t end, int t) {
        if constexpr (std::is_invocable_v<const F&, size_t, size_t, int>) fn(first, end, t);
        else fn(first, end);
    };
    // One Panels per thread of the pool, so that a product inside fn (which
    // sizes them so too) never moves the Panels that fn holds.
    const size_t threads = size_t(ws.pool ? ws.pool->size() : 1);
    if (ws.panels.size() < threads) ws.panels.resize(threads);
    if (parts == 1) return call(size_t(0), n, 0);
    ws.pool->run([&](int t) {
        if (t >= parts) return;
        const size_t first = size_t(uint64_t(n) * uint64_t(t) / uint64_t(parts));
        const size_t end = size_t(uint64_t(n) * uint64_t(t + 1) / uint64_t(parts));
        if (first < end) call(first, end, t);
    });
}

// fn(first, end) over [0, n) elements split in whole blocks of 64, so that a
// vector loop meets the same lanes and tail on any thread count; workPerItem
// is per element.
template <class F>
void forElements(Workspace& ws, size_t n, double workPerItem, const F& fn) {
    constexpr size_t kBlock = 64;
    forParts(ws, (n + kBlock - 1) / kBlock, workPerItem * kBlock,
             [&](size_t first, size_t end) { fn(first * kBlock, std::min(end * kBlock, n)); });
}

}  // namespace gltrain::cpu
