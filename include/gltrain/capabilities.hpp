// What the device can do, as queried and as measured.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace gltrain {

struct Capabilities {
    std::string platform;   // "egl-device", "egl-surfaceless", "egl-default" or "webgl2"
    std::string vendor, renderer, version, shadingLanguageVersion;
    int maxTextureSize = 0;        // as reported by the device
    int maxArrayTextureLayers = 0;
    int maxDrawBuffers = 0;
    int maxTextureImageUnits = 0;
    bool colorBufferFloat = false;      // EXT_color_buffer_float advertised (or core in ES 3.2)
    bool colorBufferHalfFloat = false;  // EXT_color_buffer_half_float advertised
    bool floatBlend = false;            // EXT_float_blend advertised
    bool float32Renderable = false;     // measured: an RGBA32F framebuffer is complete
    bool softwareRenderer = false;      // SwiftShader, llvmpipe, softpipe, ...
    int measuredMantissaBits = 0;       // measured by the precision probe kernel (fp32: 23)
    std::vector<std::string> extensions;

    bool hasExtension(const std::string& name) const {
        for (auto& e : extensions)
            if (e == name) return true;
        return false;
    }
};

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
       << "EXT_color_buffer_float:      " << yn(c.colorBufferFloat) << "\n"
       << "EXT_color_buffer_half_float: " << yn(c.colorBufferHalfFloat) << "\n"
       << "EXT_float_blend:             " << yn(c.floatBlend) << "\n"
       << "RGBA32F renderable:          " << yn(c.float32Renderable) << " (measured)\n"
       << "fragment float mantissa:     " << c.measuredMantissaBits << " bits (measured)\n";
    return os;
}

}  // namespace gltrain
