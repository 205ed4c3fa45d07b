// The IDX reader: crafted in-memory buffers for every error path, gzip
// handling, and (natively) Debian's Fashion-MNIST files.
#include "gltrain/idx.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#ifndef __EMSCRIPTEN__
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#endif

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace idx_test {

using namespace gltrain;

namespace {

void putBe32(std::vector<uint8_t>& out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(uint8_t(v >> s));
}

// An IDX buffer: magic {0, 0, type, rank}, dims, then payload as given.
std::vector<uint8_t> idxBytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> out = {0, 0, type, uint8_t(dims.size())};
    for (uint32_t d : dims) putBe32(out, d);
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

std::vector<uint8_t> counting(size_t n, uint8_t start = 0) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(start + i);
    return v;
}

// The FormatError message of parsing bytes; a test failure if none is thrown.
std::string parseError(const std::vector<uint8_t>& bytes, const std::string& name = "t.idx",
                       uint64_t maxBytes = kIdxDefaultMaxDecompressedBytes) {
    try {
        parseIdx(bytes, name, maxBytes);
    } catch (const FormatError& e) {
        return e.what();
    }
    ADD_FAILURE() << "parseIdx accepted a malformed buffer";
    return {};
}

// The FormatError message of reading the header of bytes with options o.
std::string headerError(const std::vector<uint8_t>& bytes, const std::string& name, const IdxOptions& o) {
    try {
        IdxReader(bytes.data(), bytes.size(), name, o);
    } catch (const FormatError& e) {
        return e.what();
    }
    ADD_FAILURE() << "the header of " << name << " was accepted";
    return {};
}

void expectContains(const std::string& message, std::initializer_list<std::string> parts) {
    for (const std::string& p : parts)
        EXPECT_NE(message.find(p), std::string::npos) << "missing \"" << p << "\" in: " << message;
}

}  // namespace

TEST(IdxParse, UnsignedBytesRank3) {
    const IdxArray a = parseIdx(idxBytes(0x08, {2, 3, 4}, counting(24)), "images");
    EXPECT_EQ(a.type, IdxType::U8);
    EXPECT_EQ(a.dims, (std::vector<uint32_t>{2, 3, 4}));
    EXPECT_EQ(a.count(), 24u);
    EXPECT_EQ(a.headerBytes(), 16u);
    EXPECT_EQ(a.source, "images");
    EXPECT_EQ(a.value(23), 23.0);
    const std::vector<float> f = a.toFloats(0.5f);
    ASSERT_EQ(f.size(), 24u);
    EXPECT_FLOAT_EQ(f[7], 3.5f);
}

TEST(IdxParse, AllTypesAreBigEndian) {
    EXPECT_EQ(parseIdx(idxBytes(0x09, {2}, {0xFF, 0x7F})).value(0), -1.0);
    EXPECT_EQ(parseIdx(idxBytes(0x09, {2}, {0xFF, 0x7F})).value(1), 127.0);
    EXPECT_EQ(parseIdx(idxBytes(0x0B, {2}, {0x80, 0x01, 0x01, 0x02})).value(0), -32767.0);
    EXPECT_EQ(parseIdx(idxBytes(0x0B, {2}, {0x80, 0x01, 0x01, 0x02})).value(1), 258.0);
    EXPECT_EQ(parseIdx(idxBytes(0x0C, {1}, {0xFF, 0xFF, 0xFF, 0xFE})).value(0), -2.0);
    EXPECT_EQ(parseIdx(idxBytes(0x0C, {1}, {0x01, 0x02, 0x03, 0x04})).value(0), 16909060.0);
    EXPECT_EQ(parseIdx(idxBytes(0x0D, {1}, {0x3F, 0xC0, 0x00, 0x00})).value(0), 1.5);           // 1.5f
    const IdxArray d = parseIdx(idxBytes(0x0E, {1, 1, 1, 1}, {0xC0, 0x02, 0, 0, 0, 0, 0, 0}));  // -2.25
    EXPECT_EQ(d.rank(), 4u);
    EXPECT_EQ(d.value(0), -2.25);
    EXPECT_EQ(d.toFloats(), std::vector<float>{-2.25f});
}

TEST(IdxParse, BadMagic) {
    std::vector<uint8_t> b = idxBytes(0x08, {1}, {7});
    b[0] = 1;
    expectContains(parseError(b, "t10k-images-idx3-ubyte"),
                   {"IDX t10k-images-idx3-ubyte", "bad magic 0x01000801 at byte 0", "expected two zero bytes"});
    expectContains(parseError(std::vector<uint8_t>(16, 0xAB)), {"bad magic 0xABABABAB at byte 0"});
}

TEST(IdxParse, BadTypeCode) {
    expectContains(parseError(idxBytes(0x0A, {1}, {7})),
                   {"t.idx", "bad data type code 0x0A at byte 2", "0x08 unsigned byte"});
    expectContains(parseError(idxBytes(0x00, {1}, {7})), {"bad data type code 0x00 at byte 2"});
}

TEST(IdxParse, BadRank) {
    expectContains(parseError(idxBytes(0x08, {}, {7})), {"bad rank 0 at byte 3", "expected 1..4"});
    expectContains(parseError(idxBytes(0x08, {1, 1, 1, 1, 1}, {7})), {"bad rank 5 at byte 3", "expected 1..4"});
}

TEST(IdxParse, TooShort) {
    expectContains(parseError({}), {"0 bytes is too short for the 4-byte magic"});
    expectContains(parseError({0, 0, 8}), {"3 bytes is too short"});
    // Rank 3 announces 16 header bytes; only 10 are there.
    expectContains(parseError({0, 0, 8, 3, 0, 0, 0, 1, 0, 0}),
                   {"truncated header", "needs 16 header bytes, found 10", "6 bytes missing"});
}

TEST(IdxParse, ZeroDimension) {
    expectContains(parseError(idxBytes(0x08, {2, 0, 3}, {})), {"dimension 1 is 0 at byte 8", "non-zero"});
}

TEST(IdxParse, DimensionProductOverflows) {
    expectContains(parseError(idxBytes(0x0E, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 2}, {})),
                   {"dimensions 4294967295x4294967295x4294967295x2", "more bytes than this platform can address"});
}

TEST(IdxParse, TruncatedData) {
    expectContains(
        parseError(idxBytes(0x08, {2, 3}, counting(3))),
        {"truncated: expected 18 bytes", "12-byte header + 2x3 values of 1 bytes", "found 15", "3 bytes missing"});
    expectContains(parseError(idxBytes(0x0C, {2}, counting(5))), {"expected 16 bytes", "3 bytes missing"});
}

TEST(IdxParse, TrailingBytes) {
    expectContains(parseError(idxBytes(0x08, {4}, counting(6))),
                   {"2 trailing bytes after the expected end at byte 12"});
}

TEST(IdxDataset, BuildsScaledImagesAndLabels) {
    std::vector<uint8_t> pixels = counting(2 * 2 * 3);
    pixels[0] = 255;
    const Dataset d =
        makeDataset(parseIdx(idxBytes(0x08, {2, 2, 3}, pixels), "img"), parseIdx(idxBytes(0x08, {2}, {9, 0}), "lab"));
    EXPECT_EQ(d.size(), 2u);
    EXPECT_EQ(d.images.rows, 2);
    EXPECT_EQ(d.images.cols, 6);
    EXPECT_EQ(d.imageRows, 2);
    EXPECT_EQ(d.imageCols, 3);
    EXPECT_FLOAT_EQ(d.images(0, 0), 1.0f);
    EXPECT_FLOAT_EQ(d.images(1, 5), 11.0f / 255.0f);
    EXPECT_EQ(d.labels, (std::vector<int>{9, 0}));
}

TEST(IdxDataset, CountMismatch) {
    try {
        makeDataset(parseIdx(idxBytes(0x08, {3, 2, 2}, counting(12)), "img"),
                    parseIdx(idxBytes(0x08, {2}, {1, 2}), "lab"));
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(), {"img has 3 images", "lab has 2 labels"});
    }
}

TEST(IdxDataset, LabelOutOfRange) {
    try {
        makeDataset(parseIdx(idxBytes(0x08, {3, 1, 1}, counting(3)), "img"),
                    parseIdx(idxBytes(0x08, {3}, {1, 10, 2}), "lab"));
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(), {"IDX lab", "label 10 at index 1 (byte 9)", "out of range 0..9"});
    }
    try {  // signed labels below zero
        makeDataset(parseIdx(idxBytes(0x08, {1, 1, 1}, {0}), "img"), parseIdx(idxBytes(0x09, {1}, {0xFF}), "lab"));
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(), {"label -1 at index 0 (byte 8)"});
    }
}

TEST(IdxDataset, WrongTypesAndRanks) {
    const IdxArray labels = parseIdx(idxBytes(0x08, {1}, {0}), "lab");
    const IdxArray floatImages = parseIdx(idxBytes(0x0D, {1, 1, 1}, {0, 0, 0, 0}), "img");
    const IdxArray rank1Images = parseIdx(idxBytes(0x08, {1}, {0}), "img");
    const IdxArray rank2Labels = parseIdx(idxBytes(0x08, {1, 1}, {0}), "lab");
    const IdxArray images = parseIdx(idxBytes(0x08, {1, 1, 1}, {0}), "img");
    EXPECT_THROW(makeDataset(floatImages, labels), FormatError);
    EXPECT_THROW(makeDataset(rank1Images, labels), FormatError);
    EXPECT_THROW(makeDataset(images, rank2Labels), FormatError);
    EXPECT_THROW(makeDataset(images, parseIdx(idxBytes(0x0D, {1}, {0, 0, 0, 0}))), FormatError);
    EXPECT_NO_THROW(makeDataset(parseIdx(idxBytes(0x08, {1, 4}, {1, 2, 3, 4})), labels));
}

#ifdef GLTRAIN_HAVE_ZLIB
namespace {
std::vector<uint8_t> gzip(const std::vector<uint8_t>& raw) {
    z_stream zs{};
    EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::vector<uint8_t> out(deflateBound(&zs, uLong(raw.size())) + 32);
    zs.next_in = const_cast<Bytef*>(raw.data());
    zs.avail_in = uInt(raw.size());
    zs.next_out = out.data();
    zs.avail_out = uInt(out.size());
    EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}
}  // namespace

TEST(IdxGzip, GunzipsTransparently) {
    const std::vector<uint8_t> raw = idxBytes(0x08, {3, 5}, counting(15, 40));
    const std::vector<uint8_t> gz = gzip(raw);
    ASSERT_EQ(gz[0], 0x1f);
    const IdxArray a = parseIdx(gz, "x.gz");
    EXPECT_EQ(a.dims, (std::vector<uint32_t>{3, 5}));
    EXPECT_EQ(a.bytes, counting(15, 40));
}

TEST(IdxGzip, ConcatenatedMembers) {
    const std::vector<uint8_t> raw = idxBytes(0x0B, {5000}, counting(10000));
    std::vector<uint8_t> gz = gzip(std::vector<uint8_t>(raw.begin(), raw.begin() + 3001));
    const std::vector<uint8_t> second = gzip(std::vector<uint8_t>(raw.begin() + 3001, raw.end()));
    gz.insert(gz.end(), second.begin(), second.end());
    EXPECT_EQ(parseIdx(gz).bytes, counting(10000));
}

TEST(IdxGzip, CorruptStream) {
    std::vector<uint8_t> gz = gzip(idxBytes(0x08, {64}, counting(64)));
    std::vector<uint8_t> badCrc = gz;
    badCrc[badCrc.size() - 6] ^= 0xFF;  // CRC-32 in the trailer
    expectContains(parseError(badCrc, "x.gz"),
                   {"IDX x.gz (gzip)", "corrupt gzip stream near compressed byte", "incorrect data check"});
    std::vector<uint8_t> badMethod = gz;
    badMethod[2] = 7;  // compression method must be 8 (deflate)
    expectContains(parseError(badMethod, "x.gz"), {"corrupt gzip stream", "unknown compression method"});
    std::vector<uint8_t> badBlock = gz;
    badBlock[10] = 0xFF;  // first deflate block header: reserved block type 3
    expectContains(parseError(badBlock, "x.gz"), {"corrupt gzip stream near compressed byte"});
}

TEST(IdxGzip, TruncatedStream) {
    std::vector<uint8_t> gz = gzip(idxBytes(0x08, {64}, counting(64)));
    gz.resize(gz.size() - 5);
    expectContains(parseError(gz, "x.gz"), {"truncated gzip stream", "before the end-of-stream marker"});
}

TEST(IdxGzip, TrailingGarbageAfterStream) {
    std::vector<uint8_t> gz = gzip(idxBytes(0x08, {4}, counting(4)));
    const size_t end = gz.size();
    gz.insert(gz.end(), {1, 2, 3});
    expectContains(parseError(gz),
                   {"3 trailing bytes after the end of the gzip stream at byte " + std::to_string(end)});
}

TEST(IdxGzip, DecompressedContentIsValidated) {
    expectContains(parseError(gzip(idxBytes(0x08, {8}, counting(5))), "x.gz"),
                   {"IDX x.gz (gunzipped)", "3 bytes missing"});
    expectContains(parseError(gzip(idxBytes(0x08, {8}, counting(10)))),
                   {"(gunzipped): 2 trailing bytes after the expected end at byte 16"});
    expectContains(parseError(gzip({0, 1, 8, 1, 0, 0, 0, 1, 5})), {"(gunzipped)", "bad magic 0x00010801"});
    expectContains(parseError(gzip({0, 0, 8})), {"3 bytes is too short"});
}

TEST(IdxGzip, DecompressionBombIsCapped) {
    // The header is honest, but announces more than the caller allows.
    const std::vector<uint8_t> gz = gzip(idxBytes(0x08, {1000, 1000}, std::vector<uint8_t>(1000000, 0)));
    EXPECT_LT(gz.size(), 2000u);
    expectContains(parseError(gz, "bomb.gz", 100000), {"announces 1000012 bytes", "decompression limit of 100000"});
    // A header that understates: only what it announces is kept.
    std::vector<uint8_t> lying = idxBytes(0x08, {10}, std::vector<uint8_t>(5000000, 0));
    expectContains(parseError(gzip(lying), "lie.gz"), {"4999990 trailing bytes after the expected end at byte 18"});
    // A limit below the header's own size.
    expectContains(parseError(gzip(idxBytes(0x08, {1, 1, 1}, {0})), "z.gz", 8),
                   {"announces 17 bytes", "decompression limit of 8"});
    EXPECT_EQ(parseIdx(gz, "bomb.gz").count(), 1000000u);
}

namespace {
// The bomb, about 1 MB: a header announcing 10^6 images of 32x32
// followed by 1.024e9 zero bytes, as 64 concatenated gzip members of 16e6
// zeros each (one member compressed once and repeated keeps the test fast).
std::vector<uint8_t> bigBomb() {
    std::vector<uint8_t> gz = gzip(idxBytes(0x08, {1000000, 32, 32}, {}));
    const std::vector<uint8_t> zeros = gzip(std::vector<uint8_t>(16000000, 0));
    for (int i = 0; i < 64; ++i) gz.insert(gz.end(), zeros.begin(), zeros.end());
    return gz;
}
double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TEST(IdxHeader, GzipBombRefusedAtTheHeader) {
    const std::vector<uint8_t> gz = bigBomb();
    EXPECT_LT(gz.size(), 2000000u);
    IdxOptions o;
    o.role = IdxRole::Images;
    o.valuesPerItem = 784;
    o.valuesFor = "the model (input [28, 28, 1])";
    const auto t0 = std::chrono::steady_clock::now();
    expectContains(headerError(gz, "bomb.gz", o),
                   {"IDX bomb.gz (gunzipped): its header (bytes 0..15) gives 1000000x32x32: 1024 values per image, but "
                    "the model (input [28, 28, 1]) takes 784",
                    "nothing after the header was read"});
    // Inflating the 1.024 GB took seconds and a gigabyte before; the header is 16 bytes.
    EXPECT_LT(secondsSince(t0), 0.5);
}

TEST(IdxHeader, HonestBombCostsNoMoreThanItAnnounces) {
    // The header matches what is asked for but announces more than the limit:
    // refused before inflating; under the limit, only what it announces is inflated.
    const std::vector<uint8_t> gz = bigBomb();
    IdxOptions o;
    o.maxDecompressedBytes = 100000000;
    const auto t0 = std::chrono::steady_clock::now();
    expectContains(headerError(gz, "bomb.gz", o),
                   {"IDX bomb.gz (gzip): header at bytes 0..15 announces 1024000016 bytes",
                    "more than the decompression limit of 100000000 bytes"});
    EXPECT_LT(secondsSince(t0), 0.5);
    // A header announcing 1000 images of 32x32 before the same 1.024e9 zeros:
    // its 1024016 bytes, then at most 16 MiB of trailing output, are inflated.
    std::vector<uint8_t> lying = gzip(idxBytes(0x08, {1000, 32, 32}, {}));
    lying.insert(lying.end(), gz.begin() + std::ptrdiff_t(gzip(idxBytes(0x08, {1000000, 32, 32}, {})).size()),
                 gz.end());
    const auto t1 = std::chrono::steady_clock::now();
    expectContains(parseError(lying, "lie.gz"), {"IDX lie.gz (gunzipped): at least",
                                                 "trailing bytes after the expected "
                                                 "end at byte 1024016"});
    EXPECT_LT(secondsSince(t1), 2.0);
}
#endif

TEST(IdxHeader, WhatTheCallerNeedsIsCheckedAtTheHeader) {
    IdxOptions images;
    images.role = IdxRole::Images;
    images.valuesPerItem = 6;
    images.valuesFor = "the model (input [6])";
    // Values per image: rank 3 (rows x cols) and rank 2 (pixels).
    EXPECT_EQ(parseIdx(idxBytes(0x08, {2, 2, 3}, counting(12)), "img", images).count(), 12u);
    EXPECT_EQ(parseIdx(idxBytes(0x08, {2, 6}, counting(12)), "img", images).count(), 12u);
    // The header alone settles it: the values below are missing, and not read.
    expectContains(headerError(idxBytes(0x08, {2, 3, 3}, {}), "img", images),
                   {"IDX img: its header (bytes 0..15) gives 2x3x3: 9 values per image, but the model (input [6]) "
                    "takes 6"});
    images.valuesPerItem = 0;
    // makeDataset's rules on type and rank, at the header.
    expectContains(headerError(idxBytes(0x0D, {1, 1, 1}, {}), "img", images), {"IDX img: images have data type f32"});
    expectContains(headerError(idxBytes(0x08, {1}, {}), "img", images), {"IDX img: images have rank 1"});
    IdxOptions labels;
    labels.role = IdxRole::Labels;
    labels.items = 3;
    labels.itemsFrom = "img has 3 images";
    EXPECT_EQ(parseIdx(idxBytes(0x09, {3}, {1, 2, 3}), "lab", labels).count(), 3u);
    expectContains(headerError(idxBytes(0x08, {1000000}, {}), "lab", labels),
                   {"IDX lab has 1000000 labels (its header, bytes 4..7) but img has 3 images (counts must match)"});
    expectContains(headerError(idxBytes(0x0E, {3}, {}), "lab", labels), {"IDX lab: labels have data type f64"});
    expectContains(headerError(idxBytes(0x08, {3, 1}, {}), "lab", labels), {"IDX lab: labels have rank 2"});
    // A reader reads once.
    const std::vector<uint8_t> ok = idxBytes(0x08, {3}, {1, 2, 3});
    IdxReader r(ok.data(), ok.size(), "lab", labels);
    EXPECT_EQ(r.dims(), std::vector<uint32_t>{3});
    EXPECT_EQ(r.read().bytes, (std::vector<uint8_t>{1, 2, 3}));
    EXPECT_THROW(r.read(), Error);
}
#ifndef GLTRAIN_HAVE_ZLIB
TEST(IdxGzip, WithoutZlibAsksToDecompress) {
    const std::vector<uint8_t> gz = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    expectContains(parseError(gz, "x.gz"), {"gzip-compressed", "without zlib", "gunzip x.gz"});
}
#endif

#ifndef __EMSCRIPTEN__
namespace {
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/gltrain_idx_XXXXXX";
        const char* p = mkdtemp(tmpl);
        EXPECT_NE(p, nullptr);
        path = p ? p : "/tmp";
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    void write(const std::string& name, const std::vector<uint8_t>& bytes) const {
        std::ofstream(path + "/" + name, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    }
};
bool isDirectory(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
}  // namespace

TEST(IdxFile, MissingFile) {
    try {
        loadIdxFile("/nonexistent/gltrain/x-idx1-ubyte");
        FAIL() << "no error";
    } catch (const IoError& e) {
        expectContains(e.what(), {"/nonexistent/gltrain/x-idx1-ubyte", "cannot open"});
    }
}

TEST(IdxFile, DevicesFifosAndDirectoriesAreRefusedUnread) {
    TempDir dir;
    const std::string fifo = dir.path + "/images.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    // Opening a FIFO would wait for a writer, and /dev/zero never ends: neither is opened.
    const std::pair<std::string, std::string> cases[] = {{"/dev/zero", "is a character device, not a regular file"},
                                                         {fifo, "is a FIFO (named pipe), not a regular file"},
                                                         {dir.path, "is a directory, not a regular file"}};
    for (const auto& [path, why] : cases) {
        try {
            loadIdxFile(path);
            ADD_FAILURE() << path << ": no error";
        } catch (const IoError& e) {
            expectContains(e.what(), {"IDX " + path + ": " + why});
        }
    }
}

TEST(IdxFile, PlainFileSizeIsCheckedAtTheHeader) {
    TempDir dir;
    dir.write("short-idx1-ubyte", idxBytes(0x08, {1000}, counting(10)));
    try {
        IdxReader r(dir.path + "/short-idx1-ubyte");
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(), {"short-idx1-ubyte: truncated: expected 1008 bytes", "found 18 (990 bytes missing)"});
    }
    dir.write("ok-idx3-ubyte", idxBytes(0x08, {2, 2, 2}, counting(8)));
    IdxReader r(dir.path + "/ok-idx3-ubyte");
    EXPECT_EQ(r.dims(), (std::vector<uint32_t>{2, 2, 2}));
    EXPECT_EQ(r.read().bytes, counting(8));
#ifdef GLTRAIN_HAVE_ZLIB
    // Gzip from a file: a chunk at a time, the same checks.
    const std::vector<uint8_t> raw = idxBytes(0x0B, {100000}, counting(200000));
    dir.write("big.gz", gzip(raw));
    EXPECT_EQ(loadIdxFile(dir.path + "/big.gz").bytes, counting(200000));
    std::vector<uint8_t> gz = gzip(raw);
    gz.insert(gz.end(), {9, 9});
    dir.write("tail.gz", gz);
    try {
        loadIdxFile(dir.path + "/tail.gz");
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(),
                       {"2 trailing bytes after the end of the gzip stream at byte " + std::to_string(gz.size() - 2)});
    }
#endif
}

TEST(IdxFile, LoaderFindsPlainAndGzipFiles) {
    TempDir dir;
    dir.write("t10k-images-idx3-ubyte", idxBytes(0x08, {3, 2, 2}, counting(12)));
    dir.write("t10k-labels-idx1-ubyte", idxBytes(0x08, {3}, {4, 5, 6}));
    const Dataset d = loadFashionMnist(dir.path, Split::Test);
    EXPECT_EQ(d.labels, (std::vector<int>{4, 5, 6}));
    EXPECT_EQ(d.images.cols, 4);
    try {
        loadFashionMnist(dir.path, Split::Train);
        FAIL() << "no error";
    } catch (const IoError& e) {
        expectContains(e.what(), {"train-images-idx3-ubyte.gz", "dataset-fashion-mnist"});
    }
#ifdef GLTRAIN_HAVE_ZLIB
    dir.write("train-images-idx3-ubyte.gz", gzip(idxBytes(0x08, {2, 1, 3}, counting(6))));
    dir.write("train-labels-idx1-ubyte.gz", gzip(idxBytes(0x08, {3}, {1, 2, 3})));
    try {
        loadFashionMnist(dir.path, Split::Train);
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(),
                       {"train-images-idx3-ubyte.gz has 2 images", "train-labels-idx1-ubyte.gz has 3 labels"});
    }
#endif
}

TEST(IdxFashionMnist, DebianFilesLoad) {
    if (!isDirectory(kFashionMnistDir))
        GTEST_SKIP() << kFashionMnistDir << " is missing: install Debian's dataset-fashion-mnist package "
                     << "(the test command installs it)";
#ifndef GLTRAIN_HAVE_ZLIB
    if (access((std::string(kFashionMnistDir) + "/train-images-idx3-ubyte").c_str(), R_OK) != 0)
        GTEST_SKIP() << "built without zlib and " << kFashionMnistDir << " holds only .gz files";
#endif
    const Dataset train = loadFashionMnist(Split::Train);
    ASSERT_EQ(train.size(), 60000u);
    EXPECT_EQ(train.images.rows, 60000);
    EXPECT_EQ(train.images.cols, 784);
    EXPECT_EQ(train.imageRows, 28);
    EXPECT_EQ(train.imageCols, 28);
    EXPECT_EQ(std::vector<int>(train.labels.begin(), train.labels.begin() + 10),
              (std::vector<int>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
    EXPECT_EQ(std::vector<int>(train.labels.end() - 3, train.labels.end()), (std::vector<int>{3, 0, 5}));
    std::vector<int> perClass(10, 0);
    for (int l : train.labels) ++perClass[size_t(l)];
    EXPECT_EQ(perClass, std::vector<int>(10, 6000));
    double firstImage = 0;
    float lo = 1, hi = 0;
    for (int c = 0; c < 784; ++c) firstImage += train.images(0, c);
    for (float v : train.images.data) lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_NEAR(firstImage * 255.0, 76247.0, 1e-2);  // sum of the first image's bytes
    EXPECT_EQ(lo, 0.0f);
    EXPECT_EQ(hi, 1.0f);

    const Dataset test = loadFashionMnist(Split::Test);
    ASSERT_EQ(test.size(), 10000u);
    EXPECT_EQ(test.images.rows, 10000);
    EXPECT_EQ(test.images.cols, 784);
    EXPECT_EQ(std::vector<int>(test.labels.begin(), test.labels.begin() + 10),
              (std::vector<int>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
    for (int l : test.labels) {
        ASSERT_GE(l, 0);
        ASSERT_LE(l, 9);
    }
}
#endif  // __EMSCRIPTEN__

}  // namespace idx_test
}  // namespace
