// Model descriptions in JSON: the input shape, the layers, the compile options
// and the fit options of a Sequential, in the vocabulary of the JavaScript API
// (web/gltrain.d.ts), so one description serves `gltrain train model.json`
// and `model.add(layer)` / `model.compile(options)` in the browser:
//
//   {
//     "description": "Fashion-MNIST MLP",                  (optional, free text)
//     "input": [28, 28, 1],                                (or a flat size: 784)
//     "layers": [
//       {"type": "flatten"},
//       {"type": "dense", "units": 128, "activation": "relu"},
//       {"type": "dense", "units": 10}
//     ],
//     "compile": {"optimizer": {"type": "adam", "lr": 0.001}, "loss": "softmax_cross_entropy",
//                 "schedule": {"type": "cosine", "totalSteps": 1000}, "clipNorm": 1, "seed": 1},
//     "fit": {"epochs": 2, "batchSize": 128, "validationSplit": 0.1, "lossEvery": 10}
//   }
//
// A functional model's layers name what they read ("inputs": ["dense_0", "input"]);
// several inputs are "inputs": [{"name": "image", "shape": [28, 28, 1]}, ...] (layers
// read them by name), several outputs "outputs": ["classes", "box"] (layer names),
// with "loss": [one per output] and "lossWeights" in "compile". A shared
// layer's later call is {"shares": "encoder", "inputs": ["input_b"]}: the
// layer "encoder" (its options and weights) applied again, named "encoder@1"
// (its k-th call: "encoder@k").
//
// Everything is checked while parsing, before a model exists: an error is a
// FormatError whose message names the source and the JSON path of the bad
// value, says what was expected and what was found
// ("model.json: layers[2].units: expected a positive integer, got -3").
// Unknown keys and duplicate keys are errors rather than ignored, so a typo
// never silently trains a different model. Shapes are checked by
// Sequential::compile (buildModel), whose errors name the layer.
//
// A layer object's keys, their checks and defaults are its header's field
// table (gltrain/layers/): the parser, layerToJson and the JavaScript API
// read that one table.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "gltrain/file_io.hpp"
#include "gltrain/loss_expression.hpp"
#include "gltrain/format_error.hpp"
#include "gltrain/sequential.hpp"

namespace gltrain {

// A model file: input, layers, compile and fit options (the JavaScript API's vocabulary).
struct ModelConfig {
    std::string source;  // where it came from (file name), for messages
    // Free text.
    std::string description;
    Shape3 input;  // a flat input of n values is {1, 1, n}; the first of several
    // Several inputs ("inputs": [{"name", "shape"}, ...]): each one's shape and name (empty: "input" alone).
    std::vector<Shape3> inputs;
    // Their names, as layers' "inputs" name them.
    std::vector<std::string> inputNames;
    // The layers, in order.
    std::vector<Layer> layers;
    // What each layer reads ("inputs": earlier layers' names, "input" for the
    // model's input or an input's name), as indices (negative: input -1 - index,
    // graph::LayerGeometry::modelInput); empty: the layer before.
    std::vector<std::vector<int>> inbound;
    // The output layers ("outputs": their names), in order; empty: the last layer.
    std::vector<int> outputs;
    // For each layer of a functional model, the layer whose weights it shares
    // ("shares": its name; -1: its own; model/symbolic.hpp's LayerNode::shares).
    std::vector<int> shares;
    // The "compile" object's options.
    CompileOptions compile;
    FitOptions fit;  // validationX / validationY stay null
};

namespace model_config_detail {

inline std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// How a JSON value reads in a message: numbers and literals as written,
// strings quoted, containers by kind.
inline std::string show(const nlohmann::json& v) {
    if (v.is_string()) return "the string " + v.dump();
    // (JSON text has no such numbers, but JavaScript arguments do: dump() says null.)
    if (v.is_number_float() && !std::isfinite(v.get<double>()))
        return std::isnan(v.get<double>()) ? "NaN" : v.get<double>() > 0 ? "Infinity" : "-Infinity";
    if (v.is_object()) return "an object";
    if (v.is_array()) return "an array";
    return v.dump();
}

// "source: path: what" (no path: "source: what").
[[noreturn]] inline void failAt(const std::string& source, const std::string& path, const std::string& what) {
    throw FormatError(source + ": " + (path.empty() ? "" : path + ": ") + what);
}
inline std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

// A JSON object at `path` whose keys must all be in an allowed list; typed
// reads that name the key's path in every error.
class Object {
public:
    Object(const nlohmann::json& j, std::string source, std::string path, const std::vector<const char*>& allowed)
        : j_(j), source_(std::move(source)), path_(std::move(path)) {
        if (!j_.is_object()) fail(path_, "expected an object, got " + show(j_));
        for (auto it = j_.begin(); it != j_.end(); ++it) {
            bool ok = false;
            std::string valid;
            for (const char* a : allowed) {
                ok = ok || it.key() == a;
                valid += (valid.empty() ? "" : ", ") + std::string(a);
            }
            if (!ok) fail(at(it.key()), "unknown key (valid: " + valid + ")");
        }
    }

    bool has(const char* k) const { return j_.contains(k); }
    const nlohmann::json& raw(const char* k) const { return j_.at(k); }
    std::string at(const std::string& k) const { return join(path_, k); }
    const std::string& path() const { return path_; }
    const std::string& source() const { return source_; }

    [[noreturn]] void fail(const std::string& path, const std::string& what) const { failAt(source_, path, what); }

    // An integer in [lo, hi]; 3.0 counts as 3 (JavaScript cannot tell them apart).
    int integer(const char* k, int def, long long lo, long long hi = std::numeric_limits<int>::max()) const {
        if (!has(k)) return def;
        const nlohmann::json& v = j_.at(k);
        const std::string expect = Range{double(lo), double(hi)}.expected(true);
        if (!v.is_number()) fail(at(k), "expected " + expect + ", got " + show(v));
        const double d = v.get<double>();
        if (!(d == std::floor(d) && d >= double(lo) && d <= double(hi)))
            fail(at(k), "expected " + expect + ", got " + show(v));
        return int(d);
    }
    long long integer64(const char* k, long long def, long long lo, long long hi) const {
        if (!has(k)) return def;
        const nlohmann::json& v = j_.at(k);
        const std::string expect = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        if (!v.is_number()) fail(at(k), "expected " + expect + ", got " + show(v));
        const double d = v.get<double>();
        if (!(d == std::floor(d) && d >= double(lo) && d <= double(hi)))
            fail(at(k), "expected " + expect + ", got " + show(v));
        return (long long)d;
    }
    // A number that is finite as a 32-bit float and in `r`; `note` adds to
    // what the message says is expected ("a number >= 0 (0: no clipping)").
    float real(const char* k, float def, Range r = Range{}, const char* note = nullptr) const {
        if (!has(k)) return def;
        const nlohmann::json& v = j_.at(k);
        const std::string expect = r.expected(false) + (note ? std::string(" (") + note + ")" : "");
        if (!v.is_number()) fail(at(k), "expected " + expect + ", got " + show(v));
        const double d = v.get<double>();
        if (!std::isfinite(float(d)) || !r.contains(d)) fail(at(k), "expected " + expect + ", got " + show(v));
        return float(d);
    }
    bool boolean(const char* k, bool def) const {
        if (!has(k)) return def;
        const nlohmann::json& v = j_.at(k);
        if (!v.is_boolean()) fail(at(k), "expected true or false, got " + show(v));
        return v.get<bool>();
    }
    std::string string(const char* k, const std::string& def) const {
        if (!has(k)) return def;
        const nlohmann::json& v = j_.at(k);
        if (!v.is_string()) fail(at(k), "expected a string, got " + show(v));
        return v.get<std::string>();
    }
    // An array of non-empty strings (absent: none).
    std::vector<std::string> strings(const char* k) const {
        std::vector<std::string> out;
        if (!has(k)) return out;
        const nlohmann::json& v = j_.at(k);
        if (!v.is_array()) fail(at(k), "expected an array of strings, got " + show(v));
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_string() || v[i].get<std::string>().empty())
                fail(at(k) + "[" + std::to_string(i) + "]", "expected a non-empty string, got " + show(v[i]));
            out.push_back(v[i].get<std::string>());
        }
        return out;
    }
    // One of `names` (case-insensitive), returned as its index in the list.
    int choice(const char* k, int def, std::initializer_list<const char*> names) const {
        if (!has(k)) return def;
        const std::string s = lower(string(k, ""));
        std::string valid;
        int i = 0, found = -1;
        for (const char* n : names) {
            if (s == n) found = i;
            valid += (valid.empty() ? "" : ", ") + std::string(n);
            ++i;
        }
        if (found < 0) fail(at(k), "unknown value '" + string(k, "") + "' (valid: " + valid + ")");
        return found;
    }

private:
    const nlohmann::json& j_;
    std::string source_, path_;
};

using ranges::kPositive;
inline constexpr Range kNonNegative{0};
using ranges::kUnitIntervalOpen;

inline Activation activation(const Object& o, const char* k, Activation def) {
    if (!o.has(k)) return def;
    const std::string name = o.string(k, "");
    Activation a{};
    if (findActivation(name, a)) return a;
    o.fail(o.at(k), "unknown activation '" + name + "' (valid: " + activationNameList() + ")");
}

// "he_uniform", {"type": "he_uniform"}, {"type": "constant", "value": 0.1},
// {"type": "random_normal", "stddev": 0.02, "mean": 0} or {"type": "orthogonal", "gain": 1}.
inline Initializer initializer(const Object& o, const char* k, Initializer def) {
    if (!o.has(k)) return def;
    const nlohmann::json& v = o.raw(k);
    const char* const valid =
        "glorot_uniform, glorot_normal, he_uniform, he_normal, zeros, orthogonal, {\"type\": \"constant\", "
        "\"value\": x}, {\"type\": \"random_normal\", \"stddev\": s, \"mean\": m} or {\"type\": \"orthogonal\", "
        "\"gain\": g}";
    std::string type, path = o.at(k);
    if (v.is_string()) {
        type = v.get<std::string>();
        if (lower(type) == "random_normal")
            o.fail(path, "random_normal needs its stddev: {\"type\": \"random_normal\", \"stddev\": s}");
    } else {
        Object io(v, o.source(), path, {"type", "value", "stddev", "mean", "gain"});
        if (!io.has("type")) io.fail(path, std::string("needs a type (") + valid + ")");
        type = io.string("type", "");
        path = io.at("type");
        const bool constant = lower(type) == "constant", normal = lower(type) == "random_normal";
        if (constant) {
            if (!io.has("value")) io.fail(path, "a constant initializer needs a value");
            return Initializer::constant(io.real("value", 0.0f));
        }
        if (normal) {
            if (!io.has("stddev")) io.fail(path, "a random_normal initializer needs a stddev");
            return Initializer::randomNormal(io.real("stddev", 0.0f, kNonNegative, "the standard deviation"),
                                             io.real("mean", 0.0f));
        }
        if (lower(type) == "orthogonal") return Initializer::orthogonal(io.real("gain", 1.0f));
        if (io.has("value")) io.fail(io.at("value"), "value is only for {\"type\": \"constant\"}");
        if (io.has("gain")) io.fail(io.at("gain"), "gain is only for {\"type\": \"orthogonal\"}");
        for (const char* f : {"stddev", "mean"})
            if (io.has(f)) io.fail(io.at(f), std::string(f) + " is only for {\"type\": \"random_normal\"}");
    }
    try {
        return Initializer::parse(lower(type));
    } catch (const ArgumentError&) {
        o.fail(path, "unknown initializer '" + type + "' (valid: " + valid + ")");
    }
}

inline Padding padding(const Object& o, const char* k, Padding def) {
    if (!o.has(k)) return def;
    const std::string name = o.string(k, "");
    std::string valid;
    for (Padding p : kAllPaddings) {
        if (lower(name) == paddingName(p)) return p;
        valid += (valid.empty() ? "" : ", ") + std::string(paddingName(p));
    }
    o.fail(o.at(k), "unknown value '" + name + "' (valid: " + valid + ")");
}

// A layer field's value from the JSON object, checked; its default when absent.
inline int fieldValue(const Object& o, const char* k, int def, Range r) {
    return o.integer(k, def, (long long)r.lo, (long long)r.hi);
}
// n (for n x n) or [h, w], each in r: a kernel size, strides or a dilation.
inline Size2 fieldValue(const Object& o, const char* k, Size2 def, Range r) {
    if (!o.has(k)) return def;
    const nlohmann::json& v = o.raw(k);
    if (!v.is_array()) {
        const int n = fieldValue(o, k, def.h, r);
        return {n, n};
    }
    if (v.size() != 2)
        o.fail(o.at(k), "expected " + r.expected(true) + " or [height, width], got " + show(v) + " of " +
                            std::to_string(v.size()) + " values");
    auto axis = [&](size_t i) {  // as Object::integer reads a number
        const nlohmann::json& d = v[i];
        const double x = d.is_number() ? d.get<double>() : 0.5;
        if (!(x == std::floor(x) && r.contains(x)))
            o.fail(o.at(k) + "[" + std::to_string(i) + "]", "expected " + r.expected(true) + ", got " + show(d));
        return int(x);
    };
    return {axis(0), axis(1)};
}
// An integer in r at o[k][i] (or o[k][i][j]), as Object::integer reads a number.
inline int fieldEntry(const Object& o, const char* k, const nlohmann::json& d, const std::string& at, Range r) {
    const double x = d.is_number() ? d.get<double>() : 0.5;
    if (!(x == std::floor(x) && r.contains(x)))
        o.fail(o.at(k) + at, "expected " + r.expected(true) + ", got " + show(d));
    return int(x);
}
// [a, b, c]: 1 to 3 integers, each in r (Reshape's targetShape, Permute's dims).
inline std::vector<int> fieldValue(const Object& o, const char* k, const std::vector<int>& def, Range r) {
    if (!o.has(k)) return def;
    const nlohmann::json& v = o.raw(k);
    if (!v.is_array() || v.empty() || v.size() > 3)
        o.fail(o.at(k), "expected a list of 1 to 3 integers, got " + show(v));
    std::vector<int> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(fieldEntry(o, k, v[i], "[" + std::to_string(i) + "]", r));
    return out;
}
// n, [h, w] or [[top, bottom], [left, right]], each in r (ZeroPadding2D's padding, Cropping2D's cropping).
inline Margins fieldValue(const Object& o, const char* k, const Margins& def, Range r) {
    if (!o.has(k)) return def;
    const nlohmann::json& v = o.raw(k);
    if (!v.is_array()) return Margins(fieldEntry(o, k, v, "", r));
    const char* forms = "n, [h, w] or [[top, bottom], [left, right]]";
    if (v.size() != 2) o.fail(o.at(k), std::string("expected ") + forms + ", got " + show(v));
    if (!v[0].is_array() && !v[1].is_array())
        return {fieldEntry(o, k, v[0], "[0]", r), fieldEntry(o, k, v[1], "[1]", r)};
    int sides[4];
    for (size_t a = 0; a < 2; ++a) {
        if (!v[a].is_array() || v[a].size() != 2)
            o.fail(o.at(k), std::string("expected ") + forms + ", got " + show(v));
        for (size_t e = 0; e < 2; ++e)
            sides[a * 2 + e] = fieldEntry(o, k, v[a][e], "[" + std::to_string(a) + "][" + std::to_string(e) + "]", r);
    }
    return {sides[0], sides[1], sides[2], sides[3]};
}
inline Interpolation fieldValue(const Object& o, const char* k, Interpolation def, Range) {
    if (!o.has(k)) return def;
    const std::string name = o.string(k, "");
    for (Interpolation i : kAllInterpolations)
        if (lower(name) == interpolationName(i)) return i;
    o.fail(o.at(k), "unknown value '" + name + "' (valid: nearest, bilinear)");
}
inline float fieldValue(const Object& o, const char* k, float def, Range r) { return o.real(k, def, r); }
inline Activation fieldValue(const Object& o, const char* k, Activation def, Range) { return activation(o, k, def); }
inline Padding fieldValue(const Object& o, const char* k, Padding def, Range) { return padding(o, k, def); }
inline Initializer fieldValue(const Object& o, const char* k, const Initializer& def, Range) {
    return initializer(o, k, def);
}
inline std::string fieldValue(const Object& o, const char* k, const std::string& def, Range) {
    return o.string(k, def);
}
inline bool fieldValue(const Object& o, const char* k, bool def, Range) { return o.boolean(k, def); }

// A layer field's value as JSON, as fieldValue reads it back.
inline nlohmann::json fieldJson(int v) { return v; }
inline nlohmann::json fieldJson(Size2 v) { return v.square() ? nlohmann::json(v.h) : nlohmann::json{v.h, v.w}; }
inline nlohmann::json fieldJson(const std::vector<int>& v) { return v; }
inline nlohmann::json fieldJson(const Margins& m) {
    if (m.even()) return m.top;
    if (m.symmetric()) return {m.top, m.left};
    return {{m.top, m.bottom}, {m.left, m.right}};
}
inline nlohmann::json fieldJson(Interpolation i) { return interpolationName(i); }
inline nlohmann::json fieldJson(float v) { return shortestDouble(v); }
inline nlohmann::json fieldJson(Activation a) { return activationName(a); }
inline nlohmann::json fieldJson(Padding p) { return paddingName(p); }
inline nlohmann::json fieldJson(const Initializer& i) {
    if (i.kind == Initializer::Constant) return {{"type", "constant"}, {"value", shortestDouble(i.value)}};
    if (i.kind == Initializer::RandomNormal)
        return {{"type", "random_normal"}, {"stddev", shortestDouble(i.value)}, {"mean", shortestDouble(i.mean)}};
    if (i.kind == Initializer::Orthogonal && i.gain != 1.0f)
        return {{"type", "orthogonal"}, {"gain", shortestDouble(i.gain)}};
    return i.name();
}
inline nlohmann::json fieldJson(const std::string& s) { return s; }
inline nlohmann::json fieldJson(bool b) { return b; }

// "dense, conv2d, ...": the layer types, for messages.
inline std::string layerTypeList() {
    std::string list;
    forEachType(LayerTypes{}, [&](auto* t) {
        list += (list.empty() ? "" : ", ") + std::string(std::remove_pointer_t<decltype(t)>::kType);
    });
    return list;
}

// A layer of type L from its JSON object: the keys its field table names,
// each checked as the table says.
template <class L>
L layerOf(const nlohmann::json& j, const std::string& source, const std::string& path) {
    std::vector<const char*> keys{"type"};
    forEachField<L>([&](const auto& f) { keys.push_back(f.key); });
    const Object o(j, source, path, keys);
    L layer;
    forEachField<L>([&](const auto& f) {
        if (f.required && !o.has(f.key)) o.fail(o.at(f.key), std::string("required for type '") + L::kType + "'");
        layer.*(f.member) = fieldValue(o, f.key, layer.*(f.member), f.range);
    });
    return layer;
}

// One layer object; the type is matched as the JavaScript API does (case and
// underscores ignored: "max_pool2d" is "maxpool2d").
inline Layer layer(const nlohmann::json& j, const std::string& source, const std::string& path) {
    if (!j.is_object())
        failAt(source, path, "expected a layer object such as {\"type\": \"dense\", \"units\": 10}, got " + show(j));
    if (!j.contains("type") || !j.at("type").is_string())
        failAt(source, join(path, "type"),
               "expected a layer type (" + layerTypeList() + "), got " +
                   (j.contains("type") ? show(j.at("type")) : std::string("nothing")));
    std::string type;
    for (char c : lower(j.at("type").get<std::string>()))
        if (c != '_') type += c;
    std::optional<Layer> parsed;
    forEachType(LayerTypes{}, [&](auto* t) {
        using L = std::remove_pointer_t<decltype(t)>;
        if (!parsed && type == L::kType) parsed = layerOf<L>(j, source, path);
    });
    if (!parsed)
        failAt(source, join(path, "type"),
               "unknown layer type '" + j.at("type").get<std::string>() + "' (valid: " + layerTypeList() + ")");
    return std::move(*parsed);
}

// "adam" or {"type": "adam", "lr": 0.001, ...}.
inline OptimizerConfig optimizer(const Object& compile) {
    OptimizerConfig c;
    if (!compile.has("optimizer")) return c;
    const nlohmann::json& v = compile.raw("optimizer");
    const std::string path = compile.at("optimizer");
    std::unique_ptr<Object> o;
    std::string name;
    if (v.is_string()) {
        name = v.get<std::string>();
    } else {
        o = std::make_unique<Object>(
            v, compile.source(), path,
            std::vector<const char*>{"type", "lr", "learningRate", "weightDecay", "decayInclude", "decayExclude",
                                     "momentum", "beta1", "beta2", "eps", "rho"});
        if (!o->has("type")) o->fail(path, "needs a type ('adam', 'sgd', ...)");
        name = o->string("type", "");
    }
    std::string valid;
    bool found = false;
    for (OptimizerKind k : kAllOptimizers) {
        valid += (valid.empty() ? "" : ", ") + std::string(optimizerName(k));
        if (lower(name) == optimizerName(k)) {
            c.kind = k;
            found = true;
        }
    }
    if (!found) compile.fail(o ? o->at("type") : path, "unknown optimizer '" + name + "' (valid: " + valid + ")");
    if (o) {
        if (o->has("lr") && o->has("learningRate")) o->fail(path, "give lr or learningRate, not both");
        c.lr = o->real("lr", o->real("learningRate", c.lr, kPositive), kPositive);
        c.weightDecay = o->real("weightDecay", c.weightDecay, kNonNegative);
        c.decayInclude = o->strings("decayInclude");
        c.decayExclude = o->strings("decayExclude");
        c.momentum = o->real("momentum", c.momentum, kUnitIntervalOpen);
        c.beta1 = o->real("beta1", c.beta1, kUnitIntervalOpen);
        c.beta2 = o->real("beta2", c.beta2, kUnitIntervalOpen);
        c.eps = o->real("eps", c.eps, kPositive);
        c.rho = o->real("rho", c.rho, kUnitIntervalOpen);
    }
    return c;
}

// "cosine" or {"type": "cosine", "warmupSteps": 100, "totalSteps": 5000, ...}.
inline Schedule schedule(const Object& compile) {
    Schedule s;
    if (!compile.has("schedule")) return s;
    const nlohmann::json& v = compile.raw("schedule");
    nlohmann::json asObject = v.is_string() ? nlohmann::json{{"type", v}} : v;
    Object o(asObject, compile.source(), compile.at("schedule"),
             {"type", "stepSize", "gamma", "warmupSteps", "totalSteps", "minLr"});
    s.kind = Schedule::Kind(o.choice("type", 0, {"constant", "step", "exponential", "cosine"}));
    s.stepSize = o.integer("stepSize", s.stepSize, 1);
    s.gamma = o.real("gamma", s.gamma, kPositive);
    s.warmupSteps = o.integer("warmupSteps", s.warmupSteps, 0);
    s.totalSteps = o.integer("totalSteps", s.totalSteps, 1);
    s.minLr = o.real("minLr", s.minLr, kNonNegative);
    return s;
}

// "huber" or {"type": "huber", "delta": 2}: a name of kLossNames and the loss's parameters,
// or a custom loss {"type": "expression", ...}; `at` is where it was read.
inline LossSpec lossSpec(const nlohmann::json& v, const std::string& source, const std::string& at) {
    LossSpec l;
    if (!v.is_string() && !v.is_object()) failAt(source, at, "expected a loss name or {type, ...}, got " + show(v));
    nlohmann::json asObject = v.is_string() ? nlohmann::json{{"type", v}} : v;
    Object o(asObject, source, at, {"type", "delta", "labelSmoothing", "fromLogits", "name", "expression"});
    const std::string where = v.is_string() ? at : o.at("type");
    if (!o.has("type")) o.fail(o.path(), "needs a type ('huber', 'mae', ...)");
    const std::string name = o.string("type", "");
    if (lower(name) == "expression") {  // a custom loss (loss_expression.hpp)
        for (const char* k : {"delta", "labelSmoothing", "fromLogits"})
            if (o.has(k)) o.fail(o.at(k), std::string("an expression loss has no ") + k);
        if (!o.has("expression")) o.fail(o.path(), "an expression loss needs \"expression\"");
        loss_expression_detail::check(o.raw("expression"), o.at("expression"),
                                      [&](const std::string& p, const std::string& what) { o.fail(p, what); });
        return expressionLoss(o.raw("expression"), o.string("name", "custom"));
    }
    for (const char* k : {"name", "expression"})
        if (o.has(k)) o.fail(o.at(k), std::string("only an expression loss has ") + k);
    if (!lossByName(lower(name), &l))
        o.fail(where, "unknown value '" + name + "' (valid: " + lossNameList() + ", expression)");
    for (const char* k : {"delta", "labelSmoothing", "fromLogits"})
        if (o.has(k) && lossParameters(l.kind).find(k) == std::string::npos)
            o.fail(o.at(k),
                   "loss " + lower(name) + " has no " + k + " (its parameters: " + lossParameters(l.kind) + ")");
    l.delta = o.real("delta", l.delta, kPositive);
    l.labelSmoothing = o.real("labelSmoothing", l.labelSmoothing, kNonNegative);
    if (!(l.labelSmoothing < 1.0f))
        o.fail(o.at("labelSmoothing"), "expected a number in [0, 1), got " + show(o.raw("labelSmoothing")));
    l.fromLogits = o.boolean("fromLogits", l.fromLogits);
    return l;
}

// "auc" or {"type": "precision", "threshold": 0.7, "name": "p70"}: a metric of kMetricNames, any
// loss (by name, with its parameters, or a custom {"type": "expression", ...}) as a metric.
inline MetricSpec metricSpec(const nlohmann::json& v, const std::string& source, const std::string& at) {
    if (!v.is_string() && !v.is_object()) failAt(source, at, "expected a metric name or {type, ...}, got " + show(v));
    const nlohmann::json asObject = v.is_string() ? nlohmann::json{{"type", v}} : v;
    if (!asObject.contains("type") || !asObject["type"].is_string())
        failAt(source, at, "a metric needs a type ('accuracy', 'auc', 'mae', ...)");
    const std::string type = lower(asObject["type"].get<std::string>());
    MetricSpec m;
    if (!metricByName(type, &m)) {
        if (type != "expression")
            failAt(source, v.is_string() ? at : at + ".type",
                   "unknown metric '" + asObject["type"].get<std::string>() + "' (valid: " + metricNameList() +
                       ", expression)");
    }
    if (m.kind == MetricKind::Loss || type == "expression") {  // a loss as a metric, with the loss's keys
        nlohmann::json lossJson = asObject;
        lossJson.erase("name");
        if (type == "expression" && asObject.contains("name")) lossJson["name"] = asObject["name"];
        m = MetricSpec::ofLoss(lossSpec(lossJson, source, at), type == "expression" ? "custom" : type);
        if (type == "expression") m.name = m.loss.customName;
        if (asObject.contains("name")) {
            if (!asObject["name"].is_string()) failAt(source, at + ".name", "expected a string");
            m.name = asObject["name"].get<std::string>();
        }
        return m;
    }
    Object o(asObject, source, at, {"type", "threshold", "thresholds", "name"});
    if (o.has("threshold") && m.kind != MetricKind::BinaryAccuracy && m.kind != MetricKind::Precision &&
        m.kind != MetricKind::Recall && m.kind != MetricKind::Accuracy)
        o.fail(o.at("threshold"), "metric " + type + " has no threshold (binary_accuracy, precision and recall have)");
    if (o.has("thresholds") && m.kind != MetricKind::Auc) o.fail(o.at("thresholds"), "only auc has thresholds");
    m.threshold = o.real("threshold", m.threshold);
    m.thresholds = o.integer("thresholds", m.thresholds, 3, 10000);
    m.name = o.string("name", m.name);
    return m;
}

inline CompileOptions compileOptions(const nlohmann::json& j, const std::string& source, const std::string& path) {
    Object o(j, source, path,
             {"loss", "lossWeights", "metrics", "optimizer", "learningRate", "schedule", "clipNorm", "seed", "onNaN"});
    CompileOptions c;
    // A loss by name or with its parameters; `at` is where it was read.
    auto lossNamed = [&](const nlohmann::json& v, const std::string& at) { return lossSpec(v, source, at); };
    if (o.has("loss")) {
        const nlohmann::json& v = o.raw("loss");
        if (v.is_array()) {  // one per output
            if (v.empty()) o.fail(o.at("loss"), "expected a loss name or one per output, got []");
            for (size_t k = 0; k < v.size(); ++k)
                c.losses.push_back(lossNamed(v[k], o.at("loss") + "[" + std::to_string(k) + "]"));
            c.loss = c.losses[0];
        } else {
            c.loss = lossNamed(v, o.at("loss"));
        }
    }
    if (o.has("lossWeights")) {
        const nlohmann::json& v = o.raw("lossWeights");
        if (!v.is_array() || v.empty()) o.fail(o.at("lossWeights"), "expected an array of numbers, one per output");
        for (size_t k = 0; k < v.size(); ++k) {
            const std::string at = o.at("lossWeights") + "[" + std::to_string(k) + "]";
            if (!v[k].is_number() || !(v[k].get<double>() >= 0) || !std::isfinite(v[k].get<double>()))
                failAt(source, at, "expected a finite number >= 0, got " + show(v[k]));
            c.lossWeights.push_back(v[k].get<float>());
        }
    }
    if (o.has("metrics")) {
        const nlohmann::json& v = o.raw("metrics");
        if (!v.is_array()) o.fail(o.at("metrics"), "expected an array of metrics, got " + show(v));
        for (size_t k = 0; k < v.size(); ++k)
            c.metrics.push_back(metricSpec(v[k], source, o.at("metrics") + "[" + std::to_string(k) + "]"));
    }
    c.optimizer = optimizer(o);
    c.optimizer.lr = o.real("learningRate", c.optimizer.lr, kPositive);
    c.schedule = schedule(o);
    c.clipNorm = o.real("clipNorm", c.clipNorm, kNonNegative, "0: no clipping");
    c.seed = uint32_t(o.integer64("seed", c.seed, 0, 0xFFFFFFFFll));
    c.onNaN = NanPolicy(o.choice("onNaN", 0, {"stop", "skip", "ignore"}));
    return c;
}

// A callback's monitor: {"monitor": "val_loss", "minDelta": 0, "mode": "auto"} (the keys of o):
// the figure is checked against the model's when the fit begins.
inline Monitor monitor(const Object& o, Monitor m) {
    if (o.has("monitor")) {
        const nlohmann::json& v = o.raw("monitor");
        if (!v.is_string() || v.get<std::string>().empty())
            o.fail(o.at("monitor"),
                   "expected a figure's name (loss, accuracy, a metric's, or one of them after "
                   "val_), got " +
                       show(v));
        m.name = v.get<std::string>();
    }
    m.minDelta = o.real("minDelta", m.minDelta, kNonNegative);
    m.mode = MonitorMode(o.choice("mode", int(m.mode), {"auto", "min", "max"}));
    return m;
}
inline void epochCallbacks(const Object& o, FitOptions& f) {
    if (o.has("earlyStopping")) {
        const Object e(o.raw("earlyStopping"), o.source(), o.at("earlyStopping"),
                       {"monitor", "minDelta", "mode", "patience", "restoreBest"});
        f.earlyStopping.monitor = monitor(e, f.earlyStopping.monitor);
        f.earlyStopping.patience = e.integer("patience", 1, 1);
        f.earlyStopping.restoreBest = e.boolean("restoreBest", f.earlyStopping.restoreBest);
    }
    if (o.has("reduceLrOnPlateau")) {
        const Object r(o.raw("reduceLrOnPlateau"), o.source(), o.at("reduceLrOnPlateau"),
                       {"monitor", "minDelta", "mode", "patience", "factor", "minLr"});
        ReduceLrOnPlateau& p = f.reduceLrOnPlateau;
        p.monitor = monitor(r, p.monitor);
        p.patience = r.integer("patience", 1, 1);
        p.factor = r.real("factor", p.factor, Range{0, 1, true, true});
        p.minLr = r.real("minLr", p.minLr, kNonNegative);
    }
    if (o.has("keepBest")) {
        const Object k(o.raw("keepBest"), o.source(), o.at("keepBest"), {"monitor", "minDelta", "mode"});
        f.keepBest.enabled = true;
        f.keepBest.monitor = monitor(k, f.keepBest.monitor);
    }
}

inline FitOptions fitOptions(const nlohmann::json& j, const std::string& source, const std::string& path) {
    Object o(j, source, path,
             {"epochs", "steps", "batchSize", "shuffle", "dropRemainder", "validationSplit", "lossEvery", "asyncLoss",
              "snapshotEvery", "earlyStopping", "reduceLrOnPlateau", "keepBest"});
    FitOptions f;
    f.epochs = o.integer("epochs", f.epochs, 1);
    f.steps = o.integer("steps", int(f.steps), 1);
    f.batchSize = o.integer("batchSize", f.batchSize, 1);
    f.shuffle = o.boolean("shuffle", f.shuffle);
    f.dropRemainder = o.boolean("dropRemainder", f.dropRemainder);
    f.validationSplit = o.real("validationSplit", f.validationSplit, kUnitIntervalOpen);
    f.lossEvery = o.integer("lossEvery", f.lossEvery, 0);
    f.asyncLoss = o.boolean("asyncLoss", f.asyncLoss);
    f.snapshotEvery = o.integer("snapshotEvery", f.snapshotEvery, 0);
    epochCallbacks(o, f);
    return f;
}

// A model's input: the size of a flat input (784), [steps] (token ids, the
// same rows), a sequence [steps, features] (stored as an image of height 1,
// Conv1D's [1, steps, features]) or an image shape [height, width, channels];
// `path` names it in errors.
inline Shape3 inputShape(const nlohmann::json& v, const std::string& source, const std::string& path) {
    const char* expect = "a positive integer, [steps], [steps, features] or [height, width, channels]";
    const double maxInt = double(std::numeric_limits<int>::max());
    auto dim = [&](const nlohmann::json& d, const std::string& at) {
        if (!d.is_number() ||
            !(d.get<double>() >= 1 && d.get<double>() == std::floor(d.get<double>()) && d.get<double>() <= maxInt))
            failAt(source, at, "expected a positive integer, got " + show(d));
        return int(d.get<double>());
    };
    if (v.is_number()) return Shape3{1, 1, dim(v, path)};
    if (!v.is_array() || v.empty() || v.size() > 3)
        failAt(source, path,
               std::string("expected ") + expect + ", got " + show(v) +
                   (v.is_array() ? " of " + std::to_string(v.size()) + " values" : ""));
    if (v.size() == 1) return Shape3{1, 1, dim(v[0], path + "[0]")};
    if (v.size() == 2) {
        const Shape3 s{1, dim(v[0], path + "[0]"), dim(v[1], path + "[1]")};
        if (double(s.width) * s.channels > maxInt) failAt(source, path, "the sequence shape has too many values");
        return s;
    }
    Shape3 s{dim(v[0], path + "[0]"), dim(v[1], path + "[1]"), dim(v[2], path + "[2]")};
    if (double(s.height) * s.width * s.channels > maxInt) failAt(source, path, "the image shape has too many values");
    return s;
}

// The layers' sizes, before anything is allocated: each layer's own shape
// function (layers/*.hpp shape()), run from the input shapes as compile runs
// it, counts its output, windows and parameter tensors in 64 bits
// (layers/shape.hpp); a size that does not fit an int is an error naming the
// layer and the field that made the number too large ("model.json:
// layers[1].kernelSize: ..."). Shape errors that are not about size (a Dense
// after an image, a window larger than a 'valid' input) stop the walk:
// Model::compile reports them, naming the layer.
class SizeCheck {
public:
    SizeCheck(const std::string& source, std::vector<Shape3> inputs) : source_(source), inputs_(std::move(inputs)) {}

    // Layer i, reading the outputs of `inbound` (-1: the model input; empty:
    // the layer before); false when its shape is for compile to refuse (the walk stops).
    bool layer(size_t i, const Layer& l, std::vector<int> inbound = {}) {
        if (inbound.empty()) inbound.push_back(int(i) - 1);
        if (inbound.size() != 1 && !mergeLayer(l) && inbound.size() > size_t(layerMaxInputs(l))) return false;
        ShapeContext c;
        c.name = defaultLayerName(l, i);
        for (int k : inbound) {
            c.ins.push_back(k < 0 ? inputs_.at(size_t(-1 - k)) : outs_.at(size_t(k)));
            c.froms.push_back(k < 0 ? "input " + std::to_string(-1 - k) : "layers[" + std::to_string(k) + "]");
        }
        c.in = c.ins[0];
        c.from = c.froms[0];
        c.flatModelInput = inbound.size() == 1 && inbound[0] < 0 && c.in.height == 1 && c.in.width == 1;
        try {
            outs_.push_back(std::visit([&](const auto& x) { return x.shape(c); }, l).out);
        } catch (const SizeError& e) {
            failAt(source_, "layers[" + std::to_string(i) + "]." + e.field, e.detail);
        } catch (const ArgumentError&) {
            return false;
        }
        return true;
    }

private:
    const std::string& source_;
    std::vector<Shape3> inputs_;  // each model input's shape
    std::vector<Shape3> outs_;    // each layer's output
};

// Duplicate keys are errors: nlohmann::json would keep the last one silently.
// The parser's callback sees keys in order; a stack of open containers gives
// the JSON path for the message. Nesting is bounded too: the parser does not
// recurse, but copying and destroying a value does, so a hostile file nested
// 100000 deep would exhaust the stack after parsing.
class DuplicateKeyCheck {
public:
    // Far past any model file (a custom loss's expression nests up to 64 ops).
    static constexpr size_t kMaxDepth = 256;

    explicit DuplicateKeyCheck(std::string source) : source_(std::move(source)) {}
    bool operator()(int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        if ((event == E::object_start || event == E::array_start) && open_.size() >= kMaxDepth) {
            const std::string p = path();
            throw FormatError(source_ + ": " + (p.empty() ? "" : p + ": ") + "nested deeper than " +
                              std::to_string(kMaxDepth) + " levels");
        }
        switch (event) {
            case E::object_start: open_.push_back({false, 0, {}, {}}); break;
            case E::array_start: open_.push_back({true, 0, {}, {}}); break;
            case E::key: {
                Open& o = open_.back();
                o.key = parsed.get<std::string>();
                if (!o.keys.insert(o.key).second) {
                    const std::string p = path();
                    throw FormatError(source_ + ": " + (p.empty() ? "" : p + ": ") + "duplicate key '" + o.key + "'");
                }
                break;
            }
            case E::object_end:
            case E::array_end:
                open_.pop_back();
                if (!open_.empty() && open_.back().array) ++open_.back().index;
                break;
            case E::value:
                if (!open_.empty() && open_.back().array) ++open_.back().index;
                break;
        }
        return true;
    }

private:
    struct Open {
        bool array;
        size_t index;
        std::string key;
        std::set<std::string> keys;
    };
    // The path of the innermost open container.
    std::string path() const {
        std::string p;
        for (size_t i = 0; i + 1 < open_.size(); ++i)
            p += open_[i].array ? "[" + std::to_string(open_[i].index) + "]" : (p.empty() ? "" : ".") + open_[i].key;
        return p;
    }
    std::string source_;
    std::vector<Open> open_;
};

}  // namespace model_config_detail

// One layer object, compile options, fit options (validationX / validationY
// stay null) or the input shape as JSON values: the parts of a model config, which the JavaScript
// API parses its arguments with too (one vocabulary, one set of checks).
// Errors are FormatErrors "source: path: what"; with no path, "source: what".
inline Layer layerFromJson(const nlohmann::json& j, const std::string& source, const std::string& path = "") {
    return model_config_detail::layer(j, source, path);
}
// A layer as the JSON object layerFromJson reads back: its type, the fields
// it must be given, and every field that differs from its default, in the
// order of its field table.
inline nlohmann::ordered_json layerToJson(const Layer& layer) {
    using namespace model_config_detail;
    return std::visit(
        [](const auto& l) {
            using L = std::decay_t<decltype(l)>;
            nlohmann::ordered_json j = {{"type", L::kType}};
            forEachField<L>([&](const auto& f) {
                if (f.required || !(l.*(f.member) == f.defaultValue())) j[f.key] = fieldJson(l.*(f.member));
            });
            return j;
        },
        layer);
}
inline CompileOptions compileOptionsFromJson(const nlohmann::json& j, const std::string& source,
                                             const std::string& path = "") {
    return model_config_detail::compileOptions(j, source, path);
}
inline FitOptions fitOptionsFromJson(const nlohmann::json& j, const std::string& source, const std::string& path = "") {
    return model_config_detail::fitOptions(j, source, path);
}
inline Shape3 inputShapeFromJson(const nlohmann::json& j, const std::string& source,
                                 const std::string& path = "input") {
    return model_config_detail::inputShape(j, source, path);
}

namespace model_config_detail {
// A layer's "inputs": the names of layers before it and of model inputs
// ("input": the model's one input), as indices (model inputs negative).
inline std::vector<int> layerInputs(const nlohmann::json& j, const std::map<std::string, int>& before,
                                    const std::string& source, const std::string& path) {
    if (!j.is_array() || j.empty())
        failAt(source, path,
               "expected a non-empty array of layer names (\"input\": the model's input), got " +
                   (j.is_array() ? std::string("[]") : show(j)));
    std::vector<int> out;
    for (size_t k = 0; k < j.size(); ++k) {
        const std::string at = path + "[" + std::to_string(k) + "]";
        if (!j[k].is_string()) failAt(source, at, "expected a layer name, got " + show(j[k]));
        const std::string name = j[k].get<std::string>();
        const auto it = before.find(name);
        if (it == before.end()) {
            std::string names;
            for (const auto& [n, i] : before) names += (names.empty() ? "" : ", ") + n;
            failAt(source, at,
                   "no layer named '" + name + "' before this one (a layer reads the model's inputs or earlier layers" +
                       (names.empty() ? "" : ": " + names) + ")");
        }
        out.push_back(it->second);
    }
    return out;
}
// A shared layer's later call, {"shares": "<layer>", "inputs": [...]}: the
// layer it shares (one with weights of its own, before it) and the call's
// name ("<layer>@<k>", its k-th call, as Model names it).
inline std::pair<int, std::string> sharedCall(const nlohmann::json& spec, const std::map<std::string, int>& before,
                                              const std::vector<int>& shares, const std::string& source,
                                              const std::string& path) {
    for (const auto& [key, value] : spec.items())
        if (key != "shares")
            failAt(source, path + "." + key,
                   "a shared layer's call has only \"shares\" and \"inputs\" (its options are the layer's)");
    const nlohmann::json& name = spec["shares"];
    const auto it = name.is_string() ? before.find(name.get<std::string>()) : before.end();
    if (it == before.end() || it->second < 0)
        failAt(source, path + ".shares", "expected the name of a layer before this one, got " + show(name));
    if (shares.at(size_t(it->second)) >= 0)
        failAt(source, path + ".shares",
               "'" + name.get<std::string>() + "' is a call of a shared layer: name the layer itself");
    int k = 1;
    for (int owner : shares) k += owner == it->second;
    return {it->second, name.get<std::string>() + "@" + std::to_string(k)};
}
}  // namespace model_config_detail

// A parsed JSON document (already free of duplicate keys) as a ModelConfig.
inline ModelConfig modelConfigFromJson(const nlohmann::json& j, const std::string& source = "<model config>") {
    using namespace model_config_detail;
    if (!j.is_object()) throw FormatError(source + ": expected a JSON object at the top level, got " + show(j));
    Object top(j, source, "", {"description", "input", "inputs", "layers", "outputs", "compile", "fit"});
    ModelConfig c;
    c.source = source;
    c.description = top.string("description", "");
    std::map<std::string, int> names;  // the inputs and the layers so far by name
    if (top.has("inputs")) {           // several: [{"name": "image", "shape": [28, 28, 1]}, ...]
        if (top.has("input")) top.fail("inputs", "give \"input\" (one) or \"inputs\" (several), not both");
        const nlohmann::json& list = top.raw("inputs");
        if (!list.is_array() || list.empty())
            top.fail("inputs", "expected a non-empty array of {\"name\", \"shape\"} objects, got " + show(list));
        for (size_t k = 0; k < list.size(); ++k) {
            Object in(list[k], source, top.at("inputs") + "[" + std::to_string(k) + "]", {"name", "shape"});
            const std::string name = in.string("name", "input_" + std::to_string(k));
            if (!in.has("shape")) in.fail(in.at("shape"), "required: a flat size or [height, width, channels]");
            c.inputs.push_back(inputShape(in.raw("shape"), source, in.at("shape")));
            if (!names.emplace(name, graph::LayerGeometry::modelInput(int(k))).second)
                in.fail(in.at("name"), "'" + name + "' names two inputs");
            c.inputNames.push_back(name);
        }
        c.input = c.inputs[0];
    } else {
        if (!top.has("input"))
            top.fail("input", "required: the size of a flat input (784) or an image shape [height, width, channels]");
        c.input = inputShape(top.raw("input"), source, "input");
        c.inputs = {c.input};
        names["input"] = graph::LayerGeometry::kModelInput;
    }
    if (!top.has("layers")) top.fail("layers", "required: an array of layer objects");
    const nlohmann::json& layers = top.raw("layers");
    if (!layers.is_array() || layers.empty())
        top.fail("layers", "expected a non-empty array of layer objects, got " +
                               (layers.is_array() ? std::string("[]") : show(layers)));
    bool anyInputs = false;
    for (size_t i = 0; i < layers.size(); ++i) {
        const std::string path = "layers[" + std::to_string(i) + "]";
        nlohmann::json spec = layers[i];
        std::vector<int> inbound;
        if (spec.is_object() && spec.contains("inputs")) {
            inbound = layerInputs(spec["inputs"], names, source, path + ".inputs");
            spec.erase("inputs");
            anyInputs = true;
        }
        c.inbound.push_back(std::move(inbound));
        if (spec.is_object() && spec.contains("shares")) {  // a shared layer's later call
            const auto [owner, name] = sharedCall(spec, names, c.shares, source, path);
            c.layers.push_back(c.layers[size_t(owner)]);
            c.shares.push_back(owner);
            names[name] = int(i);
            anyInputs = true;
            continue;
        }
        c.layers.push_back(layer(spec, source, path));
        c.shares.push_back(-1);
        const std::string& given = givenLayerName(c.layers.back());
        names[given.empty() ? defaultLayerName(c.layers.back(), i) : given] = int(i);
    }
    if (!anyInputs) c.shares.clear();
    if (top.has("outputs")) {
        const nlohmann::json& list = top.raw("outputs");
        if (!list.is_array() || list.empty())
            top.fail("outputs", "expected a non-empty array of layer names, got " + show(list));
        for (size_t k = 0; k < list.size(); ++k) {
            const std::string at = top.at("outputs") + "[" + std::to_string(k) + "]";
            const auto it = list[k].is_string() ? names.find(list[k].get<std::string>()) : names.end();
            if (it == names.end() || it->second < 0)
                failAt(source, at, "expected the name of a layer, got " + show(list[k]));
            c.outputs.push_back(it->second);
        }
    }
    // Several inputs or outputs make a functional model: each layer reads what it names.
    if (c.inputs.size() > 1 || !c.outputs.empty()) anyInputs = true;
    if (!anyInputs) c.inbound.clear();
    SizeCheck sizes(source, c.inputs);
    for (size_t i = 0;
         i < c.layers.size() && sizes.layer(i, c.layers[i], anyInputs ? c.inbound[i] : std::vector<int>{}); ++i) {
    }
    if (top.has("compile")) c.compile = compileOptions(top.raw("compile"), source, "compile");
    if (top.has("fit")) c.fit = fitOptions(top.raw("fit"), source, "fit");
    return c;
}

// JSON text (e.g. a model.json file's contents) as a ModelConfig. Syntax
// errors keep nlohmann's line and column.
inline ModelConfig parseModelConfig(const std::string& text, const std::string& source = "<model config>") {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text, model_config_detail::DuplicateKeyCheck(source));
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 2, column 3: ..."
        const size_t cut = what.find("] ");
        throw FormatError(source + ": invalid JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
    }
    return modelConfigFromJson(j, source);
}

// Reads and parses a model config file. The path must name a regular file
// (readFile: a device, FIFO or directory is refused before it is opened).
inline ModelConfig loadModelConfig(const std::string& path) {
    const std::vector<uint8_t> bytes = readFile(path, "model config");
    return parseModelConfig(std::string(bytes.begin(), bytes.end()), path);
}

// The configured layers as a model, not compiled yet: a Sequential, or a
// functional model where layers name their "inputs".
inline std::unique_ptr<Model> makeModel(Context& ctx, const ModelConfig& config) {
    if (config.inbound.empty()) {
        auto s = std::make_unique<Sequential>(ctx, config.input);
        for (const Layer& l : config.layers) s->add(l);
        return s;
    }
    std::vector<LayerNode> nodes;
    for (size_t i = 0; i < config.layers.size(); ++i)
        nodes.push_back({config.layers[i], config.inbound[i], config.shares.empty() ? -1 : config.shares[i]});
    return std::make_unique<Model>(ctx, config.inputs.empty() ? std::vector<Shape3>{config.input} : config.inputs,
                                   std::move(nodes), config.outputs, config.inputNames);
}

// A compiled model with the configured layers and compile options: a
// Sequential, or a functional model where layers name their "inputs".
// Compile errors (shapes, names) come from the model, prefixed with the source.
inline std::unique_ptr<Model> buildModel(Context& ctx, const ModelConfig& config) {
    std::unique_ptr<Model> model = makeModel(ctx, config);
    try {
        model->compile(config.compile);
    } catch (const ArgumentError& e) {
        throw ArgumentError(config.source + ": " + e.what());
    }
    return model;
}

}  // namespace gltrain
