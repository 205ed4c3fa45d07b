// Reading and writing safetensors files (Hugging Face's tensor format, which
// PyTorch checkpoints commonly use).
//
// Layout: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON header
//   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [r, c],
//    "data_offsets": [begin, end]}, ...}
// then the data section: raw little-endian values, offsets relative to its start.
//
// The reader validates everything (header length, JSON syntax and types,
// duplicate keys at any level, dtypes, shapes, offsets, and that the tensors
// cover the data section exactly, without gaps or overlap) and throws
// FormatError naming the source, the tensor and the field.
//
// The writer lays tensors out in the order given (no sorting) and writes the
// header keys in that order too, "__metadata__" first; it pads the header with
// spaces to a multiple of 8 bytes, as the reference implementation does, so the
// data section starts 8-byte aligned. saveSafetensorsFile() writes a temporary
// file beside path and renames it over path (writeFileAtomic), so a crash never
// leaves a half-written file and two writers never share a temporary file.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gltrain/error.hpp"
#include "gltrain/file_io.hpp"
#include "gltrain/format_error.hpp"
#include "gltrain/host_matrix.hpp"

namespace gltrain {

// Element types of the safetensors format (the 8-bit float types are not supported).
enum class Dtype { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL };

inline const char* dtypeName(Dtype d) {
    switch (d) {
        case Dtype::F64: return "F64";
        case Dtype::F32: return "F32";
        case Dtype::F16: return "F16";
        case Dtype::BF16: return "BF16";
        case Dtype::I64: return "I64";
        case Dtype::I32: return "I32";
        case Dtype::I16: return "I16";
        case Dtype::I8: return "I8";
        case Dtype::U64: return "U64";
        case Dtype::U32: return "U32";
        case Dtype::U16: return "U16";
        case Dtype::U8: return "U8";
        case Dtype::BOOL: return "BOOL";
    }
    return "?";
}

inline size_t dtypeSize(Dtype d) {
    switch (d) {
        case Dtype::F64:
        case Dtype::I64:
        case Dtype::U64: return 8;
        case Dtype::F32:
        case Dtype::I32:
        case Dtype::U32: return 4;
        case Dtype::F16:
        case Dtype::BF16:
        case Dtype::I16:
        case Dtype::U16: return 2;
        case Dtype::I8:
        case Dtype::U8:
        case Dtype::BOOL: return 1;
    }
    return 0;
}

inline bool isFloatDtype(Dtype d) { return d == Dtype::F64 || d == Dtype::F32 || d == Dtype::F16 || d == Dtype::BF16; }

// The dtype spelled `name` ("F32", ...); false if there is none.
inline bool dtypeFromName(const std::string& name, Dtype& out) {
    for (Dtype d : {Dtype::F64, Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::I64, Dtype::I32, Dtype::I16, Dtype::I8,
                    Dtype::U64, Dtype::U32, Dtype::U16, Dtype::U8, Dtype::BOOL}) {
        if (name == dtypeName(d)) {
            out = d;
            return true;
        }
    }
    return false;
}

namespace st_detail {

inline uint64_t le(const uint8_t* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}
inline void putLe(uint8_t* p, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(v >> (8 * i));
}

inline float halfToFloat(uint16_t h) {
    const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float v;
    if (exp == 0) v = std::ldexp(float(mant), -24);
    else if (exp == 31) v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else v = std::ldexp(float(mant | 0x400), exp - 25);
    return sign ? -v : v;
}

// Product of the dims, or false on a negative dim or overflow of int64 (a
// zero dim makes the product 0 whatever the others are).
inline bool numel(const std::vector<int64_t>& shape, int64_t& out) {
    uint64_t n = 1;
    for (int64_t d : shape)
        if (d < 0) return false;
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return (out = 0), true;
    for (int64_t d : shape) {
        if (n > uint64_t(std::numeric_limits<int64_t>::max()) / uint64_t(d)) return false;
        n *= uint64_t(d);
    }
    out = int64_t(n);
    return true;
}

inline std::string shapeText(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace st_detail

// One tensor: its dtype, shape and raw little-endian bytes.
struct TensorData {
    // The element type.
    Dtype dtype = Dtype::F32;
    std::vector<int64_t> shape;  // [] is a scalar (one value)
    std::vector<uint8_t> bytes;  // numel() * dtypeSize(dtype) bytes, little-endian

    TensorData() = default;
    // Throws ArgumentError unless bytes.size() == product(shape) * dtypeSize(dtype).
    TensorData(Dtype d, std::vector<int64_t> s, std::vector<uint8_t> b)
        : dtype(d), shape(std::move(s)), bytes(std::move(b)) {
        int64_t n = 0;
        if (!st_detail::numel(shape, n) || uint64_t(n) > std::numeric_limits<size_t>::max() / dtypeSize(dtype))
            throw ArgumentError("TensorData: bad shape " + st_detail::shapeText(shape) +
                                " (negative dimension or too many elements)");
        if (bytes.size() != size_t(n) * dtypeSize(dtype))
            throw ArgumentError("TensorData: " + std::to_string(bytes.size()) + " bytes for " + dtypeName(dtype) +
                                " shape " + st_detail::shapeText(shape) + ", expected " +
                                std::to_string(size_t(n) * dtypeSize(dtype)));
    }

    // A float32 tensor of `shape` holding `values`.
    static TensorData f32(std::vector<int64_t> shape, const std::vector<float>& values) {
        std::vector<uint8_t> b(values.size() * 4);
        for (size_t i = 0; i < values.size(); ++i) {
            uint32_t bits;
            std::memcpy(&bits, &values[i], 4);
            st_detail::putLe(&b[4 * i], bits, 4);
        }
        return TensorData(Dtype::F32, std::move(shape), std::move(b));
    }
    // A float32 tensor [rows, cols] holding m.
    static TensorData fromMatrix(const HostMatrix& m) { return f32({m.rows, m.cols}, m.data); }
    // An int64 tensor of `shape` holding `values`.
    static TensorData i64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
        std::vector<uint8_t> b(values.size() * 8);
        for (size_t i = 0; i < values.size(); ++i) st_detail::putLe(&b[8 * i], uint64_t(values[i]), 8);
        return TensorData(Dtype::I64, std::move(shape), std::move(b));
    }
    // An int32 tensor of `shape` holding `values`.
    static TensorData i32(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
        std::vector<uint8_t> b(values.size() * 4);
        for (size_t i = 0; i < values.size(); ++i) st_detail::putLe(&b[4 * i], uint32_t(values[i]), 4);
        return TensorData(Dtype::I32, std::move(shape), std::move(b));
    }

    // The number of elements.
    size_t numel() const { return bytes.size() / dtypeSize(dtype); }

    // Every value converted to float (any dtype; integers beyond 2^24 round).
    std::vector<float> floats() const {
        const size_t n = numel(), w = dtypeSize(dtype);
        std::vector<float> out(n);
        const uint8_t* p = bytes.data();
        for (size_t i = 0; i < n; ++i, p += w) {
            const uint64_t v = st_detail::le(p, w);
            switch (dtype) {
                case Dtype::F64: {
                    double d;
                    std::memcpy(&d, &v, 8);
                    out[i] = float(d);
                    break;
                }
                case Dtype::F32: {
                    const uint32_t u = uint32_t(v);
                    std::memcpy(&out[i], &u, 4);
                    break;
                }
                case Dtype::F16: out[i] = st_detail::halfToFloat(uint16_t(v)); break;
                case Dtype::BF16: {
                    const uint32_t u = uint32_t(v) << 16;
                    std::memcpy(&out[i], &u, 4);
                    break;
                }
                case Dtype::I64: out[i] = float(int64_t(v)); break;
                case Dtype::I32: out[i] = float(int32_t(uint32_t(v))); break;
                case Dtype::I16: out[i] = float(int16_t(uint16_t(v))); break;
                case Dtype::I8: out[i] = float(int8_t(uint8_t(v))); break;
                case Dtype::U64:
                case Dtype::U32:
                case Dtype::U16:
                case Dtype::U8:
                case Dtype::BOOL: out[i] = float(v); break;
            }
        }
        return out;
    }

    // Every value as int64 (integer and BOOL dtypes only; U64 values above
    // INT64_MAX throw ArgumentError).
    std::vector<int64_t> ints() const {
        if (isFloatDtype(dtype))
            throw ArgumentError(std::string("TensorData::ints: dtype ") + dtypeName(dtype) + " is not an integer type");
        const size_t n = numel(), w = dtypeSize(dtype);
        std::vector<int64_t> out(n);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t v = st_detail::le(bytes.data() + i * w, w);
            switch (dtype) {
                case Dtype::I32: out[i] = int32_t(uint32_t(v)); break;
                case Dtype::I16: out[i] = int16_t(uint16_t(v)); break;
                case Dtype::I8: out[i] = int8_t(uint8_t(v)); break;
                case Dtype::U64:
                    if (v > uint64_t(std::numeric_limits<int64_t>::max()))
                        throw ArgumentError("TensorData::ints: U64 value " + std::to_string(v) + " at index " +
                                            std::to_string(i) + " exceeds int64");
                    out[i] = int64_t(v);
                    break;
                default: out[i] = int64_t(v); break;  // I64 (two's complement), U32, U16, U8, BOOL
            }
        }
        return out;
    }

    // As a HostMatrix: rank 2 -> rows x cols, rank 1 [n] -> 1 x n, rank 0 -> 1 x 1.
    HostMatrix toMatrix() const {
        if (shape.size() > 2)
            throw ArgumentError("TensorData::toMatrix: rank " + std::to_string(shape.size()) + " shape " +
                                st_detail::shapeText(shape) + ", expected rank 0, 1 or 2");
        const int64_t r = shape.size() == 2 ? shape[0] : 1;
        const int64_t c = shape.size() == 2 ? shape[1] : shape.size() == 1 ? shape[0] : 1;
        if (r > std::numeric_limits<int>::max() || c > std::numeric_limits<int>::max())
            throw ArgumentError("TensorData::toMatrix: shape " + st_detail::shapeText(shape) + " exceeds int");
        return HostMatrix(int(r), int(c), floats());
    }
};

inline bool operator==(const TensorData& a, const TensorData& b) {
    return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}
inline bool operator!=(const TensorData& a, const TensorData& b) { return !(a == b); }

// A parsed safetensors file.
struct SafetensorsFile {
    // The tensors by name.
    std::map<std::string, TensorData> tensors;
    // The header's __metadata__ (string to string).
    std::map<std::string, std::string> metadata;
    std::vector<std::string> names;  // tensor names in data-section order
    std::string source;              // file name, for messages

    // Whether the file holds a tensor called `name`.
    bool contains(const std::string& name) const { return tensors.count(name) != 0; }
    // The tensor called name; ArgumentError naming it and the source if absent.
    const TensorData& at(const std::string& name) const {
        auto it = tensors.find(name);
        if (it == tensors.end())
            throw ArgumentError("safetensors " + source + ": no tensor \"" + name + "\" (" +
                                std::to_string(tensors.size()) + " tensors in the file)");
        return it->second;
    }
};

// Largest header accepted by the reader.
constexpr uint64_t kSafetensorsMaxHeaderBytes = 100000000;

namespace st_detail {

// A string quoted for a message, cut short if long.
inline std::string quote(const std::string& s) { return "\"" + (s.size() <= 80 ? s : s.substr(0, 77) + "...") + "\""; }
// A JSON value shown in a message, cut short if long.
inline std::string brief(const nlohmann::json& j) {
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

// A non-negative JSON integer, or false.
inline bool unsignedValue(const nlohmann::json& j, uint64_t& out) {
    if (j.is_number_unsigned()) {
        out = j.get<uint64_t>();
        return true;
    }
    if (j.is_number_integer() && j.get<int64_t>() >= 0) {
        out = uint64_t(j.get<int64_t>());
        return true;
    }
    return false;
}

}  // namespace st_detail

// Parses a safetensors file held in data[0, size); `source` names it in messages.
inline SafetensorsFile parseSafetensors(const uint8_t* data, size_t size, const std::string& source = "<memory>") {
    using nlohmann::json;
    using st_detail::quote;
    const std::string pre = "safetensors " + source + ": ";
    if (size < 8)
        throw FormatError(pre + "file is " + std::to_string(size) +
                          " bytes, shorter than the 8-byte header length at byte 0");
    const uint64_t n = st_detail::le(data, 8);
    if (n > kSafetensorsMaxHeaderBytes)
        throw FormatError(pre + "header length " + std::to_string(n) + " at byte 0 is absurd (limit " +
                          std::to_string(kSafetensorsMaxHeaderBytes) + " bytes)");
    if (n > size - 8)
        throw FormatError(pre + "header length " + std::to_string(n) + " at byte 0 exceeds the " +
                          std::to_string(size - 8) + " bytes after it");
    const uint8_t* headerBegin = data + 8;
    const uint8_t* dataBegin = headerBegin + n;
    const uint64_t dataSize = size - 8 - n;

    // Parse, rejecting duplicate keys at every level and nesting deeper than a
    // valid header has (top object > tensor entry > shape array).
    struct Frame {
        bool object;
        std::string context;
        std::set<std::string> keys;
        std::string lastKey;
    };
    std::vector<Frame> stack;
    auto callback = [&](int, json::parse_event_t event, json& parsed) -> bool {
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start: {
                std::string context;
                if (stack.empty()) context = "the header";
                else if (stack.size() == 1)
                    context = stack.back().lastKey == "__metadata__" ? "__metadata__"
                                                                     : "tensor " + quote(stack.back().lastKey);
                else context = stack.back().context + " field " + quote(stack.back().lastKey);
                if (stack.size() >= 3)
                    throw FormatError(pre + "header nests too deeply in " + context +
                                      " (a safetensors header has at most 3 levels: header, tensor entry, shape)");
                stack.push_back({event == json::parse_event_t::object_start, context, {}, {}});
                break;
            }
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end: stack.pop_back(); break;
            case json::parse_event_t::key: {
                const std::string& k = parsed.get_ref<const std::string&>();
                Frame& f = stack.back();
                if (!f.keys.insert(k).second)
                    throw FormatError(pre + "duplicate key " + quote(k) + " in " + f.context +
                                      (stack.size() == 1 ? " (tensor names must be unique)" : ""));
                f.lastKey = k;
                break;
            }
            case json::parse_event_t::value: break;
        }
        return true;
    };
    json header;
    try {
        header = json::parse(headerBegin, dataBegin, callback);
    } catch (const json::exception& e) {
        throw FormatError(pre + "header (" + std::to_string(n) + " bytes from byte 8) is not valid JSON: " + e.what());
    }
    if (!header.is_object()) throw FormatError(pre + "header is a JSON " + header.type_name() + ", expected an object");

    SafetensorsFile file;
    file.source = source;
    struct Span {
        uint64_t begin, end;
        const std::string* name;
    };
    std::vector<Span> spans;
    for (auto it = header.begin(); it != header.end(); ++it) {
        const std::string& name = it.key();
        const json& entry = it.value();
        if (name == "__metadata__") {
            if (!entry.is_object())
                throw FormatError(pre + "__metadata__ is a " + entry.type_name() +
                                  ", expected an object of string values");
            for (auto m = entry.begin(); m != entry.end(); ++m) {
                if (!m.value().is_string())
                    throw FormatError(pre + "__metadata__ value for key " + quote(m.key()) + " is a " +
                                      m.value().type_name() + " (" + st_detail::brief(m.value()) +
                                      "), expected a string");
                file.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        const std::string t = "tensor " + quote(name) + ": ";
        if (!entry.is_object())
            throw FormatError(pre + t + "entry is a " + entry.type_name() +
                              ", expected an object with dtype, shape and data_offsets");
        for (auto f = entry.begin(); f != entry.end(); ++f)
            if (f.key() != "dtype" && f.key() != "shape" && f.key() != "data_offsets")
                throw FormatError(pre + t + "unknown field " + quote(f.key()) +
                                  " (expected dtype, shape and data_offsets)");
        for (const char* field : {"dtype", "shape", "data_offsets"})
            if (!entry.contains(field)) throw FormatError(pre + t + "missing field \"" + field + "\"");

        const json& jd = entry["dtype"];
        if (!jd.is_string())
            throw FormatError(pre + t + "field \"dtype\" is a " + jd.type_name() + " (" + st_detail::brief(jd) +
                              "), expected a string");
        TensorData td;
        if (!dtypeFromName(jd.get<std::string>(), td.dtype))
            throw FormatError(pre + t + "unknown dtype " + quote(jd.get<std::string>()) +
                              " in field \"dtype\" (expected F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, "
                              "U8 or BOOL)");

        const json& js = entry["shape"];
        if (!js.is_array())
            throw FormatError(pre + t + "field \"shape\" is a " + js.type_name() + " (" + st_detail::brief(js) +
                              "), expected an array of non-negative integers");
        uint64_t count = 1;
        bool overflow = false;
        for (size_t i = 0; i < js.size(); ++i) {
            uint64_t d = 0;
            if (!st_detail::unsignedValue(js[i], d) || d > uint64_t(std::numeric_limits<int64_t>::max()))
                throw FormatError(pre + t + "shape[" + std::to_string(i) + "] is " + st_detail::brief(js[i]) +
                                  ", expected a non-negative integer");
            td.shape.push_back(int64_t(d));
            if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d) overflow = true;
            count = overflow ? count : count * d;
        }
        const uint64_t width = dtypeSize(td.dtype);
        // A zero dimension makes the tensor empty even if the others overflowed.
        if (std::find(td.shape.begin(), td.shape.end(), 0) != td.shape.end()) count = 0, overflow = false;
        if (overflow || count > std::numeric_limits<uint64_t>::max() / width)
            throw FormatError(pre + t + "shape " + st_detail::shapeText(td.shape) + " of " + dtypeName(td.dtype) +
                              " has more bytes than fit in 64 bits");
        const uint64_t nbytes = count * width;

        const json& jo = entry["data_offsets"];
        uint64_t begin = 0, end = 0;
        if (!jo.is_array() || jo.size() != 2 || !st_detail::unsignedValue(jo[0], begin) ||
            !st_detail::unsignedValue(jo[1], end))
            throw FormatError(pre + t + "field \"data_offsets\" is " + st_detail::brief(jo) +
                              ", expected an array of two non-negative integers [begin, end]");
        if (begin > end)
            throw FormatError(pre + t + "data_offsets [" + std::to_string(begin) + "," + std::to_string(end) +
                              "] have begin > end");
        if (end > dataSize)
            throw FormatError(pre + t + "data_offsets end " + std::to_string(end) + " is beyond the data section of " +
                              std::to_string(dataSize) + " bytes (which starts at byte " + std::to_string(8 + n) + ")");
        if (end - begin != nbytes)
            throw FormatError(pre + t + "shape " + st_detail::shapeText(td.shape) + " of " + dtypeName(td.dtype) +
                              " (" + std::to_string(width) + " bytes each) needs " + std::to_string(nbytes) +
                              " bytes but data_offsets [" + std::to_string(begin) + "," + std::to_string(end) +
                              "] span " + std::to_string(end - begin));
        td.bytes.assign(dataBegin + begin, dataBegin + end);
        auto placed = file.tensors.emplace(name, std::move(td)).first;
        spans.push_back({begin, end, &placed->first});
    }

    // The tensors must tile the data section: no gaps, no overlap.
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return std::tie(a.begin, a.end, *a.name) < std::tie(b.begin, b.end, *b.name);
    });
    uint64_t cursor = 0;
    const std::string* previous = nullptr;
    auto range = [](const Span& s) { return "[" + std::to_string(s.begin) + "," + std::to_string(s.end) + "]"; };
    for (const Span& s : spans) {
        if (s.begin < cursor)
            throw FormatError(pre + "tensor " + quote(*s.name) + " data_offsets " + range(s) + " overlap tensor " +
                              quote(*previous) + ", which ends at data byte " + std::to_string(cursor));
        if (s.begin > cursor)
            throw FormatError(pre + "gap in the data section: bytes " + std::to_string(cursor) + ".." +
                              std::to_string(s.begin) + " belong to no tensor (before tensor " + quote(*s.name) +
                              " data_offsets " + range(s) + ")");
        cursor = s.end;
        previous = s.name;
        file.names.push_back(*s.name);
    }
    if (cursor != dataSize)
        throw FormatError(pre + "data section has " + std::to_string(dataSize - cursor) +
                          " bytes after the last tensor" + (previous ? " " + quote(*previous) : std::string()) +
                          " ends at data byte " + std::to_string(cursor) + " (tensors must cover it exactly)");
    return file;
}

inline SafetensorsFile parseSafetensors(const std::vector<uint8_t>& bytes, const std::string& source = "<memory>") {
    return parseSafetensors(bytes.data(), bytes.size(), source);
}

// Reads and parses a safetensors file.
inline SafetensorsFile loadSafetensorsFile(const std::string& path) {
    const std::vector<uint8_t> bytes = readFile(path, "safetensors");
    return parseSafetensors(bytes.data(), bytes.size(), path);
}

// Serializes tensors (laid out in the given order) and string metadata.
// Throws ArgumentError on duplicate or reserved ("__metadata__") names,
// inconsistent TensorData, or names/metadata that are not valid UTF-8.
inline std::vector<uint8_t> serializeSafetensors(const std::vector<std::pair<std::string, TensorData>>& tensors,
                                                 const std::map<std::string, std::string>& metadata = {}) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::set<std::string> seen;
    uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {
        if (name == "__metadata__")
            throw ArgumentError("serializeSafetensors: \"__metadata__\" is reserved and cannot name a tensor");
        if (!seen.insert(name).second)
            throw ArgumentError("serializeSafetensors: duplicate tensor name " + st_detail::quote(name));
        int64_t n = 0;
        if (!st_detail::numel(t.shape, n) || uint64_t(n) > std::numeric_limits<size_t>::max() / dtypeSize(t.dtype) ||
            t.bytes.size() != size_t(n) * dtypeSize(t.dtype))
            throw ArgumentError("serializeSafetensors: tensor " + st_detail::quote(name) + " has " +
                                std::to_string(t.bytes.size()) + " bytes, which does not match " + dtypeName(t.dtype) +
                                " shape " + st_detail::shapeText(t.shape));
        header[name] = {{"dtype", dtypeName(t.dtype)},
                        {"shape", t.shape},
                        {"data_offsets", nlohmann::ordered_json::array({offset, offset + uint64_t(t.bytes.size())})}};
        offset += t.bytes.size();
    }
    std::string text;
    try {
        text = header.dump();
    } catch (const nlohmann::json::exception& e) {
        throw ArgumentError(std::string("serializeSafetensors: a tensor name or metadata string is not valid UTF-8: ") +
                            e.what());
    }
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<uint8_t> out(8 + text.size() + offset);
    st_detail::putLe(out.data(), text.size(), 8);
    std::memcpy(out.data() + 8, text.data(), text.size());
    uint8_t* p = out.data() + 8 + text.size();
    for (const auto& nt : tensors) {
        if (!nt.second.bytes.empty()) std::memcpy(p, nt.second.bytes.data(), nt.second.bytes.size());
        p += nt.second.bytes.size();
    }
    return out;
}

// Serializes and writes to path atomically: the bytes go to path + ".tmp",
// which is flushed, synced and renamed over path. On any failure the .tmp is
// removed, path is left as it was, and IoError is thrown.
inline void saveSafetensorsFile(const std::string& path, const std::vector<std::pair<std::string, TensorData>>& tensors,
                                const std::map<std::string, std::string>& metadata = {}) {
    writeFileAtomic(path, serializeSafetensors(tensors, metadata), "safetensors");
}

}  // namespace gltrain
