// Depthwise 2-D convolution over NHWC image rows and its two gradients: each
// input channel c convolved with its own M filters into output channels
// c*M + m (the window's out.channels is C*M). The filter is (kh*kw*C) x M,
// TensorFlow's [kh, kw, C, M] depthwise kernel flattened.
#pragma once
#include <vector>

#include "gltrain/cpu/depthwise.hpp"
#include "gltrain/graph/ops/conv.hpp"
#include "gltrain/ops/depthwise.hpp"

namespace gltrain::graph {

namespace op_detail {
inline Shape depthwiseFilterShape(const Window& w) {
    return Shape{int64_t(w.kh) * w.kw * w.in.channels, w.out.channels / w.in.channels};
}
inline void requireDepthwise(const Window& w, const Shape* filter) {
    if (w.out.channels % w.in.channels != 0)
        throw ShapeError("a depthwise window's output channels (" + std::to_string(w.out.channels) +
                         ") must be a multiple of its input channels (" + std::to_string(w.in.channels) + ")");
    if (filter && *filter != depthwiseFilterShape(w))
        throw ShapeError("the depthwise filter must be " + depthwiseFilterShape(w).str() + " (kh*kw*C x M), got " +
                         filter->str());
}
// Windows the op table's tests run on: odd sizes, same and valid padding,
// strides, dilations and non-square kernels; depth multipliers 1, 2 and 3.
inline std::vector<Window> depthwiseExampleWindows() {
    auto make = [](Shape3 in, int kh, int kw, int sh, int sw, Padding p, int m, int dh = 1, int dw = 1) {
        return Window::make("example", in, kh, kw, sh, sw, p, in.channels * m, dh, dw);
    };
    return {make({5, 6, 3}, 3, 3, 1, 1, Padding::Same, 1), make({7, 5, 2}, 3, 2, 2, 1, Padding::Valid, 2),
            make({7, 6, 3}, 2, 3, 1, 2, Padding::Same, 3, 2, 1), make({9, 7, 2}, 3, 2, 1, 1, Padding::Valid, 1, 2, 3),
            make({6, 7, 4}, 3, 1, 2, 2, Padding::Same, 2)};
}
}  // namespace op_detail

// dX of a depthwise convolution: inputs dy, W.
struct DepthwiseConvGradInput {
    static constexpr const char* kName = "depthwise_conv2d_grad_input";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("dy", in[0], window.out);
        op_detail::requireDepthwise(window, &in[1]);
        return {imageShape(window.in)};
    }
    template <class R>
    void gpu(R& r) const {
        recordDepthwiseConv2DBackwardInput(r.list(), r.in(0), r.in(1), window, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::depthwiseConv2dBackwardInput(c.in(0).data.data(), c.in(1).data.data(), c.in(0).rows, window,
                                          c.out(0).data.data());
    }
    static std::vector<Example<DepthwiseConvGradInput>> examples() {
        return op_detail::windowExamples<DepthwiseConvGradInput>(
            op_detail::depthwiseExampleWindows(), [](const Window& w) {
                return Shapes{imageShape(w.out), op_detail::depthwiseFilterShape(w)};
            });
    }
};

// dW of a depthwise convolution: inputs x, dy.
struct DepthwiseConvGradFilter {
    static constexpr const char* kName = "depthwise_conv2d_grad_filter";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.in);
        op_detail::requireImage("dy", in[1], window.out);
        op_detail::requireDepthwise(window, nullptr);
        return {op_detail::depthwiseFilterShape(window)};
    }
    template <class R>
    void gpu(R& r) const {
        recordDepthwiseConv2DBackwardFilter(r.list(), r.in(0), r.in(1), window, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::depthwiseConv2dBackwardFilter(c.in(0).data.data(), c.in(1).data.data(), c.in(0).rows, window,
                                           c.out(0).data.data());
    }
    static std::vector<Example<DepthwiseConvGradFilter>> examples() {
        return op_detail::windowExamples<DepthwiseConvGradFilter>(
            op_detail::depthwiseExampleWindows(), [](const Window& w) {
                return Shapes{imageShape(w.in), imageShape(w.out)};
            });
    }
};

// y = depthwise conv(x, W): x [B, H, W, C], W [kh*kw*C, M] -> [B, OH, OW, C*M]; the bias is a BiasAdd.
struct DepthwiseConv {
    static constexpr const char* kName = "depthwise_conv2d";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    Window window;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireImage("x", in[0], window.in);
        op_detail::requireDepthwise(window, &in[1]);
        return {imageShape(window.out)};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(DepthwiseConvGradInput{window}, {g.dOut(0), g.in(1)}));
        if (g.needs(1)) g.grad(1, g.add(DepthwiseConvGradFilter{window}, {g.in(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordDepthwiseConv2D(r.list(), r.in(0), r.in(1), window, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::depthwiseConv2d(c.in(0).data.data(), c.in(0).rows, window, c.in(1).data.data(), c.out(0).data.data());
    }
    static std::vector<Example<DepthwiseConv>> examples() {
        return op_detail::windowExamples<DepthwiseConv>(op_detail::depthwiseExampleWindows(), [](const Window& w) {
            return Shapes{imageShape(w.in), op_detail::depthwiseFilterShape(w)};
        });
    }
};

}  // namespace gltrain::graph
