// Tensor: a float matrix (rows x cols; higher ranks as a 2-D view) living in
// a texture array on loan from the context's pool: RGBA32F, or RGBA16F for
// render targets on the half-float backend (see TensorUse). Move-only; the
// texture returns to the pool when the tensor dies. See layout.hpp for how
// values map to texels and pages. A tensor made before its context was lost
// has lost its values: every use throws ContextLostError.
//
// A row window (Tensor::rowWindow) is a tensor that is some consecutive rows of
// another, sharing its texture: passes sample it like any tensor (the
// generated X_texel adds its first row), nothing is copied, and moving the
// window (moveWindow) changes what the next run of a pass reads. A training
// step's batch is a window of rows gathered for several steps at once.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gltrain/context.hpp"
#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/layout.hpp"

namespace gltrain {

// What a tensor's texture is for. A render target (what passes write) takes
// the context's render format; a tensor the GPU only samples (uploaded data:
// inputs, labels, row indices) stays RGBA32F, which every ES 3 / WebGL2
// device samples, so data keeps full precision on the half-float backend too
// (half floats hold integers only up to 2048: row indices would not survive).
enum class TensorUse { RenderTarget, Sampled };

namespace detail {
// Words shared by Tensor and the JavaScript binding's host-memory tensor, so
// the two kinds refuse the same mistake in the same terms.
inline std::string shapeString(int rows, int cols) { return std::to_string(rows) + "x" + std::to_string(cols); }
inline ArgumentError uploadLengthError(size_t count, int rows, int cols) {
    return ArgumentError("Tensor::upload: " + std::to_string(count) + " values for a " + shapeString(rows, cols) +
                         " tensor (expected " + std::to_string(size_t(rows) * size_t(cols)) + ")");
}
inline ArgumentError differentContextsError(const std::string& op, const char* an, const std::string& aShape,
                                            const char* bn, const std::string& bShape) {
    return ArgumentError(op + ": " + an + " (" + aShape + ") and " + bn + " (" + bShape +
                         ") belong to different gltrain::Contexts");
}
}  // namespace detail

// A float matrix in a texture array on loan from the context's pool; see the comment at the top of this header.
class Tensor {
public:
    Tensor() = default;
    // An uninitialised rows x cols tensor in `layout`.
    Tensor(Context& ctx, int rows, int cols, Layout layout = Layout::Packed, TensorUse use = TensorUse::RenderTarget)
        : ctx_(&ctx),
          geom_(TexelGeometry::make(rows, cols, layout, ctx.maxTextureSize(), ctx.caps().maxArrayTextureLayers)),
          tex_(acquire(ctx, geom_, use)) {}
    // A tensor holding m, uploaded.
    Tensor(Context& ctx, const HostMatrix& m, Layout layout = Layout::Packed, TensorUse use = TensorUse::RenderTarget)
        : Tensor(ctx, m.rows, m.cols, layout, use) {
        upload(m);
    }
    // Moves the texture; the source is left empty.
    Tensor(Tensor&&) noexcept = default;
    // Moves the texture; the source is left empty.
    Tensor& operator=(Tensor&&) noexcept = default;
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;

    // Rows [first, first + count) of `base`, sharing its texture. Passes sample
    // it; nothing writes it (pass output, upload, clear: ArgumentError), and
    // download() reads those rows. `base` must outlive it. In a rows4/rows8
    // layout its padding rows are the base's next rows (kernels mask them).
    static Tensor rowWindow(const Tensor& base, int first, int count) {
        base.requireLive("Tensor::rowWindow");
        // A window of a window is a window of the same root, within the first one's rows.
        const Tensor& root = base.base_ ? *base.base_ : base;
        if (count <= 0 || first < 0 || first + count > base.rows())
            throw ArgumentError("Tensor::rowWindow: rows [" + std::to_string(first) + ", " +
                                std::to_string(first + count) + ") are not within the " + base.shapeString() +
                                " tensor");
        first += base.row0_;
        Tensor w;
        w.ctx_ = root.ctx_;
        w.geom_ = root.geom_;
        w.geom_.rows = count;
        w.geom_.gridRows = (count + w.geom_.phases - 1) / w.geom_.phases;
        w.base_ = &root;
        w.row0_ = first;
        return w;
    }
    // Moves a window to start at row `first` of its base (the same row count).
    void moveWindow(int first) {
        if (!base_) throw ArgumentError("Tensor::moveWindow: the " + shapeString() + " tensor is not a row window");
        if (first < 0 || first + rows() > base_->rows())
            throw ArgumentError("Tensor::moveWindow: rows [" + std::to_string(first) + ", " +
                                std::to_string(first + rows()) + ") are not within the " + base_->shapeString() +
                                " base");
        row0_ = first;
    }
    // Whether this is a row window of another tensor.
    bool isWindow() const { return base_ != nullptr; }
    // The base row that row 0 of this tensor is (0 unless a row window).
    int firstRow() const { return row0_; }

    // Whether it holds a texture (false once moved from).
    explicit operator bool() const { return base_ ? bool(*base_) : bool(tex_); }
    // Number of rows.
    int rows() const { return geom_.rows; }
    // Number of columns.
    int cols() const { return geom_.cols; }
    // rows * cols.
    size_t size() const { return size_t(geom_.rows) * size_t(geom_.cols); }
    // How values map to texels (layout.hpp).
    Layout layout() const { return geom_.layout; }
    // Its texels and pages (layout.hpp).
    const TexelGeometry& geometry() const { return geom_; }
    // The GL texture name (its base's, for a window).
    GLuint texture() const { return base_ ? base_->texture() : tex_.get(); }
    // The context it lives in.
    Context& context() const { return *ctx_; }
    // Whether both tensors live in one context: a texture name means nothing
    // in another context, so ops refuse to mix them (ArgumentError).
    bool sameContext(const Tensor& o) const { return ctx_ == o.ctx_; }
    // False once the texture went with a lost context (or the context was destroyed).
    bool alive() const { return base_ ? base_->alive() : tex_.alive(); }
    // Whether passes can write it (its format is the context's render format; not a row window).
    bool renderable() const { return tex_ && tex_.key().format == ctx_->renderFormat(); }
    // Throws ContextLostError naming `where` if the context is lost or the
    // texture went with an earlier one; ArgumentError for an empty tensor.
    void requireLive(const char* where) const {
        if (!*this) throw ArgumentError(std::string(where) + ": the tensor is empty (moved from or default-made)");
        ctx_->requireUsable(where);
        if (!alive())
            throw ContextLostError(std::string(where) + ": the " + shapeString() +
                                   " tensor's values were lost with the GL context; make it again");
    }
    // "[rows, cols]", for messages.
    std::string shapeString() const { return detail::shapeString(rows(), cols()); }

    // Uploads rows*cols row-major values; any other count is an ArgumentError.
    void upload(const float* data, size_t count) {
        requireLive("Tensor::upload");
        requireWhole("Tensor::upload");
        if (!data && count != 0) throw ArgumentError("Tensor::upload: data is a null pointer");
        if (count != size()) throw detail::uploadLengthError(count, rows(), cols());
        const GLenum target = textureTarget(geom_.layers());
        glBindTexture(target, texture());
        const int vpt = geom_.valuesPerTexel();
        // Fast path: one page whose rows are exactly whole texels, no repacking.
        if (geom_.layers() == 1 && geom_.cols == geom_.texelsPerRow * vpt && vpt == 4) {
            glTexSubImage2D(target, 0, 0, 0, geom_.texelsPerRow, geom_.rows, GL_RGBA, GL_FLOAT, data);
        } else {
            std::vector<float> staging;
            for (int i = 0; i < geom_.layers(); ++i) {
                auto pr = geom_.pageRect(i);
                if (pr.height == 0) continue;
                staging.assign(size_t(pr.width) * size_t(pr.height) * 4, 0.0f);
                for (int y = 0; y < pr.height; ++y) {
                    const float* row = data + size_t(geom_.rowOf(pr, y)) * size_t(geom_.cols);
                    float* out = &staging[size_t(y) * size_t(pr.width) * 4];
                    for (int x = 0; x < pr.width; ++x)
                        for (int k = 0; k < vpt; ++k) {
                            int c = (pr.x0 + x) * vpt + k;
                            if (c < geom_.cols) out[size_t(x) * 4 + size_t(k)] = row[c];
                        }
                }
                if (geom_.layers() > 1)
                    glTexSubImage3D(target, 0, 0, 0, pr.layer, pr.width, pr.height, 1, GL_RGBA, GL_FLOAT,
                                    staging.data());
                else glTexSubImage2D(target, 0, 0, 0, pr.width, pr.height, GL_RGBA, GL_FLOAT, staging.data());
            }
        }
        checkGl("Tensor::upload (glTexSubImage)");
    }
    // Uploads rows * cols values.
    void upload(const std::vector<float>& v) { upload(v.data(), v.size()); }
    // Uploads m, which must have this tensor's shape.
    void upload(const HostMatrix& m) {
        if (m.rows != rows() || m.cols != cols())
            throw ArgumentError("Tensor::upload: host matrix is " + std::to_string(m.rows) + "x" +
                                std::to_string(m.cols) + ", tensor is " + shapeString());
        upload(m.data.data(), m.data.size());
    }

    // Sets every value (padding included) to zero.
    void clear() {
        requireLive("Tensor::clear");
        requireWhole("Tensor::clear");
        if (!renderable()) {  // a sampled-only RGBA32F texture on the half-float backend
            upload(std::vector<float>(size(), 0.0f));
            return;
        }
        const float zero[4] = {0, 0, 0, 0};
        glBindFramebuffer(GL_FRAMEBUFFER, ctx_->framebuffer());
        for (int i = 0; i < geom_.layers(); ++i) {
            attachPage(i);
            glClearBufferfv(GL_COLOR, 0, zero);
        }
        checkGl("Tensor::clear (glClearBufferfv)");
    }

    // Reads the whole tensor back (a synchronous GPU round trip).
    HostMatrix download() const {
        HostMatrix m;
        download(m);
        return m;
    }
    // The same into `into`, reshaped to rows x cols: no allocation once `into`
    // has held as many values and the context's read staging has grown (the
    // training loop reads its losses and counts this way). A row window reads
    // only the texel rows that hold its rows.
    void download(HostMatrix& into) const {
        requireLive("Tensor::download");
        const Tensor& root = base_ ? *base_ : *this;
        if (!root.renderable())
            throw ArgumentError("Tensor::download: the " + shapeString() +
                                " tensor is sampled-only RGBA32F data, which this half-float context cannot read back");
        into.rows = rows(), into.cols = cols();
        into.data.resize(size());
        const TexelGeometry& g = root.geom_;  // a window's own has its row count
        glBindFramebuffer(GL_FRAMEBUFFER, ctx_->framebuffer());
        for (int i = 0; i < g.layers(); ++i) {
            auto pr = g.pageRect(i);
            auto [y0, y1] = g.pageRowsOf(pr, row0_, rows());
            if (y1 == y0) continue;
            root.attachPage(i);
            float* staging = ctx_->readStaging(size_t(pr.width) * size_t(y1 - y0) * 4);
            glReadPixels(0, y0, pr.width, y1 - y0, GL_RGBA, GL_FLOAT, staging);
            g.unpackPageRows(pr, y0, y1, staging, into.data.data(), row0_);
        }
        ctx_->checkRead("Tensor::download (glReadPixels)");
    }
    // download()'s values alone.
    std::vector<float> downloadVector() const { return download().data; }

    // Attaches layer `i` as the context framebuffer's colour attachment 0
    // (the framebuffer must be bound).
    void attachPage(int i) const { attachLayer(GL_COLOR_ATTACHMENT0, texture(), geom_.layers(), i); }
    // Refuses a row window where `where` writes or reads whole pages.
    void requireWhole(const char* where) const {
        if (base_)
            throw ArgumentError(std::string(where) + ": the " + shapeString() + " tensor is a row window of a " +
                                base_->shapeString() + " tensor (it shares that texture; write the base instead)");
    }

private:
    static PooledTexture acquire(Context& ctx, const TexelGeometry& g, TensorUse use) {
        ctx.requireUsable("Tensor");
        return ctx.pool().acquire({g.pageWidth, g.pageHeight, g.layers(),
                                   use == TensorUse::Sampled ? GLenum(GL_RGBA32F) : ctx.renderFormat()});
    }

    Context* ctx_ = nullptr;
    TexelGeometry geom_;
    PooledTexture tex_;             // empty for a row window
    const Tensor* base_ = nullptr;  // a row window's base (never itself a window)
    int row0_ = 0;                  // a row window's first row in base_
};

namespace detail {
// Ops check this before recording anything, so a refused call leaves the
// PassList as it was.
inline void requireSameContext(const std::string& op, const char* an, const Tensor& a, const char* bn,
                               const Tensor& b) {
    if (a && b && !a.sameContext(b)) throw differentContextsError(op, an, a.shapeString(), bn, b.shapeString());
}
}  // namespace detail

}  // namespace gltrain
