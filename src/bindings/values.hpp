// JavaScript values into C++ and back. Options arrive as plain JS objects and
// are parsed here, so unknown option names, wrong types and bad values are
// rejected with a message naming the call and the option, before the model
// changes.
#pragma once

#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gltrain/format_error.hpp"
#include "gltrain/error.hpp"

namespace gltrain::js {

using emscripten::val;

// A plain object: made by a literal, JSON.parse or Object.create(null), not
// an array or a class instance (a typed array, a Map, ...).
bool isPlainObject(const val& v);
// "null", "an array", "a number", "a Float32Array", ...: for messages.
std::string typeName(const val& v);
// A string quoted, a number or boolean as JS prints it, anything else by typeName.
std::string show(const val& v);

// A plain-object options argument: unknown names and wrong types are errors.
class Options {
public:
    Options(val o, std::string where, std::initializer_list<const char*> allowed);
    bool has(const char* k) const { return !o_[k].isUndefined(); }
    val raw(const char* k) const { return o_[k]; }

    double number(const char* k, double def) const;
    int64_t integer(const char* k, int64_t def, int64_t lo = std::numeric_limits<int>::min(),
                    int64_t hi = std::numeric_limits<int>::max()) const;
    bool boolean(const char* k, bool def) const;
    std::string string(const char* k, const std::string& def) const;

private:
    val o_;
    std::string where_;
};

// Float32Array -> floats (one copy, straight into the vector's storage).
std::vector<float> floatsFrom(const val& a, const std::string& what);
bool isIntegerArray(const val& a);
// An ArrayBuffer or any view of one -> its bytes.
std::vector<uint8_t> bytesFrom(const val& a, const std::string& what);
val float32Copy(const float* p, size_t n);
// An ArrayBuffer holding a copy of the bytes (a typed array made from a view copies it).
val arrayBufferCopy(const std::vector<uint8_t>& bytes);
val numberOrNull(double d);

// A JavaScript argument as JSON, for the model-config parsers
// (model_config.hpp), which read layers and compile and fit options for the
// JavaScript API as for model files: one vocabulary, one set of checks. Keys
// whose value is undefined are left out (as absent options); NaN and Infinity
// stay numbers, so the parsers name them. Anything JSON has no form for (a
// function, a typed array, a class instance, a cycle) is an error naming its path.
nlohmann::json jsonFrom(const val& v, const std::string& where, const std::string& path, int depth = 0);
// An options argument as a JSON object (undefined and null: no options).
nlohmann::json jsonOptions(const val& v, const std::string& where);

// Runs a model-config parser: its FormatErrors are ArgumentErrors here (a bad
// argument, not a bad file), with the same message.
template <class F>
auto parseArgument(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const FormatError& e) {
        throw ArgumentError(e.what());
    }
}

}  // namespace gltrain::js
