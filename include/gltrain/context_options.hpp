// ContextOptions: how a Context is created, and switches that force a device
// capability off so every fallback can be exercised on any machine.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gltrain {

// Which engine trains models (backend.hpp has the rules):
//   Auto  the GPU when it renders float textures; the CPU backend when it does
//         not (or there is no GL at all), and on a software renderer
//         (llvmpipe, SwiftShader) when a startup matmul runs faster on the CPU
//         (that timing is makeContext's, backend_choice.hpp: a Context made
//         directly decides from the device's capabilities alone)
//   Gpu   the GPU or an UnsupportedError
//   Cpu   the CPU backend, without creating any GL context
enum class BackendPreference { Auto, Gpu, Cpu };

// Whether kernels that have a compute-shader form (OpenGL ES 3.1, native only:
// WebGL2 has no compute stage) use it:
//   Auto  where the device has compute shaders and is not a software renderer
//         (a GPU whose graphics pipeline runs on a few of its SMs, like the
//         H100/H200, does its compute on all of them; llvmpipe runs the
//         fragment kernels faster)
//   On    wherever the device has them (tests use it to check the compute kernels on llvmpipe)
//   Off   never
enum class ComputePreference { Auto, On, Off };

// Whether matmul runs as a transform-feedback vertex kernel (WebGL2 has no
// compute stage; a vertex can write a 16-texel block where a fragment writes 8)
// followed by a fragment pass that lays the blocks out and applies the epilogue:
//   Auto  on SwiftShader, where it measured faster than the fragment kernels
//         (not where compute kernels run matmul)
//   On    wherever the backend is gpu-float32 (tests use it to check the kernels on llvmpipe)
//   Off   never
enum class FeedbackPreference { Auto, On, Off };

// How fragment and vertex kernels read their inputs' texels (compute kernels
// always use texelFetch): the same texel either way (NEAREST, one level).
//   Auto        texture() at the texel's centre on SwiftShader, where the
//               read costs less (bench_compare_native --steps --fetch in
//               Chromium: W1 28-29 against 33-35 ms/step, W3 N = 1024 5.0
//               against 4.6-4.8 GFLOP/s); texelFetch elsewhere (llvmpipe ran
//               the matmul tests 3x slower with texture())
//   Sampled     texture() everywhere (tests use it to check the helpers on llvmpipe)
//   TexelFetch  texelFetch everywhere
enum class FetchPreference { Auto, Sampled, TexelFetch };

// The names the JavaScript options and the benchmarks' flags use; nullopt for
// any other (each caller words its own error).
inline std::optional<FeedbackPreference> feedbackPreferenceFromName(const std::string& name) {
    if (name == "auto") return FeedbackPreference::Auto;
    if (name == "on") return FeedbackPreference::On;
    if (name == "off") return FeedbackPreference::Off;
    return std::nullopt;
}
inline std::optional<FetchPreference> fetchPreferenceFromName(const std::string& name) {
    if (name == "auto") return FetchPreference::Auto;
    if (name == "sampled") return FetchPreference::Sampled;
    if (name == "texelFetch") return FetchPreference::TexelFetch;
    return std::nullopt;
}

// How a Context is made: the backend, which kernel kinds to use, limits and the platform.
struct ContextOptions {
    // Which engine trains models: Auto (measured), the GPU, or the CPU backend.
    BackendPreference backend = BackendPreference::Auto;
    // Compute-shader kernels (native OpenGL ES 3.1+): Auto, On or Off.
    ComputePreference compute = ComputePreference::Auto;
    // The transform-feedback matmul (WebGL2): Auto, On or Off.
    FeedbackPreference feedback = FeedbackPreference::Auto;
    // How kernels read texels: Auto, texture() at the texel's centre, or texelFetch.
    FetchPreference fetch = FetchPreference::Auto;
    // The feedback matmul runs for products of at least this many multiply-adds;
    // below, the fragment kernels' one pass beats its two (SwiftShader: W1's
    // 128x784x256 products, 2^24.6, ran no faster; N = 512 and 1024 ran 1.3-1.5x).
    // Tests set 0 to run it on every shape.
    double feedbackMinWork = 67108864.0;  // 2^26
    // The CPU backend: how many threads share a large product (strips of its
    // rows, or of its columns where it is wider than tall), the training thread
    // included; 0 = one per hardware thread, at most 8. The browser build has
    // no threads: there it is always one.
    int cpuThreads = 0;
    // Native: EGL platforms to try, in order ("device", "surfaceless", "default").
    std::vector<std::string> eglPlatforms = {"device", "surfaceless", "default"};
    int eglDevice = -1;  // with "device": the EGL device index to use; -1 tries each in turn
    // Web: CSS selector of a <canvas>; empty creates an OffscreenCanvas.
    std::string canvas;
    // Pretend MAX_TEXTURE_SIZE is this (0 = the device's). Tests force it low to exercise paging.
    int maxTextureSize = 0;
    // Check glGetError after every pass and read-back (slow in browsers: a GPU-process
    // round trip each). Lost contexts are noticed either way.
    bool debugChecks = false;
    // Treat RGBA32F render targets as missing: the context falls back to
    // RGBA16F (half-float storage, see backend.hpp).
    bool disableFloat32Render = false;
    // Treat RGBA16F render targets as missing too.
    bool disableHalfFloatRender = false;
};

}  // namespace gltrain
