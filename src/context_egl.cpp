// Native context creation: headless OpenGL ES 3 through EGL.
// Order: EGL_PLATFORM_DEVICE_EXT (a GPU without a display server, e.g. NVIDIA),
// EGL_PLATFORM_SURFACELESS_MESA (Mesa llvmpipe), then the default display.
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <string>
#include <vector>

#include "platform.hpp"

namespace gltrain {

namespace {

std::string eglErrorName(EGLint e) {
    switch (e) {
        case EGL_SUCCESS: return "EGL_SUCCESS";
        case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
        case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
        case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
        case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
        case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
        case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
        case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
        case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
        case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
        default: return "EGL error " + std::to_string(e);
    }
}

struct EglPlatform : Context::Platform {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLConfig config = nullptr;
    EGLContext context = EGL_NO_CONTEXT;
    bool robustness = false;            // EGL_EXT_create_context_robustness: a GPU reset is reported, not hidden
    GLenum (*resetStatus)() = nullptr;  // glGetGraphicsResetStatusEXT (GL_EXT_robustness)
    bool lostNow = false;               // loseContext() destroyed the context, or a reset was reported
    long restoredCount = 0;

    ~EglPlatform() override { destroyContext(); }
    void destroyContext() {
        if (context == EGL_NO_CONTEXT) return;
        eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        eglDestroyContext(display, context);
        context = EGL_NO_CONTEXT;
        // No eglTerminate: a display is shared by every context on it in this process.
    }
    void makeCurrent() override { eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context); }

    // An ES 3.0 context on the display, current; "" on success, else why not.
    // With EGL_EXT_create_context_robustness it asks to lose the context on a
    // GPU reset (so glGetGraphicsResetStatusEXT reports it) and falls back to
    // a plain context if the driver refuses.
    std::string createContext() {
        const EGLint robust[] = {EGL_CONTEXT_MAJOR_VERSION,
                                 3,
                                 EGL_CONTEXT_MINOR_VERSION,
                                 0,
                                 EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY_EXT,
                                 EGL_LOSE_CONTEXT_ON_RESET_EXT,
                                 EGL_NONE};
        const EGLint plain[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0, EGL_NONE};
        EGLContext ctx = EGL_NO_CONTEXT;
        if (robustness) ctx = eglCreateContext(display, config, EGL_NO_CONTEXT, robust);
        if (ctx == EGL_NO_CONTEXT) {
            robustness = false;
            ctx = eglCreateContext(display, config, EGL_NO_CONTEXT, plain);
        }
        if (ctx == EGL_NO_CONTEXT) return "eglCreateContext(ES 3.0) failed (" + eglErrorName(eglGetError()) + ")";
        if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
            std::string why = "eglMakeCurrent failed (" + eglErrorName(eglGetError()) + ")";
            eglDestroyContext(display, ctx);
            return why;
        }
        context = ctx;
        resetStatus = nullptr;
        if (robustness) {
            const GLubyte* e = glGetString(GL_EXTENSIONS);
            if (e && std::string(reinterpret_cast<const char*>(e)).find("GL_EXT_robustness") != std::string::npos)
                resetStatus = reinterpret_cast<GLenum (*)()>(eglGetProcAddress("glGetGraphicsResetStatusEXT"));
        }
        return "";
    }

    bool lost() override {
        if (!lostNow && resetStatus && resetStatus() != GL_NO_ERROR) lostNow = true;
        return lostNow;
    }
    long restorations() override { return restoredCount; }
    void lose() override {
        destroyContext();
        lostNow = true;
    }
    void restore() override {
        destroyContext();  // after a reset the old context is unusable: a new one replaces it
        std::string why = createContext();
        if (!why.empty()) throw UnsupportedError("Context::restoreContext: " + why);
        lostNow = false;
        ++restoredCount;
    }
    const char* lostHint() const override {
        return "call Context::restoreContext() for a new one (models then continue from their last snapshot)";
    }
};

// Initialises `dpy` and makes a surfaceless ES 3 context current on it; "" on success, else why not.
std::string tryDisplay(EGLDisplay dpy, EglPlatform& out) {
    if (dpy == EGL_NO_DISPLAY) return "no display (" + eglErrorName(eglGetError()) + ")";
    EGLint major = 0, minor = 0;
    if (!eglInitialize(dpy, &major, &minor)) return "eglInitialize failed (" + eglErrorName(eglGetError()) + ")";
    std::string exts = eglQueryString(dpy, EGL_EXTENSIONS) ? eglQueryString(dpy, EGL_EXTENSIONS) : "";
    if (exts.find("EGL_KHR_surfaceless_context") == std::string::npos)
        return "EGL " + std::to_string(major) + "." + std::to_string(minor) + " without EGL_KHR_surfaceless_context";
    if (!eglBindAPI(EGL_OPENGL_ES_API)) return "eglBindAPI(EGL_OPENGL_ES_API) failed";
    const EGLint configAttribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (!eglChooseConfig(dpy, configAttribs, &config, 1, &count) || count == 0) {
        if (exts.find("EGL_KHR_no_config_context") == std::string::npos) return "no EGL config for OpenGL ES 3";
        config = nullptr;  // EGL_NO_CONFIG_KHR
    }
    out.display = dpy;
    out.config = config;
    out.robustness = exts.find("EGL_EXT_create_context_robustness") != std::string::npos;
    return out.createContext();
}

// A device's name for messages: its renderer (EGL_EXT_device_query_name), else
// its DRM node (EGL_EXT_device_drm[_render_node]), else what kind it is.
std::string deviceName(EGLDeviceEXT device) {
    auto queryString = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    if (!queryString) return "(unnamed)";
    const char* e = queryString(device, EGL_EXTENSIONS);
    const std::string exts = e ? e : "";
    auto has = [&](const char* ext) { return exts.find(ext) != std::string::npos; };
    const char* name = nullptr;
    if (has("EGL_EXT_device_query_name")) name = queryString(device, EGL_RENDERER_EXT);
    if (!name && has("EGL_EXT_device_drm_render_node")) name = queryString(device, EGL_DRM_RENDER_NODE_FILE_EXT);
    if (!name && has("EGL_EXT_device_drm")) name = queryString(device, EGL_DRM_DEVICE_FILE_EXT);
    if (name && *name) return name;
    return has("EGL_MESA_device_software") ? "a software renderer (Mesa)" : "(unnamed)";
}

// "2 EGL devices: 0 /dev/dri/renderD128, 1 a software renderer (Mesa)", for the
// message when the device asked for is not there or does not work.
std::string deviceList(const std::vector<EGLDeviceEXT>& devices) {
    if (devices.empty()) return "0 EGL devices were found";
    std::string list =
        std::to_string(devices.size()) + " EGL device" + (devices.size() == 1 ? " was" : "s were") + " found:";
    for (size_t i = 0; i < devices.size(); ++i)
        list += (i ? ", " : " ") + std::to_string(i) + " " + deviceName(devices[i]);
    return list;
}

}  // namespace

std::unique_ptr<Context::Platform> createPlatform(const ContextOptions& options) {
    auto getPlatformDisplay =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    auto queryDevices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    std::string report;
    auto p = std::make_unique<EglPlatform>();
    for (const std::string& platform : options.eglPlatforms) {
        std::string why;
        if (platform == "device") {
            // A device asked for by index is that device or an error, never another
            // platform's renderer in its place (the caller chose the hardware).
            const bool named = options.eglDevice >= 0;
            const std::string asked = "Context: EGL device " + std::to_string(options.eglDevice) + " (eglDevice)";
            if (!getPlatformDisplay || !queryDevices) {
                why = "EGL_EXT_platform_device / EGL_EXT_device_enumeration not available";
                if (named) throw UnsupportedError(asked + " is not available: 0 EGL devices were found (" + why + ")");
            } else {
                EGLint n = 0;
                if (!queryDevices(0, nullptr, &n)) n = 0;
                std::vector<EGLDeviceEXT> devices(size_t(n > 0 ? n : 0));
                if (n > 0 && !queryDevices(n, devices.data(), &n)) n = 0;
                devices.resize(size_t(n > 0 ? n : 0));
                if (devices.empty()) why = "no EGL devices";
                if (named && size_t(options.eglDevice) >= devices.size())
                    throw UnsupportedError(asked + " does not exist: " + deviceList(devices));
                for (size_t i = 0; i < devices.size(); ++i) {
                    if (named && int(i) != options.eglDevice) continue;
                    std::string w = tryDisplay(getPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr), *p);
                    if (w.empty()) {
                        p->name = "egl-device";
                        return p;
                    }
                    if (named)
                        throw UnsupportedError(asked + " (" + deviceName(devices[i]) + "): " + w + "; " +
                                               deviceList(devices));
                    why += (why.empty() ? "" : "; ") + ("device " + std::to_string(i) + ": " + w);
                }
            }
        } else if (platform == "surfaceless") {
            if (!getPlatformDisplay) {
                why = "eglGetPlatformDisplayEXT not available";
            } else {
                why = tryDisplay(getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr), *p);
                if (why.empty()) {
                    p->name = "egl-surfaceless";
                    return p;
                }
            }
        } else if (platform == "default") {
            why = tryDisplay(eglGetDisplay(EGL_DEFAULT_DISPLAY), *p);
            if (why.empty()) {
                p->name = "egl-default";
                return p;
            }
        } else {
            throw ArgumentError("Context: unknown EGL platform '" + platform +
                                "' (expected device, surfaceless or default)");
        }
        report += "\n  " + platform + ": " + why;
    }
    throw UnsupportedError("Context: could not create a headless OpenGL ES 3 context through EGL:" +
                           (report.empty() ? std::string("\n  (no platforms to try)") : report));
}

}  // namespace gltrain
