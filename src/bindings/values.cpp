#include "values.hpp"

#include <emscripten/bind.h>

#include <cmath>

namespace gltrain::js {

bool isPlainObject(const val& v) {
    if (v.isNull() || v.isUndefined() || v.isArray() || v.typeOf().as<std::string>() != "object") return false;
    const val proto = val::global("Object").call<val>("getPrototypeOf", v);
    return proto.isNull() || proto.strictlyEquals(val::global("Object")["prototype"]);
}

std::string typeName(const val& v) {
    if (v.isNull()) return "null";
    if (v.isArray()) return "an array";
    std::string t = v.typeOf().as<std::string>();
    if (t != "object") return "a " + t;
    if (isPlainObject(v)) return "an object";
    const val ctor = v["constructor"];
    const val name = ctor.isUndefined() || ctor.isNull() ? val::undefined() : ctor["name"];
    const std::string n = name.isString() ? name.as<std::string>() : "";
    return n.empty() || n == "Object" ? "an object with a prototype other than Object's" : "a " + n;
}

std::string show(const val& v) {
    if (v.isString()) return "'" + v.as<std::string>() + "'";
    if (v.isNumber() || v.isTrue() || v.isFalse()) return val::global("String")(v).as<std::string>();
    return typeName(v);
}

Options::Options(val o, std::string where, std::initializer_list<const char*> allowed)
    : o_(std::move(o)), where_(std::move(where)) {
    if (o_.isUndefined() || o_.isNull()) {
        o_ = val::object();
        return;
    }
    if (!isPlainObject(o_)) throw ArgumentError(where_ + ": options must be an object, got " + typeName(o_));
    std::vector<std::string> keys =
        emscripten::vecFromJSArray<std::string>(val::global("Object").call<val>("keys", o_));
    for (auto& k : keys) {
        bool ok = false;
        std::string valid;
        for (const char* a : allowed) {
            ok = ok || k == a;
            valid += (valid.empty() ? "" : ", ") + std::string(a);
        }
        if (!ok) throw ArgumentError(where_ + ": unknown option '" + k + "' (valid: " + valid + ")");
    }
}

double Options::number(const char* k, double def) const {
    if (!has(k)) return def;
    val v = o_[k];
    if (!v.isNumber()) throw ArgumentError(where_ + ": " + k + " must be a number, got " + show(v));
    double d = v.as<double>();
    if (!std::isfinite(d)) throw ArgumentError(where_ + ": " + k + " must be finite, got " + show(v));
    return d;
}

int64_t Options::integer(const char* k, int64_t def, int64_t lo, int64_t hi) const {
    if (!has(k)) return def;
    double d = number(k, 0);
    if (d != std::floor(d)) throw ArgumentError(where_ + ": " + k + " must be an integer, got " + show(o_[k]));
    if (d < double(lo) || d > double(hi))
        throw ArgumentError(where_ + ": " + k + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            "], got " + show(o_[k]));
    return int64_t(d);
}

bool Options::boolean(const char* k, bool def) const {
    if (!has(k)) return def;
    val v = o_[k];
    if (!v.isTrue() && !v.isFalse()) throw ArgumentError(where_ + ": " + k + " must be a boolean, got " + show(v));
    return v.isTrue();
}

std::string Options::string(const char* k, const std::string& def) const {
    if (!has(k)) return def;
    val v = o_[k];
    if (!v.isString()) throw ArgumentError(where_ + ": " + k + " must be a string, got " + show(v));
    return v.as<std::string>();
}

std::vector<float> floatsFrom(const val& a, const std::string& what) {
    if (!a.instanceof (val::global("Float32Array")))
        throw ArgumentError(what + " must be a Float32Array, got " + typeName(a));
    const size_t n = a["length"].as<size_t>();
    std::vector<float> v(n);
    // The allocation may have grown the heap; a view of the old heap is detached now.
    if (a["length"].as<size_t>() != n)
        throw ArgumentError(what +
                            " is a view of gltrain's memory that the last allocation invalidated "
                            "(copy it with slice() first)");
    if (n) val(emscripten::typed_memory_view(n, v.data())).call<void>("set", a);
    return v;
}

bool isIntegerArray(const val& a) {
    for (const char* t :
         {"Int32Array", "Uint8Array", "Uint8ClampedArray", "Int8Array", "Uint16Array", "Int16Array", "Uint32Array"})
        if (a.instanceof (val::global(t))) return true;
    return false;
}

std::vector<uint8_t> bytesFrom(const val& a, const std::string& what) {
    val u8 = val::undefined();
    if (a.instanceof (val::global("ArrayBuffer"))) u8 = val::global("Uint8Array").new_(a);
    else if (a.instanceof (val::global("Uint8Array"))) u8 = a;
    else if (val::global("ArrayBuffer").call<bool>("isView", a))
        u8 = val::global("Uint8Array").new_(a["buffer"], a["byteOffset"], a["byteLength"]);
    else throw ArgumentError(what + " must be an ArrayBuffer or a Uint8Array, got " + typeName(a));
    const size_t n = u8["length"].as<size_t>();
    std::vector<uint8_t> v(n);
    if (u8["length"].as<size_t>() != n)
        throw ArgumentError(what + " is a view of gltrain's memory that the last allocation invalidated");
    if (n) val(emscripten::typed_memory_view(n, v.data())).call<void>("set", u8);
    return v;
}

val float32Copy(const float* p, size_t n) {
    return val::global("Float32Array").new_(emscripten::typed_memory_view(n, p));
}
val arrayBufferCopy(const std::vector<uint8_t>& bytes) {
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()))["buffer"];
}

val numberOrNull(double d) { return std::isfinite(d) ? val(d) : val::null(); }

nlohmann::json jsonFrom(const val& v, const std::string& where, const std::string& path, int depth) {
    if (v.isNull() || v.isUndefined()) return nullptr;
    if (v.isTrue() || v.isFalse()) return v.isTrue();
    if (v.isString()) return v.as<std::string>();
    if (v.isNumber()) {
        const double d = v.as<double>();
        // Integers stay integers, so messages show 3, not 3.0.
        if (d == std::floor(d) && std::fabs(d) < 9007199254740992.0) return int64_t(d);
        return d;
    }
    const std::string at = where + ": " + (path.empty() ? "" : path + ": ");
    // (Options nest a few levels, a recorded loss's expression up to 64 ops; a cycle would
    // recurse until the stack ran out.)
    if (depth >= 80) throw ArgumentError(at + "nested more than 80 levels deep (a cycle?)");
    if (v.isArray()) {
        nlohmann::json a = nlohmann::json::array();
        const int n = v["length"].as<int>();
        for (int i = 0; i < n; ++i) a.push_back(jsonFrom(v[i], where, path + "[" + std::to_string(i) + "]", depth + 1));
        return a;
    }
    if (!isPlainObject(v))
        throw ArgumentError(at + "expected a number, string, boolean, array or plain object, got " + typeName(v));
    nlohmann::json o = nlohmann::json::object();
    for (auto& k : emscripten::vecFromJSArray<std::string>(val::global("Object").call<val>("keys", v))) {
        val x = v[k];
        if (!x.isUndefined()) o[k] = jsonFrom(x, where, path.empty() ? k : path + "." + k, depth + 1);
    }
    return o;
}

nlohmann::json jsonOptions(const val& v, const std::string& where) {
    return v.isUndefined() || v.isNull() ? nlohmann::json::object() : jsonFrom(v, where, "");
}

}  // namespace gltrain::js
