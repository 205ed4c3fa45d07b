// The JavaScript Context: a gltrain Context (WebGL2 or the CPU backend) and
// what the tensors and models made on it share.
#pragma once

#include <emscripten/html5.h>
#include <emscripten/val.h>

#include <memory>

#include "gltrain/context.hpp"
#include "gltrain/cpu/matmul.hpp"

namespace gltrain::js {

class ContextImpl {
public:
    explicit ContextImpl(ContextOptions o);
    std::unique_ptr<Context> ctx;
    EMSCRIPTEN_WEBGL_CONTEXT_HANDLE glHandle = 0;  // the WebGL context (none on a Context without GL)
    cpu::Workspace workspace;                      // the CPU backend's Tensor products: packed panels, ctx's threads

    static ContextImpl* create(emscripten::val options);
    void makeCurrent() { ctx->makeCurrent(); }
    bool lost() { return ctx->lost(); }
    // WEBGL_lose_context, for testing an application's recovery (Context::loseContext).
    void loseContext();
    // In the tick of the loss (before webglcontextlost), the restore is made just after that event.
    void restoreContext();

    emscripten::val capabilities();
    emscripten::val poolStats();
};

}  // namespace gltrain::js
