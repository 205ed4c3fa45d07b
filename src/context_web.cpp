// Web context creation: a WebGL2 context on a canvas (CSS selector) or on a
// fresh OffscreenCanvas, which also works inside a Web Worker.
// The EM_JS bodies below are JavaScript, which clang-format breaks ("===" became "== ="):
// clang-format off
#include <emscripten/emscripten.h>
#include <emscripten/html5.h>

#include <string>

#include "platform.hpp"

namespace gltrain {

namespace {

// Creates an OffscreenCanvas with a WebGL2 context and registers it with
// Emscripten's GL layer; returns the handle, or 0 (with a reason in the console).
EM_JS(int, gltrain_offscreen_webgl2, (), {
    if (typeof OffscreenCanvas === "undefined") return 0;
    var canvas = new OffscreenCanvas(1, 1);
    var attrs = {alpha: false, depth: false, stencil: false, antialias: false, premultipliedAlpha: false,
                 preserveDrawingBuffer: false, powerPreference: "high-performance", failIfMajorPerformanceCaveat: false};
    var gl = canvas.getContext("webgl2", attrs);
    if (!gl) return 0;
    attrs.majorVersion = 2;
    attrs.minorVersion = 0;
    attrs.enableExtensionsByDefault = 1;
    return GL.registerContext(gl, attrs);
});

// WEBGL_debug_renderer_info's unmasked strings (the plain ones say "WebKit WebGL").
EM_JS(char*, gltrain_unmasked_string, (int vendor), {
    var gl = GL.currentContext && GL.currentContext.GLctx;
    var s = "";
    if (gl) {
        var ext = gl.getExtension("WEBGL_debug_renderer_info");
        if (ext) s = gl.getParameter(vendor ? ext.UNMASKED_VENDOR_WEBGL : ext.UNMASKED_RENDERER_WEBGL) || "";
    }
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});

// Watches a context for loss: preventDefault() on webglcontextlost (without
// it the browser never restores the context), and on webglcontextrestored
// re-enables the extensions (a restored context starts with none, and
// EXT_color_buffer_float decides whether float targets render) and counts
// the restoration. WEBGL_lose_context is fetched now: getExtension() returns
// null while the context is lost.
EM_JS(void, gltrain_watch_context, (int handle), {
    var context = GL.contexts[handle];
    var gl = context.GLctx;
    var watch = {restorations: 0, loseExt: gl.getExtension("WEBGL_lose_context")};
    context.gltrainWatch = watch;
    gl.canvas.addEventListener("webglcontextlost", function(e) { e.preventDefault(); }, false);
    gl.canvas.addEventListener("webglcontextrestored", function() {
        (gl.getSupportedExtensions() || []).forEach(function(ext) {
            if (!ext.includes("lose_context") && !ext.includes("debug")) gl.getExtension(ext);
        });
        watch.restorations++;
    }, false);
});
EM_JS(int, gltrain_context_lost, (int handle), { return GL.contexts[handle].GLctx.isContextLost() ? 1 : 0; });
EM_JS(int, gltrain_context_restorations, (int handle), { return GL.contexts[handle].gltrainWatch.restorations; });
// WEBGL_lose_context.loseContext() (restore = 0) or .restoreContext() (1); 0 if the extension is missing.
EM_JS(int, gltrain_lose_context, (int handle, int restore), {
    var ext = GL.contexts[handle].gltrainWatch.loseExt;
    if (!ext) return 0;
    if (restore) ext.restoreContext(); else ext.loseContext();
    return 1;
});

// Lets go of a context gltrain made on an OffscreenCanvas of its own: the GPU context
// goes now, not when the JavaScript objects are collected. A page holds at most 16
// live WebGL contexts in Chromium and loses its oldest past that, so contexts made
// and dropped in turn would otherwise take a live one down. (A page canvas keeps
// its context: a later Context on the same canvas gets that one again.)
EM_JS(void, gltrain_release_offscreen_context, (int handle), {
    var context = GL.contexts[handle];
    if (!context) return;
    var ext = context.gltrainWatch && context.gltrainWatch.loseExt;
    if (ext && !context.GLctx.isContextLost()) ext.loseContext();
});

std::string takeString(char* p) {
    std::string s = p ? p : "";
    free(p);
    return s;
}

struct WebPlatform : Context::Platform {
    EMSCRIPTEN_WEBGL_CONTEXT_HANDLE handle = 0;
    bool offscreen = false;  // on an OffscreenCanvas gltrain made, which nothing else uses
    ~WebPlatform() override {
        if (handle <= 0) return;
        if (offscreen) gltrain_release_offscreen_context(handle);
        emscripten_webgl_destroy_context(handle);
    }
    void makeCurrent() override { emscripten_webgl_make_context_current(handle); }
    std::string unmaskedRenderer() override { return takeString(gltrain_unmasked_string(0)); }
    std::string unmaskedVendor() override { return takeString(gltrain_unmasked_string(1)); }

    bool lost() override { return gltrain_context_lost(handle) != 0; }
    long restorations() override { return gltrain_context_restorations(handle); }
    void lose() override {
        if (!gltrain_lose_context(handle, 0))
            throw UnsupportedError("Context::loseContext: the browser does not offer WEBGL_lose_context");
    }
    void restore() override {
        if (!gltrain_lose_context(handle, 1))
            throw UnsupportedError("Context::restoreContext: the browser does not offer WEBGL_lose_context");
    }
    const char* lostHint() const override {
        return "training resumes from the model's last snapshot when the browser restores it (webglcontextrestored)";
    }
};

}  // namespace

std::unique_ptr<Context::Platform> createPlatform(const ContextOptions& options) {
    auto p = std::make_unique<WebPlatform>();
    p->name = "webgl2";
    if (options.canvas.empty()) {
        p->handle = gltrain_offscreen_webgl2();
        p->offscreen = true;
        if (p->handle <= 0)
            throw UnsupportedError("Context: could not create a WebGL2 context on an OffscreenCanvas "
                                   "(OffscreenCanvas or WebGL2 unavailable)");
    } else {
        EmscriptenWebGLContextAttributes attrs;
        emscripten_webgl_init_context_attributes(&attrs);
        attrs.majorVersion = 2;
        attrs.minorVersion = 0;
        attrs.alpha = attrs.depth = attrs.stencil = attrs.antialias = false;
        attrs.premultipliedAlpha = false;
        attrs.enableExtensionsByDefault = true;
        attrs.powerPreference = EM_WEBGL_POWER_PREFERENCE_HIGH_PERFORMANCE;
        p->handle = emscripten_webgl_create_context(options.canvas.c_str(), &attrs);
        if (p->handle <= 0)
            throw UnsupportedError("Context: could not create a WebGL2 context on canvas '" + options.canvas +
                                   "' (" + (p->handle == EMSCRIPTEN_RESULT_UNKNOWN_TARGET
                                                ? std::string("no element matches the selector")
                                                : "error " + std::to_string(p->handle)) +
                                   ")");
    }
    if (emscripten_webgl_make_context_current(p->handle) != EMSCRIPTEN_RESULT_SUCCESS)
        throw UnsupportedError("Context: could not make the WebGL2 context current");
    gltrain_watch_context(p->handle);
    return p;
}

}  // namespace gltrain
