// Backend: which engine runs a Context's work, and why. Decided once, when
// the Context is created, from what the device measurably supports (an
// RGBA32F / RGBA16F framebuffer is complete or not; advertised extensions are
// not trusted) and the ContextOptions switches that force a capability off.
// The choice and its reason are part of the capability report.
//
//   gpu-float32  every tensor the GPU renders is RGBA32F (fp32 storage)
//   gpu-float16  RGBA32F is not renderable: rendered tensors are RGBA16F
//                (10-bit mantissa, largest value 65504); uploaded data the GPU
//                only samples stays RGBA32F; training uses dynamic loss scaling
//                and an Adam/RMSProp eps of at least kHalfFloatMinEps
//   cpu          models train on the CPU backend (gltrain/cpu/): asked for
//                (BackendPreference::Cpu, no GL context at all), no float render
//                targets or no GL context (Auto), or a software renderer on which
//                the CPU measured faster (Auto through makeContext, backend_choice.hpp,
//                which times one matmul both ways)
#pragma once
#include <string>

#include "gltrain/capabilities.hpp"
#include "gltrain/context_options.hpp"
#include "gltrain/error.hpp"

namespace gltrain {

// Adam's and RMSProp's eps on half-float storage is at least this (as in
// TensorFlow.js's float16 backend): second moments below 6e-8 flush to zero
// there, and a step m / (sqrt(0) + 1e-7) would be 10^7 times the gradient.
// Measured: Fashion-MNIST 784-64-10, Adam, 2 epochs on 12,000 images gives
// 0.53 test accuracy with eps 1e-7 on RGBA16F, 0.82 with 1e-4 (fp32: 0.83).
constexpr float kHalfFloatMinEps = 1e-4f;

// The backend a Context trains on and why (Capabilities::backend, backendReason).
struct BackendChoice {
    // The backend chosen.
    Backend backend = Backend::GpuFloat32;
    // Why, in words for the capability report.
    std::string reason;
};

// The first backend the device and the options allow: with no float render
// targets, the CPU backend (BackendPreference::Auto) or an UnsupportedError
// naming both float render extensions (Gpu).
// (BackendPreference::Cpu never gets here: that Context makes no GL context.)
inline BackendChoice chooseBackend(const Capabilities& c, const ContextOptions& o) {
    if (c.float32Renderable && !o.disableFloat32Render)
        return {Backend::GpuFloat32, "RGBA32F render targets are complete (EXT_color_buffer_float)"};
    const std::string no32 =
        o.disableFloat32Render
            ? "RGBA32F rendering (EXT_color_buffer_float) is disabled by ContextOptions::disableFloat32Render"
        : c.colorBufferFloat ? "EXT_color_buffer_float is advertised but an RGBA32F framebuffer is incomplete"
                             : "EXT_color_buffer_float is missing (no RGBA32F render targets)";
    if (c.float16Renderable && !o.disableHalfFloatRender)
        return {Backend::GpuFloat16, no32 + "; RGBA16F render targets are complete (" +
                                         (c.hasExtension("EXT_color_buffer_half_float") ? "EXT_color_buffer_half_float"
                                                                                        : "EXT_color_buffer_float") +
                                         "): half-float storage"};
    const std::string no16 =
        o.disableHalfFloatRender
            ? "RGBA16F rendering (EXT_color_buffer_half_float) is disabled by ContextOptions::disableHalfFloatRender"
        : c.colorBufferHalfFloat ? "EXT_color_buffer_half_float is advertised but an RGBA16F framebuffer is incomplete"
                                 : "EXT_color_buffer_half_float is missing (no RGBA16F render targets)";
    if (o.backend == BackendPreference::Auto)
        return {Backend::Cpu, "no float render targets (" + no32 + "; " + no16 + "; renderer: " + c.renderer +
                                  "): models train on the CPU"};
    throw UnsupportedError("Context: no float render targets, so gltrain cannot run on this device: " + no32 + "; " +
                           no16 + "; renderer: " + c.renderer);
}

}  // namespace gltrain
