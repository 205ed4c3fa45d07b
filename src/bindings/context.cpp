// ContextImpl: contexts, their capabilities and the lost-context hooks.
// The EM_JS bodies below are JavaScript, which clang-format breaks ("===" became "== ="):
// clang-format off
#include "context.hpp"

#include <emscripten/bind.h>
#include <emscripten/em_js.h>

#include <sstream>
#include <string>

#include "errors.hpp"
#include "gltrain/backend_choice.hpp"
#include "gltrain/capabilities.hpp"
#include "gltrain/texture_pool.hpp"
#include "values.hpp"

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

ContextImpl::ContextImpl(ContextOptions o) : ctx(makeContext(std::move(o))) {
    if (ctx->hasGl()) {
        ctx->makeCurrent();
        glHandle = emscripten_webgl_get_current_context();
        gltrain_js_watch_loss(int(glHandle));
    }
}

ContextImpl* ContextImpl::create(val options) {
    return guard([&]() -> ContextImpl* {
        Options o(options, "Context",
                  {"canvas", "maxTextureSize", "debugChecks", "disableFloat32Render", "disableHalfFloatRender",
                   "backend", "feedback", "fetch", "cpuThreads"});
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
        co.cpuThreads = int(o.integer("cpuThreads", 0, 0));
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

void ContextImpl::loseContext() { guard([&] { ctx->loseContext(); }); }
void ContextImpl::restoreContext() {
    guard([&] {
        if (glHandle > 0 && ctx->lost() && gltrain_js_queue_restore(int(glHandle))) return;
        ctx->restoreContext();
    });
}

val ContextImpl::capabilities() {
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
        o.set("cpuThreads", c.cpuThreads);
        o.set("cpuThreadsReason", c.cpuThreadsReason);
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

val ContextImpl::poolStats() {
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

}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_context) {
    using namespace emscripten;
    using gltrain::js::ContextImpl;
    class_<ContextImpl>("ContextImpl")
        .class_function("create", &ContextImpl::create, allow_raw_pointers())
        .function("capabilities", &ContextImpl::capabilities)
        .function("poolStats", &ContextImpl::poolStats)
        .function("lost", &ContextImpl::lost)
        .function("loseContext", &ContextImpl::loseContext)
        .function("restoreContext", &ContextImpl::restoreContext);
}
