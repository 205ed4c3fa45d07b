// SnapshotReads: a consistent copy of a set of tensors (a model's state),
// taken on the GPU at one step and read back to the host a part at a time over
// the steps after it, never waiting for the GPU.
//
// Why: reading a 70 MB state back at once stalled the step that did it
// 166–282 ms on an NVIDIA H200 (issue 41), and queuing reads of the live
// tensors at once still puts the whole transfer between two steps. begin()
// copies every tensor into a snapshot texture of its geometry on the GPU
// (glCopyTexSubImage: no host round trip, and the steps after may overwrite
// the originals). Each advance() then takes the oldest part whose fence has
// signalled (unpacking it into the host matrices) and queues glReadPixels of
// the next part into a free pixel-pack buffer of a small ring, with a fence:
// at most `budget` bytes each way per call, and a fence that has not
// signalled is left for a later call.
#pragma once
#include <cmath>
#include <cstring>
#include <deque>
#include <vector>

#include "gltrain/readback.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

class SnapshotReads {
public:
    // Pixel-pack buffers in the ring: one part being read by the GPU while
    // another waits to be taken, and one spare.
    static constexpr size_t kSlots = 3;

    // Snapshot textures of the tensors' geometries, and the ring of buffers
    // whose parts hold at most `budget` bytes (at least one texel row).
    SnapshotReads(Context& ctx, const std::vector<const Tensor*>& tensors, size_t budget)
        : ctx_(&ctx), generation_(ctx.generation()) {
        size_t widest = 0;
        for (const Tensor* t : tensors) {
            const TexelGeometry& g = t->geometry();
            copies_.emplace_back(ctx, g.rows, g.cols, g.layout);
            for (int l = 0; l < g.layers(); ++l) widest = std::max(widest, size_t(g.pageRect(l).width) * 16);
        }
        slotBytes_ = std::max(budget, widest);
        for (size_t i = 0; i < copies_.size(); ++i) {
            const TexelGeometry& g = copies_[i].geometry();
            for (int l = 0; l < g.layers(); ++l) {
                const auto pr = g.pageRect(l);
                const size_t rowBytes = size_t(pr.width) * 16;
                const int rowsPerPart = int(std::max<size_t>(1, slotBytes_ / rowBytes));
                for (int y = 0; y < pr.height; y += rowsPerPart)
                    parts_.push_back({i, l, y, std::min(pr.height, y + rowsPerPart)});
            }
        }
        for (Slot& s : slots_) {
            s.pbo = BufferHandle::create();
            glBindBuffer(GL_PIXEL_PACK_BUFFER, s.pbo.get());
            glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(slotBytes_), nullptr, GL_STREAM_READ);
        }
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        ctx.checkRead("SnapshotReads (allocating the pixel-pack buffers)");
    }
    // Buffers and fences of a lost context are let go without GL calls.
    ~SnapshotReads() {
        if (current()) return;
        for (Slot& s : slots_) {
            s.pbo.release();
            s.fence.release();
        }
    }
    SnapshotReads(const SnapshotReads&) = delete;
    SnapshotReads& operator=(const SnapshotReads&) = delete;

    // Whether its textures and buffers still exist (the context was not lost since).
    bool current() const { return ctx_->generation() == generation_; }
    // Whether a snapshot begun is not yet all on the host.
    bool pending() const { return pending_; }
    // Whether every value taken so far is finite.
    bool finite() const { return finite_; }

    // Copies `tensors` (the geometries given to the constructor, in order) into
    // the snapshot textures; parts of an earlier snapshot still in flight are dropped.
    void begin(const std::vector<const Tensor*>& tensors) {
        ctx_->requireUsable("SnapshotReads::begin");
        if (tensors.size() != copies_.size())
            throw ArgumentError("SnapshotReads::begin: " + std::to_string(tensors.size()) +
                                " tensors for a snapshot of " + std::to_string(copies_.size()));
        for (size_t i = 0; i < copies_.size(); ++i) {
            if (tensors[i]->geometry() != copies_[i].geometry())
                throw ArgumentError("SnapshotReads::begin: tensor " + std::to_string(i) + " is " +
                                    tensors[i]->shapeString() + ", the snapshot's is " + copies_[i].shapeString());
            tensors[i]->requireLive("SnapshotReads::begin");
            tensors[i]->requireWhole("SnapshotReads::begin");
        }
        for (Slot& s : slots_) s.fence.reset();
        inFlight_.clear();
        glBindFramebuffer(GL_FRAMEBUFFER, ctx_->framebuffer());
        for (size_t i = 0; i < copies_.size(); ++i) {
            const Tensor& from = *tensors[i];
            const Tensor& to = copies_[i];
            const TexelGeometry& g = from.geometry();
            const GLenum target = textureTarget(g.layers());
            glBindTexture(target, to.texture());
            for (int l = 0; l < g.layers(); ++l) {
                const auto pr = g.pageRect(l);
                if (pr.height == 0) continue;
                from.attachPage(l);
                if (g.layers() > 1) glCopyTexSubImage3D(target, 0, 0, 0, l, 0, 0, pr.width, pr.height);
                else glCopyTexSubImage2D(target, 0, 0, 0, 0, 0, pr.width, pr.height);
            }
            glBindTexture(target, 0);
        }
        ctx_->checkRead("SnapshotReads::begin (glCopyTexSubImage)");
        nextPart_ = 0;
        partsTaken_ = 0;
        finite_ = true;
        pending_ = true;  // with no parts, the next advance() completes it
    }

    // Takes the oldest part in flight if its fence has signalled (into `into`,
    // a matrix per tensor, shaped on first use) and queues the next part into
    // a free buffer. Never waits for the GPU. True once the whole snapshot is
    // in `into` (finite() says whether it is all finite).
    bool advance(std::vector<HostMatrix>& into) {
        if (!pending_) return false;
        ctx_->requireUsable("SnapshotReads::advance");
        if (!current()) throw ContextLostError("SnapshotReads::advance: the reads were lost with the GL context");
        if (into.size() != copies_.size()) {
            into.resize(copies_.size());
            for (size_t i = 0; i < copies_.size(); ++i) into[i] = HostMatrix(copies_[i].rows(), copies_[i].cols());
        }
        if (!inFlight_.empty() && signalled(slots_[inFlight_.front()])) {
            take(slots_[inFlight_.front()], into);
            inFlight_.pop_front();
        }
        if (nextPart_ < parts_.size() && inFlight_.size() < kSlots) issue();
        if (partsTaken_ < parts_.size()) return false;
        pending_ = false;
        return true;
    }

private:
    // Texel rows [y0, y1) of one layer of one tensor.
    struct Part {
        size_t tensor;
        int layer, y0, y1;
    };
    // A buffer, the parts read into it (from its start, in order) and its fence.
    struct Slot {
        BufferHandle pbo;
        SyncHandle fence;
        size_t first = 0, count = 0;  // parts_[first, first + count)
    };

    static bool signalled(const Slot& s) {
        GLint status = GL_UNSIGNALED;
        glGetSynciv(s.fence.get(), GL_SYNC_STATUS, sizeof status, nullptr, &status);
        return status == GL_SIGNALED;
    }

    size_t partBytes(const Part& p) const {
        return size_t(copies_[p.tensor].geometry().pageRect(p.layer).width) * size_t(p.y1 - p.y0) * 16;
    }

    // Queues the next parts that fit one buffer.
    void issue() {
        size_t slot = 0;
        while (slots_[slot].fence) ++slot;  // a free one exists: fewer than kSlots are in flight
        Slot& s = slots_[slot];
        s.first = nextPart_;
        s.count = 0;
        glBindFramebuffer(GL_FRAMEBUFFER, ctx_->framebuffer());
        glBindBuffer(GL_PIXEL_PACK_BUFFER, s.pbo.get());
#ifdef __EMSCRIPTEN__
        // New storage for every read, as AsyncReadback::issue does (Chromium's shadow copy).
        glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(slotBytes_), nullptr, GL_STREAM_READ);
#endif
        size_t offset = 0;
        while (nextPart_ < parts_.size() && offset + partBytes(parts_[nextPart_]) <= slotBytes_) {
            const Part& p = parts_[nextPart_++];
            const Tensor& t = copies_[p.tensor];
            t.attachPage(p.layer);
            glReadPixels(0, p.y0, t.geometry().pageRect(p.layer).width, p.y1 - p.y0, GL_RGBA, GL_FLOAT,
                         reinterpret_cast<void*>(offset));
            offset += partBytes(p);
            ++s.count;
        }
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        s.fence = SyncHandle(glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0));
        glFlush();
        inFlight_.push_back(slot);
        ctx_->checkRead("SnapshotReads (glReadPixels into a pixel-pack buffer)");
    }

    // Unpacks a signalled buffer's parts into `into`, noting any value that is not finite.
    void take(Slot& s, std::vector<HostMatrix>& into) {
        size_t bytes = 0;
        for (size_t k = 0; k < s.count; ++k) bytes += partBytes(parts_[s.first + k]);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, s.pbo.get());
#ifdef __EMSCRIPTEN__
        staging_.resize(bytes / 4);
        glGetBufferSubData(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(bytes), staging_.data());
        const float* texels = staging_.data();
#else
        const float* texels =
            static_cast<const float*>(glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(bytes), GL_MAP_READ_BIT));
        if (!texels) {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
            throw GlError("SnapshotReads: glMapBufferRange failed");
        }
#endif
        size_t offset = 0;
        for (size_t k = 0; k < s.count; ++k) {
            const Part& p = parts_[s.first + k];
            const TexelGeometry& g = copies_[p.tensor].geometry();
            const auto pr = g.pageRect(p.layer);
            HostMatrix& m = into[p.tensor];
            g.unpackPageRows(pr, p.y0, p.y1, texels + offset / 4, m.data.data(), 0);
            offset += partBytes(p);
            // The values this part wrote: its rows, the columns of its page.
            const int c0 = pr.x0 * g.valuesPerTexel(), c1 = std::min(g.cols, (pr.x0 + pr.width) * g.valuesPerTexel());
            for (int y = p.y0; y < p.y1 && finite_; ++y) {
                const float* row = m.data.data() + size_t(g.rowOf(pr, y)) * size_t(g.cols);
                for (int c = c0; c < c1; ++c)
                    if (!std::isfinite(row[c])) {
                        finite_ = false;
                        break;
                    }
            }
        }
#ifndef __EMSCRIPTEN__
        glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
#endif
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        s.fence.reset();
        partsTaken_ += s.count;
        ctx_->checkRead("SnapshotReads (taking a part)");
    }

    Context* ctx_;
    uint64_t generation_;
    std::vector<Tensor> copies_;  // the snapshot textures, one per tensor
    std::vector<Part> parts_;     // every part of a snapshot, in the order they are read
    size_t slotBytes_ = 0;
    Slot slots_[kSlots];
    std::deque<size_t> inFlight_;  // slots with reads queued, oldest first
    size_t nextPart_ = 0, partsTaken_ = 0;
    bool pending_ = false, finite_ = true;
#ifdef __EMSCRIPTEN__
    std::vector<float> staging_;  // getBufferSubData's copy of a buffer, kept between parts
#endif
};

}  // namespace gltrain
