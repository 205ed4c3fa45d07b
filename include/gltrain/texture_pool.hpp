// TexturePool: float texture arrays keyed by (width, height, layers, format:
// RGBA32F, or RGBA16F on the half-float backend). A released texture goes
// back to a free list and the next acquire of the same key reuses it, so a
// training loop that creates and drops temporaries of the same shapes stops
// allocating after its first step.
//
// When the GL context is lost, abandon() forgets every texture name without
// deleting it (the names died with the context, and may already stand for
// new objects); textures still on loan notice and are dropped the same way.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "gltrain/handle.hpp"

namespace gltrain {

struct TextureKey {
    int width = 0, height = 0, layers = 1;
    GLenum format = GL_RGBA32F;  // or GL_RGBA16F
    bool operator==(const TextureKey& o) const {
        return width == o.width && height == o.height && layers == o.layers && format == o.format;
    }
    size_t bytes() const { return size_t(width) * size_t(height) * size_t(layers) * (format == GL_RGBA16F ? 8 : 16); }
};

struct PoolStats {
    size_t live = 0;  // textures handed out and not yet released
    size_t liveBytes = 0;
    size_t free = 0;  // textures waiting in the free list
    size_t freeBytes = 0;
    size_t created = 0;  // GL textures ever created (a reuse does not count)
};

class TexturePool;

// The pool's state, shared with every PooledTexture so that a texture
// released after its Context died (or its GL context was lost) is dropped
// instead of touching freed memory or another context's names.
struct TexturePoolState {
    bool alive = true;
    PoolStats stats;
    std::vector<std::pair<TextureKey, TextureHandle>> freeList;
};

// A texture on loan from the pool; returns itself when destroyed. Move-only.
class PooledTexture {
public:
    PooledTexture() = default;
    PooledTexture(std::shared_ptr<TexturePoolState> s, TextureKey k, TextureHandle t)
        : state_(std::move(s)), key_(k), tex_(std::move(t)) {}
    ~PooledTexture() { release(); }
    PooledTexture(PooledTexture&&) noexcept = default;
    PooledTexture& operator=(PooledTexture&& o) noexcept {
        if (this != &o) {
            release();
            state_ = std::move(o.state_);
            key_ = o.key_;
            tex_ = std::move(o.tex_);
        }
        return *this;
    }
    GLuint get() const { return tex_.get(); }
    const TextureKey& key() const { return key_; }
    explicit operator bool() const { return bool(tex_); }
    // False once the pool's GL context is lost or destroyed: the name means nothing now.
    bool alive() const { return state_ && state_->alive; }

    void release() {
        if (!tex_) return;
        if (!state_ || !state_->alive) {
            tex_.release();  // the GL context is gone with its textures
        } else {
            state_->stats.live--;
            state_->stats.liveBytes -= key_.bytes();
            state_->stats.free++;
            state_->stats.freeBytes += key_.bytes();
            state_->freeList.emplace_back(key_, std::move(tex_));
        }
        state_.reset();
    }

private:
    std::shared_ptr<TexturePoolState> state_;
    TextureKey key_;
    TextureHandle tex_;
};

// A tensor's storage: a TEXTURE_2D when it has one layer, a TEXTURE_2D_ARRAY
// when it is paged or interleaves its rows over layers (layout.hpp). On
// SwiftShader a texture() read from a 2D texture cost 0.7-0.9 of one from an
// array (bench/probes/texel_reads.html); elsewhere it costs no more.
inline GLenum textureTarget(int layers) { return layers > 1 ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D; }

// Attaches layer `layer` of a storage texture with `layers` layers to a colour
// attachment of the bound framebuffer.
inline void attachLayer(GLenum attachment, GLuint texture, int layers, int layer) {
    if (layers > 1) glFramebufferTextureLayer(GL_FRAMEBUFFER, attachment, texture, 0, layer);
    else glFramebufferTexture2D(GL_FRAMEBUFFER, attachment, GL_TEXTURE_2D, texture, 0);
}

class TexturePool {
public:
    TexturePool() : state_(std::make_shared<TexturePoolState>()) {}
    ~TexturePool() {
        if (state_->alive) state_->freeList.clear();  // deletes the free GL textures (context still current)
        state_->alive = false;
    }
    TexturePool(const TexturePool&) = delete;
    TexturePool& operator=(const TexturePool&) = delete;

    PooledTexture acquire(TextureKey key) {
        auto& fl = state_->freeList;
        for (size_t i = fl.size(); i-- > 0;) {
            if (fl[i].first == key) {
                TextureHandle t = std::move(fl[i].second);
                fl.erase(fl.begin() + std::ptrdiff_t(i));
                state_->stats.free--;
                state_->stats.freeBytes -= key.bytes();
                return lend(key, std::move(t));
            }
        }
        TextureHandle t = TextureHandle::create();
        const GLenum target = textureTarget(key.layers);
        glBindTexture(target, t.get());
        if (key.layers > 1) glTexStorage3D(target, 1, key.format, key.width, key.height, key.layers);
        else glTexStorage2D(target, 1, key.format, key.width, key.height);
        // Kernels read texel centres (texelFetch or texture()); NEAREST and one
        // level keep the texture complete and every read on exactly one texel.
        glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(target, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(target, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        checkGl(key.format == GL_RGBA16F ? "TexturePool::acquire (glTexStorage RGBA16F)"
                                         : "TexturePool::acquire (glTexStorage RGBA32F)");
        state_->stats.created++;
        return lend(key, std::move(t));
    }

    // Deletes the free list's textures (e.g. after a phase that used odd shapes).
    void trim() {
        state_->freeList.clear();
        state_->stats.free = 0;
        state_->stats.freeBytes = 0;
    }

    const PoolStats& stats() const { return state_->stats; }

    // The GL context and its textures are gone: forget the names without
    // deleting them, and start a fresh generation with empty counters.
    void abandon() {
        for (auto& e : state_->freeList) e.second.release();
        state_->freeList.clear();
        state_->alive = false;
        state_ = std::make_shared<TexturePoolState>();
    }

private:
    PooledTexture lend(TextureKey key, TextureHandle t) {
        state_->stats.live++;
        state_->stats.liveBytes += key.bytes();
        return PooledTexture(state_, key, std::move(t));
    }
    std::shared_ptr<TexturePoolState> state_;
};

}  // namespace gltrain
