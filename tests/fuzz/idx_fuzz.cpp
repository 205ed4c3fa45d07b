// libFuzzer entry point for the IDX reader: arbitrary bytes must either parse
// or throw gltrain::Error, never crash, leak or hit undefined behaviour; what
// parses is self-consistent and meets the IdxOptions it was read with.
// Build (add -DGLTRAIN_HAVE_ZLIB=1 ... -lz to fuzz the gzip path too):
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//     tests/fuzz/idx_fuzz.cpp -o idx_fuzz && ./idx_fuzz tests/fuzz/corpus/idx
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "gltrain/idx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // A modest decompression cap keeps each run fast.
    const uint64_t cap = uint64_t(1) << 24;
    gltrain::IdxArray a;
    try {
        a = gltrain::parseIdx(data, size, "fuzz", cap);
    } catch (const gltrain::Error&) {
        a = {};
    }
    if (!a.dims.empty()) {
        // A parsed array is self-consistent.
        if (a.bytes.size() != a.count() * gltrain::idxTypeSize(a.type) || a.dims.size() > 4) std::abort();
        volatile float sink = 0;
        for (float v : a.toFloats()) sink = sink + v;
        try {
            const gltrain::Dataset d = gltrain::makeDataset(a, a);
            if (d.labels.size() != size_t(d.images.rows)) std::abort();
        } catch (const gltrain::Error&) {
        }
    }
    // The same bytes with what a caller might ask of them, checked at the
    // header: whatever is accepted meets it.
    gltrain::IdxOptions o;
    o.maxDecompressedBytes = cap;
    o.role = gltrain::IdxRole(size % 3);
    o.items = (size / 3) % 2 ? 1 + size % 7 : 0;
    o.valuesPerItem = (size / 6) % 2 ? 1 + size % 5 : 0;
    gltrain::IdxArray b;
    try {
        b = gltrain::parseIdx(data, size, "fuzz", o);
    } catch (const gltrain::Error&) {
        return 0;
    }
    if (a.dims != b.dims || a.bytes != b.bytes) std::abort();  // the options only refuse
    uint64_t per = 1;
    for (size_t i = 1; i < b.dims.size(); ++i) per *= b.dims[i];
    if (o.items && b.dims[0] != o.items) std::abort();
    if (o.valuesPerItem && per != o.valuesPerItem) std::abort();
    if (o.role == gltrain::IdxRole::Images && (b.type != gltrain::IdxType::U8 || (b.rank() != 2 && b.rank() != 3)))
        std::abort();
    if (o.role == gltrain::IdxRole::Labels && b.rank() != 1) std::abort();
    return 0;
}
