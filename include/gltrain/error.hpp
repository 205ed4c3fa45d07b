// Exceptions thrown by gltrain. Every message says what was wrong and where.
#pragma once
#include <stdexcept>
#include <string>

namespace gltrain {

// Base of all gltrain errors.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A GL call failed; the message carries the GL error name and the call site.
struct GlError : Error {
    using Error::Error;
};
// A GLSL kernel failed to compile or link; the message quotes the bad lines.
struct ShaderError : Error {
    using Error::Error;
};
// The device lacks something gltrain needs (context, float render targets).
struct UnsupportedError : Error {
    using Error::Error;
};
// A caller passed a bad argument (shape, length, value).
struct ArgumentError : Error {
    using Error::Error;
};
// The GL context is lost (the browser's webglcontextlost, a GPU reset, or
// Context::loseContext()), or a tensor's texture went with an earlier one.
// Nothing was changed; after the context is restored, models continue from
// their last snapshot (Sequential) and tensors must be made again.
struct ContextLostError : Error {
    using Error::Error;
};

}  // namespace gltrain
