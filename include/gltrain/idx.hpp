// A validating reader of the IDX format (MNIST, Fashion-MNIST), plus a
// Fashion-MNIST loader.
//
// An IDX file is a 4-byte magic number (two zero bytes, a data type code, the
// rank), then `rank` big-endian u32 dimensions, then the values, big-endian,
// outermost dimension first. parseIdx() checks every part of that and throws
// FormatError naming the source, the byte offset, and expected versus found.
//
// Buffers starting with the gzip magic 0x1f 0x8b are gunzipped first when
// gltrain is built with zlib (GLTRAIN_HAVE_ZLIB, native builds); the
// decompressed size is capped by what the IDX header announces and by
// maxDecompressedBytes, so a decompression bomb costs at most that much memory.
// Without zlib (Emscripten) a gzip buffer gives an error asking to gunzip it.
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

    size_t rank() const { return dims.size(); }
    size_t count() const {
        size_t n = 1;
        for (uint32_t d : dims) n *= d;  // cannot overflow: parseIdx checked it
        return n;
    }
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

    static uint32_t be32(const uint8_t* p) {
        return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    }
};

// Default cap on the decompressed size of a gzip-compressed IDX file (1 GiB;
// Fashion-MNIST's largest file is 47 MB).
constexpr uint64_t kIdxDefaultMaxDecompressedBytes = uint64_t(1) << 30;

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
        throw FormatError(fail(source, std::to_string(size) + " bytes is too short for the 4-byte magic number at byte 0"));
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
        throw FormatError(fail(source, "bad rank " + std::to_string(rank) + " at byte 3 of magic " + hex(magic, 8) +
                                           " (expected 1..4)"));
    Header h;
    h.type = IdxType(code);
    h.headerBytes = 4 + 4 * uint64_t(rank);
    if (size < h.headerBytes)
        throw FormatError(fail(source, "truncated header: rank " + std::to_string(rank) + " needs " +
                                           std::to_string(h.headerBytes) + " header bytes, found " + std::to_string(size) +
                                           " (" + std::to_string(h.headerBytes - size) + " bytes missing)"));
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
    const uint64_t limit = std::min<uint64_t>(std::numeric_limits<size_t>::max(), std::numeric_limits<uint64_t>::max()) -
                           h.headerBytes;
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
inline void checkLength(const Header& h, size_t size, const std::string& source) {
    if (size < h.totalBytes())
        throw FormatError(fail(source, "truncated: expected " + expectedText(h) + ", found " + std::to_string(size) +
                                           " (" + std::to_string(h.totalBytes() - size) + " bytes missing)"));
    if (size > h.totalBytes())
        throw FormatError(fail(source, std::to_string(size - h.totalBytes()) +
                                           " trailing bytes after the expected end at byte " +
                                           std::to_string(h.totalBytes()) + " (expected " + expectedText(h) + ")"));
}


#ifdef GLTRAIN_HAVE_ZLIB
// Gunzips data[0, size) (one or more concatenated gzip members) holding an IDX
// file, keeping at most what its header announces; throws on corrupt or
// truncated streams, trailing bytes, and output beyond maxBytes.
inline std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, const std::string& source, uint64_t maxBytes) {
    const std::string where = source + " (gzip)";
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) throw Error(fail(where, "zlib inflateInit2 failed"));
    struct End {
        z_stream* z;
        ~End() { inflateEnd(z); }
    } end{&zs};

    std::vector<uint8_t> out;
    uint64_t keep = maxBytes;  // bytes of output to keep; the header's total once known
    bool headerKnown = false;
    Header header;
    uint64_t produced = 0;  // all output, kept or not
    size_t fed = 0;         // input bytes handed to zlib so far
    std::vector<uint8_t> chunk(size_t(1) << 16);
    const uint64_t trailingCountLimit = uint64_t(1) << 24;

    auto consumed = [&] { return fed - zs.avail_in; };
    for (;;) {
        if (zs.avail_in == 0 && fed < size) {
            const size_t n = std::min<size_t>(size - fed, size_t(1) << 30);
            zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(data + fed));
            zs.avail_in = uInt(n);
            fed += n;
        }
        zs.next_out = chunk.data();
        zs.avail_out = uInt(chunk.size());
        const int ret = inflate(&zs, Z_NO_FLUSH);
        const size_t have = chunk.size() - zs.avail_out;
        if (have > 0) {
            const uint64_t room = keep > out.size() ? keep - out.size() : 0;
            if (!headerKnown && have > room)
                throw FormatError(fail(where, "decompresses to more than the limit of " + std::to_string(maxBytes) +
                                                  " bytes before a complete IDX header"));
            const size_t take = size_t(std::min<uint64_t>(have, room));
            out.insert(out.end(), chunk.begin(), chunk.begin() + std::ptrdiff_t(take));
            produced += have;
            if (!headerKnown) {
                // Stop as soon as the header shows the data is not IDX; parse() reports why.
                if (out.size() >= 4 && (out[0] != 0 || out[1] != 0 || out[3] < 1 || out[3] > 4)) return out;
                if (out.size() >= 4 && out.size() >= 4 + 4 * size_t(out[3])) {
                    header = parseHeader(out.data(), out.size(), source + " (gunzipped)");
                    if (header.totalBytes() > maxBytes)
                        throw FormatError(fail(where, "header at bytes 0.." + std::to_string(header.headerBytes - 1) +
                                                          " announces " + expectedText(header) +
                                                          ", more than the decompression limit of " +
                                                          std::to_string(maxBytes) + " bytes"));
                    headerKnown = true;
                    keep = header.totalBytes();
                    if (out.size() > keep) out.resize(size_t(keep));
                }
            }
            if (headerKnown && produced > keep + trailingCountLimit)
                throw FormatError(fail(source + " (gunzipped)", "at least " + std::to_string(produced - keep) +
                                                                    " trailing bytes after the expected end at byte " +
                                                                    std::to_string(keep) + " (expected " +
                                                                    expectedText(header) + ")"));
        }
        if (ret == Z_STREAM_END) {
            const size_t rest = size - consumed();
            if (rest == 0) break;
            const uint8_t* next = data + consumed();
            if (rest >= 2 && next[0] == 0x1f && next[1] == 0x8b) {  // another gzip member
                if (inflateReset(&zs) != Z_OK) throw Error(fail(where, "zlib inflateReset failed"));
                continue;
            }
            throw FormatError(fail(where, std::to_string(rest) + " trailing bytes after the end of the gzip stream at byte " +
                                              std::to_string(consumed())));
        }
        if (ret == Z_BUF_ERROR && zs.avail_in == 0 && fed == size)
            throw FormatError(fail(where, "truncated gzip stream: the input ends at byte " + std::to_string(size) +
                                              " before the end-of-stream marker"));
        if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR)
            throw FormatError(fail(where, "corrupt gzip stream near compressed byte " + std::to_string(consumed()) + ": " +
                                              (zs.msg ? zs.msg : "invalid data")));
        if (ret == Z_MEM_ERROR) throw Error(fail(where, "zlib ran out of memory"));
        if (ret != Z_OK && ret != Z_BUF_ERROR)
            throw Error(fail(where, "zlib inflate returned " + std::to_string(ret)));
    }
    if (headerKnown && produced > keep)
        throw FormatError(fail(source + " (gunzipped)", std::to_string(produced - keep) +
                                                            " trailing bytes after the expected end at byte " +
                                                            std::to_string(keep) + " (expected " + expectedText(header) +
                                                            ")"));
    return out;
}
#endif

}  // namespace idx_detail

// Parses an IDX file held in data[0, size). `source` names it in messages.
// Gzip-compressed input (0x1f 0x8b) is gunzipped when built with zlib.
inline IdxArray parseIdx(const uint8_t* data, size_t size, const std::string& source = "<memory>",
                         uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes) {
    using namespace idx_detail;
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
#ifdef GLTRAIN_HAVE_ZLIB
        std::vector<uint8_t> raw = gunzip(data, size, source, maxDecompressedBytes);
        const std::string name = source + " (gunzipped)";
        const Header h = parseHeader(raw.data(), raw.size(), name);
        checkLength(h, raw.size(), name);
        IdxArray a;
        a.source = source;
        a.type = h.type;
        a.dims = h.dims;
        raw.erase(raw.begin(), raw.begin() + std::ptrdiff_t(h.headerBytes));
        a.bytes = std::move(raw);
        return a;
#else
        (void)maxDecompressedBytes;
        throw FormatError(fail(source, "gzip-compressed (starts with 0x1f 0x8b at byte 0) but gltrain was built without "
                                       "zlib; decompress it first (gunzip " + source + ")"));
#endif
    }
    const Header h = parseHeader(data, size, source);
    checkLength(h, size, source);
    IdxArray a;
    a.source = source;
    a.type = h.type;
    a.dims = h.dims;
    a.bytes.assign(data + h.headerBytes, data + size);
    return a;
}

inline IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& source = "<memory>",
                         uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes) {
    return parseIdx(bytes.data(), bytes.size(), source, maxDecompressedBytes);
}

// Reads and parses an IDX file, gunzipping it if it is gzip-compressed.
inline IdxArray loadIdxFile(const std::string& path, uint64_t maxDecompressedBytes = kIdxDefaultMaxDecompressedBytes) {
    const std::vector<uint8_t> bytes = readFile(path, "IDX");
    return parseIdx(bytes.data(), bytes.size(), path, maxDecompressedBytes);
}

// An image classification data set: one flattened image per row.
struct Dataset {
    HostMatrix images;        // N x (rows*cols), values scaled to [0, 1]
    std::vector<int> labels;  // N class indices
    int imageRows = 0;        // height of one image (28 for MNIST)
    int imageCols = 0;        // width of one image (28 for MNIST)
    size_t size() const { return labels.size(); }
};

enum class Split { Train, Test };

// Builds a Dataset from an images file (unsigned bytes, rank 3: N x rows x
// cols, or rank 2: N x pixels) and a labels file (integers, rank 1: N), checking
// that the counts match and every label lies in 0..numClasses-1.
inline Dataset makeDataset(const IdxArray& images, const IdxArray& labels, int numClasses = 10) {
    using idx_detail::fail;
    if (images.type != IdxType::U8)
        throw FormatError(fail(images.source, std::string("images have data type ") + idxTypeName(images.type) +
                                                  ", expected unsigned byte (0x08)"));
    if (images.rank() != 2 && images.rank() != 3)
        throw FormatError(fail(images.source, "images have rank " + std::to_string(images.rank()) +
                                                  ", expected 3 (count x rows x cols) or 2 (count x pixels)"));
    if (labels.rank() != 1)
        throw FormatError(fail(labels.source, "labels have rank " + std::to_string(labels.rank()) + ", expected 1"));
    if (labels.type == IdxType::F32 || labels.type == IdxType::F64)
        throw FormatError(fail(labels.source, std::string("labels have data type ") + idxTypeName(labels.type) +
                                                  ", expected an integer type"));
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
    const IdxArray images = loadIdxFile(idx_detail::findIdxFile(dir, prefix + "-images-idx3-ubyte"));
    const IdxArray labels = loadIdxFile(idx_detail::findIdxFile(dir, prefix + "-labels-idx1-ubyte"));
    if (images.rank() != 3)
        throw FormatError(idx_detail::fail(images.source, "images have rank " + std::to_string(images.rank()) +
                                                              ", expected 3 (count x rows x cols)"));
    return makeDataset(images, labels, 10);
}

// Loads from Debian's dataset-fashion-mnist location.
inline Dataset loadFashionMnist(Split split) { return loadFashionMnist(kFashionMnistDir, split); }

}  // namespace gltrain
