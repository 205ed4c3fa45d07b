// Private: the startup comparison behind BackendPreference::Auto on software
// renderers (Context::preferCpuIfFaster).
#pragma once
#include <cstdio>
#include <string>

#include "gltrain/context.hpp"

namespace gltrain {

struct BackendSpeed {
    std::string shape;  // "128x256x128"
    double gpuMs = 0, cpuMs = 0;
};

// One M x K x N matmul as a training step runs it: on the GPU (the
// register-blocked pass into PackedRows4, completed by reading the result
// back) and with the CPU backend's kernel; each timed 3 times after a warm-up
// (shader compile, first packing), the fastest kept.
BackendSpeed measureBackendSpeed(Context& ctx);

inline std::string formatMs(double ms) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f ms", ms);
    return b;
}

}  // namespace gltrain
