// libFuzzer entry point for the safetensors reader: arbitrary bytes must
// either parse or throw gltrain::Error, never crash, leak or hit undefined
// behaviour; and whatever parses must survive serialize -> parse unchanged.
// Build:
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//     tests/fuzz/safetensors_fuzz.cpp -o safetensors_fuzz && ./safetensors_fuzz tests/fuzz/corpus/safetensors
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gltrain/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    gltrain::SafetensorsFile f;
    try {
        f = gltrain::parseSafetensors(data, size, "fuzz");
    } catch (const gltrain::Error&) {
        return 0;
    }
    // Accepted input round-trips: not catching here makes any failure a crash.
    std::vector<std::pair<std::string, gltrain::TensorData>> tensors;
    for (const std::string& name : f.names) tensors.emplace_back(name, f.at(name));
    if (tensors.size() != f.tensors.size()) std::abort();
    const std::vector<uint8_t> bytes = gltrain::serializeSafetensors(tensors, f.metadata);
    const gltrain::SafetensorsFile g = gltrain::parseSafetensors(bytes, "fuzz-roundtrip");
    if (g.tensors != f.tensors || g.metadata != f.metadata || g.names != f.names) std::abort();
    for (const auto& nt : tensors) {
        volatile float sink = 0;
        for (float v : nt.second.floats()) sink = sink + v;
        try {
            for (int64_t v : nt.second.ints()) sink = sink + float(v);
        } catch (const gltrain::Error&) {
        }
        try {
            (void)nt.second.toMatrix();
        } catch (const gltrain::Error&) {
        }
    }
    return 0;
}
