// 2-D convolution over NHWC image rows (gltrain/window.hpp), its two
// gradients, and pooling with its gradient. The window is fixed when the
// layer builds the node (it knows its input's image then).
#pragma once
#include <vector>

#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/pooling.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/conv.hpp"

namespace gltrain::graph {

namespace op_detail {
inline void requireImage(const char* what, const Shape& s, const Shape3& expected) {
    if (s.rank() != 4 || !s.isBatched() || s.image() != expected)
        throw ShapeError(std::string(what) + " must be [B, " + std::to_string(expected.height) + ", " +
                         std::to_string(expected.width) + ", " + std::to_string(expected.channels) + "], got " +
                         s.str());
}
// The convolution kernels write 4 rows per fragment into a row-interleaved
// tensor (bench/kernels: 2-4x the one-texel kernels; 8-row blocks measured no faster).
inline Layout convLayout(int rows) { return rows >= 4 ? Layout::PackedRows4 : Layout::Packed; }
inline Shape filterShape(const Window& w) { return Shape{int64_t(w.kh) * w.kw * w.in.channels, w.out.channels}; }
inline void requireFilter(const Window& w, const Shape& s) {
    if (s != filterShape(w))
        throw ShapeError("the filter must be " + filterShape(w).str() + " (kh*kw*C x filters), got " + s.str());
}
// Windows the op table's tests run on: same and valid padding, strides 1 and 2,
// odd sizes; `filters` output channels for a convolution, 0 for pooling (which keeps them).
// A convolution also gets dilated, non-square windows with unequal strides, on
// channel counts that take the kernels' per-lane and 4-channel paths, and 1x1 windows.
inline std::vector<Window> exampleWindows(int filters) {
    auto make = [&](Shape3 in, int kh, int kw, int sh, int sw, Padding p, int f, int dh = 1, int dw = 1) {
        return Window::make("example", in, kh, kw, sh, sw, p, filters ? f : in.channels, dh, dw);
    };
    std::vector<Window> w = {make({5, 6, 3}, 3, 3, 1, 1, Padding::Same, 4),
                             make({7, 5, 2}, 3, 2, 2, 1, Padding::Valid, 5),
                             make({6, 6, 4}, 2, 2, 2, 2, Padding::Same, 8)};
    if (filters) {
        w.push_back(make({7, 6, 3}, 2, 3, 1, 2, Padding::Same, 5, 2, 1));
        w.push_back(make({9, 7, 2}, 3, 2, 2, 1, Padding::Valid, 3, 2, 3));
        w.push_back(make({6, 7, 4}, 3, 1, 1, 2, Padding::Same, 8, 2, 2));
        // Pointwise (the CPU's plain-product path, cpu::conv_detail::pointwise) and 1x1 at stride 2 (not).
        w.push_back(make({5, 7, 6}, 1, 1, 1, 1, Padding::Valid, 9));
        w.push_back(make({5, 7, 6}, 1, 1, 2, 2, Padding::Same, 3));
    }
    return w;
}
// The op table's examples of a windowed op: Op{w} for each window, its inputs
// of the shapes `inputs(w)` gives (normal values).
template <class Op, class Inputs>
std::vector<Example<Op>> windowExamples(const std::vector<Window>& windows, Inputs inputs) {
    std::vector<Example<Op>> e;
    for (const Window& w : windows) {
        Example<Op> x{Op{w}, {}};
        for (const Shape& s : inputs(w)) x.inputs.push_back({s});
        e.push_back(std::move(x));
    }
    return e;
}
}  // namespace op_detail

// dX = the gradient of a convolution for its input: inputs dy, W.
struct ConvGradInput {
    static constexpr const char* kName = "conv2d_grad_input";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("dy", in[0], window.out);
        op_detail::requireFilter(window, in[1]);
        return {imageShape(window.in)};
    }
    template <class R>
    void gpu(R& r) const {
        recordConv2DBackwardInput(r.list(), r.in(0), r.in(1), window, r.out(0, op_detail::convLayout(r.rows(0))));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::conv2dBackwardInput(c.in(0).data.data(), c.in(1).data.data(), c.in(0).rows, window, c.out(0).data.data(),
                                 c.ws());
    }
    static std::vector<Example<ConvGradInput>> examples() {
        return op_detail::windowExamples<ConvGradInput>(op_detail::exampleWindows(4), [](const Window& w) {
            return Shapes{imageShape(w.out), op_detail::filterShape(w)};
        });
    }
};

// dW = the gradient of a convolution for its filter: inputs x, dy.
struct ConvGradFilter {
    static constexpr const char* kName = "conv2d_grad_filter";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.in);
        op_detail::requireImage("dy", in[1], window.out);
        return {op_detail::filterShape(window)};
    }
    template <class R>
    void gpu(R& r) const {
        recordConv2DBackwardFilter(r.list(), r.in(0), r.in(1), window, r.out(0, op_detail::convLayout(r.rows(0))));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::conv2dBackwardFilter(c.in(0).data.data(), c.in(1).data.data(), c.in(0).rows, window, c.out(0).data.data(),
                                  c.ws());
    }
    static std::vector<Example<ConvGradFilter>> examples() {
        return op_detail::windowExamples<ConvGradFilter>(op_detail::exampleWindows(4), [](const Window& w) {
            return Shapes{imageShape(w.in), imageShape(w.out)};
        });
    }
};

// y = conv(x, W): x [B, H, W, C], W [kh*kw*C, F] -> [B, OH, OW, F]; the bias is a BiasAdd.
struct Conv {
    static constexpr const char* kName = "conv2d";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.in);
        op_detail::requireFilter(window, in[1]);
        return {imageShape(window.out)};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(ConvGradInput{window}, {g.dOut(0), g.in(1)}));
        if (g.needs(1)) g.grad(1, g.add(ConvGradFilter{window}, {g.in(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordConv2D(r.list(), r.in(0), r.in(1), nullptr, window, Activation::Linear,
                     r.out(0, op_detail::convLayout(r.rows(0))));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::conv2d(c.in(0).data.data(), c.in(0).rows, window, c.in(1).data.data(), nullptr, Activation::Linear, 0.0f,
                    c.out(0).data.data(), nullptr, c.ws());
    }
    static std::vector<Example<Conv>> examples() {
        return op_detail::windowExamples<Conv>(op_detail::exampleWindows(4), [](const Window& w) {
            return Shapes{imageShape(w.in), op_detail::filterShape(w)};
        });
    }
};

// y = the transpose of a convolution (Conv2DTranspose): x [B, OH, OW, F] ->
// [B, H, W, C] with W [kh*kw*C, F], where `window` is the convolution that maps
// y's shape back to x's — so y is that convolution's input gradient given x
// (the same kernels), and its own gradients are that convolution and its filter gradient.
struct ConvTranspose {
    static constexpr const char* kName = "conv2d_transpose";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.out);
        op_detail::requireFilter(window, in[1]);
        return {imageShape(window.in)};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(Conv{window}, {g.dOut(0), g.in(1)}));
        if (g.needs(1)) g.grad(1, g.add(ConvGradFilter{window}, {g.dOut(0), g.in(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordConv2DBackwardInput(r.list(), r.in(0), r.in(1), window, r.out(0, op_detail::convLayout(r.rows(0))));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::conv2dBackwardInput(c.in(0).data.data(), c.in(1).data.data(), c.in(0).rows, window, c.out(0).data.data(),
                                 c.ws());
    }
    static std::vector<Example<ConvTranspose>> examples() {
        return op_detail::windowExamples<ConvTranspose>(op_detail::exampleWindows(4), [](const Window& w) {
            return Shapes{imageShape(w.out), op_detail::filterShape(w)};
        });
    }
};

// dx of pooling: inputs x (max pooling finds its maxima again), dy.
struct PoolGrad {
    static constexpr const char* kName = "pool2d_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Window window;
    PoolKind kind = PoolKind::Max;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.in);
        op_detail::requireImage("dy", in[1], window.out);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordPool2DBackward(r.list(), r.in(0), r.in(1), window, kind, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const int n = c.in(0).rows;
        bool fresh = false;
        std::vector<int32_t>& argmax = c.argmax(c.node.inputs[0], &fresh);
        if (kind == PoolKind::Max && !fresh) {  // no forward in this run: find the maxima again
            argmax.resize(size_t(n) * size_t(window.out.size()));
            c.scratch().resize(argmax.size());
            cpu::pool2d(c.in(0).data.data(), n, window, kind, c.scratch().data(), argmax.data(), c.ws());
        }
        cpu::pool2dBackward(c.in(1).data.data(), argmax.data(), n, window, kind, c.out(0).data.data(), c.ws());
    }
    static std::vector<Example<PoolGrad>> examples() {
        std::vector<Example<PoolGrad>> e;
        for (PoolKind k : {PoolKind::Max, PoolKind::Average})
            for (const Window& w : op_detail::exampleWindows(0))
                e.push_back({{w, k}, {{imageShape(w.in)}, {imageShape(w.out)}}});
        return e;
    }
};

// Max or average pooling over a window (no padding taps: "same" averages count the inside ones).
struct Pool {
    static constexpr const char* kName = "pool2d";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Window window;
    PoolKind kind = PoolKind::Max;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.in);
        if (window.out.channels != window.in.channels) throw ShapeError("pooling keeps the channels");
        return {imageShape(window.out)};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(PoolGrad{window, kind}, {g.in(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordPool2D(r.list(), r.in(0), window, kind, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const int n = c.in(0).rows;
        std::vector<int32_t>& argmax = c.argmax(c.node.inputs[0]);  // kept for the gradient
        if (kind == PoolKind::Max) argmax.resize(size_t(n) * size_t(window.out.size()));
        cpu::pool2d(c.in(0).data.data(), n, window, kind, c.out(0).data.data(), argmax.data(), c.ws());
    }
    static std::vector<Example<Pool>> examples() {
        std::vector<Example<Pool>> e;
        for (PoolKind k : {PoolKind::Max, PoolKind::Average})
            for (const Window& w : op_detail::exampleWindows(0)) e.push_back({{w, k}, {{imageShape(w.in)}}});
        return e;
    }
};

}  // namespace gltrain::graph
