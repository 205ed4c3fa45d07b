// The one place that includes the OpenGL ES API (native: Debian's GLES 3.1
// headers over libglvnd, whose libGLESv2 exports every ES 3.2 entry point; web:
// Emscripten's WebGL2 emulation of ES 3.0), and the GL error check that tags an
// error with its call site. GLTRAIN_GL_COMPUTE: the compute-shader entry points
// exist (native); whether the device has them is Capabilities::computeShaders.
#pragma once
#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#define GLTRAIN_GL_COMPUTE 0
#else
#include <GLES3/gl31.h>
#define GLTRAIN_GL_COMPUTE 1
#endif
// EXT_disjoint_timer_query's enums (Capabilities::timerQueries), which the
// core query functions take.
#ifndef GL_TIME_ELAPSED_EXT
#define GL_TIME_ELAPSED_EXT 0x88BF
#endif
#ifndef GL_GPU_DISJOINT_EXT
#define GL_GPU_DISJOINT_EXT 0x8FBB
#endif

#include <cstdio>
#include <string>

#include "gltrain/error.hpp"

namespace gltrain {

// What glGetError says once the context is gone: GL_CONTEXT_LOST (ES 3.2,
// KHR_robustness) natively, CONTEXT_LOST_WEBGL in a browser.
constexpr GLenum kGlContextLost = 0x0507;
constexpr GLenum kWebGlContextLost = 0x9242;

inline const char* glErrorName(GLenum e) {
    switch (e) {
        case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
        case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
        case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
        case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
        case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
        case kGlContextLost: return "GL_CONTEXT_LOST";
        case kWebGlContextLost: return "CONTEXT_LOST_WEBGL";
        default: return "unknown GL error";
    }
}

// Throws GlError naming `site` if the GL error flag is set. glGetError is a
// round trip to the GPU process in browsers, so the per-pass hot path only
// calls this when the context was created with debug checks on.
inline void checkGl(const char* site) {
    GLenum e = glGetError();
    if (e == GL_NO_ERROR) return;
    char code[16];
    std::snprintf(code, sizeof code, "0x%04x", unsigned(e));
    if (e == kGlContextLost || e == kWebGlContextLost)
        throw ContextLostError(std::string(site) + ": the GL context is lost (" + glErrorName(e) + ", " + code + ")");
    throw GlError(std::string(glErrorName(e)) + " (" + code + ") at " + site);
}

}  // namespace gltrain
