// What the device can do, as queried and as measured.
#pragma once
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace gltrain {

// Which engine runs a Context's work (backend.hpp decides and explains).
enum class Backend {
    GpuFloat32,  // RGBA32F render targets
    GpuFloat16,  // RGBA16F render targets (RGBA32F not renderable)
    Cpu          // models train on the CPU (gltrain/cpu/); GL, if any, serves tensors only
};
inline const char* backendName(Backend b) {
    switch (b) {
        case Backend::GpuFloat32: return "gpu-float32";
        case Backend::GpuFloat16: return "gpu-float16";
        case Backend::Cpu: return "cpu";
    }
    return "unknown";
}

// What the device offers and what the Context chose, measured at creation; print it with operator<<.
struct Capabilities {
    std::string platform;  // "egl-device", "egl-surfaceless", "egl-default" or "webgl2"
    // GL_VENDOR, GL_RENDERER, GL_VERSION and GL_SHADING_LANGUAGE_VERSION.
    std::string vendor, renderer, version, shadingLanguageVersion;
    int maxTextureSize = 0;  // as reported by the device
    // GL_MAX_ARRAY_TEXTURE_LAYERS: the most pages (layers) a tensor may have.
    int maxArrayTextureLayers = 0;
    // GL_MAX_DRAW_BUFFERS: the most outputs one pass may write.
    int maxDrawBuffers = 0;
    // GL_MAX_TEXTURE_IMAGE_UNITS: the most inputs one pass may read.
    int maxTextureImageUnits = 0;
    int maxFeedbackComponents = 0;  // floats a vertex can output and transform feedback capture (the smaller
                                    // of MAX_TRANSFORM_FEEDBACK_INTERLEAVED_COMPONENTS, MAX_VERTEX_OUTPUT_COMPONENTS)
    bool colorBufferFloat = false;  // EXT_color_buffer_float advertised (or core in ES 3.2)
    bool colorBufferHalfFloat = false;  // EXT_color_buffer_half_float advertised
    bool floatBlend = false;            // EXT_float_blend advertised
    bool timerQueries = false;          // PassList::profile times passes with GPU timer queries
    std::string timerReason;            // why it does or does not
    bool float32Renderable = false;     // measured: an RGBA32F framebuffer is complete
    bool float16Renderable = false;     // measured: an RGBA16F framebuffer is complete
    bool softwareRenderer = false;      // SwiftShader, llvmpipe, softpipe, ...
    int measuredMantissaBits = 0;       // measured by the precision probe kernel through the render
                                        // format (fp32 storage: 23; half-float storage: 10)
    bool computeShaders = false;        // OpenGL ES 3.1 compute shaders with a 16x16 workgroup (native)
    bool computeKernels = false;        // compute-shader kernels run (ContextOptions::compute decides)
    std::string computeReason;          // why they do or do not
    bool feedbackKernels = false;       // matmul runs as a transform-feedback kernel (ContextOptions::feedback decides)
    std::string feedbackReason;         // why it does or does not
    bool sampledFetch = false;  // fragment and vertex kernels read with texture() (ContextOptions::fetch decides)
    std::string fetchReason;    // why they do or do not
    // The backend models train on (see backend.hpp; backendReason says why).
    Backend backend = Backend::GpuFloat32;
    std::string backendReason;  // why this backend (what was missing or disabled)
    // How many threads the CPU backend trains on (ContextOptions::cpuThreads,
    // cpu/thread_pool.hpp): planned at creation, what the pool got once made.
    int cpuThreads = 1;
    std::string cpuThreadsReason;  // why that many (the option, the build, the page's isolation)
    // The GL extensions the context reports.
    std::vector<std::string> extensions;
    int restoresChecked = 0;  // restored contexts queried again and found able (restoreShortfalls)

    // Whether the context reports extension `name`.
    bool hasExtension(const std::string& name) const {
        for (auto& e : extensions)
            if (e == name) return true;
        return false;
    }
};

// The precision consequences of the backend's storage, with the measured mantissa.
inline std::string storageDescription(const Capabilities& c) {
    const double rel = std::ldexp(1.0, -(c.measuredMantissaBits + 1));  // round to nearest: half an ulp
    char err[32];
    std::snprintf(err, sizeof err, "%.1e", rel);
    if (c.backend == Backend::Cpu) return "host memory: IEEE fp32 (23 mantissa bits)";
    if (c.backend == Backend::GpuFloat16)
        return "RGBA16F half floats: values keep " + std::to_string(c.measuredMantissaBits) +
               " mantissa bits (measured), relative rounding error up to " + err +
               " per stored value, largest finite value 65504; uploaded inputs stay RGBA32F; training scales the "
               "loss dynamically and keeps Adam/RMSProp eps >= 1e-4";
    return "RGBA32F floats: " + std::to_string(c.measuredMantissaBits) +
           " mantissa bits (measured), relative rounding error up to " + err + " per stored value";
}

// What a restored GL context lacks of what a Context made and chose on the
// lost one (`before`: its capabilities; `after`: the restored device's, as
// queried; `maxTextureSizeInUse`: the size its tensors are paged by). A
// browser may restore onto another device (another GPU, or SwiftShader once the
// GPU process has crashed too often): a slower one still runs everything, but
// one that cannot render the storage format, or holds smaller textures, fewer
// layers, render targets or texture units, or no compute shaders where matmul
// used them, cannot run the kernels and tensors chosen for the old one.
inline std::vector<std::string> restoreShortfalls(const Capabilities& before, const Capabilities& after,
                                                  int maxTextureSizeInUse) {
    std::vector<std::string> s;
    auto fell = [&](const char* name, int was, int now) {
        if (now < was) s.push_back(std::string(name) + " is " + std::to_string(now) + ", was " + std::to_string(was));
    };
    if (before.backend == Backend::GpuFloat16 ? !after.float16Renderable : !after.float32Renderable)
        s.push_back(std::string(before.backend == Backend::GpuFloat16 ? "RGBA16F" : "RGBA32F") +
                    " render targets are not complete");
    if (after.maxTextureSize < maxTextureSizeInUse)
        s.push_back("MAX_TEXTURE_SIZE is " + std::to_string(after.maxTextureSize) + ", tensors are paged by " +
                    std::to_string(maxTextureSizeInUse));
    fell("MAX_ARRAY_TEXTURE_LAYERS", before.maxArrayTextureLayers, after.maxArrayTextureLayers);
    fell("MAX_DRAW_BUFFERS", before.maxDrawBuffers, after.maxDrawBuffers);
    fell("MAX_TEXTURE_IMAGE_UNITS", before.maxTextureImageUnits, after.maxTextureImageUnits);
    // (The feedback matmul's block follows the limit: recorded passes keep the lost device's.)
    if (before.feedbackKernels)
        fell("the feedback components limit", before.maxFeedbackComponents, after.maxFeedbackComponents);
    if (before.computeKernels && !after.computeShaders) s.push_back("no compute shaders (every pass runs as one)");
    return s;
}

// How a pass profile times its passes (PassList::profile), in words.
inline const char* profileClock(bool gpuTimer) {
    return gpuTimer ? "GPU timer queries" : "host clock, each pass waited for";
}

inline std::ostream& operator<<(std::ostream& os, const Capabilities& c) {
    auto yn = [](bool b) { return b ? "yes" : "no"; };
    os << "platform:                    " << c.platform << "\n"
       << "vendor:                      " << c.vendor << "\n"
       << "renderer:                    " << c.renderer << (c.softwareRenderer ? "  (software renderer)" : "") << "\n"
       << "version:                     " << c.version << "\n"
       << "GLSL:                        " << c.shadingLanguageVersion << "\n"
       << "MAX_TEXTURE_SIZE:            " << c.maxTextureSize << "\n"
       << "MAX_ARRAY_TEXTURE_LAYERS:    " << c.maxArrayTextureLayers << "\n"
       << "MAX_DRAW_BUFFERS:            " << c.maxDrawBuffers << "\n"
       << "feedback components:         " << c.maxFeedbackComponents
       << " (transform feedback, interleaved; vertex outputs)\n"
       << "EXT_color_buffer_float:      " << yn(c.colorBufferFloat) << "\n"
       << "EXT_color_buffer_half_float: " << yn(c.colorBufferHalfFloat) << "\n"
       << "EXT_float_blend:             " << yn(c.floatBlend) << "\n"
       << "RGBA32F renderable:          " << yn(c.float32Renderable) << " (measured)\n"
       << "RGBA16F renderable:          " << yn(c.float16Renderable) << " (measured)\n"
       << "fragment float mantissa:     " << c.measuredMantissaBits << " bits (measured, through the storage)\n"
       << "compute shaders:             " << yn(c.computeShaders) << "; compute kernels "
       << (c.computeKernels ? "on" : "off") << ": " << c.computeReason << "\n"
       << "transform-feedback matmul:   " << (c.feedbackKernels ? "on" : "off") << ": " << c.feedbackReason << "\n"
       << "texel reads:                 " << (c.sampledFetch ? "texture()" : "texelFetch") << ": " << c.fetchReason
       << "\n"
       << "pass profiles:               " << profileClock(c.timerQueries) << ": " << c.timerReason << "\n"
       << "backend:                     " << backendName(c.backend) << ": " << c.backendReason << "\n"
       << "CPU threads:                 " << c.cpuThreads << ": " << c.cpuThreadsReason << "\n"
       << "storage:                     " << storageDescription(c) << "\n";
    if (c.restoresChecked)
        os << "restored contexts:           " << c.restoresChecked
           << " (each queried again: able to run what the lost one held)\n";
    return os;
}

}  // namespace gltrain
