// Whole-file reads for the file readers (IDX, safetensors, checkpoints), and
// an atomic whole-file write.
#pragma once
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/format_error.hpp"

#include <sys/stat.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#define GLTRAIN_FILE_IO_HAVE_POSIX 1
#endif

namespace gltrain {

// The size of `path`, which must be a regular file: a directory, device, FIFO
// or socket is refused before it is opened (IoError naming `what`, the path
// and what it is) — a device or pipe has no size to check a header against and
// may never end (/dev/zero), and opening a FIFO waits for a writer.
inline uint64_t regularFileSize(const std::string& path, const std::string& what) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) throw IoError(what + " " + path + ": cannot open: " + std::strerror(errno));
    if (S_ISREG(st.st_mode)) return uint64_t(st.st_size);
    const char* kind = S_ISDIR(st.st_mode)    ? "is a directory"
                       : S_ISCHR(st.st_mode)  ? "is a character device"
                       : S_ISBLK(st.st_mode)  ? "is a block device"
                       : S_ISFIFO(st.st_mode) ? "is a FIFO (named pipe)"
                       : S_ISSOCK(st.st_mode) ? "is a socket"
                                              : "is";
    throw IoError(what + " " + path + ": " + kind +
                  ", not a regular file (read from a file: its end and size are known)");
}

// The bytes of `path`; IoError naming `what` (e.g. "IDX"), the path and the
// system's reason when it cannot be opened or read.
inline std::vector<uint8_t> readFile(const std::string& path, const std::string& what) {
    regularFileSize(path, what);
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
        throw IoError(what + " " + path + ": read failed after " + std::to_string(used) +
                      " bytes: " + std::strerror(errno));
    bytes.resize(used);
    bytes.shrink_to_fit();
    return bytes;
}

// Writes `bytes` to `path` atomically: to a temporary file beside it, which is
// flushed, synced and renamed over `path`. The temporary name is unique to the
// process and the call (PATH.tmp.<pid>.<n>), so two writers never write into
// one temporary file; the last rename wins whole. On any failure the temporary
// file is removed, `path` is left as it was, and IoError names `what`, the
// path and the system's reason.
inline void writeFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& what) {
    static std::atomic<unsigned long> counter{0};
#ifdef GLTRAIN_FILE_IO_HAVE_POSIX
    const long pid = long(::getpid());
#else
    const long pid = 0;
#endif
    const std::string tmp = path + ".tmp." + std::to_string(pid) + "." + std::to_string(counter++);
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw IoError(what + " " + path + ": cannot create temporary file " + tmp + ": " + std::strerror(errno));
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    int err = ok ? 0 : errno;
    if (ok && std::fflush(f) != 0) ok = false, err = errno;
#ifdef GLTRAIN_FILE_IO_HAVE_POSIX
    if (ok && ::fsync(fileno(f)) != 0) ok = false, err = errno;
#endif
    if (std::fclose(f) != 0 && ok) ok = false, err = errno;
    if (!ok) {
        std::remove(tmp.c_str());
        throw IoError(what + " " + path + ": writing " + std::to_string(bytes.size()) + " bytes to " + tmp +
                      " failed: " + std::strerror(err));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        err = errno;
        std::remove(tmp.c_str());
        throw IoError(what + " " + path + ": cannot rename " + tmp + " to " + path + ": " + std::strerror(err));
    }
#ifdef GLTRAIN_FILE_IO_HAVE_POSIX
    // The rename is durable only once the directory is synced (best effort: some
    // file systems cannot sync a directory, and the data is already written).
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
        ::fsync(d);
        ::close(d);
    }
#endif
}

}  // namespace gltrain
