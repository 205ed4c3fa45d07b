// How errors cross the JavaScript boundary: they do not. Every bound function
// runs inside guard(): on an exception it stores the error's kind and message
// and returns a default value; web/gltrain.js checks takeError() after every
// call and throws a JS Error carrying the C++ message. (A JS exception
// unwinding wasm frames would skip destructors and leave the shadow stack
// pointer where the throw found it.)
#pragma once

#include <emscripten/val.h>

#include <new>
#include <stdexcept>
#include <type_traits>

#include "gltrain/error.hpp"
#include "gltrain/format_error.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain::js {

// Records the error for takeError(); the first one is kept until taken.
void setError(const char* kind, const char* message);

template <class R>
R fallback() {
    if constexpr (std::is_same_v<R, emscripten::val>) return emscripten::val::undefined();
    else if constexpr (std::is_void_v<R>) return;
    else return R{};
}

// Runs f; an exception becomes the pending error and a default return value.
template <class F>
auto guard(F&& f) -> decltype(f()) {
    using R = decltype(f());
    try {
        return f();
    } catch (const TrainingError& e) {
        setError("TrainingError", e.what());
    } catch (const ArgumentError& e) {
        setError("ArgumentError", e.what());
    } catch (const FormatError& e) {
        setError("FormatError", e.what());
    } catch (const UnsupportedError& e) {
        setError("UnsupportedError", e.what());
    } catch (const ShaderError& e) {
        setError("ShaderError", e.what());
    } catch (const ContextLostError& e) {
        setError("ContextLostError", e.what());
    } catch (const GlError& e) {
        setError("GlError", e.what());
    } catch (const std::bad_alloc&) {
        setError("RangeError", "out of memory (the WebAssembly heap could not grow)");
    } catch (const std::exception& e) {
        setError("Error", e.what());
    } catch (...) {
        setError("Error", "unknown C++ exception");
    }
    return fallback<R>();
}

}  // namespace gltrain::js
