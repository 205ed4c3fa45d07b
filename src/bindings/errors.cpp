// The pending error of the JavaScript boundary (errors.hpp) and takeError().
#include "errors.hpp"

#include <emscripten/bind.h>

#include <string>

using emscripten::val;

namespace gltrain::js {
namespace {

struct PendingError {
    bool set = false;
    std::string kind, message;
};
PendingError& pending() {
    static PendingError e;
    return e;
}

// {kind, message} of the pending error (clearing it), or null.
val takeError() {
    auto& e = pending();
    if (!e.set) return val::null();
    val o = val::object();
    o.set("kind", e.kind);
    o.set("message", e.message);
    e = PendingError{};
    return o;
}

}  // namespace

void setError(const char* kind, const char* message) {
    auto& e = pending();
    if (e.set) return;  // keep the first
    e.set = true;
    e.kind = kind;
    e.message = message;
}

}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_errors) { emscripten::function("takeError", &gltrain::js::takeError); }
