// Context: the GL context and everything tied to its lifetime — the one
// framebuffer every pass renders through, the empty vertex array of the
// full-screen triangle, the texture pool and the shader registry. It is the
// only mutable state gltrain keeps; tensors and passes point into it, so it
// must outlive them (a tensor released after its context is dropped safely).
//
// Native: a headless OpenGL ES 3 context through EGL, trying the platforms
// EGL_PLATFORM_DEVICE_EXT (NVIDIA and other GPUs), EGL_PLATFORM_SURFACELESS_MESA
// (Mesa llvmpipe) and then the default display. Web: a WebGL2 context on the
// canvas a CSS selector names, or on a fresh OffscreenCanvas (works in workers).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gltrain/capabilities.hpp"
#include "gltrain/handle.hpp"
#include "gltrain/shader_registry.hpp"
#include "gltrain/texture_pool.hpp"

namespace gltrain {

struct ContextOptions {
    // Native: EGL platforms to try, in order ("device", "surfaceless", "default").
    std::vector<std::string> eglPlatforms = {"device", "surfaceless", "default"};
    int eglDevice = -1;  // with "device": the EGL device index to use; -1 tries each in turn
    // Web: CSS selector of a <canvas>; empty creates an OffscreenCanvas.
    std::string canvas;
    // Pretend MAX_TEXTURE_SIZE is this (0 = the device's). Tests force it low to exercise paging.
    int maxTextureSize = 0;
    // Check glGetError after every pass (slow in browsers: a GPU-process round trip).
    bool debugChecks = false;
};

class Context {
public:
    explicit Context(ContextOptions options = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const Capabilities& caps() const { return caps_; }
    const ContextOptions& options() const { return options_; }
    // The texture size limit in force (the device's, or the forced one).
    int maxTextureSize() const { return maxTextureSize_; }

    TexturePool& pool() { return *pool_; }
    ShaderRegistry& shaders() { return *shaders_; }
    GLuint framebuffer() const { return fbo_.get(); }
    GLuint vertexArray() const { return vao_.get(); }

    // Makes this context current on the calling thread (native) / for the GL calls (web).
    void makeCurrent();
    void finish() { glFinish(); }

    struct Platform;  // EGL or WebGL handles; defined per platform in src/

private:
    void queryCapabilities();
    void measurePrecision();

    ContextOptions options_;
    std::unique_ptr<Platform> platform_;  // declared first: destroyed last
    Capabilities caps_;
    int maxTextureSize_ = 0;
    FramebufferHandle fbo_;
    VertexArrayHandle vao_;
    std::unique_ptr<TexturePool> pool_;
    std::unique_ptr<ShaderRegistry> shaders_;
};

}  // namespace gltrain
