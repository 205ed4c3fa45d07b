// embind bindings of gltrain for JavaScript (web build only; target gltrain_js).
//
// These classes are the raw layer under web/gltrain.js, which wraps them in
// the documented API (web/gltrain.d.ts). Two rules shape this file:
//
// * No C++ exception and no JS exception crosses the boundary. Every bound
//   function runs inside guard(): on an exception it stores the error's kind
//   and message and returns a default value; gltrain.js checks takeError()
//   after every call and throws a JS Error carrying the C++ message. (A JS
//   exception unwinding wasm frames would skip destructors and leave the
//   shadow stack pointer where the throw found it.)
// * Options arrive as plain JS objects and are parsed here, so unknown option
//   names, wrong types and bad values are rejected with a message naming the
//   call and the option, before the model changes.
#include <emscripten/bind.h>
#include <emscripten/em_js.h>
#include <emscripten/html5.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gltrain/gltrain.hpp"
#include "gltrain/idx.hpp"
#include "gltrain/model_config.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/tfjs_layers.hpp"

using emscripten::val;

// ---- restoreContext() before the browser has dispatched webglcontextlost -----
//
// WEBGL_lose_context.loseContext() loses the context at once but dispatches
// webglcontextlost in a later task, and the browser allows a restore only once
// that event was dispatched (and preventDefault()ed, as the Context's own
// listener does): restoreContext() in the same tick was refused with only a
// console warning ("context restoration not allowed"), and the context stayed
// lost for good. These watch the event per context; a restore asked for before
// it is queued and made just after it (the browser records the preventDefault()
// when every listener has run, so in a task of its own).
EM_JS(void, gltrain_js_watch_loss, (int handle), {
    var context = GL.contexts[handle];
    if (!context || context.gltrainJsLoss) return;
    var gl = context.GLctx;
    var s = {lostEventSeen: gl.isContextLost(), restoreQueued: false, ext: gl.getExtension("WEBGL_lose_context")};
    context.gltrainJsLoss = s;
    gl.canvas.addEventListener("webglcontextlost", function() {
        s.lostEventSeen = true;
        if (!s.restoreQueued) return;
        s.restoreQueued = false;
        setTimeout(function() { if (gl.isContextLost() && s.ext) s.ext.restoreContext(); }, 0);
    }, false);
    gl.canvas.addEventListener("webglcontextrestored", function() { s.lostEventSeen = false; }, false);
});
// 1 when the context is lost and its webglcontextlost event is still to come: the
// restore is queued for just after it. 0: restore now.
EM_JS(int, gltrain_js_queue_restore, (int handle), {
    var context = GL.contexts[handle];
    var s = context && context.gltrainJsLoss;
    if (!s || s.lostEventSeen || !context.GLctx.isContextLost()) return 0;
    s.restoreQueued = true;
    return 1;
});

namespace gltrain::js {
namespace {

// ---- errors ------------------------------------------------------------------

struct PendingError {
    bool set = false;
    std::string kind, message;
};
PendingError& pending() {
    static PendingError e;
    return e;
}
void setError(const char* kind, const char* message) {
    auto& e = pending();
    if (e.set) return;  // keep the first
    e.set = true;
    e.kind = kind;
    e.message = message;
}

template <class R>
R fallback() {
    if constexpr (std::is_same_v<R, val>) return val::undefined();
    else if constexpr (std::is_void_v<R>) return;
    else return R{};
}

// Runs f; an exception becomes the pending error and a default return value.
template <class F>
auto guard(F&& f) -> decltype(f()) {
    using R = decltype(f());
    try {
        return f();
    } catch (const TrainingError& e) {
        setError("TrainingError", e.what());
    } catch (const ArgumentError& e) {
        setError("ArgumentError", e.what());
    } catch (const FormatError& e) {
        setError("FormatError", e.what());
    } catch (const UnsupportedError& e) {
        setError("UnsupportedError", e.what());
    } catch (const ShaderError& e) {
        setError("ShaderError", e.what());
    } catch (const ContextLostError& e) {
        setError("ContextLostError", e.what());
    } catch (const GlError& e) {
        setError("GlError", e.what());
    } catch (const std::bad_alloc&) {
        setError("RangeError", "out of memory (the WebAssembly heap could not grow)");
    } catch (const std::exception& e) {
        setError("Error", e.what());
    } catch (...) {
        setError("Error", "unknown C++ exception");
    }
    return fallback<R>();
}

// {kind, message} of the pending error (clearing it), or null.
val takeError() {
    auto& e = pending();
    if (!e.set) return val::null();
    val o = val::object();
    o.set("kind", e.kind);
    o.set("message", e.message);
    e = PendingError{};
    return o;
}

// ---- JS values ---------------------------------------------------------------

// A plain object: made by a literal, JSON.parse or Object.create(null), not
// an array or a class instance (a typed array, a Map, ...).
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

// A plain-object options argument: unknown names and wrong types are errors.
class Options {
public:
    Options(val o, std::string where, std::initializer_list<const char*> allowed)
        : o_(std::move(o)), where_(std::move(where)) {
        if (o_.isUndefined() || o_.isNull()) {
            o_ = val::object();
            return;
        }
        if (!isPlainObject(o_)) throw ArgumentError(where_ + ": options must be an object, got " + typeName(o_));
        std::vector<std::string> keys = emscripten::vecFromJSArray<std::string>(val::global("Object").call<val>("keys", o_));
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
    bool has(const char* k) const { return !o_[k].isUndefined(); }
    val raw(const char* k) const { return o_[k]; }

    double number(const char* k, double def) const {
        if (!has(k)) return def;
        val v = o_[k];
        if (!v.isNumber()) throw ArgumentError(where_ + ": " + k + " must be a number, got " + show(v));
        double d = v.as<double>();
        if (!std::isfinite(d)) throw ArgumentError(where_ + ": " + k + " must be finite, got " + show(v));
        return d;
    }
    int64_t integer(const char* k, int64_t def, int64_t lo = std::numeric_limits<int>::min(),
                    int64_t hi = std::numeric_limits<int>::max()) const {
        if (!has(k)) return def;
        double d = number(k, 0);
        if (d != std::floor(d)) throw ArgumentError(where_ + ": " + k + " must be an integer, got " + show(o_[k]));
        if (d < double(lo) || d > double(hi))
            throw ArgumentError(where_ + ": " + k + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "], got " + show(o_[k]));
        return int64_t(d);
    }
    bool boolean(const char* k, bool def) const {
        if (!has(k)) return def;
        val v = o_[k];
        if (!v.isTrue() && !v.isFalse()) throw ArgumentError(where_ + ": " + k + " must be a boolean, got " + show(v));
        return v.isTrue();
    }
    std::string string(const char* k, const std::string& def) const {
        if (!has(k)) return def;
        val v = o_[k];
        if (!v.isString()) throw ArgumentError(where_ + ": " + k + " must be a string, got " + show(v));
        return v.as<std::string>();
    }

private:
    val o_;
    std::string where_;
};

// Float32Array -> floats (one copy, straight into the vector's storage).
std::vector<float> floatsFrom(const val& a, const std::string& what) {
    if (!a.instanceof(val::global("Float32Array")))
        throw ArgumentError(what + " must be a Float32Array, got " + typeName(a));
    const size_t n = a["length"].as<size_t>();
    std::vector<float> v(n);
    // The allocation may have grown the heap; a view of the old heap is detached now.
    if (a["length"].as<size_t>() != n)
        throw ArgumentError(what + " is a view of gltrain's memory that the last allocation invalidated "
                            "(copy it with slice() first)");
    if (n) val(emscripten::typed_memory_view(n, v.data())).call<void>("set", a);
    return v;
}
bool isIntegerArray(const val& a) {
    for (const char* t : {"Int32Array", "Uint8Array", "Uint8ClampedArray", "Int8Array", "Uint16Array", "Int16Array",
                          "Uint32Array"})
        if (a.instanceof(val::global(t))) return true;
    return false;
}
std::vector<uint8_t> bytesFrom(const val& a, const std::string& what) {
    val u8 = val::undefined();
    if (a.instanceof(val::global("ArrayBuffer"))) u8 = val::global("Uint8Array").new_(a);
    else if (a.instanceof(val::global("Uint8Array"))) u8 = a;
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
val float32Copy(const float* p, size_t n) { return val::global("Float32Array").new_(emscripten::typed_memory_view(n, p)); }
// An ArrayBuffer holding a copy of the bytes (a typed array made from a view copies it).
val arrayBufferCopy(const std::vector<uint8_t>& bytes) {
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()))["buffer"];
}
val numberOrNull(double d) { return std::isfinite(d) ? val(d) : val::null(); }

// A JavaScript argument as JSON, for the model-config parsers
// (model_config.hpp), which read layers and compile and fit options for the
// JavaScript API as for model files: one vocabulary, one set of checks. Keys
// whose value is undefined are left out (as absent options); NaN and Infinity
// stay numbers, so the parsers name them. Anything JSON has no form for (a
// function, a typed array, a class instance, a cycle) is an error naming its path.
nlohmann::json jsonFrom(const val& v, const std::string& where, const std::string& path, int depth = 0) {
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
    // (Options nest two or three levels; a cycle would recurse until the stack ran out.)
    if (depth >= 16) throw ArgumentError(at + "nested more than 16 levels deep (a cycle?)");
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
// An options argument as a JSON object (undefined and null: no options).
nlohmann::json jsonOptions(const val& v, const std::string& where) {
    return v.isUndefined() || v.isNull() ? nlohmann::json::object() : jsonFrom(v, where, "");
}

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

// ---- Context -----------------------------------------------------------------

class ContextImpl {
public:
    explicit ContextImpl(ContextOptions o) : ctx(std::make_unique<Context>(std::move(o))) {
        if (ctx->hasGl()) {
            ctx->makeCurrent();
            glHandle = emscripten_webgl_get_current_context();
            gltrain_js_watch_loss(int(glHandle));
        }
    }
    std::unique_ptr<Context> ctx;
    EMSCRIPTEN_WEBGL_CONTEXT_HANDLE glHandle = 0;  // the WebGL context (none on a Context without GL)
    cpu::Workspace workspace;  // the packed panels of the CPU backend's Tensor products

    static ContextImpl* create(val options) {
        return guard([&]() -> ContextImpl* {
            Options o(options, "Context",
                      {"canvas", "maxTextureSize", "debugChecks", "disableFloat32Render", "disableHalfFloatRender",
                       "backend", "feedback", "fetch"});
            ContextOptions co;
            const std::string backend = o.string("backend", "auto");
            if (backend == "auto") co.backend = BackendPreference::Auto;
            else if (backend == "webgl") co.backend = BackendPreference::Gpu;
            else if (backend == "cpu") co.backend = BackendPreference::Cpu;
            else throw ArgumentError("Context: backend must be 'auto', 'webgl' or 'cpu', got '" + backend + "'");
            const std::string feedback = o.string("feedback", "auto");
            if (auto f = feedbackPreferenceFromName(feedback)) co.feedback = *f;
            else throw ArgumentError("Context: feedback must be 'auto', 'on' or 'off', got '" + feedback + "'");
            const std::string fetch = o.string("fetch", "auto");
            if (auto f = fetchPreferenceFromName(fetch)) co.fetch = *f;
            else throw ArgumentError("Context: fetch must be 'auto', 'sampled' or 'texelFetch', got '" + fetch + "'");
            co.canvas = o.string("canvas", "");
            co.maxTextureSize = int(o.integer("maxTextureSize", 0, 0));
            co.debugChecks = o.boolean("debugChecks", false);
            co.disableFloat32Render = o.boolean("disableFloat32Render", false);
            co.disableHalfFloatRender = o.boolean("disableHalfFloatRender", false);
            if (o.has("canvas") && co.canvas.empty())
                throw ArgumentError("Context: canvas must be a CSS selector such as '#canvas' (omit it for an OffscreenCanvas)");
            if (!co.canvas.empty()) {
                val doc = val::global("document");
                if (doc.isUndefined())
                    throw UnsupportedError("Context: no document here (a worker?): omit canvas to use an OffscreenCanvas");
                val el = doc.call<val>("querySelector", co.canvas);
                if (el.isNull())
                    throw UnsupportedError("Context: no element matches the canvas selector '" + co.canvas + "'");
                if (!el.instanceof(val::global("HTMLCanvasElement")))
                    throw ArgumentError("Context: '" + co.canvas + "' is " + typeName(el) + ", not a <canvas>");
            }
            return new ContextImpl(std::move(co));
        });
    }
    void makeCurrent() { ctx->makeCurrent(); }
    bool lost() { return ctx->lost(); }
    // WEBGL_lose_context, for testing an application's recovery (Context::loseContext).
    void loseContext() { guard([&] { ctx->loseContext(); }); }
    // In the tick of the loss (before webglcontextlost), the restore is made just after that event.
    void restoreContext() {
        guard([&] {
            if (glHandle > 0 && ctx->lost() && gltrain_js_queue_restore(int(glHandle))) return;
            ctx->restoreContext();
        });
    }

    val capabilities() {
        return guard([&] {
            const Capabilities& c = ctx->caps();
            val o = val::object();
            o.set("platform", c.platform);
            o.set("vendor", c.vendor);
            o.set("renderer", c.renderer);
            o.set("version", c.version);
            o.set("shadingLanguageVersion", c.shadingLanguageVersion);
            o.set("maxTextureSize", c.maxTextureSize);
            o.set("maxArrayTextureLayers", c.maxArrayTextureLayers);
            o.set("maxDrawBuffers", c.maxDrawBuffers);
            o.set("maxTextureImageUnits", c.maxTextureImageUnits);
            o.set("maxFeedbackComponents", c.maxFeedbackComponents);
            o.set("colorBufferFloat", c.colorBufferFloat);
            o.set("colorBufferHalfFloat", c.colorBufferHalfFloat);
            o.set("floatBlend", c.floatBlend);
            o.set("float32Renderable", c.float32Renderable);
            o.set("softwareRenderer", c.softwareRenderer);
            o.set("measuredMantissaBits", c.measuredMantissaBits);
            o.set("float16Renderable", c.float16Renderable);
            o.set("backend", std::string(backendName(c.backend)));
            o.set("backendReason", c.backendReason);
            o.set("feedbackKernels", c.feedbackKernels);
            o.set("feedbackReason", c.feedbackReason);
            o.set("sampledFetch", c.sampledFetch);
            o.set("fetchReason", c.fetchReason);
            o.set("restoresChecked", c.restoresChecked);
            val ext = val::array();
            for (auto& e : c.extensions) ext.call<void>("push", e);
            o.set("extensions", ext);
            std::ostringstream s;
            s << c;
            o.set("report", s.str());
            return o;
        });
    }
    val poolStats() {
        return guard([&] {
            const PoolStats& s = ctx->pool().stats();
            val o = val::object();
            o.set("live", double(s.live));
            o.set("liveBytes", double(s.liveBytes));
            o.set("free", double(s.free));
            o.set("freeBytes", double(s.freeBytes));
            o.set("created", double(s.created));
            return o;
        });
    }
};

// ---- Tensor ------------------------------------------------------------------

// A matrix on the Context's backend: a texture on the GPU backends; host
// memory on the CPU backend (asked for, or chosen on a software renderer where
// a startup matmul ran faster on the CPU), where matmul runs cpu::matmul.
class TensorImpl {
public:
    ContextImpl* owner = nullptr;
    Tensor t;         // GPU backends
    HostMatrix host;  // the CPU backend
    bool hostMemory = false;

    // Decided when the tensor is made (by its context's backend), never inferred from `t`.
    bool onHost() const { return hostMemory; }

    static TensorImpl* create(ContextImpl& c, val rows, val cols, val data) {
        return guard([&]() -> TensorImpl* {
            val shape = val::object();
            shape.set("rows", rows);
            shape.set("cols", cols);
            Options o(shape, "Tensor", {"rows", "cols"});
            if (!o.has("rows") || !o.has("cols")) throw ArgumentError("Tensor: rows and cols are required");
            int r = int(o.integer("rows", 0, 1)), k = int(o.integer("cols", 0, 1));
            std::vector<float> v;
            if (!data.isUndefined() && !data.isNull()) {
                v = floatsFrom(data, "Tensor: data");
                if (v.size() != size_t(r) * size_t(k))
                    throw ArgumentError("Tensor: data has " + std::to_string(v.size()) + " values, a " + std::to_string(r) +
                                        "x" + std::to_string(k) + " tensor needs " + std::to_string(size_t(r) * k));
            }
            auto t = std::make_unique<TensorImpl>();
            t->owner = &c;
            if (c.ctx->backend() == Backend::Cpu) {
                t->hostMemory = true;
                t->host = v.empty() ? HostMatrix(r, k) : HostMatrix(r, k, std::move(v));
                return t.release();
            }
            c.makeCurrent();
            t->t = Tensor(*c.ctx, r, k, matmulLayout(*c.ctx, r));
            if (!v.empty()) t->t.upload(v);
            else t->t.clear();
            return t.release();
        });
    }
    int rows() const { return onHost() ? host.rows : t.rows(); }
    int cols() const { return onHost() ? host.cols : t.cols(); }
    std::string shapeString() const { return detail::shapeString(rows(), cols()); }
    void upload(val data) {
        guard([&] {
            std::vector<float> v = floatsFrom(data, "Tensor.upload: data");
            if (!onHost()) {
                owner->makeCurrent();
                return t.upload(v);
            }
            if (v.size() != host.data.size()) throw detail::uploadLengthError(v.size(), host.rows, host.cols);
            host.data = std::move(v);
        });
    }
    val download() {
        return guard([&] {
            if (onHost()) return float32Copy(host.data.data(), host.data.size());
            owner->makeCurrent();
            HostMatrix m = t.download();
            return float32Copy(m.data.data(), m.data.size());
        });
    }
    // out = op(a)·op(b); options {transA, transB}. Shapes and contexts are checked by the op.
    static void matmul(TensorImpl& a, TensorImpl& b, TensorImpl& out, val options) {
        guard([&] {
            Options o(options, "matmul", {"transA", "transB"});
            MatmulOptions m;
            m.transA = o.boolean("transA", false);
            m.transB = o.boolean("transB", false);
            // Checked first: tensors of two contexts may be on two backends.
            const std::pair<const char*, const TensorImpl*> operands[] = {{"A", &a}, {"B", &b}};
            for (auto& [name, x] : operands)
                if (x->owner != out.owner)
                    throw detail::differentContextsError("matmul", name, x->shapeString(), "C", out.shapeString());
            if (!out.onHost()) {
                out.owner->makeCurrent();
                return gltrain::matmul(a.t, b.t, out.t, m);
            }
            // The CPU backend: the GPU op's other checks, in its words.
            detail::validateMatmulShapes({a.rows(), a.cols()}, {b.rows(), b.cols()}, {out.rows(), out.cols()},
                                         m.transA, m.transB);
            for (auto& [name, x] : operands)
                if (x == &out)
                    throw ArgumentError(std::string("matmul: an output is also input '") + name +
                                        "' (C shares its memory); write the product to another tensor");
            const int k = m.transA ? a.rows() : a.cols();
            cpu::matmul(out.rows(), out.cols(), k, a.host.data.data(), a.cols(), m.transA, b.host.data.data(), b.cols(),
                        m.transB, out.host.data.data(), out.cols(), cpu::Epilogue{}, out.owner->workspace);
        });
    }
};

// ---- Dataset: examples (rows of x) and their targets in the wasm heap --------

class DatasetImpl {
public:
    HostMatrix x;
    Targets y;
    int imageRows = 0, imageCols = 0;

    // x: Float32Array of rows * features values; y: an integer typed array of
    // labels (one per row) or a Float32Array of target values (rows * k), or undefined.
    static DatasetImpl* fromArrays(val xs, val ys, val features, std::string where) {
        return guard([&]() -> DatasetImpl* {
            if (!features.isNumber()) throw ArgumentError(where + ": features must be a number");
            const double f = features.as<double>();
            if (!(f >= 1 && f == std::floor(f) && f <= 1e9))
                throw ArgumentError(where + ": features must be a positive integer, got " + show(features));
            const size_t cols = size_t(f);
            if (!xs.instanceof(val::global("Float32Array")))
                throw ArgumentError(where + ": x must be a Float32Array, got " + typeName(xs));
            const size_t n = xs["length"].as<size_t>();
            if (n == 0) throw ArgumentError(where + ": x is empty");
            if (n % cols)
                throw ArgumentError(where + ": x has " + std::to_string(n) + " values, expected a multiple of " +
                                    std::to_string(cols) + " (the model's input size)");
            const size_t rows = n / cols;
            if (rows > size_t(std::numeric_limits<int>::max())) throw ArgumentError(where + ": x has too many rows");
            auto d = std::make_unique<DatasetImpl>();
            if (!ys.isUndefined() && !ys.isNull()) {
                if (isIntegerArray(ys)) {
                    const size_t m = ys["length"].as<size_t>();
                    if (m != rows)
                        throw ArgumentError(where + ": y has " + std::to_string(m) + " labels but x has " +
                                            std::to_string(rows) + " rows");
                    std::vector<int> labels(m);
                    val(emscripten::typed_memory_view(m, labels.data())).call<void>("set", ys);
                    d->y = Targets(std::move(labels));
                } else if (ys.instanceof(val::global("Float32Array"))) {
                    const size_t m = ys["length"].as<size_t>();
                    if (m == 0 || m % rows)
                        throw ArgumentError(where + ": y has " + std::to_string(m) + " values for the " +
                                            std::to_string(rows) + " rows of x (expected a multiple of " +
                                            std::to_string(rows) + "; class labels go in an Int32Array)");
                    d->y = Targets(HostMatrix(int(rows), int(m / rows), floatsFrom(ys, where + ": y")));
                } else {
                    throw ArgumentError(where + ": y must be an Int32Array (or another integer typed array) of labels "
                                        "or a Float32Array of target values, got " + typeName(ys));
                }
            }
            d->x = HostMatrix(int(rows), int(cols), floatsFrom(xs, where + ": x"));
            return d.release();
        });
    }

    // Validated IDX files (images: unsigned bytes, N x rows x cols; labels: N
    // integers < numClasses); images scaled to [0, 1].
    static DatasetImpl* fromIdx(val images, val labels, val numClasses) {
        return guard([&]() -> DatasetImpl* {
            int classes = 10;
            if (!numClasses.isUndefined()) {
                if (!numClasses.isNumber() || numClasses.as<double>() < 1 ||
                    numClasses.as<double>() != std::floor(numClasses.as<double>()))
                    throw ArgumentError("loadIdx: numClasses must be a positive integer, got " + show(numClasses));
                classes = numClasses.as<int>();
            }
            std::vector<uint8_t> ib = bytesFrom(images, "loadIdx: images");
            IdxArray ia = parseIdx(ib, "images");
            std::vector<uint8_t>().swap(ib);
            IdxArray la = parseIdx(bytesFrom(labels, "loadIdx: labels"), "labels");
            Dataset ds = makeDataset(ia, la, classes);
            auto d = std::make_unique<DatasetImpl>();
            d->x = std::move(ds.images);
            d->y = Targets(std::move(ds.labels));
            d->imageRows = ds.imageRows;
            d->imageCols = ds.imageCols;
            return d.release();
        });
    }

    int count() const { return x.rows; }
    int features() const { return x.cols; }
    int getImageRows() const { return imageRows; }
    int getImageCols() const { return imageCols; }
    bool hasLabels() const { return y.isLabels(); }
    int targetColumns() const { return y.isLabels() ? 1 : y.values.cols; }

    void checkRange(const std::string& where, val start, val count, int& s, int& c) const {
        val o = val::object();
        o.set("start", start);
        o.set("count", count);
        Options opt(o, where, {"start", "count"});
        s = int(opt.integer("start", 0, 0, x.rows));
        c = int(opt.integer("count", x.rows - s, 0, x.rows));
        if (s + c > x.rows)
            throw ArgumentError(where + ": rows [" + std::to_string(s) + ", " + std::to_string(s + c) +
                                ") are outside the dataset's " + std::to_string(x.rows) + " rows");
    }
    DatasetImpl* slice(val start, val count) const {
        return guard([&]() -> DatasetImpl* {
            int s, c;
            checkRange("Dataset.slice", start, count, s, c);
            if (c == 0) throw ArgumentError("Dataset.slice: the slice is empty");
            auto d = std::make_unique<DatasetImpl>();
            const size_t f = size_t(x.cols);
            d->x = HostMatrix(c, x.cols, std::vector<float>(x.data.begin() + std::ptrdiff_t(s * f),
                                                             x.data.begin() + std::ptrdiff_t((s + c) * f)));
            if (y.isLabels()) d->y = Targets(std::vector<int>(y.labels.begin() + s, y.labels.begin() + s + c));
            else if (y.rows()) {
                const size_t k = size_t(y.values.cols);
                d->y = Targets(HostMatrix(c, y.values.cols, std::vector<float>(y.values.data.begin() + std::ptrdiff_t(s * k),
                                                                              y.values.data.begin() + std::ptrdiff_t((s + c) * k))));
            }
            d->imageRows = imageRows;
            d->imageCols = imageCols;
            return d.release();
        });
    }
    val rowsCopy(val start, val count) const {
        return guard([&] {
            int s, c;
            checkRange("Dataset.x", start, count, s, c);
            return float32Copy(x.data.data() + size_t(s) * size_t(x.cols), size_t(c) * size_t(x.cols));
        });
    }
    // A Float32Array over the wasm heap (no copy); valid until the next gltrain call.
    val view() const { return val(emscripten::typed_memory_view(x.data.size(), x.data.data())); }
    val targets() const {
        return guard([&] {
            if (y.isLabels())
                return val::global("Int32Array").new_(emscripten::typed_memory_view(y.labels.size(), y.labels.data()));
            if (y.rows()) return float32Copy(y.values.data.data(), y.values.data.size());
            return val::null();
        });
    }
};

// ---- Sequential --------------------------------------------------------------

class SequentialImpl {
public:
    ContextImpl* owner = nullptr;
    std::unique_ptr<Sequential> model;
    struct Event {
        bool epoch = false;
        StepInfo s;
        EpochInfo e;
    };
    std::vector<Event> events;

    // The model's GL objects (snapshot readers: pixel-pack buffers and fences) are
    // deleted in its own context, whichever context the page used last.
    ~SequentialImpl() {
        if (owner) owner->makeCurrent();
    }

    // input: what a model file's "input" holds, a flat size or [height, width, channels].
    static SequentialImpl* create(ContextImpl& c, val input) {
        return guard([&]() -> SequentialImpl* {
            const Shape3 shape = parseArgument([&] { return inputShapeFromJson(jsonFrom(input, "Sequential", "input"), "Sequential"); });
            auto s = std::make_unique<SequentialImpl>();
            s->owner = &c;
            s->model = std::make_unique<Sequential>(*c.ctx, shape);
            return s.release();
        });
    }

    void add(val spec) {
        guard([&] {
            Layer layer = parseArgument([&] { return layerFromJson(jsonFrom(spec, "add", ""), "add"); });
            model->add(std::move(layer));
        });
    }

    void compile(val options) {
        guard([&] {
            const CompileOptions c = parseCompile(options, "compile");
            owner->makeCurrent();
            model->compile(c);
        });
    }

    // compile()'s options ({loss, optimizer, ...}); `where` names the call in errors.
    static CompileOptions parseCompile(val options, const std::string& where) {
        return parseArgument([&] { return compileOptionsFromJson(jsonOptions(options, where), where); });
    }

    // The type name add() takes for a layer, for one made elsewhere (an import).
    static std::string layerType(const Layer& l) {
        static_assert(std::variant_size_v<Layer> == 10, "layerType: name the new layer type below");
        if (std::holds_alternative<Dense>(l)) return "dense";
        if (std::holds_alternative<ActivationLayer>(l)) return "activation";
        if (std::holds_alternative<Dropout>(l)) return "dropout";
        if (std::holds_alternative<Softmax>(l)) return "softmax";
        if (std::holds_alternative<Conv2D>(l)) return "conv2d";
        if (std::holds_alternative<MaxPool2D>(l)) return "maxpool2d";
        if (std::holds_alternative<AveragePool2D>(l)) return "averagepool2d";
        if (std::holds_alternative<GlobalAveragePooling2D>(l)) return "globalaveragepooling2d";
        if (std::holds_alternative<Flatten>(l)) return "flatten";
        return "batchnormalization";
    }

    // A compiled model from TF.js's Layers format: model.json's text and the
    // bytes of its one weights shard (exportTfjs's two parts), compiled with
    // compile()'s options. A malformed or unsupported file is a FormatError
    // naming the layer or weight; nothing is made then.
    static SequentialImpl* fromTfjs(ContextImpl& c, val modelJson, val weightData, val options) {
        return guard([&]() -> SequentialImpl* {
            if (!modelJson.isString())
                throw ArgumentError("fromTfjs: modelJson must be model.json's text (a string), got " + typeName(modelJson));
            const std::vector<uint8_t> bytes = bytesFrom(weightData, "fromTfjs: weightData");
            const CompileOptions options_ = parseCompile(options, "fromTfjs");
            c.makeCurrent();
            auto s = std::make_unique<SequentialImpl>();
            s->owner = &c;
            s->model = importTfjs(*c.ctx, modelJson.as<std::string>(), bytes, options_, "model.json");
            return s.release();
        });
    }

    void beginFit(DatasetImpl& train, DatasetImpl* validation, val options) {
        guard([&] {
            FitOptions f = parseArgument([&] { return fitOptionsFromJson(jsonOptions(options, "fit"), "fit"); });
            if (validation) {
                if (f.validationSplit > 0.0f) throw ArgumentError("fit: give validationSplit or validationData, not both");
                f.validationX = &validation->x;
                f.validationY = &validation->y;
            }
            if (!train.y.rows()) throw ArgumentError("fit: the training data has no targets (y)");
            if (validation && !validation->y.rows()) throw ArgumentError("fit: the validation data has no targets (y)");
            owner->makeCurrent();
            Callbacks cb;
            cb.onStep = [this](const StepInfo& s) { events.push_back({false, s, {}}); };
            cb.onEpoch = [this](const EpochInfo& e) { events.push_back({true, {}, e}); };
            model->beginFit(train.x, train.y, f, std::move(cb));
            events.clear();
        });
    }
    bool stepOnce() {
        return guard([&] {
            owner->makeCurrent();
            return model->stepOnce();
        });
    }
    int trainFor(double ms, int maxSteps) {
        return guard([&] {
            if (!(ms >= 0) || !std::isfinite(ms)) throw ArgumentError("trainFor: ms must be a finite number >= 0");
            owner->makeCurrent();
            return model->trainFor(ms, maxSteps);
        });
    }
    bool fitting() const { return model->fitting(); }
    // After a lost context: rebuilds the model from its snapshot; the step it resumes from.
    double restore() {
        return guard([&] {
            owner->makeCurrent();
            return double(model->restore());
        });
    }
    void endFit() { model->endFit(); }

    static val epochObject(const EpochInfo& e) {
        val o = val::object();
        o.set("type", std::string("epoch"));
        o.set("epoch", e.epoch);
        o.set("step", double(e.step));
        o.set("loss", numberOrNull(e.loss));
        o.set("accuracy", numberOrNull(e.accuracy));
        o.set("valLoss", numberOrNull(e.valLoss));
        o.set("valAccuracy", numberOrNull(e.valAccuracy));
        o.set("seconds", e.seconds);
        o.set("samplesPerSecond", e.samplesPerSecond);
        return o;
    }
    // Step and epoch reports since the last call, in order.
    val takeEvents() {
        val a = val::array();
        for (auto& ev : events) {
            if (ev.epoch) {
                a.call<void>("push", epochObject(ev.e));
            } else {
                val o = val::object();
                o.set("type", std::string("step"));
                o.set("step", double(ev.s.step));
                o.set("epoch", ev.s.epoch);
                o.set("loss", ev.s.lossRead ? numberOrNull(ev.s.loss) : val::null());
                o.set("lossStep", ev.s.lossRead ? val(double(ev.s.lossStep)) : val::null());
                o.set("samplesPerSecond", ev.s.samplesPerSecond);
                o.set("elapsedSeconds", ev.s.elapsedSeconds);
                a.call<void>("push", o);
            }
        }
        events.clear();
        return a;
    }
    val history() const {
        val a = val::array();
        for (auto& e : model->history()) a.call<void>("push", epochObject(e));
        return a;
    }

    static int batchOption(val options, const char* where) {
        Options o(options, where, {"batchSize"});
        return int(o.integer("batchSize", 256, 1));
    }
    val evaluate(DatasetImpl& data, val options) {
        return guard([&] {
            int b = batchOption(options, "evaluate");
            if (!data.y.rows()) throw ArgumentError("evaluate: the data has no targets (y)");
            owner->makeCurrent();
            Evaluation e = model->evaluate(data.x, data.y, b);
            val o = val::object();
            o.set("loss", numberOrNull(e.loss));
            o.set("accuracy", numberOrNull(e.accuracy));
            return o;
        });
    }
    // Where a training step's time goes (Sequential::profileStep): one entry per pass, in order.
    val profileStep(DatasetImpl& data, val options) {
        return guard([&] {
            Options o(options, "profileStep", {"batchSize", "reps"});
            const int rows = data.x.rows;
            int b = int(o.integer("batchSize", std::min(32, std::max(rows, 1)), 1, std::max(rows, 1)));
            int reps = int(o.integer("reps", 5, 1, 1000));
            if (!data.y.rows()) throw ArgumentError("profileStep: the data has no targets (y)");
            owner->makeCurrent();
            val a = val::array();
            for (const PassTiming& t : model->profileStep(data.x, data.y, b, reps)) {
                val e = val::object();
                e.set("kernel", t.kernel);
                e.set("ms", t.ms);
                e.set("gpuTimer", t.gpuTimer);
                a.call<void>("push", e);
            }
            return a;
        });
    }
    val predictMatrix(const HostMatrix& x, int b) {
        owner->makeCurrent();
        HostMatrix y = model->predict(x, b);
        return float32Copy(y.data.data(), y.data.size());
    }
    val predict(val x, val options) {
        return guard([&] {
            int b = batchOption(options, "predict");
            if (!model->outputSize()) throw ArgumentError("predict: the model is not compiled (call compile first)");
            const int cols = model->inputSize();
            if (!x.instanceof(val::global("Float32Array")))
                throw ArgumentError("predict: x must be a Float32Array, got " + typeName(x));
            const size_t n = x["length"].as<size_t>();
            if (n == 0) throw ArgumentError("predict: x is empty");
            if (n % size_t(cols))
                throw ArgumentError("predict: x has " + std::to_string(n) + " values, expected a multiple of " +
                                    std::to_string(cols) + " (the model's input size)");
            HostMatrix m(int(n / size_t(cols)), cols, floatsFrom(x, "predict: x"));
            return predictMatrix(m, b);
        });
    }
    val predictDataset(DatasetImpl& data, val options) {
        return guard([&] { return predictMatrix(data.x, batchOption(options, "predict")); });
    }

    val saveCheckpoint() {
        return guard([&] {
            owner->makeCurrent();
            return arrayBufferCopy(model->saveCheckpoint());
        });
    }
    // The last snapshot (Sequential::snapshotCheckpoint): needs no GL, so it
    // works while the context is lost or after a restore was refused.
    val snapshotCheckpoint() {
        return guard([&] { return arrayBufferCopy(model->snapshotCheckpoint()); });
    }
    double snapshotStep() const { return double(model->snapshotStep()); }
    // TF.js Layers format in memory: {modelJson, weightData, weightsFile} (the
    // manifest names the one shard weightsFile), for tf.io.fromMemory or a
    // download of the two files that tf.loadLayersModel reads.
    val exportTfjs() {
        return guard([&] {
            owner->makeCurrent();
            const TfjsArtifacts a = gltrain::exportTfjs(*model);
            val u8 = val::global("Uint8Array").new_(emscripten::typed_memory_view(a.weightData.size(), a.weightData.data()));
            val out = val::object();
            out.set("modelJson", a.modelJson);
            out.set("weightData", u8["buffer"]);
            out.set("weightsFile", std::string(kTfjsShardName));
            return out;
        });
    }
    // options: {resetOptimizer}: load the weights and statistics only, the optimizer
    // starting afresh (step 0, zeroed slots), as for a checkpoint of another optimizer.
    void loadCheckpoint(val bytes, val options) {
        guard([&] {
            Options o(options, "loadCheckpoint", {"resetOptimizer"});
            const bool resetOptimizer = o.boolean("resetOptimizer", false);
            std::vector<uint8_t> b = bytesFrom(bytes, "loadCheckpoint: bytes");
            owner->makeCurrent();
            model->loadCheckpoint(b, "<ArrayBuffer>", resetOptimizer);
        });
    }
    val getWeight(std::string layer, std::string which) {
        return guard([&] {
            owner->makeCurrent();
            HostMatrix m = model->weight(layer, which);
            return float32Copy(m.data.data(), m.data.size());
        });
    }
    void setWeight(std::string layer, std::string which, val data) {
        guard([&] {
            std::vector<float> v = floatsFrom(data, "setWeight: data");
            owner->makeCurrent();
            HostMatrix cur = model->weight(layer, which);
            if (v.size() != cur.data.size())
                throw ArgumentError("setWeight: " + layer + "/" + which + " has " + std::to_string(cur.data.size()) +
                                    " values (" + std::to_string(cur.rows) + "x" + std::to_string(cur.cols) + "), got " +
                                    std::to_string(v.size()));
            model->setWeight(layer, which, HostMatrix(cur.rows, cur.cols, std::move(v)));
        });
    }

    int inputSize() const { return model->inputSize(); }
    int outputSize() const { return model->outputSize(); }
    double step() const { return double(model->step()); }
    bool compiled() const { return model->outputSize() > 0; }
    // [{name, type, outputShape, outputSize, params}] (after compile: names and shapes as compile set them).
    val layers() const {
        val a = val::array();
        Shape3 in = model->inputShape();
        for (size_t i = 0; i < model->layerCount(); ++i) {
            const std::string type = layerType(model->layer(i));
            val o = val::object();
            if (!compiled()) {  // the name given to add(), if any
                o.set("name", std::visit([](const auto& l) { return l.name; }, model->layer(i)));
                o.set("type", type);
                o.set("outputShape", val::null());
                o.set("outputSize", 0);
                o.set("params", 0);
                a.call<void>("push", o);
                continue;
            }
            const Shape3 out = model->outputShape(i);
            double params = 0;  // trainable values
            if (type == "dense") params = double(in.size()) * out.channels + out.channels;
            else if (type == "conv2d") params = double(model->weight(model->layerName(i), "kernel").size()) + out.channels;
            else if (type == "batchnormalization") params = 2.0 * out.channels;
            o.set("name", model->layerName(i));
            o.set("type", type);
            val shape = val::array();
            shape.call<void>("push", out.height);
            shape.call<void>("push", out.width);
            shape.call<void>("push", out.channels);
            o.set("outputShape", shape);
            o.set("outputSize", out.size());
            o.set("params", params);
            a.call<void>("push", o);
            in = out;
        }
        return a;
    }
};

val listOf(std::initializer_list<const char*> names) {
    val a = val::array();
    for (const char* n : names) a.call<void>("push", std::string(n));
    return a;
}
val activationNames() {
    val a = val::array();
    for (Activation x : kAllActivations) a.call<void>("push", std::string(activationName(x)));
    return a;
}

}  // namespace
}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain) {
    using namespace emscripten;
    using namespace gltrain::js;
    function("takeError", &takeError);
    function("activationNames", &activationNames);
    function("optimizerNames", +[]() { return listOf({"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop"}); });
    function("lossNames", +[]() { return listOf({"softmax_cross_entropy", "mse", "binary_cross_entropy"}); });
    function("layerTypes", +[]() {
        return listOf({"dense", "conv2d", "maxpool2d", "averagepool2d", "globalaveragepooling2d", "flatten",
                       "batchnormalization", "activation", "dropout", "softmax"});
    });
    function("version", +[]() { return std::string("0.1.0"); });

    class_<ContextImpl>("ContextImpl")
        .class_function("create", &ContextImpl::create, allow_raw_pointers())
        .function("capabilities", &ContextImpl::capabilities)
        .function("poolStats", &ContextImpl::poolStats)
        .function("lost", &ContextImpl::lost)
        .function("loseContext", &ContextImpl::loseContext)
        .function("restoreContext", &ContextImpl::restoreContext);

    class_<TensorImpl>("TensorImpl")
        .class_function("create", &TensorImpl::create, allow_raw_pointers())
        .function("rows", &TensorImpl::rows)
        .function("cols", &TensorImpl::cols)
        .function("upload", &TensorImpl::upload)
        .function("download", &TensorImpl::download)
        .class_function("matmul", &TensorImpl::matmul);

    class_<DatasetImpl>("DatasetImpl")
        .class_function("fromArrays", &DatasetImpl::fromArrays, allow_raw_pointers())
        .class_function("fromIdx", &DatasetImpl::fromIdx, allow_raw_pointers())
        .function("count", &DatasetImpl::count)
        .function("features", &DatasetImpl::features)
        .function("imageRows", &DatasetImpl::getImageRows)
        .function("imageCols", &DatasetImpl::getImageCols)
        .function("hasLabels", &DatasetImpl::hasLabels)
        .function("targetColumns", &DatasetImpl::targetColumns)
        .function("slice", &DatasetImpl::slice, allow_raw_pointers())
        .function("rowsCopy", &DatasetImpl::rowsCopy)
        .function("view", &DatasetImpl::view)
        .function("targets", &DatasetImpl::targets);

    class_<SequentialImpl>("SequentialImpl")
        .class_function("create", &SequentialImpl::create, allow_raw_pointers())
        .class_function("fromTfjs", &SequentialImpl::fromTfjs, allow_raw_pointers())
        .function("add", &SequentialImpl::add)
        .function("compile", &SequentialImpl::compile)
        .function("beginFit", &SequentialImpl::beginFit, allow_raw_pointers())
        .function("stepOnce", &SequentialImpl::stepOnce)
        .function("trainFor", &SequentialImpl::trainFor)
        .function("fitting", &SequentialImpl::fitting)
        .function("restore", &SequentialImpl::restore)
        .function("endFit", &SequentialImpl::endFit)
        .function("takeEvents", &SequentialImpl::takeEvents)
        .function("history", &SequentialImpl::history)
        .function("evaluate", &SequentialImpl::evaluate)
        .function("profileStep", &SequentialImpl::profileStep)
        .function("predict", &SequentialImpl::predict)
        .function("predictDataset", &SequentialImpl::predictDataset)
        .function("saveCheckpoint", &SequentialImpl::saveCheckpoint)
        .function("snapshotCheckpoint", &SequentialImpl::snapshotCheckpoint)
        .function("snapshotStep", &SequentialImpl::snapshotStep)
        .function("exportTfjs", &SequentialImpl::exportTfjs)
        .function("loadCheckpoint", &SequentialImpl::loadCheckpoint)
        .function("getWeight", &SequentialImpl::getWeight)
        .function("setWeight", &SequentialImpl::setWeight)
        .function("inputSize", &SequentialImpl::inputSize)
        .function("outputSize", &SequentialImpl::outputSize)
        .function("step", &SequentialImpl::step)
        .function("compiled", &SequentialImpl::compiled)
        .function("layers", &SequentialImpl::layers);
}
