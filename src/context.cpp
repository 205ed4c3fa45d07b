// Context: the platform-independent part (capabilities, precision probe).
#include "gltrain/context.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gltrain/backend.hpp"
#include "gltrain/pass.hpp"
#include "gltrain/tensor.hpp"
#include "platform.hpp"

namespace gltrain {

namespace {
std::string glString(GLenum e) {
    const GLubyte* s = glGetString(e);
    return s ? reinterpret_cast<const char*>(s) : "";
}
bool contains(const std::string& hay, const char* needle) {
    std::string h = hay, n = needle;
    std::transform(h.begin(), h.end(), h.begin(), ::tolower);
    std::transform(n.begin(), n.end(), n.begin(), ::tolower);
    return h.find(n) != std::string::npos;
}
}  // namespace

Context::Context(ContextOptions options) : options_(std::move(options)) {
    // Every option is checked before any platform is touched.
    if (options_.maxTextureSize < 0)
        throw ArgumentError("Context: maxTextureSize must be >= 0 (0 = the device's), got " +
                            std::to_string(options_.maxTextureSize));
#ifndef __EMSCRIPTEN__
    if (options_.eglPlatforms.empty())
        throw ArgumentError("Context: eglPlatforms is empty (give one or more of device, surfaceless, default)");
    for (const std::string& p : options_.eglPlatforms)
        if (p != "device" && p != "surfaceless" && p != "default")
            throw ArgumentError("Context: unknown EGL platform '" + p +
                                "' in eglPlatforms (valid: device, surfaceless, default)");
    if (options_.eglDevice < -1)
        throw ArgumentError("Context: eglDevice must be -1 (try each device) or a device index >= 0, got " +
                            std::to_string(options_.eglDevice));
    // A device index means that device: without the device platform it would be ignored.
    if (options_.eglDevice >= 0 && std::find(options_.eglPlatforms.begin(), options_.eglPlatforms.end(), "device") ==
                                       options_.eglPlatforms.end()) {
        std::string list;
        for (const std::string& p : options_.eglPlatforms) list += (list.empty() ? "" : ", ") + p;
        throw ArgumentError("Context: eglDevice " + std::to_string(options_.eglDevice) +
                            " needs the device platform in eglPlatforms (given: " + list + ")");
    }
#endif
    if (options_.backend != BackendPreference::Auto && options_.backend != BackendPreference::Gpu &&
        options_.backend != BackendPreference::Cpu)
        throw ArgumentError("Context: backend " + std::to_string(int(options_.backend)) +
                            " is not a BackendPreference (auto, gpu or cpu)");
    if (options_.compute != ComputePreference::Auto && options_.compute != ComputePreference::On &&
        options_.compute != ComputePreference::Off)
        throw ArgumentError("Context: compute " + std::to_string(int(options_.compute)) +
                            " is not a ComputePreference (auto, on or off)");
    if (options_.feedback != FeedbackPreference::Auto && options_.feedback != FeedbackPreference::On &&
        options_.feedback != FeedbackPreference::Off)
        throw ArgumentError("Context: feedback " + std::to_string(int(options_.feedback)) +
                            " is not a FeedbackPreference (auto, on or off)");
    if (options_.fetch != FetchPreference::Auto && options_.fetch != FetchPreference::Sampled &&
        options_.fetch != FetchPreference::TexelFetch)
        throw ArgumentError("Context: fetch " + std::to_string(int(options_.fetch)) +
                            " is not a FetchPreference (auto, sampled or texelFetch)");
    if (options_.cpuThreads < 0)
        throw ArgumentError("Context: cpuThreads must be 0 (one per hardware thread) or a count >= 1, got " +
                            std::to_string(options_.cpuThreads));
    if (!(options_.feedbackMinWork >= 0.0) || std::isinf(options_.feedbackMinWork))
        throw ArgumentError("Context: feedbackMinWork must be a finite number >= 0, got " +
                            std::to_string(options_.feedbackMinWork));
    const cpu::ThreadPool::Plan threads = cpu::ThreadPool::plan(options_.cpuThreads);
    caps_.cpuThreads = threads.threads;
    caps_.cpuThreadsReason = threads.reason;
    if (options_.backend == BackendPreference::Cpu) {
        startWithoutGl("asked for (ContextOptions::backend = cpu): models train on the CPU; no GL context");
        return;
    }
    try {
        platform_ = createPlatform(options_);
    } catch (const UnsupportedError& e) {
        // No WebGL2 / EGL here: Auto trains on the CPU — unless a particular canvas or
        // EGL device was named, whose absence is the caller's mistake to hear about.
        if (options_.backend != BackendPreference::Auto || !options_.canvas.empty() || options_.eglDevice >= 0) throw;
        startWithoutGl(std::string("no GL context (") + e.what() + "): models train on the CPU");
        return;
    }
    queryCapabilities(caps_);
    BackendChoice choice = chooseBackend(caps_, options_);
    if (choice.backend == Backend::Cpu) {  // nothing to render to: the GL context is of no use
        platform_.reset();
        startWithoutGl(choice.reason);
        return;
    }
    caps_.backend = choice.backend;
    caps_.backendReason = choice.reason;
    chooseCompute();
    chooseFeedback();
    chooseFetch();
    maxTextureSize_ =
        options_.maxTextureSize > 0 ? std::min(options_.maxTextureSize, caps_.maxTextureSize) : caps_.maxTextureSize;
    pool_ = std::make_unique<TexturePool>();
    shaders_ = std::make_unique<ShaderRegistry>(caps_.sampledFetch);
    createObjects();
    measurePrecision();
}

// Compute-shader kernels: OpenGL ES 3.1 compute with the 16x16 workgroups and
// 8 KiB of shared memory they use, and RGBA32F storage (their image stores are
// rgba32f). ContextOptions::compute decides where the device has them.
static void queryCompute(Capabilities& c) {
    c.computeShaders = false;
#if GLTRAIN_GL_COMPUTE
    GLint major = 0, minor = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &major);
    glGetIntegerv(GL_MINOR_VERSION, &minor);
    if (major > 3 || (major == 3 && minor >= 1)) {
        GLint invocations = 0, shared = 0, sizeX = 0, sizeY = 0;
        glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &invocations);
        glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &shared);
        glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, 0, &sizeX);
        glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, 1, &sizeY);
        c.computeShaders = invocations >= 256 && shared >= 8192 && sizeX >= 16 && sizeY >= 16;
    }
    glGetError();
#endif
}

void Context::chooseCompute() {
    caps_.computeKernels = false;
    if (!caps_.computeShaders)
        caps_.computeReason = "this device has no compute shaders (WebGL2 and OpenGL ES 3.0 have none)";
    else if (options_.compute == ComputePreference::Off) caps_.computeReason = "ContextOptions::compute = off";
    else if (caps_.backend != Backend::GpuFloat32)
        caps_.computeReason = "the half-float backend (compute kernels store rgba32f)";
    else if (options_.compute == ComputePreference::Auto && caps_.softwareRenderer)
        caps_.computeReason =
            "a software renderer runs the fragment kernels faster (ContextOptions::compute = on forces them)";
    else {
        caps_.computeKernels = true;
        caps_.computeReason =
            std::string("every pass runs as a compute shader (") +
            (options_.compute == ComputePreference::On ? "ContextOptions::compute = on"
                                                       : "ContextOptions::compute = off keeps the fragment kernels") +
            ")";
    }
}

// The renderer whose measurements chose the feedback matmul and texture() reads.
static bool isSwiftShader(const Capabilities& c) { return c.renderer.find("SwiftShader") != std::string::npos; }

// Transform-feedback matmul (ops/matmul.hpp): measured on SwiftShader
// (bench_compare_native --steps in Chromium, and W3 of bench/COMPARE.md at
// N = 512 and 1024) at 1.3-1.5x the fragment kernels, so Auto uses it
// there; on llvmpipe it has not been timed against the fragment kernels, and
// a GPU with compute kernels has the faster compute matmul.
void Context::chooseFeedback() {
    caps_.feedbackKernels = false;
    if (options_.feedback == FeedbackPreference::Off) caps_.feedbackReason = "ContextOptions::feedback = off";
    else if (caps_.backend != Backend::GpuFloat32)
        caps_.feedbackReason = "the half-float backend (the captured blocks are fp32)";
    else if (caps_.computeKernels) caps_.feedbackReason = "compute kernels run matmul";
    else if (options_.feedback == FeedbackPreference::Auto && !isSwiftShader(caps_))
        caps_.feedbackReason = "measured faster only on SwiftShader (ContextOptions::feedback = on forces it)";
    else {
        caps_.feedbackKernels = true;
        caps_.feedbackReason =
            options_.feedback == FeedbackPreference::On
                ? "ContextOptions::feedback = on"
                : "SwiftShader: faster than the fragment kernels (ContextOptions::feedback = off keeps them)";
    }
}

void Context::chooseFetch() {
    const bool swiftShader = isSwiftShader(caps_);
    if (options_.fetch == FetchPreference::Sampled) {
        caps_.sampledFetch = true;
        caps_.fetchReason = "ContextOptions::fetch = sampled";
    } else if (options_.fetch == FetchPreference::TexelFetch) {
        caps_.sampledFetch = false;
        caps_.fetchReason = "ContextOptions::fetch = texelFetch";
    } else {
        caps_.sampledFetch = swiftShader;
        caps_.fetchReason = swiftShader
                                ? "SwiftShader: cheaper than texelFetch (ContextOptions::fetch = texelFetch keeps it)"
                                : "measured cheaper only on SwiftShader (ContextOptions::fetch = sampled forces it)";
    }
}

GLuint Context::feedbackBuffer(size_t bytes) {
    if (!feedbackBuffer_ || bytes > feedbackBytes_) {
        if (!feedbackBuffer_) feedbackBuffer_ = BufferHandle::create();
        glBindBuffer(GL_COPY_WRITE_BUFFER, feedbackBuffer_.get());
        glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(bytes), nullptr, GL_DYNAMIC_COPY);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        checkGl("Context: allocating the transform-feedback buffer");
        feedbackBytes_ = bytes;
    }
    return feedbackBuffer_.get();
}

// The CPU backend without GL: the pool and the registry exist (empty), so
// counters and reports work; anything that would draw throws (requireGl).
void Context::startWithoutGl(const std::string& reason) {
    if (caps_.platform.empty()) caps_.platform = "none";
    caps_.backend = Backend::Cpu;
    caps_.backendReason = reason;
    caps_.computeKernels = false;
    caps_.computeReason = "no GL context";
    caps_.feedbackKernels = false;
    caps_.feedbackReason = "no GL context";
    caps_.fetchReason = "no GL context";
    caps_.measuredMantissaBits = 23;  // IEEE fp32 in host memory
    pool_ = std::make_unique<TexturePool>();
    shaders_ = std::make_unique<ShaderRegistry>();
}

void Context::setBackend(Backend backend, std::string reason) {
    if (backend != Backend::Cpu && backend != caps_.backend)
        throw ArgumentError(std::string("Context::setBackend: this Context can train on ") +
                            backendName(caps_.backend) + " or cpu, not " + backendName(backend));
    caps_.backend = backend;
    caps_.backendReason = std::move(reason);
}

void Context::requireGl(const char* where) const {
    if (!platform_)
        throw UnsupportedError(std::string(where) +
                               ": this Context has no GL context (backend cpu: " + caps_.backendReason + ")");
}

Context::~Context() {
    if (platform_ && !platform_->lost()) platform_->makeCurrent();
    else abandonObjects();  // nothing to delete: the objects went with the context
    shaders_.reset();
    pool_.reset();
    feedbackBuffer_.reset();
    vao_.reset();
    fbo_.reset();
}

void Context::makeCurrent() {
    if (platform_) platform_->makeCurrent();
}

void Context::createObjects() {
    fbo_ = FramebufferHandle::create();
    vao_ = VertexArrayHandle::create();
    checkGl("Context: creating the framebuffer and vertex array");
    objectsAbandoned_ = false;
}

// The GL objects are gone with the context: forget their names (they may
// already stand for new objects) and start a new generation.
void Context::abandonObjects() {
    shaders_->abandon();
    pool_->abandon();
    fbo_.release();
    vao_.release();
    feedbackBuffer_.release();
    feedbackBytes_ = 0;
    objectsAbandoned_ = true;
    ++generation_;
}

bool Context::lost() { return platform_ && platform_->lost(); }

void Context::requireUsable(const char* where) {
    requireGl(where);
    if (platform_->lost()) {
        if (!objectsAbandoned_) abandonObjects();
        throw ContextLostError(std::string(where) + ": the GL context is lost; " + platform_->lostHint());
    }
    if (platform_->restorations() != restorations_) {
        // Back from a loss: whatever the old context held is gone, even if we never saw it lost.
        restorations_ = platform_->restorations();
        if (!objectsAbandoned_) abandonObjects();
        platform_->makeCurrent();
        checkRestoredDevice();
        if (restoredShortfall_.empty()) {
            createObjects();
            measurePrecision();  // the restored device's own mantissa, through its storage
        }
    }
    if (!restoredShortfall_.empty()) throw UnsupportedError(std::string(where) + ": " + restoredShortfall_);
}

// The restored context may be another device: query it again. One that can run
// what this Context chose carries on, reported as what it is (the kernel
// choices stay: they are correct anywhere, only tuned for the old device); one
// that cannot refuses every call, saying what it lacks, until a restore brings
// an able device back.
void Context::checkRestoredDevice() {
    Capabilities now = caps_;
    queryCapabilities(now);
    now.measuredMantissaBits = 0;  // not the lost device's: measured once the objects exist
    const std::vector<std::string> lacks = restoreShortfalls(caps_, now, maxTextureSize_);
    restoredShortfall_.clear();
    if (!lacks.empty()) {
        std::string list;
        for (auto& l : lacks) list += (list.empty() ? "" : "; ") + l;
        restoredShortfall_ = "the restored GL context (" + now.renderer +
                             ") cannot run what this Context made on the lost one (" + caps_.renderer + "): " + list +
                             "; make a new Context (a model: load its snapshotCheckpoint() there)";
        return;
    }
    now.restoresChecked = caps_.restoresChecked + 1;
    now.cpuThreads = caps_.cpuThreads;  // the host's, not the device's
    now.cpuThreadsReason = caps_.cpuThreadsReason;
    caps_ = std::move(now);
}

void Context::loseContext() {
    requireGl("Context::loseContext");
    if (platform_->lost()) throw ArgumentError("Context::loseContext: the context is already lost");
    platform_->lose();
    abandonObjects();
}

void Context::restoreContext() {
    requireGl("Context::restoreContext");
    if (!platform_->lost()) throw ArgumentError("Context::restoreContext: the context is not lost");
    platform_->restore();
    if (!platform_->lost()) requireUsable("Context::restoreContext");  // native: back at once
}

// The device as queried and measured (the constructor, and again after a restore).
void Context::queryCapabilities(Capabilities& c) const {
    c.platform = platform_->name;
    c.vendor = glString(GL_VENDOR);
    c.renderer = glString(GL_RENDERER);
    std::string uv = platform_->unmaskedVendor(), ur = platform_->unmaskedRenderer();
    if (!uv.empty()) c.vendor = uv;
    if (!ur.empty()) c.renderer = ur;
    c.version = glString(GL_VERSION);
    c.shadingLanguageVersion = glString(GL_SHADING_LANGUAGE_VERSION);
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &c.maxTextureSize);
    glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &c.maxArrayTextureLayers);
    glGetIntegerv(GL_MAX_DRAW_BUFFERS, &c.maxDrawBuffers);
    glGetIntegerv(GL_MAX_TEXTURE_IMAGE_UNITS, &c.maxTextureImageUnits);
    GLint captured = 0, vertexOut = 0;
    glGetIntegerv(GL_MAX_TRANSFORM_FEEDBACK_INTERLEAVED_COMPONENTS, &captured);
    glGetIntegerv(GL_MAX_VERTEX_OUTPUT_COMPONENTS, &vertexOut);
    c.maxFeedbackComponents = std::min(captured, vertexOut);
    GLint n = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &n);
    c.extensions.clear();
    for (GLint i = 0; i < n; ++i) {
        const GLubyte* e = glGetStringi(GL_EXTENSIONS, GLuint(i));
        if (!e) continue;
        std::string s = reinterpret_cast<const char*>(e);
        if (s.rfind("GL_", 0) == 0) s = s.substr(3);  // native and Emscripten prefix "GL_"; WebGL does not
        c.extensions.push_back(s);
    }
    // OpenGL ES 3.2 made float colour buffers core.
    c.colorBufferFloat = c.hasExtension("EXT_color_buffer_float") || contains(c.version, "OpenGL ES 3.2");
    c.colorBufferHalfFloat = c.hasExtension("EXT_color_buffer_half_float") || c.colorBufferFloat;
    c.floatBlend = c.hasExtension("EXT_float_blend");
    c.softwareRenderer = false;
    for (const char* sw : {"swiftshader", "llvmpipe", "softpipe", "software", "swrast", "lavapipe"})
        if (contains(c.renderer, sw)) c.softwareRenderer = true;
#ifdef __EMSCRIPTEN__
    c.timerReason = c.hasExtension("EXT_disjoint_timer_query_webgl2")
                        ? "a browser gives query results only between event-loop turns, and profiles are synchronous"
                        : "EXT_disjoint_timer_query_webgl2 is not advertised";
#else
    // A software renderer's queries do not bracket its work: llvmpipe rasterizes
    // on its own threads after the query has ended (a 16384 x 8 x 256 product:
    // 0.29 ms by its timer, 31 ms waited for on the host clock).
    const bool timer = c.hasExtension("EXT_disjoint_timer_query");
    c.timerQueries = timer && !c.softwareRenderer;
    c.timerReason = !timer ? "EXT_disjoint_timer_query is not advertised"
                    : c.softwareRenderer
                        ? "EXT_disjoint_timer_query is advertised, but a software renderer's queries miss the work "
                          "its rasterizer threads do after them"
                        : "EXT_disjoint_timer_query";
#endif

    // Measured, not trusted: is an RGBA32F colour attachment complete?
    TextureHandle t = TextureHandle::create();
    glBindTexture(GL_TEXTURE_2D, t.get());
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA32F, 1, 1);
    FramebufferHandle f = FramebufferHandle::create();
    glBindFramebuffer(GL_FRAMEBUFFER, f.get());
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, t.get(), 0);
    c.float32Renderable = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    // And an RGBA16F one (the half-float fallback).
    TextureHandle h = TextureHandle::create();
    glBindTexture(GL_TEXTURE_2D, h.get());
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA16F, 1, 1);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, h.get(), 0);
    c.float16Renderable = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    queryCompute(c);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glGetError();  // a refused float texture leaves an error flag that is reported above, not later
}

// Renders 1 + 2^-k for k = 1..32 and counts how many k survive exactly:
// the number of mantissa bits the fragment stage keeps (23 for IEEE fp32).
void Context::measurePrecision() {
    const int n = 32;
    HostMatrix one(1, n, 1.0f), tiny(1, n);
    for (int k = 1; k <= n; ++k) tiny.data[size_t(k - 1)] = std::ldexp(1.0f, -k);
    Tensor a(*this, one), b(*this, tiny), out(*this, 1, n);
    Pass(*this, "util/precision_probe").input("A", a).input("B", b).output(out).run();
    HostMatrix r = out.download();
    int bits = 0;
    for (int k = 1; k <= n; ++k) {
        if (r.data[size_t(k - 1)] - 1.0f != std::ldexp(1.0f, -k)) break;
        bits = k;
    }
    caps_.measuredMantissaBits = bits;
}

}  // namespace gltrain
