// AsyncReadback: downloads a tensor without stalling the pipeline. The
// constructor queues glReadPixels of every page into one pixel-pack buffer
// and drops a fence; ready() polls the fence without blocking; get() returns
// the values (waiting only if the GPU has not finished). Under WebGL2 the
// copy out is getBufferSubData, which is free of stalls once the fence has
// signalled (browsers update fence status between event-loop turns).
#pragma once
#include <cstring>
#include <vector>

#include "gltrain/tensor.hpp"

#ifdef __EMSCRIPTEN__
extern "C" void glGetBufferSubData(GLenum target, GLintptr offset, GLsizeiptr size, void* data);
#endif

namespace gltrain {

class AsyncReadback {
public:
    explicit AsyncReadback(const Tensor& t) : tensor_(&t), geom_(t.geometry()) {
        if (!t) throw ArgumentError("AsyncReadback: the tensor is empty");
        t.requireLive("AsyncReadback");
        t.requireWhole("AsyncReadback");
        if (!t.renderable()) throw ArgumentError("AsyncReadback: the tensor is sampled-only and cannot be read back");
        ctx_ = &t.context();
        generation_ = ctx_->generation();
        for (int i = 0; i < geom_.layers(); ++i) {
            auto pr = geom_.pageRect(i);
            bytes_ += size_t(pr.width) * size_t(pr.height) * 16;
        }
        pbo_ = BufferHandle::create();
        glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo_.get());
        glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(bytes_), nullptr, GL_STREAM_READ);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        issue();
    }

    // A reader of a lost context lets go of its buffer and fence without
    // deleting them (the names went with the context).
    ~AsyncReadback() {
        if (!current()) {
            pbo_.release();
            fence_.release();
        }
    }
    AsyncReadback(const AsyncReadback&) = delete;
    AsyncReadback& operator=(const AsyncReadback&) = delete;

    // Whether the buffer still exists: the context has not been lost since the reader was made.
    bool current() const { return ctx_->generation() == generation_; }

    // Queues a read of another tensor of the same geometry into the same
    // buffer (a training loop's loss, from whichever plan ran the step).
    void issue(const Tensor& t) {
        if (!t || t.geometry() != geom_)
            throw ArgumentError("AsyncReadback::issue: the tensor is " + (t ? t.shapeString() : std::string("empty")) +
                                ", a reader made for " + tensor_->shapeString() + " reads only that geometry");
        t.requireLive("AsyncReadback::issue");
        t.requireWhole("AsyncReadback::issue");
        tensor_ = &t;
        issue();
    }

    // Queues another read of the tensor's current values into the same
    // buffer (a training loop reuses one reader: no allocation per read).
    void issue() {
        requireCurrent("AsyncReadback::issue");
        glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo_.get());
#ifdef __EMSCRIPTEN__
        // In a browser every read gets new storage (natively the constructor's is reused).
        // Chromium keeps a shadow copy of a fenced pixel-pack buffer for getBufferSubData,
        // and reading into the same storage again while that copy lives (a read nobody
        // took, one taken before its fence was seen, and at times one taken after)
        // discards it with a performance warning per buffer.
        glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(bytes_), nullptr, GL_STREAM_READ);
#endif
        glBindFramebuffer(GL_FRAMEBUFFER, tensor_->context().framebuffer());
        size_t offset = 0;
        for (int i = 0; i < geom_.layers(); ++i) {
            auto pr = geom_.pageRect(i);
            if (pr.height == 0) continue;
            tensor_->attachPage(i);
            glReadPixels(0, 0, pr.width, pr.height, GL_RGBA, GL_FLOAT, reinterpret_cast<void*>(offset));
            offset += size_t(pr.width) * size_t(pr.height) * 16;
        }
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        fence_ = SyncHandle(glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0));
        glFlush();
        ctx_->checkRead("AsyncReadback (glReadPixels into a pixel-pack buffer)");
    }

    // True once the GPU has written the buffer; never blocks.
    bool ready() {
        requireCurrent("AsyncReadback::ready");
        if (!fence_) return true;
        GLint status = GL_UNSIGNALED;
        glGetSynciv(fence_.get(), GL_SYNC_STATUS, sizeof status, nullptr, &status);
        return status == GL_SIGNALED;
    }

    // The tensor's values; waits for the GPU if it is not ready yet.
    HostMatrix get() {
        HostMatrix m;
        get(m);
        return m;
    }
    // The same into `into`, reshaped to the tensor's shape: no allocation once
    // `into` has held as many values (the training loop's asynchronous loss reads).
    void get(HostMatrix& into) {
        requireCurrent("AsyncReadback::get");
#ifndef __EMSCRIPTEN__
        if (fence_) {
            while (glClientWaitSync(fence_.get(), GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000ull) == GL_TIMEOUT_EXPIRED) {
            }
        }
#endif
        texels_.resize(bytes_ / 4);  // sized once: the buffer's size never changes
        glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo_.get());
#ifdef __EMSCRIPTEN__
        glGetBufferSubData(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(bytes_), texels_.data());
#else
        void* p = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(bytes_), GL_MAP_READ_BIT);
        if (!p) throw GlError("AsyncReadback::get: glMapBufferRange failed");
        std::memcpy(texels_.data(), p, bytes_);
        glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
#endif
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        ctx_->checkRead("AsyncReadback::get");
        into.rows = geom_.rows, into.cols = geom_.cols;
        into.data.resize(size_t(geom_.rows) * size_t(geom_.cols));
        size_t offset = 0;
        for (int i = 0; i < geom_.layers(); ++i) {
            auto pr = geom_.pageRect(i);
            geom_.unpackPage(pr, texels_.data() + offset, into.data.data());
            offset += size_t(pr.width) * size_t(pr.height) * 4;
        }
    }

private:
    void requireCurrent(const char* where) {
        ctx_->requireUsable(where);
        if (!current()) throw ContextLostError(std::string(where) + ": the read was lost with the GL context");
    }

    const Tensor* tensor_;  // must outlive the reader
    Context* ctx_ = nullptr;
    uint64_t generation_ = 0;
    TexelGeometry geom_;
    size_t bytes_ = 0;
    std::vector<float> texels_;  // get()'s copy of the buffer, kept between reads
    BufferHandle pbo_;
    SyncHandle fence_;
};

}  // namespace gltrain
