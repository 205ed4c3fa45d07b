// safetensors: hand-written reference bytes, round trips, one test per
// validation error, and (natively) the atomic file save.
#include "gltrain/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#ifndef __EMSCRIPTEN__
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#endif

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace safetensors_test {

using namespace gltrain;

namespace {

// A safetensors file: the 8-byte little-endian length, header, data.
std::vector<uint8_t> stFile(const std::string& header, const std::vector<uint8_t>& data = {}) {
    std::vector<uint8_t> out(8 + header.size() + data.size());
    for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(header.size()) >> (8 * i));
    for (size_t i = 0; i < header.size(); ++i) out[8 + i] = uint8_t(header[i]);
    for (size_t i = 0; i < data.size(); ++i) out[8 + header.size() + i] = data[i];
    return out;
}

std::string parseError(const std::vector<uint8_t>& bytes, const std::string& name = "m.safetensors") {
    try {
        parseSafetensors(bytes, name);
    } catch (const FormatError& e) {
        return e.what();
    }
    ADD_FAILURE() << "parseSafetensors accepted a malformed buffer";
    return {};
}

void expectContains(const std::string& message, std::initializer_list<std::string> parts) {
    for (const std::string& p : parts)
        EXPECT_NE(message.find(p), std::string::npos) << "missing \"" << p << "\" in: " << message;
}

// The header of one F32 [2] tensor "w" with the given fields replaced.
std::string entry(const std::string& fields) { return "{\"w\":{" + fields + "}}"; }
const std::vector<uint8_t> kEight(8, 0);

std::vector<float> iota(size_t n, float start) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + 0.25f * float(i);
    return v;
}

}  // namespace

// The exact bytes PyTorch / huggingface safetensors write for
// save_file({"w": torch.tensor([1.0, 2.0])}).
TEST(SafetensorsFormat, HandWrittenReferenceBytes) {
    const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    ASSERT_EQ(header.size(), 54u);
    std::vector<uint8_t> file = {56, 0, 0, 0, 0, 0, 0, 0};  // 54 bytes padded with spaces to 56
    file.insert(file.end(), header.begin(), header.end());
    file.insert(file.end(), {' ', ' '});
    file.insert(file.end(), {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x40});  // 1.0f, 2.0f little-endian

    const SafetensorsFile f = parseSafetensors(file);
    ASSERT_EQ(f.tensors.size(), 1u);
    const TensorData& w = f.at("w");
    EXPECT_EQ(w.dtype, Dtype::F32);
    EXPECT_EQ(w.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(w.floats(), (std::vector<float>{1.0f, 2.0f}));
    EXPECT_TRUE(f.metadata.empty());
    EXPECT_EQ(f.names, (std::vector<std::string>{"w"}));

    // The writer produces the same bytes.
    EXPECT_EQ(serializeSafetensors({{"w", TensorData::f32({2}, {1.0f, 2.0f})}}), file);

    // With metadata the reference writes "__metadata__" first.
    const std::vector<uint8_t> withMeta =
        serializeSafetensors({{"w", TensorData::f32({2}, {1.0f, 2.0f})}}, {{"format", "pt"}});
    const std::string expected =
        R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    EXPECT_EQ(std::string(withMeta.begin() + 8, withMeta.begin() + 8 + long(expected.size())), expected);
    const SafetensorsFile g = parseSafetensors(withMeta);
    EXPECT_EQ(g.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
    EXPECT_EQ(g.at("w"), w);
}

TEST(SafetensorsFormat, AcceptsWhitespaceAndAnyKeyOrder) {
    const std::string header =
        " {\n \"b\" : {\"data_offsets\":[4,12], \"shape\":[1,2], \"dtype\":\"I32\"},"
        "\"a\": {\"shape\": [], \"dtype\": \"F32\", \"data_offsets\": [0, 4]}}  \t";
    std::vector<uint8_t> data = {0, 0, 0x40, 0x40, 7, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    const SafetensorsFile f = parseSafetensors(stFile(header, data));
    EXPECT_EQ(f.names, (std::vector<std::string>{"a", "b"}));  // data-section order
    EXPECT_EQ(f.at("a").floats(), std::vector<float>{3.0f});
    EXPECT_TRUE(f.at("a").shape.empty());
    EXPECT_EQ(f.at("b").ints(), (std::vector<int64_t>{7, -1}));
}

TEST(SafetensorsFormat, EmptyFile) {
    const SafetensorsFile f = parseSafetensors(stFile("{}"));
    EXPECT_TRUE(f.tensors.empty());
    const std::vector<uint8_t> bytes = serializeSafetensors({});
    EXPECT_EQ(bytes.size(), 16u);  // "{}" padded to 8
    EXPECT_TRUE(parseSafetensors(bytes).tensors.empty());
}

TEST(SafetensorsRoundTrip, ShapesDtypesAndMetadata) {
    std::vector<std::pair<std::string, TensorData>> tensors = {
        {"layer1.weight", TensorData::f32({129, 33}, iota(129 * 33, -5.0f))},
        {"one", TensorData::f32({1, 1}, {42.0f})},
        {"b", TensorData::f32({3, 5}, iota(15, 1.0f))},
        {"scalar", TensorData::f32({}, {-0.5f})},
        {"vec", TensorData::f32({7}, iota(7, 100.0f))},
        {"empty", TensorData::f32({0, 4}, {})},
        {"step", TensorData::i64({}, {1234567890123LL})},
        {"counts", TensorData::i32({2, 2}, {-1, 0, 1, 2147483647})},
        {"rank4", TensorData::f32({2, 1, 3, 2}, iota(12, 0.0f))},
        {"\xc3\xa9t\xc3\xa9 \xe2\x9c\x93", TensorData::f32({1}, {9.0f})},
    };
    const std::map<std::string, std::string> metadata = {
        {"format", "pt"}, {"step", "1000"}, {"note", "quotes \" and \\ and \n and \xc3\xa9"}, {"", ""}};
    const std::vector<uint8_t> bytes = serializeSafetensors(tensors, metadata);
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(bytes[size_t(i)]) << (8 * i);
    EXPECT_EQ(n % 8, 0u) << "header padded to a multiple of 8";
    EXPECT_EQ(bytes[8 + n - 1] == ' ' || bytes[8 + n - 1] == '}', true);

    const SafetensorsFile f = parseSafetensors(bytes);
    EXPECT_EQ(f.metadata, metadata);
    ASSERT_EQ(f.tensors.size(), tensors.size());
    std::vector<std::string> order;
    for (const auto& [name, t] : tensors) {
        order.push_back(name);
        ASSERT_TRUE(f.contains(name)) << name;
        EXPECT_EQ(f.at(name), t) << name;
    }
    EXPECT_EQ(f.names, order) << "data laid out in the given order";
    EXPECT_EQ(f.at("layer1.weight").floats(), iota(129 * 33, -5.0f));
    EXPECT_EQ(f.at("step").ints(), std::vector<int64_t>{1234567890123LL});
    const HostMatrix m = f.at("b").toMatrix();
    EXPECT_EQ(m.rows, 3);
    EXPECT_EQ(m.cols, 5);
    EXPECT_FLOAT_EQ(m(2, 4), 1.0f + 0.25f * 14);
    EXPECT_EQ(f.at("scalar").toMatrix().data, std::vector<float>{-0.5f});
    EXPECT_EQ(f.at("vec").toMatrix().cols, 7);
    EXPECT_THROW(f.at("rank4").toMatrix(), ArgumentError);
    EXPECT_THROW(f.at("missing"), ArgumentError);

    // Serializing what was read gives the same bytes back.
    std::vector<std::pair<std::string, TensorData>> again;
    for (const std::string& name : f.names) again.emplace_back(name, f.at(name));
    EXPECT_EQ(serializeSafetensors(again, f.metadata), bytes);
}

TEST(SafetensorsRoundTrip, HostMatrix) {
    HostMatrix m(4, 3);
    for (size_t i = 0; i < m.data.size(); ++i) m.data[i] = float(i) * 1.5f - 2.0f;
    const SafetensorsFile f = parseSafetensors(serializeSafetensors({{"m", TensorData::fromMatrix(m)}}));
    const HostMatrix back = f.at("m").toMatrix();
    EXPECT_EQ(back.rows, 4);
    EXPECT_EQ(back.cols, 3);
    EXPECT_EQ(back.data, m.data);
}

TEST(SafetensorsRoundTrip, OtherDtypesConvertToFloat) {
    const std::string header = R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},)"
                               R"("bf":{"dtype":"BF16","shape":[1],"data_offsets":[6,8]},)"
                               R"("d":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},)"
                               R"("i8":{"dtype":"I8","shape":[2],"data_offsets":[16,18]},)"
                               R"("u8":{"dtype":"U8","shape":[1],"data_offsets":[18,19]},)"
                               R"("ok":{"dtype":"BOOL","shape":[1],"data_offsets":[19,20]}})";
    const std::vector<uint8_t> data = {0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00,              // F16 1, -2, 2^-24
                                       0xC0, 0x3F,                                      // BF16 1.5
                                       0,    0,    0,    0,    0,    0,    0x24, 0x40,  // F64 10
                                       0xFE, 0x05,                                      // I8 -2, 5
                                       200,                                             // U8
                                       1};                                              // BOOL
    const SafetensorsFile f = parseSafetensors(stFile(header, data));
    EXPECT_EQ(f.at("h").floats(), (std::vector<float>{1.0f, -2.0f, 5.9604645e-8f}));
    EXPECT_EQ(f.at("bf").floats(), std::vector<float>{1.5f});
    EXPECT_EQ(f.at("d").floats(), std::vector<float>{10.0f});
    EXPECT_EQ(f.at("i8").floats(), (std::vector<float>{-2.0f, 5.0f}));
    EXPECT_EQ(f.at("i8").ints(), (std::vector<int64_t>{-2, 5}));
    EXPECT_EQ(f.at("u8").ints(), std::vector<int64_t>{200});
    EXPECT_EQ(f.at("ok").ints(), std::vector<int64_t>{1});
    EXPECT_THROW(f.at("d").ints(), ArgumentError);
}

TEST(SafetensorsWriter, RejectsBadInput) {
    const TensorData t = TensorData::f32({1}, {1.0f});
    EXPECT_THROW(serializeSafetensors({{"a", t}, {"a", t}}), ArgumentError);
    EXPECT_THROW(serializeSafetensors({{"__metadata__", t}}), ArgumentError);
    EXPECT_THROW(serializeSafetensors({{"bad\xff", t}}), ArgumentError);
    EXPECT_THROW(serializeSafetensors({{"a", t}}, {{"k", "bad\xc3"}}), ArgumentError);
    TensorData inconsistent = t;
    inconsistent.shape = {2};
    EXPECT_THROW(serializeSafetensors({{"a", inconsistent}}), ArgumentError);
    EXPECT_THROW(TensorData::f32({2, 2}, {1.0f}), ArgumentError);
    EXPECT_THROW(TensorData::f32({-1}, {}), ArgumentError);
}

// --- one test per validation error

TEST(SafetensorsValidation, ShorterThanEightBytes) {
    expectContains(parseError({1, 0, 0}),
                   {"safetensors m.safetensors", "file is 3 bytes", "shorter than the 8-byte header length"});
}

TEST(SafetensorsValidation, HeaderLengthAbsurd) {
    std::vector<uint8_t> b = {0, 0xC2, 0xEB, 0x0B, 0, 0, 0, 0};  // 200,000,000
    b.resize(64, ' ');
    expectContains(parseError(b), {"header length 200000000 at byte 0 is absurd"});
    expectContains(parseError({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), {"absurd"});
}

TEST(SafetensorsValidation, HeaderLengthBeyondFile) {
    std::vector<uint8_t> b = stFile("{}");
    b[0] = 100;
    expectContains(parseError(b), {"header length 100 at byte 0 exceeds the 2 bytes after it"});
}

TEST(SafetensorsValidation, HeaderNotJson) {
    expectContains(parseError(stFile(R"({"w":{"dtype":"F32",)")),
                   {"header (20 bytes from byte 8) is not valid JSON", "syntax error"});
    expectContains(parseError(stFile("")), {"not valid JSON"});
    expectContains(parseError(stFile("{} x")), {"not valid JSON"});
    expectContains(parseError(stFile("{\"\xff\":1}")), {"not valid JSON"});  // invalid UTF-8
}

TEST(SafetensorsValidation, HeaderNotObject) {
    expectContains(parseError(stFile("[1,2]")), {"header is a JSON array, expected an object"});
    expectContains(parseError(stFile("\"x\"")), {"header is a JSON string"});
}

TEST(SafetensorsValidation, EntryNotObject) {
    expectContains(parseError(stFile(R"({"w":[1]})")), {"tensor \"w\": entry is a array", "expected an object"});
}

TEST(SafetensorsValidation, MissingFields) {
    expectContains(parseError(stFile(entry(R"("shape":[2],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": missing field \"dtype\""});
    expectContains(parseError(stFile(entry(R"("dtype":"F32","data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": missing field \"shape\""});
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[2])"), kEight)),
                   {"tensor \"w\": missing field \"data_offsets\""});
}

TEST(SafetensorsValidation, UnknownField) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1)"), kEight)),
                   {"tensor \"w\": unknown field \"x\""});
}

TEST(SafetensorsValidation, DtypeWrongType) {
    expectContains(parseError(stFile(entry(R"("dtype":32,"shape":[2],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": field \"dtype\" is a number (32), expected a string"});
}

TEST(SafetensorsValidation, UnknownDtype) {
    expectContains(parseError(stFile(entry(R"("dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": unknown dtype \"F8_E4M3\" in field \"dtype\""});
}

TEST(SafetensorsValidation, ShapeWrongType) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":2,"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": field \"shape\" is a number (2)", "expected an array"});
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":["2"],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": shape[0] is \"2\""});
}

TEST(SafetensorsValidation, NegativeDimension) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[1,-2],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": shape[1] is -2, expected a non-negative integer"});
}

TEST(SafetensorsValidation, NonIntegerDimension) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[2.0],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": shape[0] is 2.0, expected a non-negative integer"});
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[1e30],"data_offsets":[0,8])"), kEight)),
                   {"tensor \"w\": shape[0] is"});
    expectContains(
        parseError(stFile(entry(R"("dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,8])"), kEight)),
        {"tensor \"w\": shape[0] is 18446744073709551615"});
}

TEST(SafetensorsValidation, ShapeProductOverflows) {
    expectContains(
        parseError(stFile(entry(R"("dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8])"), kEight)),
        {"tensor \"w\": shape [4294967296,4294967296,4] of F32 has more bytes than fit in 64 bits"});
}

TEST(SafetensorsValidation, ShapeDisagreesWithOffsets) {
    expectContains(
        parseError(stFile(entry(R"("dtype":"F32","shape":[2,3],"data_offsets":[0,20])"), std::vector<uint8_t>(20))),
        {"tensor \"w\": shape [2,3] of F32 (4 bytes each) needs 24 bytes but data_offsets [0,20] span 20"});
}

TEST(SafetensorsValidation, OffsetsWrongType) {
    for (const char* offsets : {"8", "[8]", "[0,8,16]", "[\"0\",8]", "[0,8.5]", "[-1,8]", "null"})
        expectContains(
            parseError(stFile(entry(std::string(R"("dtype":"F32","shape":[2],"data_offsets":)") + offsets), kEight)),
            {"tensor \"w\": field \"data_offsets\" is", "expected an array of two non-negative integers"});
}

TEST(SafetensorsValidation, BeginAfterEnd) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[2],"data_offsets":[8,0])"), kEight)),
                   {"tensor \"w\": data_offsets [8,0] have begin > end"});
}

TEST(SafetensorsValidation, OffsetsOutOfRange) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[2],"data_offsets":[4,12])"), kEight)),
                   {"tensor \"w\": data_offsets end 12 is beyond the data section of 8 bytes"});
    expectContains(
        parseError(stFile(
            entry(R"("dtype":"F32","shape":[2],"data_offsets":[18446744073709551615,18446744073709551615])"), kEight)),
        {"tensor \"w\": data_offsets end 18446744073709551615 is beyond"});
}

TEST(SafetensorsValidation, OverlappingTensors) {
    const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
    expectContains(parseError(stFile(header, std::vector<uint8_t>(12))),
                   {"tensor \"b\" data_offsets [4,12] overlap tensor \"a\", which ends at data byte 8"});
    const std::string same = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})";
    expectContains(parseError(stFile(same, kEight)), {"overlap tensor \"a\""});
}

TEST(SafetensorsValidation, GapBetweenTensors) {
    const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
    expectContains(parseError(stFile(header, std::vector<uint8_t>(12))),
                   {"gap in the data section: bytes 4..8 belong to no tensor (before tensor \"b\""});
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[1],"data_offsets":[4,8])"), kEight)),
                   {"gap in the data section: bytes 0..4"});
}

TEST(SafetensorsValidation, TrailingDataAfterLastTensor) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[1],"data_offsets":[0,4])"), kEight)),
                   {"data section has 4 bytes after the last tensor \"w\" ends at data byte 4"});
    expectContains(parseError(stFile("{}", {1, 2})), {"data section has 2 bytes after the last tensor ends"});
}

TEST(SafetensorsValidation, DuplicateTensorName) {
    const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    expectContains(parseError(stFile(header, kEight)),
                   {"duplicate key \"w\" in the header (tensor names must be unique)"});
}

TEST(SafetensorsValidation, DuplicateFieldOrMetadataKey) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[2],"dtype":"I32","data_offsets":[0,8])"), kEight)),
                   {"duplicate key \"dtype\" in tensor \"w\""});
    expectContains(parseError(stFile(R"({"__metadata__":{"k":"a","k":"b"}})")),
                   {"duplicate key \"k\" in __metadata__"});
}

TEST(SafetensorsValidation, MetadataNotStrings) {
    expectContains(parseError(stFile(R"({"__metadata__":{"format":"pt","step":5}})")),
                   {"__metadata__ value for key \"step\" is a number (5), expected a string"});
    expectContains(parseError(stFile(R"({"__metadata__":{"k":{"x":"y"}}})")),
                   {"__metadata__ value for key \"k\" is a object"});
    expectContains(parseError(stFile(R"({"__metadata__":"pt"})")),
                   {"__metadata__ is a string, expected an object of string values"});
}

TEST(SafetensorsValidation, NestingTooDeep) {
    expectContains(parseError(stFile(entry(R"("dtype":"F32","shape":[[2]],"data_offsets":[0,8])"), kEight)),
                   {"header nests too deeply in tensor \"w\" field \"shape\""});
    expectContains(parseError(stFile(std::string(100000, '[') + std::string(100000, ']'))), {"nests too deeply"});
}

TEST(SafetensorsValidation, LongNamesAreShortenedInMessages) {
    const std::string name(1000, 'n');
    const std::string message =
        parseError(stFile("{\"" + name + R"(":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kEight));
    expectContains(message, {"tensor \"nnnn", "...\": shape [3]"});
    EXPECT_LT(message.size(), 400u);
}

#ifndef __EMSCRIPTEN__
namespace {
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/gltrain_st_XXXXXX";
        const char* p = mkdtemp(tmpl);
        EXPECT_NE(p, nullptr);
        path = p ? p : "/tmp";
    }
    ~TempDir() {
        chmod(path.c_str(), 0700);
        std::system(("rm -rf '" + path + "'").c_str());
    }
};
// Whether a temporary file of `path` (path.tmp.<pid>.<n>, writeFileAtomic) is left in its directory.
bool temporaryLeft(const std::string& dirPath, const std::string& name) {
    DIR* d = opendir(dirPath.c_str());
    if (!d) return false;
    bool found = false;
    while (dirent* e = readdir(d)) found = found || std::string(e->d_name).rfind(name + ".tmp", 0) == 0;
    closedir(d);
    return found;
}
std::vector<std::pair<std::string, TensorData>> tensorsA() {
    return {{"w", TensorData::f32({2, 2}, {1, 2, 3, 4})}, {"step", TensorData::i64({}, {7})}};
}
std::vector<std::pair<std::string, TensorData>> tensorsB() { return {{"v", TensorData::f32({3}, {5, 6, 7})}}; }
}  // namespace

TEST(SafetensorsFile, SaveLoadLeavesNoTemporary) {
    TempDir dir;
    const std::string path = dir.path + "/model.safetensors";
    saveSafetensorsFile(path, tensorsA(), {{"step", "7"}});
    EXPECT_FALSE(temporaryLeft(dir.path, "model.safetensors"));
    const SafetensorsFile f = loadSafetensorsFile(path);
    EXPECT_EQ(f.source, path);
    EXPECT_EQ(f.at("w"), tensorsA()[0].second);
    EXPECT_EQ(f.at("step").ints(), std::vector<int64_t>{7});
    EXPECT_EQ(f.metadata.at("step"), "7");
}

TEST(SafetensorsFile, SaveReplacesExistingFile) {
    TempDir dir;
    const std::string path = dir.path + "/model.safetensors";
    saveSafetensorsFile(path, tensorsA());
    saveSafetensorsFile(path, tensorsB());
    const SafetensorsFile f = loadSafetensorsFile(path);
    EXPECT_FALSE(f.contains("w"));
    EXPECT_EQ(f.at("v").floats(), (std::vector<float>{5, 6, 7}));
    EXPECT_FALSE(temporaryLeft(dir.path, "model.safetensors"));
}

TEST(SafetensorsFile, FailedSaveKeepsOldFile) {
    TempDir dir;
    const std::string path = dir.path + "/model.safetensors";
    saveSafetensorsFile(path, tensorsA());
    // The temporary cannot be created (its name, path.tmp.<pid>.<n>, is one the
    // file system refuses: past 255 bytes, where the file's own name is not). 250
    // bytes + ".tmp." + at least "1.0" is 258 whatever the pid (a 245-byte name
    // let a 3-digit pid's temporary through: 255 bytes, after the pids wrapped).
    const std::string longPath = dir.path + "/" + std::string(250, 'm');
    {
        const std::vector<uint8_t> old = serializeSafetensors(tensorsA());
        std::ofstream(longPath, std::ios::binary)
            .write(reinterpret_cast<const char*>(old.data()), std::streamsize(old.size()));
    }
    try {
        saveSafetensorsFile(longPath, tensorsB());
        FAIL() << "no error";
    } catch (const IoError& e) {
        expectContains(e.what(), {longPath, "cannot create temporary file " + longPath + ".tmp."});
    }
    EXPECT_TRUE(loadSafetensorsFile(longPath).contains("w"));

    // A directory that cannot be written (not enforced for root).
    if (geteuid() != 0) {
        ASSERT_EQ(chmod(dir.path.c_str(), 0500), 0);
        EXPECT_THROW(saveSafetensorsFile(path, tensorsB()), IoError);
        chmod(dir.path.c_str(), 0700);
        EXPECT_TRUE(loadSafetensorsFile(path).contains("w"));
    }
    // A missing directory.
    EXPECT_THROW(saveSafetensorsFile(dir.path + "/no/such/dir/m.safetensors", tensorsB()), IoError);
}

TEST(SafetensorsFile, PathIsDirectory) {
    TempDir dir;
    const std::string path = dir.path + "/sub";
    ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
    try {
        saveSafetensorsFile(path, tensorsA());
        FAIL() << "no error";
    } catch (const IoError& e) {
        expectContains(e.what(), {"cannot rename " + path + ".tmp.", " to " + path + ": "});
    }
    EXPECT_FALSE(temporaryLeft(dir.path, "sub"));
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_THROW(loadSafetensorsFile(path), IoError);
}

TEST(SafetensorsFile, MissingAndCorruptFiles) {
    TempDir dir;
    try {
        loadSafetensorsFile(dir.path + "/absent.safetensors");
        FAIL() << "no error";
    } catch (const IoError& e) {
        expectContains(e.what(), {"absent.safetensors", "cannot open"});
    }
    const std::string path = dir.path + "/bad.safetensors";
    std::ofstream(path, std::ios::binary) << "abc";
    try {
        loadSafetensorsFile(path);
        FAIL() << "no error";
    } catch (const FormatError& e) {
        expectContains(e.what(), {"safetensors " + path + ": file is 3 bytes"});
    }
}
#endif  // __EMSCRIPTEN__

}  // namespace safetensors_test
}  // namespace
