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
//
// Backend (backend.hpp): RGBA32F render targets, else RGBA16F ones, else
// (or by choice) the CPU backend, decided at creation from measured support
// and ContextOptions; caps() reports the choice and why. The Context runs no
// op to decide: on a software renderer, whether the CPU backend is faster is
// measured above it (backend_choice.hpp: makeContext) and the Context told
// (setBackend). A Context asked for the CPU backend has no GL context at all:
// its tensors and passes throw UnsupportedError, while a Sequential on it
// trains on the CPU.
//
// Lost contexts: a browser may take a WebGL context away at any time (GPU
// reset, too many contexts, WEBGL_lose_context), and a native GPU reset does
// the same where EGL_EXT_create_context_robustness lets us ask for reset
// notification. Every texture and program is gone then. The Context notices
// (lost()), every entry that would issue GL work throws ContextLostError
// while it lasts, and once the context is back (the browser's
// webglcontextrestored, or restoreContext() natively) the Context makes its
// own objects again under a new generation(); objects of an older generation
// are dropped without GL deletes, and models rebuild themselves from their
// snapshots (Sequential).
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/capabilities.hpp"
#include "gltrain/context_options.hpp"
#include "gltrain/cpu/thread_pool.hpp"
#include "gltrain/handle.hpp"
#include "gltrain/shader_registry.hpp"
#include "gltrain/texture_pool.hpp"

namespace gltrain {

// The GL context and everything tied to its lifetime; see the comment at the top of this header.
class Context {
public:
    // Creates the context as `options` ask (EGL natively, WebGL2 on the web; no GL at all for the CPU backend).
    // Throws GlError or UnsupportedError saying what is missing.
    explicit Context(ContextOptions options = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    // The capability report: device, limits, measured precision, the backend and why.
    const Capabilities& caps() const { return caps_; }
    // The options the context was made with.
    const ContextOptions& options() const { return options_; }
    // After reading values back: glGetError with debugChecks (in a browser it is
    // a GPU-process round trip, 0.13 ms in Chromium: half a 1-texel read), and
    // always whether the context was lost meanwhile (the values would be zeros).
    void checkRead(const char* site) {
        if (options_.debugChecks) checkGl(site);
        requireUsable(site);
    }
    // The texture size limit in force (the device's, or the forced one).
    int maxTextureSize() const {
        requireGl("Tensor");
        return maxTextureSize_;
    }
    // Whether this Context has a GL context (a CPU-backend Context may have none).
    bool hasGl() const { return bool(platform_); }

    // The backend models train on (caps().backend).
    Backend backend() const { return caps_.backend; }
    // The engine models train on, as decided above the Context by a measurement
    // (backend_choice.hpp), with `reason` as the report's: Backend::Cpu (a GL
    // context stays, so tensors and passes keep working), or the backend the
    // Context has. Anything else is an ArgumentError: what the device renders
    // to is not a choice.
    void setBackend(Backend backend, std::string reason);
    // The format of every texture the GPU renders to: RGBA32F, or RGBA16F on the half-float backend.
    GLenum renderFormat() const { return caps_.backend == Backend::GpuFloat16 ? GL_RGBA16F : GL_RGBA32F; }
    // Every integer up to this is exact in rendered storage (2^24 for fp32, 2^11 for
    // half floats): GPU sums of counts are read out before they could pass it.
    double exactIntegerLimit() const { return std::ldexp(1.0, caps_.measuredMantissaBits + 1); }

    // ---- lost contexts ----
    // Whether the GL context is lost now. Web: one call to isContextLost();
    // native: loseContext() was called, or the driver reported a reset.
    bool lost();
    // Counts the times the context's own objects were dropped (a loss): a GL
    // object made under an older generation is gone.
    uint64_t generation() const { return generation_; }
    // Throws ContextLostError naming `where` while the context is lost; when it
    // has come back, first makes the context's objects again (a new generation).
    void requireUsable(const char* where);
    // As WEBGL_lose_context: loseContext() takes the context away now (native:
    // destroys the EGL context; web: WEBGL_lose_context.loseContext()), and
    // restoreContext() brings a fresh one (native: at once; web: the browser
    // restores it asynchronously and fires webglcontextrestored).
    void loseContext();
    // Brings a lost context back (see loseContext()).
    void restoreContext();

    // The pool every tensor's texture is on loan from.
    TexturePool& pool() { return *pool_; }
    // The kernels, compiled on first use and cached by (name, defines).
    ShaderRegistry& shaders() { return *shaders_; }
    // The one framebuffer every pass renders through.
    GLuint framebuffer() const { return fbo_.get(); }
    // The empty vertex array of the full-screen triangle.
    GLuint vertexArray() const { return vao_.get(); }
    // The buffer transform-feedback kernels write to, grown to at least `bytes`
    // (allocation happens on a pass's first run, never in the steady state).
    GLuint feedbackBuffer(size_t bytes);
    // The host buffer synchronous reads stage texels in, grown to at least
    // `floats` and kept: a training loop's loss reads allocate nothing.
    float* readStaging(size_t floats) {
        if (readStaging_.size() < floats) readStaging_.resize(floats);
        return readStaging_.data();
    }

    // The CPU backend's threads (ContextOptions::cpuThreads), made on first use.
    cpu::ThreadPool& cpuThreads() {
        if (!cpuThreads_) {
            cpuThreads_ = std::make_unique<cpu::ThreadPool>(options_.cpuThreads);
            caps_.cpuThreads = cpuThreads_->size();
            caps_.cpuThreadsReason = cpuThreads_->reason();
        }
        return *cpuThreads_;
    }

    // Makes this context current on the calling thread (native) / for the GL calls (web).
    void makeCurrent();
    // Waits for every GL command issued so far (glFinish); nothing on the CPU backend.
    void finish() {
        if (platform_) glFinish();
    }

    struct Platform;  // EGL or WebGL handles; defined per platform in src/

private:
    void queryCapabilities(Capabilities& c) const;
    void checkRestoredDevice();
    void chooseCompute();
    void chooseFeedback();
    void chooseFetch();
    void measurePrecision();
    void createObjects();
    void abandonObjects();
    void startWithoutGl(const std::string& reason);
    void requireGl(const char* where) const;

    ContextOptions options_;
    std::unique_ptr<Platform> platform_;  // declared first: destroyed last
    Capabilities caps_;
    int maxTextureSize_ = 0;
    FramebufferHandle fbo_;
    VertexArrayHandle vao_;
    BufferHandle feedbackBuffer_;
    size_t feedbackBytes_ = 0;
    std::vector<float> readStaging_;
    std::unique_ptr<TexturePool> pool_;
    std::unique_ptr<ShaderRegistry> shaders_;
    std::unique_ptr<cpu::ThreadPool> cpuThreads_;
    uint64_t generation_ = 0;
    long restorations_ = 0;          // the platform's restorations that this generation has seen
    bool objectsAbandoned_ = false;  // dropped for a loss and not made again yet
    std::string restoredShortfall_;  // what the restored device lacks (checkRestoredDevice); empty: able
};

}  // namespace gltrain
