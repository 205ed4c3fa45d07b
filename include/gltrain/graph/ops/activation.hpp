// Activations (gltrain/activation.hpp's functions), their gradient, and the
// row softmax that predict() applies to a classifier's logits.
#pragma once
#include "gltrain/cpu/activation.hpp"
#include "gltrain/cpu/parallel_for.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/ops/loss.hpp"

namespace gltrain::graph {

// dz = dy ⊙ f'(z): inputs dy, z.
struct ActivateGrad {
    static constexpr const char* kName = "activate_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Activation act = Activation::ReLU;
    float alpha = 0.01f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireSame("dy and z", in[0], in[1]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordActivationGrad(r.list(), r.in(0), r.in(1), act, r.out(0), alpha);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const float *dy = c.in(0).data.data(), *z = c.in(1).data.data();
        float* dz = c.out(0).data.data();
        cpu::forElements(c.ws(), c.out(0).data.size(), 16.0, [&](size_t first, size_t end) {
            if (dz != dy) std::copy(dy + first, dy + end, dz + first);
            cpu::multiplyDerivative(dz + first, z + first, end - first, act, alpha);
        });
    }
    static std::vector<Example<ActivateGrad>> examples() {
        std::vector<Example<ActivateGrad>> e;
        for (Activation a : kAllActivations) e.push_back({{a, 0.1f}, {{Shape::batched({6})}, {Shape::batched({6})}}});
        return e;
    }
};

// y = f(x), element-wise.
struct Activate {
    static constexpr const char* kName = "activate";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Activation act = Activation::ReLU;
    float alpha = 0.01f;  // LeakyReLU's slope or ELU's alpha
    Shapes shapes(const Shapes& in) const { return {in[0]}; }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(ActivateGrad{act, alpha}, {g.dOut(0), g.in(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordActivation(r.list(), r.in(0), act, r.out(0), alpha);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::activate(c.out(0).data.data(), c.in(0).data.data(), c.out(0).data.size(), act, alpha);
    }
    static std::vector<Example<Activate>> examples() {
        std::vector<Example<Activate>> e;
        for (Activation a : kAllActivations) e.push_back({{a, 0.1f}, {{Shape::batched({2, 7})}}});
        return e;
    }
};

// dx of a row softmax from its output: inputs y, dy; dx = y ⊙ (dy - rowsum(dy ⊙ y)).
struct SoftmaxRowsGrad {
    static constexpr const char* kName = "softmax_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireSame("y and dy", in[0], in[1]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        r.list().add(Pass(r.ctx(), "backward/softmax")).input("Y", r.in(0)).input("DY", r.in(1)).output(r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &y = c.in(0), &dy = c.in(1);
        HostMatrix& dx = c.out(0);
        for (int i = 0; i < y.rows; ++i) {
            const size_t row = size_t(i) * size_t(y.cols);
            double dot = 0;
            for (int j = 0; j < y.cols; ++j) dot += double(dy.data[row + size_t(j)]) * y.data[row + size_t(j)];
            for (int j = 0; j < y.cols; ++j)
                dx.data[row + size_t(j)] = y.data[row + size_t(j)] * (dy.data[row + size_t(j)] - float(dot));
        }
    }
    static std::vector<Example<SoftmaxRowsGrad>> examples() {
        return {{{}, {{Shape::batched({7})}, {Shape::batched({7})}}},
                {{}, {{Shape::batched({2})}, {Shape::batched({2})}}}};
    }
};

// Softmax over the last dimension of [B, C] (predict's probabilities, and
// attention's weights; a classifier's loss reads the logits before it).
struct SoftmaxRows {
    static constexpr const char* kName = "softmax";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        if (!in[0].isBatched() || in[0].rank() != 2) throw ShapeError("expected [B, C], got " + in[0].str());
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(SoftmaxRowsGrad{}, {g.out(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordSoftmax(r.list(), r.in(0), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        HostMatrix& y = c.out(0);
        for (int i = 0; i < x.rows; ++i) {
            const float* xr = x.data.data() + size_t(i) * size_t(x.cols);
            float* yr = y.data.data() + size_t(i) * size_t(x.cols);
            float m = xr[0];
            for (int j = 1; j < x.cols; ++j) m = xr[j] > m ? xr[j] : m;
            float s = 0.0f;
            for (int j = 0; j < x.cols; ++j) s += yr[j] = std::exp(xr[j] - m);
            for (int j = 0; j < x.cols; ++j) yr[j] /= s;
        }
    }
    static std::vector<Example<SoftmaxRows>> examples() { return {{{}, {{Shape::batched({7})}}}}; }
};

// A softmax over one axis of [B, ...] values (rows): the `count` values `stride` apart
// that share their other coordinates. Of [B, H, W, C]: the channels (count C, stride 1),
// the width (W, C) or the height (H, W*C).
struct AxisGroups {
    int count = 1;   // the axis' length
    int stride = 1;  // the distance of its neighbours in a row

    void check(const Shape& s) const {
        op_detail::requireBatched("x", s);
        if (count < 1 || stride < 1 || s.cols() % (int64_t(count) * stride) != 0)
            throw ShapeError("an axis of " + std::to_string(count) + " values " + std::to_string(stride) +
                             " apart does not tile " + s.str());
    }
    // The first element of the axis through element c of a row.
    int64_t base(int64_t c) const { return c - ((c / stride) % count) * stride; }
};

// dx of SoftmaxAxis from its output: inputs y, dy; dx = y ⊙ (dy - Σ_axis dy ⊙ y).
struct SoftmaxAxisGrad {
    static constexpr const char* kName = "softmax_axis_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    AxisGroups axis;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireSame("y and dy", in[0], in[1]);
        axis.check(in[0]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordSoftmaxAxisGrad(r.list(), r.in(0), r.in(1), axis.count, axis.stride, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &y = c.in(0), &dy = c.in(1);
        HostMatrix& dx = c.out(0);
        // Each group's dot product once (attention's groups are 64 long).
        const size_t n = size_t(y.cols), step = size_t(axis.stride), block = size_t(axis.count) * step;
        for (int i = 0; i < y.rows; ++i) {
            const float *yr = y.data.data() + size_t(i) * n, *dyr = dy.data.data() + size_t(i) * n;
            float* dxr = dx.data.data() + size_t(i) * n;
            for (size_t outer = 0; outer < n; outer += block)
                for (size_t b = outer; b < outer + step; ++b) {
                    double dot = 0;
                    for (int k = 0; k < axis.count; ++k)
                        dot += double(dyr[b + size_t(k) * step]) * yr[b + size_t(k) * step];
                    for (int k = 0; k < axis.count; ++k) {
                        const size_t j = b + size_t(k) * step;
                        dxr[j] = yr[j] * (dyr[j] - float(dot));
                    }
                }
        }
    }
    static std::vector<Example<SoftmaxAxisGrad>> examples() {
        return {{{{5, 3}}, {{Shape::batched({3, 5, 3})}, {Shape::batched({3, 5, 3})}}}};
    }
};

// Softmax over one axis of each example (the Softmax layer on an image, or on any
// axis; the last axis of [B, C] is SoftmaxRows).
struct SoftmaxAxis {
    static constexpr const char* kName = "softmax_axis";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    AxisGroups axis;
    Shapes shapes(const Shapes& in) const {
        axis.check(in[0]);
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(SoftmaxAxisGrad{axis}, {g.out(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordSoftmaxAxis(r.list(), r.in(0), axis.count, axis.stride, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        HostMatrix& y = c.out(0);
        const size_t n = size_t(x.cols), step = size_t(axis.stride);
        for (int i = 0; i < x.rows; ++i) {
            const float* xr = x.data.data() + size_t(i) * n;
            float* yr = y.data.data() + size_t(i) * n;
            for (size_t j = 0; j < n; ++j) {
                const size_t b = size_t(axis.base(int64_t(j)));
                float m = xr[b];
                for (int k = 1; k < axis.count; ++k) m = xr[b + size_t(k) * step] > m ? xr[b + size_t(k) * step] : m;
                float s = 0.0f;
                for (int k = 0; k < axis.count; ++k) s += std::exp(xr[b + size_t(k) * step] - m);
                yr[j] = std::exp(xr[j] - m) / s;
            }
        }
    }
    // [B, 3, 5, 3] over its channels, width and height, and a flat row of 7.
    static std::vector<Example<SoftmaxAxis>> examples() {
        const Shape image = Shape::batched({3, 5, 3});
        return {
            {{{3, 1}}, {{image}}}, {{{5, 3}}, {{image}}}, {{{3, 15}}, {{image}}}, {{{7, 1}}, {{Shape::batched({7})}}}};
    }
};

}  // namespace gltrain::graph
