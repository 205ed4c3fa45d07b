// Element-wise ops and the shape-only one: Add (residual merges, and the sum
// of a value's gradients when it feeds several nodes), Mul (dropout's mask,
// Multiply), Sub, Scale (Average, Subtract's gradient), Maximum and its
// mask GreaterEqual, BiasAdd over the last dimension (a dense layer's bias, a
// convolution's per channel), ChannelSum (its gradient), Reshape (moves no
// data: rows are NHWC).
#pragma once
#include <algorithm>
#include <cstring>

#include "gltrain/cpu/conv.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/batchnorm.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/ops/reduce.hpp"

namespace gltrain::graph {

namespace op_detail {
// An element-wise op of two operands of one shape, y[i] = f(a[i], b[i]):
// Op (deriving from Binary<Op>) gives kName, kGlsl (f on the GPU, of `a`
// and `b`, for ops/elementwise.hpp's recordBinary) and apply (f on the CPU).
template <class Op>
struct Binary {
    static constexpr int kInputs = 2, kOutputs = 1;
    Shapes shapes(const Shapes& in) const {
        requireSame("the operands", in[0], in[1]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordBinary(r.list(), Op::kName, Op::kGlsl, r.in(0), r.in(1), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const float *a = c.in(0).data.data(), *b = c.in(1).data.data();
        float* y = c.out(0).data.data();
        for (size_t i = 0, n = c.out(0).data.size(); i < n; ++i) y[i] = Op::apply(a[i], b[i]);
    }
};
}  // namespace op_detail

// y = a + b.
struct Add : op_detail::Binary<Add> {
    static constexpr const char* kName = "add";
    // f on the GPU and on the CPU.
    static constexpr const char* kGlsl = "((a) + (b))";
    static float apply(float a, float b) { return a + b; }
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    template <class G>
    void grad(G& g) const {
        for (int i = 0; i < 2; ++i)
            if (g.needs(i)) g.grad(i, g.dOut(0));
    }
    static std::vector<Example<Add>> examples() { return {{{}, {{Shape::batched({3, 5})}, {Shape::batched({3, 5})}}}}; }
};

struct Mul : op_detail::Binary<Mul> {
    static constexpr const char* kName = "mul";
    // f on the GPU and on the CPU.
    static constexpr const char* kGlsl = "((a) * (b))";
    static float apply(float a, float b) { return a * b; }
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(Mul{}, {g.dOut(0), g.in(1)}));
        if (g.needs(1)) g.grad(1, g.add(Mul{}, {g.dOut(0), g.in(0)}));
    }
    static std::vector<Example<Mul>> examples() { return {{{}, {{Shape::batched({11})}, {Shape::batched({11})}}}}; }
};

// y = s * x.
struct Scale {
    static constexpr const char* kName = "scale";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    float s = 1.0f;
    Shapes shapes(const Shapes& in) const { return {in[0]}; }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(Scale{s}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordScale(r.list(), r.in(0), s, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const float* x = c.in(0).data.data();
        float* y = c.out(0).data.data();
        for (size_t i = 0, n = c.out(0).data.size(); i < n; ++i) y[i] = s * x[i];
    }
    static std::vector<Example<Scale>> examples() { return {{{-0.5f}, {{Shape::batched({2, 7})}}}}; }
};

// y = a - b.
struct Sub : op_detail::Binary<Sub> {
    static constexpr const char* kName = "sub";
    // f on the GPU and on the CPU.
    static constexpr const char* kGlsl = "((a) - (b))";
    static float apply(float a, float b) { return a - b; }
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.dOut(0));
        if (g.needs(1)) g.grad(1, g.add(Scale{-1.0f}, {g.dOut(0)}));
    }
    static std::vector<Example<Sub>> examples() { return {{{}, {{Shape::batched({9})}, {Shape::batched({9})}}}}; }
};

// 1 where a >= b, else 0: which operand Maximum passed on (its gradient's mask).
struct GreaterEqual : op_detail::Binary<GreaterEqual> {
    static constexpr const char* kName = "greater_equal";
    // f on the GPU and on the CPU.
    static constexpr const char* kGlsl = "vec4(greaterThanEqual((a), (b)))";
    static float apply(float a, float b) { return a >= b ? 1.0f : 0.0f; }
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    static std::vector<Example<GreaterEqual>> examples() {
        return {{{}, {{Shape::batched({2, 5})}, {Shape::batched({2, 5})}}}};
    }
};

// y = max(a, b); the gradient goes to a where a >= b, else to b (as TensorFlow's).
struct Maximum : op_detail::Binary<Maximum> {
    static constexpr const char* kName = "maximum";
    // f on the GPU and on the CPU.
    static constexpr const char* kGlsl = "max((a), (b))";
    static float apply(float a, float b) { return std::max(a, b); }
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    template <class G>
    void grad(G& g) const {
        const auto toA = g.add(Mul{}, {g.dOut(0), g.add(GreaterEqual{}, {g.in(0), g.in(1)})});
        if (g.needs(0)) g.grad(0, toA);
        if (g.needs(1)) g.grad(1, g.add(Sub{}, {g.dOut(0), toA}));
    }
    static std::vector<Example<Maximum>> examples() {
        return {{{}, {{Shape::batched({3, 4})}, {Shape::batched({3, 4})}}}};
    }
};

// [C], summed over everything else: the gradient of a bias over the last dimension.
struct ChannelSum {
    static constexpr const char* kName = "channel_sum";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    int channels = 0;  // the last dimension of x
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("x", in[0]);
        if (in[0].last() != channels)
            throw ShapeError("x must end in " + std::to_string(channels) + " channels, got " + in[0].str());
        return {Shape{channels}};
    }
    template <class R>
    void gpu(R& r) const {
        const Tensor& x = r.in(0);
        if (channels == x.cols()) recordBiasGrad(r.list(), x, r.out(0));
        else recordChannelSum(r.list(), x, channels, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        cpu::channelSum(x.data.data(), x.rows, x.cols, c.out(0).cols, c.out(0).data.data(), c.acc(), c.scratch(),
                        c.ws());
    }
    static std::vector<Example<ChannelSum>> examples() {
        return {
            {{7}, {{Shape::batched({7})}}}, {{5}, {{Shape::batched({2, 3, 5})}}}, {{8}, {{Shape::batched({3, 2, 8})}}}};
    }
};

// y = x + b over the last dimension: b is [C], x is [B, ..., C].
struct BiasAdd {
    static constexpr const char* kName = "bias_add";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("x", in[0]);
        op_detail::requireChannelVector("the bias", in[0], in[1]);
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.dOut(0));
        if (g.needs(1)) g.grad(1, g.add(ChannelSum{int(g.shape(g.in(1)).dims[0])}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        const Tensor &x = r.in(0), &b = r.in(1);
        Tensor& y = r.out(0);
        if (b.cols() == x.cols()) {
            recordBiasAdd(r.list(), x, b, y);
            return;
        }
        const int C = b.cols();
        r.list()
            .add(Pass(x.context(), "forward/channel_bias_add", detail::channelDefines(C, {&x, &b, &y})))
            .input("X", x)
            .input("BIAS", b)
            .output(y)
            .uniformInt("channels", C);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &b = c.in(1);
        HostMatrix& y = c.out(0);
        const size_t n = x.data.size(), C = size_t(b.cols);
        for (size_t i = 0; i < n; i += C)
            for (size_t k = 0; k < C; ++k) y.data[i + k] = x.data[i + k] + b.data[k];
    }
    static std::vector<Example<BiasAdd>> examples() {
        return {{{}, {{Shape::batched({9})}, {Shape{9}}}},
                {{}, {{Shape::batched({3, 2, 5})}, {Shape{5}}}},
                {{}, {{Shape::batched({2, 3, 8})}, {Shape{8}}}}};
    }
};

// The same values under other dimensions (per example: the row stays as it is).
struct Reshape {
    static constexpr const char* kName = "reshape";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shape to;  // with kBatch first for a batched value
    Shapes shapes(const Shapes& in) const {
        if (!in[0].sameStorage(to))
            throw ShapeError("cannot reshape " + in[0].str() + " to " + to.str() + " (the sizes per example differ)");
        return {to};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(Reshape{g.shape(g.in(0))}, {g.dOut(0)}));
    }
    // The plans alias the output to the input: these run only where they cannot.
    template <class R>
    void gpu(R& r) const {
        recordReshape(r.list(), r.in(0), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        c.out(0).data = c.in(0).data;
    }
    static std::vector<Example<Reshape>> examples() {
        return {{{Shape::batched({30})}, {{Shape::batched({2, 3, 5})}}}};
    }
};

}  // namespace gltrain::graph
