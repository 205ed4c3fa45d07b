// A layer's field as data: its JSON / JavaScript name, the member it sets, a
// one-line doc, the check a value must pass, and its TF.js config name. Each
// layer header lists its fields in a fields() table (layers/dense.hpp); the
// model-config parser and printer (model_config.hpp), the TF.js import and
// export (tfjs_layers.hpp), Sequential::compile's checks and the d.ts check
// (tests/layer_descriptors_test.cpp) read that one table.
//
// A field's default is the struct's member initialiser (`Layer{}.*member`):
// declared once, in the struct.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/activation.hpp"
#include "gltrain/initializer.hpp"
#include "gltrain/interpolation.hpp"
#include "gltrain/margins.hpp"
#include "gltrain/window.hpp"

namespace gltrain {

// The values a number may take: [lo, hi], with either end open. Says what it
// accepts in the two voices gltrain's errors use: "expected a positive
// integer, got -3" (parsers) and "units must be positive, got -3" (compile).
struct Range {
    // The lower end.
    double lo = -std::numeric_limits<double>::infinity();
    // The upper end.
    double hi = std::numeric_limits<double>::infinity();
    // Whether the lower and upper ends are excluded.
    bool loOpen = false, hiOpen = false;

    // Whether v lies in the range.
    bool contains(double v) const { return (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi); }
    // "a positive integer", "an integer >= 0", "a number in [0, 1)", "a finite number".
    std::string expected(bool integer) const {
        const std::string noun = integer ? "integer" : "number";
        if (std::isinf(lo) && openAbove(integer)) return integer ? "an integer" : "a finite number";
        if (isPositive(integer)) return "a positive " + noun;
        if (openAbove(integer)) return (integer ? "an integer >= " : "a number >= ") + text(lo);
        return (integer ? "an integer in " : "a number in ") + interval();
    }
    // "positive", ">= 0", "in [0, 1)", "finite".
    std::string mustBe(bool integer) const {
        if (std::isinf(lo) && openAbove(integer)) return "finite";
        if (isPositive(integer)) return "positive";
        if (openAbove(integer)) return ">= " + text(lo);
        return "in " + interval();
    }

private:
    // No upper bound (an int's largest value counts as none).
    bool openAbove(bool integer) const { return std::isinf(hi) || (integer && hi >= std::numeric_limits<int>::max()); }
    bool isPositive(bool integer) const {
        return openAbove(integer) && (integer ? !loOpen && lo == 1 : loOpen && lo == 0);
    }
    static std::string text(double v) {
        std::string s = std::to_string(v);
        s.erase(s.find_last_not_of('0') + 1);
        if (s.back() == '.') s.pop_back();
        return s;
    }
    std::string interval() const {
        return std::string(loOpen ? "(" : "[") + text(lo) + ", " + text(hi) + (hiOpen ? ")" : "]");
    }
};

namespace ranges {
inline constexpr Range kPositiveInt{1, double(std::numeric_limits<int>::max())};
inline constexpr Range kNonNegativeInt{0, double(std::numeric_limits<int>::max())};
inline constexpr Range kFinite{};
inline constexpr Range kPositive{0, std::numeric_limits<double>::infinity(), true, false};
inline constexpr Range kUnitIntervalOpen{0, 1, false, true};  // [0, 1)
}  // namespace ranges

// How a TF.js config writes a field: as it is, a square size n as [n, n]
// (Keras's 2-D pool_size), or a 1-D size n as [n] (Keras's 1-D kernel_size, strides, pool_size).
enum class TfjsForm { Plain, Square, Single };

template <class L, class T>
// One field of a layer's table: its JSON / JavaScript name, the member it sets, a doc line, its check and its TF.js
// name.
struct LayerField {
    // The layer type the field belongs to.
    using Layer = L;
    // The field's C++ type.
    using Type = T;

    const char* key;  // JSON / JavaScript name
    // The member it reads and writes.
    T L::*member;
    const char* doc;                // one line, for the d.ts and error messages
    Range range{};                  // numbers only
    bool required = false;          // a model config must give it (its default is a placeholder)
    const char* tfjsKey = nullptr;  // TF.js config name; null: not in TF.js's config
    // How TF.js writes it (as it is, or a square size as [n, n]).
    TfjsForm tfjsForm = TfjsForm::Plain;

    // The same field, checked against range r.
    constexpr LayerField check(Range r) const {
        LayerField f = *this;
        f.range = r;
        return f;
    }
    // The same field, required in a model config.
    constexpr LayerField mustGive() const {
        LayerField f = *this;
        f.required = true;
        return f;
    }
    // The same field, with its TF.js config name (and form).
    constexpr LayerField tfjs(const char* name, TfjsForm form = TfjsForm::Plain) const {
        LayerField f = *this;
        f.tfjsKey = name;
        f.tfjsForm = form;
        return f;
    }

    // The default: the member's initialiser.
    T defaultValue() const { return L{}.*member; }
};

template <class L, class T>
constexpr LayerField<L, T> field(const char* key, T L::*member, const char* doc) {
    return LayerField<L, T>{key, member, doc};
}

template <class L>
// The "trainable" field every layer has: one doc line and TF.js name for all.
constexpr LayerField<L, bool> trainableField(bool L::*member) {
    return field("trainable", member,
                 "false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen "
                 "BatchNormalization normalizes with its moving statistics (default true).")
        .tfjs("trainable");
}

// ---- what each kind of field value is and how it is checked ------------------

// An empty string when `v` is a value the field may hold, else what is wrong
// ("must be positive, got 0"), for the caller to prefix with the field's name.
inline std::string fieldProblem(int v, Range r) {
    return r.contains(v) ? "" : "must be " + r.mustBe(true) + ", got " + std::to_string(v);
}
inline std::string fieldProblem(Size2 v, Range r) {
    return r.contains(v.h) && r.contains(v.w) ? "" : "must be " + r.mustBe(true) + ", got " + v.str();
}
// "[1, 2, 3]": a list of sizes as the model config writes it.
inline std::string intListStr(const std::vector<int>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
    return s + "]";
}
// A list of sizes (Reshape's targetShape, Permute's dims): 1 to 3 of them, each in r.
inline std::string fieldProblem(const std::vector<int>& v, Range r) {
    if (v.empty() || v.size() > 3) return "must have 1 to 3 values, got " + intListStr(v);
    for (int x : v)
        if (!r.contains(x)) return "values must be " + r.mustBe(true) + ", got " + intListStr(v);
    return "";
}
inline std::string fieldProblem(const Margins& v, Range r) {
    return r.contains(v.top) && r.contains(v.bottom) && r.contains(v.left) && r.contains(v.right)
               ? ""
               : "must be " + r.mustBe(true) + ", got " + v.str();
}
inline std::string fieldProblem(Interpolation i, Range) {
    return isInterpolation(i) ? "" : std::to_string(int(i)) + " is not an Interpolation (nearest or bilinear)";
}
inline std::string fieldProblem(float v, Range r) {
    return std::isfinite(v) && r.contains(v) ? "" : "must be " + r.mustBe(false) + ", got " + std::to_string(v);
}
inline std::string fieldProblem(Activation a, Range) {
    return isActivation(a) ? "" : std::to_string(int(a)) + " is not an Activation";
}
inline std::string fieldProblem(Padding p, Range) {
    return isPadding(p) ? "" : std::to_string(int(p)) + " is not a Padding (valid or same)";
}
inline std::string fieldProblem(const Initializer& init, Range) {
    try {
        init.validate();
    } catch (const ArgumentError& e) {
        return std::string(": ") + e.what();
    }
    return "";
}
inline std::string fieldProblem(const std::string&, Range) { return ""; }
inline std::string fieldProblem(bool, Range) { return ""; }

// The shortest decimal that reads back as f, as a double (0.99f -> 0.99, not
// 0.9900000095367432): how the printers (model configs, TF.js model.json)
// write a float field, so they show the numbers the model was built with.
inline double shortestDouble(float f) {
    char buf[32];
    for (int digits = 6; digits <= 9; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
        if (std::strtof(buf, nullptr) == f) break;
    }
    return std::strtod(buf, nullptr);
}

// The TypeScript type of a field (web/gltrain.d.ts).
template <class T>
constexpr const char* tsType();
template <>
constexpr const char* tsType<int>() {
    return "number";
}
template <>
constexpr const char* tsType<Size2>() {
    return "number | [number, number]";
}
template <>
constexpr const char* tsType<std::vector<int>>() {
    return "number[]";
}
template <>
constexpr const char* tsType<Margins>() {
    return "number | [number, number] | [[number, number], [number, number]]";
}
template <>
constexpr const char* tsType<Interpolation>() {
    return "Interpolation";
}
template <>
constexpr const char* tsType<float>() {
    return "number";
}
template <>
constexpr const char* tsType<std::string>() {
    return "string";
}
template <>
constexpr const char* tsType<bool>() {
    return "boolean";
}
template <>
constexpr const char* tsType<Activation>() {
    return "ActivationName";
}
template <>
constexpr const char* tsType<Padding>() {
    return "Padding";
}
template <>
constexpr const char* tsType<Initializer>() {
    return "Initializer";
}

// f(field) for each field of layer type L.
template <class L, class F>
void forEachField(F&& f) {
    std::apply([&](const auto&... fs) { (f(fs), ...); }, L::fields());
}

// An empty string when every field of `layer` holds a value its check
// accepts, else "units must be positive, got 0". A field left at its default
// passes unless it must be given (inputDim's 0 means "not given").
template <class L>
std::string layerFieldProblem(const L& layer) {
    std::string problem;
    forEachField<L>([&](const auto& f) {
        if (!problem.empty()) return;
        const auto& v = layer.*(f.member);
        if (!f.required && v == f.defaultValue()) return;
        const std::string p = fieldProblem(v, f.range);
        if (!p.empty()) problem = std::string(f.key) + (p[0] == ':' ? "" : " ") + p;
    });
    return problem;
}

}  // namespace gltrain
