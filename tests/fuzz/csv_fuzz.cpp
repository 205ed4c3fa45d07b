// libFuzzer entry point for the CSV reader: arbitrary bytes must either parse
// or throw gltrain::Error, never crash, leak or hit undefined behaviour; what
// parses is self-consistent, and an error message holds no control bytes
// (cells are escaped: a NUL once cut a message short).
// The first two bytes choose the options, the rest is the text.
// Build:
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//     tests/fuzz/csv_fuzz.cpp -o csv_fuzz && ./csv_fuzz tests/fuzz/corpus/csv
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "gltrain/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const uint8_t a = data[0], b = data[1];
    gltrain::CsvOptions o;
    o.header = gltrain::CsvHeader(a % 3);
    o.delimiter = ",;|\t"[(a >> 2) & 3];  // a tab is refused (ArgumentError): blanks are trimmed
    o.classLabels = (a >> 4) & 1;
    o.numClasses = (a >> 5) & 7;  // 0: no bound
    o.limit = b & 7;              // 0: every row
    static const char* const columns[] = {"-1", "", "0", "1", "-2", "label", "99", "y\x01z"};
    o.labelColumn = columns[(b >> 3) & 7];
    o.scale = (b >> 6) & 1 ? 1.0f / 255.0f : 1.0f;
    const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

    gltrain::CsvData d;
    try {
        d = gltrain::parseCsv(text, "fuzz", o);
    } catch (const gltrain::Error& e) {
        for (const char* p = e.what(); *p; ++p)
            if (static_cast<unsigned char>(*p) < 0x20 || *p == 0x7f) std::abort();
        return 0;
    }
    const size_t rows = size_t(d.x.rows), cols = size_t(d.x.cols);
    if (rows == 0 || d.x.data.size() != rows * cols) std::abort();
    if (o.limit > 0 && long(rows) > o.limit) std::abort();
    for (float v : d.x.data)
        if (!std::isfinite(v)) std::abort();
    const size_t columnsInFile = cols + (d.labelColumn >= 0 ? 1 : 0);
    if (!d.header.empty() && d.header.size() != columnsInFile) std::abort();
    if (o.labelColumn.empty() != (d.labelColumn < 0)) std::abort();
    if (d.labelColumn >= 0) {
        if (size_t(d.labelColumn) >= columnsInFile) std::abort();
        if (o.classLabels) {
            if (d.labels.size() != rows) std::abort();
            for (int l : d.labels)
                if (l < 0 || (o.numClasses > 0 && l >= o.numClasses)) std::abort();
        } else if (size_t(d.values.rows) != rows || d.values.cols != 1) {
            std::abort();
        }
    }
    return 0;
}
