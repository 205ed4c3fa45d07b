// libFuzzer entry point for the IDX reader: arbitrary bytes must either parse
// or throw gltrain::Error, never crash, leak or hit undefined behaviour.
// Build (add -DGLTRAIN_HAVE_ZLIB=1 ... -lz to fuzz the gzip path too):
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//     tests/fuzz/idx_fuzz.cpp -o idx_fuzz && ./idx_fuzz tests/fuzz/corpus/idx
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "gltrain/idx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    gltrain::IdxArray a;
    try {
        // A modest decompression cap keeps each run fast.
        a = gltrain::parseIdx(data, size, "fuzz", uint64_t(1) << 24);
    } catch (const gltrain::Error&) {
        return 0;
    }
    // A parsed array is self-consistent.
    if (a.bytes.size() != a.count() * gltrain::idxTypeSize(a.type) || a.dims.empty() || a.dims.size() > 4) std::abort();
    volatile float sink = 0;
    for (float v : a.toFloats()) sink = sink + v;
    try {
        const gltrain::Dataset d = gltrain::makeDataset(a, a);
        if (d.labels.size() != size_t(d.images.rows)) std::abort();
    } catch (const gltrain::Error&) {
    }
    return 0;
}
