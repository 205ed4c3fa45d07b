// The last step of BackendPreference::Auto, which a Context cannot take by
// itself: on a software renderer (llvmpipe, SwiftShader) the "GPU" is the CPU
// running shaders, and the CPU backend's kernels may beat it. Deciding means
// running an op on both engines, and ops are built on the Context, so the
// decision is made here, above it, and the Context is told the result
// (Context::setBackend). A Context made directly decides from the device's
// capabilities alone.
#pragma once
#include <memory>

#include "gltrain/context.hpp"

namespace gltrain {

// Whether chooseFasterBackend times the two engines for a Context of these
// options, capabilities and backend: only under BackendPreference::Auto, on a
// software renderer whose GPU the Context took. On a hardware GPU `auto` starts
// exactly as `gpu` does — no probe, no program compiled, no CPU engine state
// (issue 41's slower first epoch under auto on an H200 was the driver's shader
// disk cache, cold on a fresh machine for whichever backend ran first).
bool timesBothEngines(const ContextOptions& options, const Capabilities& caps, Backend backend);

// Under BackendPreference::Auto, on a Context that took the GPU of a software
// renderer (timesBothEngines): times one 128x256x128 matmul on the GPU and on the CPU backend (a
// few ms each) and tells the Context the faster, with the timings as the
// report's reason either way. The GL context stays, so tensors and passes keep
// working. Anywhere else it does nothing.
void chooseFasterBackend(Context& ctx);

// A Context as `options` ask, with chooseFasterBackend applied: what
// BackendPreference::Auto means for an application that trains models.
std::unique_ptr<Context> makeContext(ContextOptions options = {});

}  // namespace gltrain
