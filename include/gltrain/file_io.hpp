// Whole-file reads for the file readers (IDX, safetensors, checkpoints).
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/format_error.hpp"

namespace gltrain {

// The bytes of `path`; IoError naming `what` (e.g. "IDX"), the path and the
// system's reason when it cannot be opened or read.
inline std::vector<uint8_t> readFile(const std::string& path, const std::string& what) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw IoError(what + " " + path + ": cannot open: " + std::strerror(errno));
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(f, &std::fclose);
    std::vector<uint8_t> bytes;
    size_t used = 0;
    for (;;) {
        if (bytes.size() - used < (size_t(1) << 16)) bytes.resize(std::max<size_t>(bytes.size() * 2, size_t(1) << 20));
        const size_t got = std::fread(bytes.data() + used, 1, bytes.size() - used, f);
        used += got;
        if (got == 0) break;
    }
    if (std::ferror(f))
        throw IoError(what + " " + path + ": read failed after " + std::to_string(used) + " bytes: " +
                      std::strerror(errno));
    bytes.resize(used);
    bytes.shrink_to_fit();
    return bytes;
}

}  // namespace gltrain
