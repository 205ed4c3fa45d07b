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

    // Lost contexts (see context.hpp).
    virtual bool lost() = 0;
    // How many times the context came back after a loss; a change means every GL object is gone.
    virtual long restorations() = 0;
    virtual void lose() = 0;
    virtual void restore() = 0;
    // How the context comes back, for the ContextLostError message.
    virtual const char* lostHint() const = 0;
};

// Creates and makes current a GL ES 3 / WebGL2 context; throws UnsupportedError
// listing what each attempt said.
std::unique_ptr<Context::Platform> createPlatform(const ContextOptions& options);

}  // namespace gltrain
