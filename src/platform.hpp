// Private: what Context needs from the platform layer (EGL or WebGL).
#pragma once
#include <memory>
#include <string>

#include "gltrain/context.hpp"

namespace gltrain {

struct Context::Platform {
    virtual ~Platform() = default;
    virtual void makeCurrent() = 0;
    // The renderer behind a privacy mask (WebGL's WEBGL_debug_renderer_info); "" if none.
    virtual std::string unmaskedRenderer() { return ""; }
    virtual std::string unmaskedVendor() { return ""; }
    std::string name;  // "egl-device", "egl-surfaceless", "egl-default", "webgl2"
};

// Creates and makes current a GL ES 3 / WebGL2 context; throws UnsupportedError
// listing what each attempt said.
std::unique_ptr<Context::Platform> createPlatform(const ContextOptions& options);

}  // namespace gltrain
