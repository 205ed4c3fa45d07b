// Moving values within each example: Transpose (Permute's axes), PadImage and
// CropImage (ZeroPadding2D, Cropping2D: each the other's gradient), Upsample
// and UpsampleGrad (UpSampling2D, nearest or bilinear). Every kernel is a
// gather, one output value from the input values it reads (shaders/util/
// transpose, util/shift_image, forward/upsample2d, backward/upsample2d).
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/graph/op.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/interpolation.hpp"
#include "gltrain/margins.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain::graph {

namespace spatial_detail {
inline void requireImage(const char* what, const Shape& s, const Shape3& expected) {
    if (s != imageShape(expected))
        throw ShapeError(std::string(what) + " must be " + imageShape(expected).str() + ", got " + s.str());
}
// The input coordinate bilinear resizing reads output coordinate `o` from
// (TF.js's resizeBilinear, corners not aligned, no half-pixel centres): the
// rows (or columns) below and above it and the weight of the one above.
struct Taps {
    int lo = 0, hi = 0;
    float frac = 0;
};
inline Taps bilinearTaps(int o, float scale, int in) {
    const float src = scale * float(o);
    const float lo = std::max(0.0f, std::floor(src));
    return {int(lo), std::min(in - 1, int(std::ceil(src))), src - lo};
}
// in / out as TF.js computes it (in float32 on the GPU).
inline float bilinearScale(int in, int out) { return float(in) / float(out); }
}  // namespace spatial_detail

// Each example's axes permuted: output axis k is input axis perm[k] (both
// counted after the batch; up to three). Its gradient is the inverse permutation.
struct Transpose {
    static constexpr const char* kName = "transpose";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    std::vector<int64_t> in;  // the input's axes after the batch
    std::vector<int> perm;    // 0-based, over those axes

    Shapes shapes(const Shapes& s) const {
        requireValid();
        op_detail::requireSame("x", s[0], Shape::batched(in));
        return {outShape()};
    }
    template <class G>
    void grad(G& g) const {
        if (!g.needs(0)) return;
        std::vector<int> inverse(perm.size());
        for (size_t k = 0; k < perm.size(); ++k) inverse[size_t(perm[k])] = int(k);
        const Shape out = outShape();
        g.grad(0, g.add(Transpose{{out.dims.begin() + 1, out.dims.end()}, inverse}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        // The output's axes and their strides in X, padded in front to three.
        int dims[3] = {1, 1, 1}, strides[3] = {0, 0, 0};
        const std::vector<int64_t> st = inStrides();
        const size_t pad = 3 - perm.size();
        for (size_t k = 0; k < perm.size(); ++k) {
            dims[pad + k] = int(in[size_t(perm[k])]);
            strides[pad + k] = int(st[size_t(perm[k])]);
        }
        r.list()
            .add(Pass(r.in(0).context(), "util/transpose"))
            .input("X", r.in(0))
            .output(r.out(0))
            .uniformInt("outDims", dims[0], dims[1], dims[2])
            .uniformInt("strides", strides[0], strides[1], strides[2]);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const std::vector<int64_t> st = inStrides();
        const size_t n = perm.size();
        std::vector<int64_t> dims(n), from(n);  // the output's axes and each one's stride in x
        for (size_t k = 0; k < n; ++k) dims[k] = in[size_t(perm[k])], from[k] = st[size_t(perm[k])];
        const HostMatrix& x = c.in(0);
        HostMatrix& y = c.out(0);
        std::vector<int64_t> idx(n);
        for (int r = 0; r < y.rows; ++r) {
            const float* px = x.data.data() + size_t(r) * size_t(x.cols);
            float* py = y.data.data() + size_t(r) * size_t(y.cols);
            std::fill(idx.begin(), idx.end(), 0);
            for (int64_t j = 0; j < y.cols; ++j) {
                int64_t o = 0;
                for (size_t k = 0; k < n; ++k) o += idx[k] * from[k];
                py[j] = px[o];
                for (size_t k = n; k-- > 0;)
                    if (++idx[k] < dims[k]) break;
                    else idx[k] = 0;
            }
        }
    }
    static std::vector<Example<Transpose>> examples() {
        return {{{{2, 3, 5}, {2, 0, 1}}, {{Shape::batched({2, 3, 5})}}},
                {{{3, 4, 5}, {1, 0, 2}}, {{Shape::batched({3, 4, 5})}}},
                {{{3, 2, 7}, {0, 2, 1}}, {{Shape::batched({3, 2, 7})}}},
                {{{5, 3}, {1, 0}}, {{Shape::batched({5, 3})}}}};
    }

    // ShapeError unless perm is a permutation of in's axes (1 to 3 of them).
    void requireValid() const {
        if (in.empty() || in.size() > 3 || perm.size() != in.size())
            throw ShapeError("a transpose permutes 1 to 3 axes after the batch: " + std::to_string(perm.size()) +
                             " indices for " + Shape::batched(in).str());
        std::vector<bool> seen(in.size(), false);
        for (int p : perm) {
            if (p < 0 || p >= int(in.size()) || seen[size_t(p)])
                throw ShapeError("the axes are not a permutation of 0.." + std::to_string(in.size() - 1));
            seen[size_t(p)] = true;
        }
    }
    Shape outShape() const {
        std::vector<int64_t> d;
        for (int p : perm) d.push_back(in[size_t(p)]);
        return Shape::batched(d);
    }
    // The distance in a row between neighbours along each input axis.
    std::vector<int64_t> inStrides() const {
        std::vector<int64_t> st(in.size(), 1);
        for (size_t k = in.size() - 1; k-- > 0;) st[k] = st[k + 1] * in[k + 1];
        return st;
    }
};

namespace spatial_detail {
// Y[n, y, x, c] = X[n, y + dy, x + dx, c], 0 outside X: a pad (negative
// offsets) or a crop (positive), the one shader both use.
template <class R>
void recordShift(R& r, const Shape3& in, const Shape3& out, int dy, int dx) {
    r.list()
        .add(Pass(r.in(0).context(), "util/shift_image"))
        .input("X", r.in(0))
        .output(r.out(0))
        .uniformInt("inHWC", in.height, in.width, in.channels)
        .uniformInt("outHWC", out.height, out.width, out.channels)
        .uniformInt("offset", dy, dx);
}
inline void shift(const HostMatrix& x, HostMatrix& y, const Shape3& in, const Shape3& out, int dy, int dx) {
    std::fill(y.data.begin(), y.data.end(), 0.0f);
    const int C = in.channels;
    for (int r = 0; r < y.rows; ++r)
        for (int oy = 0; oy < out.height; ++oy) {
            const int iy = oy + dy;
            if (iy < 0 || iy >= in.height) continue;
            const int ox0 = std::max(0, -dx), ox1 = std::min(out.width, in.width - dx);  // [ox0, ox1) reads X
            if (ox0 >= ox1) continue;
            const float* from = x.data.data() + size_t(r) * size_t(x.cols) +
                                (size_t(iy) * size_t(in.width) + size_t(ox0 + dx)) * size_t(C);
            float* to =
                y.data.data() + size_t(r) * size_t(y.cols) + (size_t(oy) * size_t(out.width) + size_t(ox0)) * size_t(C);
            std::copy(from, from + size_t(ox1 - ox0) * size_t(C), to);
        }
}
inline std::vector<Shape3> shiftExampleImages() { return {{5, 3, 2}, {4, 7, 3}, {3, 4, 1}}; }
}  // namespace spatial_detail

struct CropImage;

// Zeros around each image: [B, H, W, C] -> [B, top + H + bottom, left + W + right, C].
struct PadImage {
    static constexpr const char* kName = "pad_image";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shape3 in;
    Margins pad;

    Shapes shapes(const Shapes& s) const {
        if (pad.top < 0 || pad.bottom < 0 || pad.left < 0 || pad.right < 0)
            throw ShapeError("padding " + pad.str() + " is negative");
        spatial_detail::requireImage("x", s[0], in);
        return {imageShape(out())};
    }
    template <class G>
    void grad(G& g) const;
    template <class R>
    void gpu(R& r) const {
        spatial_detail::recordShift(r, in, out(), -pad.top, -pad.left);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        spatial_detail::shift(c.in(0), c.out(0), in, out(), -pad.top, -pad.left);
    }
    static std::vector<Example<PadImage>> examples() {
        std::vector<Example<PadImage>> e;
        const Margins m[] = {{1, 2, 0, 3}, {2}, {0, 1, 2, 0}};
        const std::vector<Shape3> images = spatial_detail::shiftExampleImages();
        for (size_t k = 0; k < images.size(); ++k) e.push_back({{images[k], m[k]}, {{imageShape(images[k])}}});
        return e;
    }
    Shape3 out() const { return {in.height + pad.rows(), in.width + pad.cols(), in.channels}; }
};

// Each image without its margins: [B, H, W, C] -> [B, H - top - bottom, W - left - right, C].
struct CropImage {
    static constexpr const char* kName = "crop_image";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shape3 in;
    Margins crop;

    Shapes shapes(const Shapes& s) const {
        if (crop.top < 0 || crop.bottom < 0 || crop.left < 0 || crop.right < 0)
            throw ShapeError("cropping " + crop.str() + " is negative");
        spatial_detail::requireImage("x", s[0], in);
        if (crop.rows() >= in.height || crop.cols() >= in.width)
            throw ShapeError("cropping " + crop.str() + " leaves nothing of a " + std::to_string(in.height) + "x" +
                             std::to_string(in.width) + " image");
        return {imageShape(out())};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(PadImage{out(), crop}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        spatial_detail::recordShift(r, in, out(), crop.top, crop.left);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        spatial_detail::shift(c.in(0), c.out(0), in, out(), crop.top, crop.left);
    }
    static std::vector<Example<CropImage>> examples() {
        std::vector<Example<CropImage>> e;
        const Margins m[] = {{1, 2, 0, 1}, {1}, {0, 1, 2, 0}};
        const std::vector<Shape3> images = spatial_detail::shiftExampleImages();
        for (size_t k = 0; k < images.size(); ++k) e.push_back({{images[k], m[k]}, {{imageShape(images[k])}}});
        return e;
    }
    Shape3 out() const { return {in.height - crop.rows(), in.width - crop.cols(), in.channels}; }
};

template <class G>
void PadImage::grad(G& g) const {
    if (g.needs(0)) g.grad(0, g.add(CropImage{out(), pad}, {g.dOut(0)}));
}

namespace spatial_detail {
inline void requireFactors(const Size2& size) {
    if (size.h < 1 || size.w < 1) throw ShapeError("the upsampling size " + size.str() + " is not positive");
}
template <class R>
void recordUpsample(R& r, const char* kernel, const char* input, const Shape3& in, const Size2& size,
                    Interpolation how) {
    const Shape3 out{in.height * size.h, in.width * size.w, in.channels};
    r.list()
        .add(Pass(r.in(0).context(), kernel))
        .input(input, r.in(0))
        .output(r.out(0))
        .uniformInt("inHWC", in.height, in.width, in.channels)
        .uniformInt("outHWC", out.height, out.width, out.channels)
        .uniformInt("size", size.h, size.w)
        .uniformInt("bilinear", how == Interpolation::Bilinear ? 1 : 0)
        .uniform("scale", bilinearScale(in.height, out.height), bilinearScale(in.width, out.width));
}
}  // namespace spatial_detail

// Each image resized by whole factors: [B, H, W, C] -> [B, H*sh, W*sw, C],
// each pixel repeated (nearest) or interpolated as TF.js's resizeBilinear.
struct Upsample {
    static constexpr const char* kName = "upsample";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shape3 in;
    Size2 size{2, 2};
    Interpolation interpolation = Interpolation::Nearest;

    Shapes shapes(const Shapes& s) const {
        spatial_detail::requireFactors(size);
        spatial_detail::requireImage("x", s[0], in);
        return {imageShape(out())};
    }
    template <class G>
    void grad(G& g) const;
    template <class R>
    void gpu(R& r) const {
        spatial_detail::recordUpsample(r, "forward/upsample2d", "X", in, size, interpolation);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const Shape3 o = out();
        const int C = in.channels;
        const HostMatrix& x = c.in(0);
        HostMatrix& y = c.out(0);
        const float sy = spatial_detail::bilinearScale(in.height, o.height);
        const float sx = spatial_detail::bilinearScale(in.width, o.width);
        for (int r = 0; r < y.rows; ++r) {
            const float* px = x.data.data() + size_t(r) * size_t(x.cols);
            float* py = y.data.data() + size_t(r) * size_t(y.cols);
            const auto at = [&](int iy, int ix, int ch) {
                return px[(size_t(iy) * size_t(in.width) + size_t(ix)) * size_t(C) + size_t(ch)];
            };
            for (int oy = 0; oy < o.height; ++oy)
                for (int ox = 0; ox < o.width; ++ox) {
                    float* to = py + (size_t(oy) * size_t(o.width) + size_t(ox)) * size_t(C);
                    if (interpolation == Interpolation::Nearest) {
                        for (int ch = 0; ch < C; ++ch) to[ch] = at(oy / size.h, ox / size.w, ch);
                        continue;
                    }
                    const spatial_detail::Taps ty = spatial_detail::bilinearTaps(oy, sy, in.height);
                    const spatial_detail::Taps tx = spatial_detail::bilinearTaps(ox, sx, in.width);
                    for (int ch = 0; ch < C; ++ch) {
                        const float tl = at(ty.lo, tx.lo, ch), tr = at(ty.lo, tx.hi, ch);
                        const float bl = at(ty.hi, tx.lo, ch), br = at(ty.hi, tx.hi, ch);
                        const float top = tl + (tr - tl) * tx.frac, bottom = bl + (br - bl) * tx.frac;
                        to[ch] = top + (bottom - top) * ty.frac;
                    }
                }
        }
    }
    static std::vector<Example<Upsample>> examples();
    Shape3 out() const { return {in.height * size.h, in.width * size.w, in.channels}; }
};

// The input gradient of Upsample (the adjoint of its resize): input dY
// [B, H*sh, W*sw, C], output dX [B, H, W, C]. Nearest sums each block;
// bilinear sums every output gradient that read the pixel, by its weight.
struct UpsampleGrad {
    static constexpr const char* kName = "upsample_grad";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shape3 in;  // the forward pass's input
    Size2 size{2, 2};
    Interpolation interpolation = Interpolation::Nearest;

    Shapes shapes(const Shapes& s) const {
        spatial_detail::requireFactors(size);
        spatial_detail::requireImage("dy", s[0], forward().out());
        return {imageShape(in)};
    }
    template <class R>
    void gpu(R& r) const {
        spatial_detail::recordUpsample(r, "backward/upsample2d", "DY", in, size, interpolation);
    }
    // The scatter form (the GPU gathers).
    template <class Ctx>
    void cpu(Ctx& c) const {
        const Shape3 o = forward().out();
        const int C = in.channels;
        const HostMatrix& dy = c.in(0);
        HostMatrix& dx = c.out(0);
        std::fill(dx.data.begin(), dx.data.end(), 0.0f);
        const float sy = spatial_detail::bilinearScale(in.height, o.height);
        const float sx = spatial_detail::bilinearScale(in.width, o.width);
        for (int r = 0; r < dx.rows; ++r) {
            const float* pg = dy.data.data() + size_t(r) * size_t(dy.cols);
            float* pd = dx.data.data() + size_t(r) * size_t(dx.cols);
            const auto add = [&](int iy, int ix, const float* g, float w) {
                float* to = pd + (size_t(iy) * size_t(in.width) + size_t(ix)) * size_t(C);
                for (int ch = 0; ch < C; ++ch) to[ch] += w * g[ch];
            };
            for (int oy = 0; oy < o.height; ++oy)
                for (int ox = 0; ox < o.width; ++ox) {
                    const float* g = pg + (size_t(oy) * size_t(o.width) + size_t(ox)) * size_t(C);
                    if (interpolation == Interpolation::Nearest) {
                        add(oy / size.h, ox / size.w, g, 1.0f);
                        continue;
                    }
                    const spatial_detail::Taps ty = spatial_detail::bilinearTaps(oy, sy, in.height);
                    const spatial_detail::Taps tx = spatial_detail::bilinearTaps(ox, sx, in.width);
                    add(ty.lo, tx.lo, g, (1 - ty.frac) * (1 - tx.frac));
                    add(ty.lo, tx.hi, g, (1 - ty.frac) * tx.frac);
                    add(ty.hi, tx.lo, g, ty.frac * (1 - tx.frac));
                    add(ty.hi, tx.hi, g, ty.frac * tx.frac);
                }
        }
    }
    static std::vector<Example<UpsampleGrad>> examples() {
        std::vector<Example<UpsampleGrad>> e;
        for (const Example<Upsample>& u : Upsample::examples())
            e.push_back({{u.op.in, u.op.size, u.op.interpolation}, {{imageShape(u.op.out())}}});
        return e;
    }
    Upsample forward() const { return {in, size, interpolation}; }
};

inline std::vector<Example<Upsample>> Upsample::examples() {
    std::vector<Example<Upsample>> e;
    for (Interpolation how : kAllInterpolations) {
        e.push_back({{{3, 5, 2}, {2, 3}, how}, {{Shape::batched({3, 5, 2})}}});
        e.push_back({{{4, 3, 3}, {3, 1}, how}, {{Shape::batched({4, 3, 3})}}});
        e.push_back({{{1, 2, 5}, {2, 2}, how}, {{Shape::batched({1, 2, 5})}}});
    }
    return e;
}

template <class G>
void Upsample::grad(G& g) const {
    if (g.needs(0)) g.grad(0, g.add(UpsampleGrad{in, size, interpolation}, {g.dOut(0)}));
}

}  // namespace gltrain::graph
