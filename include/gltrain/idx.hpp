// A validating reader of the IDX format (MNIST, Fashion-MNIST), plus a
// Fashion-MNIST loader.
//
// An IDX file is a 4-byte magic number (two zero bytes, a data type code, the
// rank), then `rank` big-endian u32 dimensions, then the values, big-endian,
// outermost dimension first. parseIdx() checks every part of that and throws
// FormatError naming the source, the byte offset, and expected versus found.
//
// Input starting with the gzip magic 0x1f 0x8b is gunzipped when gltrain is
// built with zlib (GLTRAIN_HAVE_ZLIB, native builds). Without zlib
// (Emscripten) a gzip buffer gives an error asking to gunzip it.
//
// Files that lie are refused at their header. The reader (IdxReader) reads
// the header first, from a file a chunk at a time or inflating only its first
// bytes, and checks it before reading or inflating any value: the format,
// what the caller needs (IdxOptions: images or labels, their count, the
// values per image), and the size it announces: an uncompressed file's
// against the file's size, a compressed one's against maxDecompressedBytes
// (1 GiB by default). Only what the header announces is then inflated (plus
// at most 16 MiB of trailing output, counted for the message), so a
// decompression bomb costs at most that much memory and time. Paths that are
// not regular files (/dev/zero, FIFOs, directories) are refused unopened.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gltrain/file_io.hpp"
#include "gltrain/format_error.hpp"
#include "gltrain/host_matrix.hpp"

#ifdef GLTRAIN_HAVE_ZLIB
#include <zlib.h>
#endif

namespace gltrain {

// The data type code, byte 2 of the magic number.
enum class IdxType : uint8_t { U8 = 0x08, I8 = 0x09, I16 = 0x0B, I32 = 0x0C, F32 = 0x0D, F64 = 0x0E };

inline const char* idxTypeName(IdxType t) {
    switch (t) {
        case IdxType::U8: return "unsigned byte (0x08)";
        case IdxType::I8: return "signed byte (0x09)";
        case IdxType::I16: return "i16 (0x0B)";
        case IdxType::I32: return "i32 (0x0C)";
        case IdxType::F32: return "f32 (0x0D)";
        case IdxType::F64: return "f64 (0x0E)";
    }
    return "unknown";
}

// Bytes per value of a type.
inline size_t idxTypeSize(IdxType t) {
    switch (t) {
        case IdxType::U8:
        case IdxType::I8: return 1;
        case IdxType::I16: return 2;
        case IdxType::I32:
        case IdxType::F32: return 4;
        case IdxType::F64: return 8;
    }
    return 0;
}

// One parsed IDX file.
struct IdxArray {
    std::string source;          // file name, or the name given to parseIdx; used in messages
    IdxType type = IdxType::U8;  // data type
    std::vector<uint32_t> dims;  // 1..4 non-zero sizes, outermost first
    std::vector<uint8_t> bytes;  // count() * idxTypeSize(type) bytes, big-endian as in the file

    // The number of dimensions (1 to 4).
    size_t rank() const { return dims.size(); }
    size_t count() const {
        size_t n = 1;
        for (uint32_t d : dims) n *= d;  // cannot overflow: parseIdx checked it
        return n;
    }
    // The size of the file's header in bytes (magic and dimensions).
    size_t headerBytes() const { return 4 + 4 * dims.size(); }

    // Value i (0 <= i < count()) converted to double.
    double value(size_t i) const {
        const uint8_t* p = bytes.data() + i * idxTypeSize(type);
        switch (type) {
            case IdxType::U8: return double(p[0]);
            case IdxType::I8: return double(int8_t(p[0]));
            case IdxType::I16: return double(int16_t(uint16_t((p[0] << 8) | p[1])));
            case IdxType::I32: return double(int32_t(be32(p)));
            case IdxType::F32: {
                uint32_t b = be32(p);
                float f;
                std::memcpy(&f, &b, 4);
                return double(f);
            }
            case IdxType::F64: {
                uint64_t b = (uint64_t(be32(p)) << 32) | be32(p + 4);
                double d;
                std::memcpy(&d, &b, 8);
                return d;
            }
        }
        return 0.0;
    }

    // All values as floats, each multiplied by scale.
    std::vector<float> toFloats(float scale = 1.0f) const {
        const size_t n = count();
        std::vector<float> out(n);
        if (type == IdxType::U8) {
            for (size_t i = 0; i < n; ++i) out[i] = float(bytes[i]) * scale;
        } else {
            for (size_t i = 0; i < n; ++i) out[i] = float(value(i)) * scale;
        }
        return out;
    }

    // A big-endian 32-bit value.
    static uint32_t be32(const uint8_t* p) {
        return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    }
};

// Default cap on the decompressed size of a gzip-compressed IDX file (1 GiB;
// Fashion-MNIST's largest file is 47 MB).
constexpr uint64_t kIdxDefaultMaxDecompressedBytes = uint64_t(1) << 30;

// What a caller needs of an IDX file. The reader checks it at the header,
// before a value is read or inflated, so a file that does not fit (or whose
// header lies) costs its header and no more.
enum class IdxRole {
    Any,
    Images,  // unsigned bytes of rank 3 (count x rows x cols) or 2 (count x pixels), as makeDataset takes
    Labels,  // integers of rank 1, as makeDataset takes
};

// What the IDX reader checks at a file's header, before it reads a value.
struct IdxOptions {
    // The most bytes (header + values) a gzip-compressed file may announce,
    // and so the most it is inflated to. (An uncompressed file must be as long
    // as its header says; that is checked against the file's size first.)
    uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes;
    // What the file must be: images, labels, or anything.
    IdxRole role = IdxRole::Any;
    // > 0: the first dimension (the count of images or labels) must be this;
    // itemsFrom says where it comes from, e.g. "img.idx has 3 images".
    uint64_t items = 0;
    // Where `items` comes from, for messages.
    std::string itemsFrom;
    // > 0: the values per item (the product of the other dimensions, 1 at
    // rank 1) must be this; valuesFor names who takes them, e.g. "the model
    // (input [28, 28, 1])".
    uint64_t valuesPerItem = 0;
    // Who takes the values, for messages.
    std::string valuesFor;
};

namespace idx_detail {

inline std::string hex(uint64_t v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*llX", digits, static_cast<unsigned long long>(v));
    return buf;
}

inline std::string fail(const std::string& source, const std::string& what) { return "IDX " + source + ": " + what; }

struct Header {
    IdxType type = IdxType::U8;
    std::vector<uint32_t> dims;
    uint64_t headerBytes = 0;
    uint64_t dataBytes = 0;  // count * type size
    uint64_t totalBytes() const { return headerBytes + dataBytes; }
};

inline std::string shapeText(const std::vector<uint32_t>& dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
    return s;
}

// Validates the magic number and dimensions at the start of data[0, size).
// Does not look at the values.
inline Header parseHeader(const uint8_t* data, size_t size, const std::string& source) {
    if (size < 4)
        throw FormatError(
            fail(source, std::to_string(size) + " bytes is too short for the 4-byte magic number at byte 0"));
    const uint32_t magic = IdxArray::be32(data);
    if (data[0] != 0 || data[1] != 0)
        throw FormatError(fail(source, "bad magic " + hex(magic, 8) +
                                           " at byte 0 (expected two zero bytes, a type code and a rank, e.g. "
                                           "0x00000803 for unsigned bytes, rank 3)"));
    const uint8_t code = data[2];
    if (code != 0x08 && code != 0x09 && code != 0x0B && code != 0x0C && code != 0x0D && code != 0x0E)
        throw FormatError(fail(source, "bad data type code " + hex(code, 2) + " at byte 2 of magic " + hex(magic, 8) +
                                           " (expected 0x08 unsigned byte, 0x09 signed byte, 0x0B i16, 0x0C i32, "
                                           "0x0D f32 or 0x0E f64)"));
    const int rank = data[3];
    if (rank < 1 || rank > 4)
        throw FormatError(fail(
            source, "bad rank " + std::to_string(rank) + " at byte 3 of magic " + hex(magic, 8) + " (expected 1..4)"));
    Header h;
    h.type = IdxType(code);
    h.headerBytes = 4 + 4 * uint64_t(rank);
    if (size < h.headerBytes)
        throw FormatError(fail(source, "truncated header: rank " + std::to_string(rank) + " needs " +
                                           std::to_string(h.headerBytes) + " header bytes, found " +
                                           std::to_string(size) + " (" + std::to_string(h.headerBytes - size) +
                                           " bytes missing)"));
    uint64_t count = 1;
    bool overflow = false;
    for (int i = 0; i < rank; ++i) {
        const uint32_t d = IdxArray::be32(data + 4 + 4 * i);
        if (d == 0)
            throw FormatError(fail(source, "dimension " + std::to_string(i) + " is 0 at byte " +
                                               std::to_string(4 + 4 * i) + " (dimensions must be non-zero)"));
        h.dims.push_back(d);
        if (count > std::numeric_limits<uint64_t>::max() / d) overflow = true;
        if (!overflow) count *= d;
    }
    const uint64_t esize = idxTypeSize(h.type);
    const uint64_t limit =
        std::min<uint64_t>(std::numeric_limits<size_t>::max(), std::numeric_limits<uint64_t>::max()) - h.headerBytes;
    if (overflow || count > limit / esize)
        throw FormatError(fail(source, "dimensions " + shapeText(h.dims) + " of " + std::to_string(esize) +
                                           "-byte values at bytes 4.." + std::to_string(h.headerBytes - 1) +
                                           " need more bytes than this platform can address"));
    h.dataBytes = count * esize;
    return h;
}

inline std::string expectedText(const Header& h) {
    return std::to_string(h.totalBytes()) + " bytes (" + std::to_string(h.headerBytes) + "-byte header + " +
           shapeText(h.dims) + " values of " + std::to_string(idxTypeSize(h.type)) + " bytes)";
}

// Checks the length of a complete (uncompressed) file against its header.
inline void checkLength(const Header& h, uint64_t size, const std::string& source) {
    if (size < h.totalBytes())
        throw FormatError(fail(source, "truncated: expected " + expectedText(h) + ", found " + std::to_string(size) +
                                           " (" + std::to_string(h.totalBytes() - size) + " bytes missing)"));
    if (size > h.totalBytes())
        throw FormatError(fail(source, std::to_string(size - h.totalBytes()) +
                                           " trailing bytes after the expected end at byte " +
                                           std::to_string(h.totalBytes()) + " (expected " + expectedText(h) + ")"));
}

// Input bytes: a buffer in memory, or an open file read a chunk at a time, so
// that only what the parser asks for is read.
class Input {
public:
    static constexpr size_t kChunk = size_t(1) << 16;
    Input(const uint8_t* data, size_t size) : next_(data), avail_(size), size_(size) {}
    Input(std::FILE* file, uint64_t size, std::string path)
        : file_(file), size_(size), path_(std::move(path)), buf_(kChunk) {}
    Input(const Input&) = delete;
    Input& operator=(const Input&) = delete;

    const uint8_t* next() const { return next_; }
    size_t avail() const { return avail_; }  // bytes at next()
    void consume(size_t n) {
        next_ += n;
        avail_ -= n;
        offset_ += n;
    }
    uint64_t offset() const { return offset_; }  // bytes consumed so far
    uint64_t size() const { return size_; }      // the whole input (a file: its size when opened)

    // Makes at least `want` (<= kChunk) bytes available, fewer only at the
    // end of the input; false when none are.
    bool fill(size_t want = 1) {
        if (file_ && avail_ < want) {
            if (avail_ > 0) std::memmove(buf_.data(), next_, avail_);
            next_ = buf_.data();
            while (avail_ < want) {
                const size_t got = std::fread(buf_.data() + avail_, 1, buf_.size() - avail_, file_);
                if (got == 0) break;
                avail_ += got;
            }
            checkRead();
        }
        return avail_ > 0;
    }
    // Up to n bytes into dst, fewer only at the end of the input; a file's
    // bytes beyond the buffer go straight into dst.
    size_t read(uint8_t* dst, size_t n) {
        size_t done = std::min(n, avail_);
        if (done > 0) std::memcpy(dst, next_, done);
        consume(done);
        while (file_ && done < n) {
            const size_t got = std::fread(dst + done, 1, n - done, file_);
            if (got == 0) break;
            done += got;
            offset_ += got;
        }
        if (file_) checkRead();
        return done;
    }

private:
    void checkRead() const {
        if (std::ferror(file_))
            throw IoError("IDX " + path_ + ": read failed after byte " + std::to_string(offset_ + avail_) + ": " +
                          std::strerror(errno));
    }
    const uint8_t* next_ = nullptr;
    size_t avail_ = 0;
    uint64_t offset_ = 0;
    std::FILE* file_ = nullptr;
    uint64_t size_ = 0;
    std::string path_;
    std::vector<uint8_t> buf_;
};

#ifdef GLTRAIN_HAVE_ZLIB
// The output of one or more concatenated gzip members read from `in`, inflated
// only as far as the reader asks: the IDX header is checked before the values
// are inflated. Throws on corrupt or truncated streams and on bytes after the
// last member. `where` names the stream in messages.
class Gunzip {
public:
    Gunzip(Input& in, std::string where) : in_(in), where_(std::move(where)) {
        if (inflateInit2(&zs_, 15 + 16) != Z_OK) throw Error(fail(where_, "zlib inflateInit2 failed"));
    }
    ~Gunzip() { inflateEnd(&zs_); }
    Gunzip(const Gunzip&) = delete;
    Gunzip& operator=(const Gunzip&) = delete;

    // Up to n bytes of output into dst, fewer only at the end of the last member.
    size_t read(uint8_t* dst, size_t n) {
        size_t got = 0;
        while (got < n && !ended_) {
            if (in_.avail() == 0) in_.fill();
            const uInt inBefore = uInt(std::min<size_t>(in_.avail(), size_t(1) << 30));
            const uInt outBefore = uInt(std::min<size_t>(n - got, size_t(1) << 30));
            zs_.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(in_.next()));
            zs_.avail_in = inBefore;
            zs_.next_out = dst + got;
            zs_.avail_out = outBefore;
            const int ret = inflate(&zs_, Z_NO_FLUSH);
            in_.consume(inBefore - zs_.avail_in);
            got += outBefore - zs_.avail_out;
            if (ret == Z_OK) continue;
            if (ret == Z_STREAM_END) {
                nextMember();
                continue;
            }
            if (ret == Z_BUF_ERROR && inBefore == 0) {  // inflate needs input
                if (!in_.fill())
                    throw FormatError(fail(where_, "truncated gzip stream: the input ends at byte " +
                                                       std::to_string(in_.offset()) +
                                                       " before the end-of-stream marker"));
                continue;
            }
            if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR)
                throw FormatError(fail(where_, "corrupt gzip stream near compressed byte " +
                                                   std::to_string(in_.offset()) + ": " +
                                                   (zs_.msg ? zs_.msg : "invalid data")));
            if (ret == Z_MEM_ERROR) throw Error(fail(where_, "zlib ran out of memory"));
            throw Error(fail(where_, "zlib inflate returned " + std::to_string(ret)));
        }
        return got;
    }

private:
    // After a member's end: the end of the input, another member, or an error.
    void nextMember() {
        in_.fill(2);
        if (in_.avail() == 0) {
            ended_ = true;
            return;
        }
        if (in_.avail() >= 2 && in_.next()[0] == 0x1f && in_.next()[1] == 0x8b) {
            if (inflateReset(&zs_) != Z_OK) throw Error(fail(where_, "zlib inflateReset failed"));
            return;
        }
        const uint64_t rest =
            std::max<uint64_t>(in_.avail(), in_.size() > in_.offset() ? in_.size() - in_.offset() : 0);
        throw FormatError(fail(where_, std::to_string(rest) +
                                           " trailing bytes after the end of the gzip stream at byte " +
                                           std::to_string(in_.offset())));
    }

    Input& in_;
    std::string where_;
    z_stream zs_{};
    bool ended_ = false;
};
#endif

inline const char* itemNoun(IdxRole role, bool plural) {
    if (role == IdxRole::Images) return plural ? "images" : "image";
    if (role == IdxRole::Labels) return plural ? "labels" : "label";
    return plural ? "items" : "item";
}

// makeDataset's rules for images and labels, which the type and rank settle.
inline void checkImages(const std::string& source, IdxType type, size_t rank) {
    if (type != IdxType::U8)
        throw FormatError(fail(
            source, std::string("images have data type ") + idxTypeName(type) + ", expected unsigned byte (0x08)"));
    if (rank != 2 && rank != 3)
        throw FormatError(fail(source, "images have rank " + std::to_string(rank) +
                                           ", expected 3 (count x rows x cols) or 2 (count x pixels)"));
}
inline void checkLabels(const std::string& source, IdxType type, size_t rank) {
    if (rank != 1) throw FormatError(fail(source, "labels have rank " + std::to_string(rank) + ", expected 1"));
    if (type == IdxType::F32 || type == IdxType::F64)
        throw FormatError(
            fail(source, std::string("labels have data type ") + idxTypeName(type) + ", expected an integer type"));
}

// What the caller asked of the header (IdxOptions): role, count, values per
// item. `source` names what was parsed ("x.gz (gunzipped)"), `file` the file.
inline void checkExpected(const Header& h, const std::string& source, const std::string& file, const IdxOptions& o) {
    if (o.role == IdxRole::Images) checkImages(source, h.type, h.dims.size());
    if (o.role == IdxRole::Labels) checkLabels(source, h.type, h.dims.size());
    if (o.items > 0 && h.dims[0] != o.items)
        throw FormatError("IDX " + file + " has " + std::to_string(h.dims[0]) + " " + itemNoun(o.role, true) +
                          " (its header, bytes 4..7) but " +
                          (o.itemsFrom.empty() ? std::to_string(o.items) + " are expected" : o.itemsFrom) +
                          " (counts must match)");
    if (o.valuesPerItem > 0) {
        uint64_t per = 1;
        for (size_t i = 1; i < h.dims.size(); ++i) per *= h.dims[i];  // parseHeader bounded the product
        if (per != o.valuesPerItem)
            throw FormatError(fail(
                source, "its header (bytes 0.." + std::to_string(h.headerBytes - 1) + ") gives " + shapeText(h.dims) +
                            ": " + std::to_string(per) + " values per " + itemNoun(o.role, false) + ", but " +
                            (o.valuesFor.empty() ? std::string("the caller") : o.valuesFor) + " takes " +
                            std::to_string(o.valuesPerItem) + " (nothing after the header was read)"));
    }
}

}  // namespace idx_detail

// Reads an IDX file in two steps: the constructor reads its header and checks
// it (the format, what IdxOptions asks for, and its size: an uncompressed
// file's against the file's, a compressed one's against the decompression
// limit); read() then reads (or inflates) the values. A file that lies or does
// not fit thus costs its header only, and a caller reading two files (images
// and labels) can check both headers before reading either.
class IdxReader {
public:
    // An IDX file in data[0, size), which must outlive the reader; `source`
    // names it in messages. Gzip-compressed input (0x1f 0x8b) is gunzipped
    // when built with zlib.
    IdxReader(const uint8_t* data, size_t size, const std::string& source = "<memory>", const IdxOptions& o = {})
        : s_(std::make_unique<State>(data, size)) {
        start(source, o);
    }
    // The file at `path`, which must be a regular file: a directory, device or
    // FIFO is refused before it is opened (/dev/zero would never end).
    explicit IdxReader(const std::string& path, const IdxOptions& o = {}) {
        const uint64_t size = regularFileSize(path, "IDX");
        std::FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) throw IoError("IDX " + path + ": cannot open: " + std::strerror(errno));
        s_ = std::make_unique<State>(f, size, path);
        start(path, o);
    }

    // The file name (or the name given), for messages.
    const std::string& source() const { return s_->source; }
    // The data type of the values.
    IdxType type() const { return s_->header.type; }
    // The dimensions, outermost first.
    const std::vector<uint32_t>& dims() const { return s_->header.dims; }
    // The first dimension: the count of items (images or labels).
    uint64_t items() const { return s_->header.dims[0]; }

    // The values (once); a gzip stream is inflated and checked to its end.
    IdxArray read() {
        using namespace idx_detail;
        State& s = *s_;
        if (s.read) throw Error(fail(s.source, "IdxReader::read() called twice"));
        s.read = true;
        const Header& h = s.header;
        IdxArray a;
        a.source = s.source;
        a.type = h.type;
        a.dims = h.dims;
        // Grown a step at a time: a gzip stream that ends early costs the
        // memory it filled, not what its header announced.
        const size_t want = size_t(h.dataBytes), step = size_t(1) << 24;
        size_t got = 0;
        if (!s.gzip) a.bytes.reserve(want);  // its size is the file's, checked at the header
        while (got < want) {
            const size_t n = std::min(want - got, step);
            a.bytes.resize(got + n);
            const size_t r = pull(a.bytes.data() + got, n);
            got += r;
            if (r < n) break;
        }
        if (got < want) checkLength(h, h.headerBytes + got, s.name);  // throws: truncated
        if (s.gzip) finishGzip();
        return a;
    }

private:
    struct State {
        State(const uint8_t* data, size_t size) : in(data, size) {}
        State(std::FILE* f, uint64_t size, const std::string& path) : file(f, &std::fclose), in(f, size, path) {}
        std::unique_ptr<std::FILE, int (*)(std::FILE*)> file{nullptr, &std::fclose};
        idx_detail::Input in;
#ifdef GLTRAIN_HAVE_ZLIB
        std::unique_ptr<idx_detail::Gunzip> gz;
#endif
        bool gzip = false;
        bool read = false;
        std::string source, name;  // name: the source, "(gunzipped)" when it was
        idx_detail::Header header;
    };

    size_t pull(uint8_t* dst, size_t n) {
#ifdef GLTRAIN_HAVE_ZLIB
        if (s_->gz) return s_->gz->read(dst, n);
#endif
        return s_->in.read(dst, n);
    }

    void start(const std::string& source, const IdxOptions& o) {
        using namespace idx_detail;
        State& s = *s_;
        s.source = s.name = source;
        s.in.fill(2);
        s.gzip = s.in.avail() >= 2 && s.in.next()[0] == 0x1f && s.in.next()[1] == 0x8b;
        if (s.gzip) {
#ifdef GLTRAIN_HAVE_ZLIB
            s.gz = std::make_unique<Gunzip>(s.in, source + " (gzip)");
            s.name = source + " (gunzipped)";
#else
            throw FormatError(fail(source,
                                   "gzip-compressed (starts with 0x1f 0x8b at byte 0) but gltrain was built "
                                   "without zlib; decompress it first (gunzip " +
                                       source + ")"));
#endif
        }
        uint8_t head[20];
        size_t have = pull(head, 4);
        if (have == 4 && head[3] >= 1 && head[3] <= 4) have += pull(head + 4, 4 * size_t(head[3]));
        s.header = parseHeader(head, have, s.name);
        const Header& h = s.header;
        checkExpected(h, s.name, source, o);
        if (s.gzip && h.totalBytes() > o.maxDecompressedBytes)
            throw FormatError(fail(source + " (gzip)", "header at bytes 0.." + std::to_string(h.headerBytes - 1) +
                                                           " announces " + expectedText(h) +
                                                           ", more than the decompression limit of " +
                                                           std::to_string(o.maxDecompressedBytes) + " bytes"));
        if (!s.gzip) checkLength(h, s.in.size(), s.name);
    }

    // Inflates what follows the values to the end of the stream, which checks
    // the stream (CRC, members) and counts trailing bytes, up to a point.
    void finishGzip() {
        using namespace idx_detail;
        const Header& h = s_->header;
        const uint64_t countLimit = uint64_t(1) << 24;
        std::vector<uint8_t> scratch(Input::kChunk);
        uint64_t extra = 0;
        for (;;) {
            const size_t r = pull(scratch.data(), scratch.size());
            if (r == 0) break;
            extra += r;
            if (extra > countLimit)
                throw FormatError(fail(
                    s_->name, "at least " + std::to_string(extra) + " trailing bytes after the expected end at byte " +
                                  std::to_string(h.totalBytes()) + " (expected " + expectedText(h) + ")"));
        }
        if (extra > 0)
            throw FormatError(fail(s_->name, std::to_string(extra) + " trailing bytes after the expected end at byte " +
                                                 std::to_string(h.totalBytes()) + " (expected " + expectedText(h) +
                                                 ")"));
    }

    std::unique_ptr<State> s_;
};

// Parses an IDX file held in data[0, size). `source` names it in messages.
// Gzip-compressed input (0x1f 0x8b) is gunzipped when built with zlib.
inline IdxArray parseIdx(const uint8_t* data, size_t size, const std::string& source, const IdxOptions& o) {
    return IdxReader(data, size, source, o).read();
}
inline IdxArray parseIdx(const uint8_t* data, size_t size, const std::string& source = "<memory>",
                         uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes) {
    IdxOptions o;
    o.maxDecompressedBytes = maxDecompressedBytes;
    return parseIdx(data, size, source, o);
}
inline IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& source, const IdxOptions& o) {
    return parseIdx(bytes.data(), bytes.size(), source, o);
}
inline IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& source = "<memory>",
                         uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes) {
    return parseIdx(bytes.data(), bytes.size(), source, maxDecompressedBytes);
}

// Reads and parses an IDX file (a regular file), gunzipping it if it is
// gzip-compressed; the header is checked before the values are read.
inline IdxArray loadIdxFile(const std::string& path, const IdxOptions& o) { return IdxReader(path, o).read(); }
inline IdxArray loadIdxFile(const std::string& path, uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes) {
    IdxOptions o;
    o.maxDecompressedBytes = maxDecompressedBytes;
    return loadIdxFile(path, o);
}

// An image classification data set: one flattened image per row.
struct Dataset {
    HostMatrix images;        // N x (rows*cols), values scaled to [0, 1]
    std::vector<int> labels;  // N class indices
    int imageRows = 0;        // height of one image (28 for MNIST)
    int imageCols = 0;        // width of one image (28 for MNIST)
    // The number of images.
    size_t size() const { return labels.size(); }
};

enum class Split { Train, Test };

// Builds a Dataset from an images file (unsigned bytes, rank 3: N x rows x
// cols, or rank 2: N x pixels) and a labels file (integers, rank 1: N), checking
// that the counts match and every label lies in 0..numClasses-1.
inline Dataset makeDataset(const IdxArray& images, const IdxArray& labels, int numClasses = 10) {
    using idx_detail::fail;
    idx_detail::checkImages(images.source, images.type, images.rank());
    idx_detail::checkLabels(labels.source, labels.type, labels.rank());
    const uint64_t n = images.dims[0];
    const uint64_t rows = images.rank() == 3 ? images.dims[1] : 1;
    const uint64_t cols = images.rank() == 3 ? images.dims[2] : images.dims[1];
    if (labels.dims[0] != n)
        throw FormatError("IDX " + images.source + " has " + std::to_string(n) + " images but " + labels.source +
                          " has " + std::to_string(labels.dims[0]) + " labels (counts must match)");
    const uint64_t imax = uint64_t(std::numeric_limits<int>::max());
    if (n > imax || rows * cols > imax)
        throw FormatError(fail(images.source, "shape " + idx_detail::shapeText(images.dims) +
                                                  " is too large for a HostMatrix (int rows and cols)"));
    const size_t lsize = idxTypeSize(labels.type);
    Dataset d;
    d.imageRows = int(rows);
    d.imageCols = int(cols);
    d.labels.resize(size_t(n));
    for (size_t i = 0; i < n; ++i) {
        const double v = labels.value(i);
        if (!(v >= 0 && v < numClasses))
            throw FormatError(fail(labels.source, "label " + std::to_string(int64_t(v)) + " at index " +
                                                      std::to_string(i) + " (byte " +
                                                      std::to_string(labels.headerBytes() + i * lsize) +
                                                      ") is out of range 0.." + std::to_string(numClasses - 1)));
        d.labels[i] = int(v);
    }
    d.images = HostMatrix(int(n), int(rows * cols), images.toFloats(1.0f / 255.0f));
    return d;
}

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

namespace idx_detail {
// dir/base if it exists, else dir/base.gz if that exists; else throws IoError.
inline std::string findIdxFile(const std::string& dir, const std::string& base) {
    const std::string plain = dir + "/" + base;
    for (const std::string& p : {plain, plain + ".gz"}) {
        if (std::FILE* f = std::fopen(p.c_str(), "rb")) {
            std::fclose(f);
            return p;
        }
    }
    throw IoError("IDX: neither " + plain + " nor " + plain +
                  ".gz can be opened (on Debian, install the dataset-fashion-mnist package, or pass the directory "
                  "holding the files)");
}
}  // namespace idx_detail

// Loads Fashion-MNIST (or MNIST: the file names are the same) from dir, which
// holds {train,t10k}-{images-idx3,labels-idx1}-ubyte, each possibly with .gz.
inline Dataset loadFashionMnist(const std::string& dir, Split split) {
    const std::string prefix = split == Split::Train ? "train" : "t10k";
    // Both headers are checked before either file's values are read.
    IdxOptions io;
    io.role = IdxRole::Images;
    IdxReader images(idx_detail::findIdxFile(dir, prefix + "-images-idx3-ubyte"), io);
    if (images.dims().size() != 3)
        throw FormatError(idx_detail::fail(images.source(), "images have rank " + std::to_string(images.dims().size()) +
                                                                ", expected 3 (count x rows x cols)"));
    IdxOptions lo;
    lo.role = IdxRole::Labels;
    lo.items = images.items();
    lo.itemsFrom = images.source() + " has " + std::to_string(images.items()) + " images";
    IdxReader labels(idx_detail::findIdxFile(dir, prefix + "-labels-idx1-ubyte"), lo);
    return makeDataset(images.read(), labels.read(), 10);
}

// Loads from Debian's dataset-fashion-mnist location.
inline Dataset loadFashionMnist(Split split) { return loadFashionMnist(kFashionMnistDir, split); }

}  // namespace gltrain
