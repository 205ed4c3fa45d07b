// Move-only RAII owners for GL objects: each GL name has exactly one owner
// that deletes it, so nothing leaks when an exception unwinds a half-built
// pass or tensor.
#pragma once
#include <utility>

#include "gltrain/gl.hpp"

namespace gltrain {

template <class Traits>
class GlHandle {
public:
    GlHandle() = default;
    explicit GlHandle(GLuint id) : id_(id) {}
    ~GlHandle() { reset(); }
    GlHandle(GlHandle&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
    GlHandle& operator=(GlHandle&& o) noexcept {
        if (this != &o) {
            reset();
            id_ = std::exchange(o.id_, 0);
        }
        return *this;
    }
    GlHandle(const GlHandle&) = delete;
    GlHandle& operator=(const GlHandle&) = delete;

    GLuint get() const { return id_; }
    explicit operator bool() const { return id_ != 0; }
    // Gives up ownership without deleting (used when the GL context is already gone).
    GLuint release() { return std::exchange(id_, 0); }
    void reset() {
        if (id_) Traits::destroy(id_);
        id_ = 0;
    }

    static GlHandle create() { return GlHandle(Traits::create()); }

private:
    GLuint id_ = 0;
};

struct TextureTraits {
    static GLuint create() {
        GLuint id = 0;
        glGenTextures(1, &id);
        return id;
    }
    static void destroy(GLuint id) { glDeleteTextures(1, &id); }
};
struct FramebufferTraits {
    static GLuint create() {
        GLuint id = 0;
        glGenFramebuffers(1, &id);
        return id;
    }
    static void destroy(GLuint id) { glDeleteFramebuffers(1, &id); }
};
struct BufferTraits {
    static GLuint create() {
        GLuint id = 0;
        glGenBuffers(1, &id);
        return id;
    }
    static void destroy(GLuint id) { glDeleteBuffers(1, &id); }
};
struct VertexArrayTraits {
    static GLuint create() {
        GLuint id = 0;
        glGenVertexArrays(1, &id);
        return id;
    }
    static void destroy(GLuint id) { glDeleteVertexArrays(1, &id); }
};
struct ProgramTraits {
    static GLuint create() { return glCreateProgram(); }
    static void destroy(GLuint id) { glDeleteProgram(id); }
};
struct QueryTraits {
    static GLuint create() {
        GLuint id = 0;
        glGenQueries(1, &id);
        return id;
    }
    static void destroy(GLuint id) { glDeleteQueries(1, &id); }
};
struct ShaderObjectTraits {
    static void destroy(GLuint id) { glDeleteShader(id); }
};

using TextureHandle = GlHandle<TextureTraits>;
using FramebufferHandle = GlHandle<FramebufferTraits>;
using BufferHandle = GlHandle<BufferTraits>;
using VertexArrayHandle = GlHandle<VertexArrayTraits>;
using ProgramHandle = GlHandle<ProgramTraits>;
using QueryHandle = GlHandle<QueryTraits>;
using ShaderObjectHandle = GlHandle<ShaderObjectTraits>;

// A fence; GLsync is a pointer, not a GLuint, so it gets its own owner.
class SyncHandle {
public:
    SyncHandle() = default;
    explicit SyncHandle(GLsync s) : s_(s) {}
    ~SyncHandle() { reset(); }
    SyncHandle(SyncHandle&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    SyncHandle& operator=(SyncHandle&& o) noexcept {
        if (this != &o) {
            reset();
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    SyncHandle(const SyncHandle&) = delete;
    SyncHandle& operator=(const SyncHandle&) = delete;
    GLsync get() const { return s_; }
    explicit operator bool() const { return s_ != nullptr; }
    void reset() {
        if (s_) glDeleteSync(s_);
        s_ = nullptr;
    }
    // Gives up ownership without deleting (the GL context is already gone).
    GLsync release() { return std::exchange(s_, nullptr); }

private:
    GLsync s_ = nullptr;
};

}  // namespace gltrain
