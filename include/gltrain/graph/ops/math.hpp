// The math ops losses and metrics are composed of (graph/loss_graph.hpp, and
// custom losses): an element-wise function of one value (Unary: abs, square,
// log, exp, clip, ...) and its gradient, each row's sum (RowSum) and its
// gradient (RowBroadcast), each row's max (RowMax), and the mean of the rows' losses (BatchMean) and
// its gradient. A function's constants are part of its kernel (a GLSL
// literal), as a compiled program is cached by its defines.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gltrain/graph/op.hpp"
#include "gltrain/ops/math.hpp"
#include "gltrain/ops/reduce.hpp"

namespace gltrain::graph {

// An element-wise function y = f(x) with constants a, b.
enum class MathFn {
    Abs,     // |x|
    Square,  // x^2
    Sqrt,    // sqrt(x)
    Log,     // ln(x)
    Exp,     // e^x
    Clip,    // min(max(x, a), b); gradient 1 where a <= x <= b (TensorFlow's clip_by_value)
    Affine,  // a x + b
    Huber,   // x^2 / 2 where |x| <= a, else a (|x| - a / 2): Huber's loss of a difference, a = delta
    Relu     // max(x, 0)
};
inline const char* mathFnName(MathFn f) {
    switch (f) {
        case MathFn::Abs: return "abs";
        case MathFn::Square: return "square";
        case MathFn::Sqrt: return "sqrt";
        case MathFn::Log: return "log";
        case MathFn::Exp: return "exp";
        case MathFn::Clip: return "clip";
        case MathFn::Affine: return "affine";
        case MathFn::Huber: return "huber";
        case MathFn::Relu: return "relu";
    }
    return "?";
}

namespace op_detail {
// A float as a GLSL expression (float(...) makes "2" and "1e-07" floats alike).
inline std::string glslFloat(float v) {
    if (!std::isfinite(v)) throw ShapeError("a math op's constant must be finite, got " + std::to_string(v));
    char buf[40];
    std::snprintf(buf, sizeof buf, "float(%.9g)", double(v));
    return buf;
}
// f(x) in float, as the CPU runs it.
inline float mathFn(MathFn f, float a, float b, float x) {
    switch (f) {
        case MathFn::Abs: return std::fabs(x);
        case MathFn::Square: return x * x;
        case MathFn::Sqrt: return std::sqrt(x);
        case MathFn::Log: return std::log(x);
        case MathFn::Exp: return std::exp(x);
        case MathFn::Clip: return std::isnan(x) ? x : std::min(std::max(x, a), b);
        case MathFn::Affine: return a * x + b;
        case MathFn::Huber: return std::fabs(x) <= a ? 0.5f * x * x : a * (std::fabs(x) - 0.5f * a);
        case MathFn::Relu: return x > 0.0f ? x : 0.0f;
    }
    return x;
}
// f'(x).
inline float mathFnDerivative(MathFn f, float a, float b, float x) {
    switch (f) {
        case MathFn::Abs: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f;
        case MathFn::Square: return 2.0f * x;
        case MathFn::Sqrt: return 0.5f / std::sqrt(x);
        case MathFn::Log: return 1.0f / x;
        case MathFn::Exp: return std::exp(x);
        case MathFn::Clip: return x >= a && x <= b ? 1.0f : 0.0f;
        case MathFn::Affine: return a;
        case MathFn::Huber: return std::min(std::max(x, -a), a);
        case MathFn::Relu: return x > 0.0f ? 1.0f : 0.0f;
    }
    return 1.0f;
}
// f(x) as a vec4 GLSL expression of x.
inline std::string glslMathFn(MathFn f, float a, float b) {
    switch (f) {
        case MathFn::Abs: return "abs(x)";
        case MathFn::Square: return "((x) * (x))";
        case MathFn::Sqrt: return "sqrt(x)";
        case MathFn::Log: return "log(x)";
        case MathFn::Exp: return "exp(x)";
        case MathFn::Clip: return "clamp((x), " + glslFloat(a) + ", " + glslFloat(b) + ")";
        case MathFn::Affine: return "(" + glslFloat(a) + " * (x) + " + glslFloat(b) + ")";
        case MathFn::Huber:
            return "mix(" + glslFloat(a) + " * (abs(x) - 0.5 * " + glslFloat(a) +
                   "), 0.5 * (x) * (x), vec4(lessThanEqual(abs(x), vec4(" + glslFloat(a) + "))))";
        case MathFn::Relu: return "max((x), vec4(0.0))";
    }
    return "(x)";
}
// dy f'(x) as a vec4 GLSL expression of a = dy and b = x.
inline std::string glslMathFnGrad(MathFn f, float a, float b) {
    switch (f) {
        case MathFn::Abs: return "((a) * sign(b))";
        case MathFn::Square: return "(2.0 * (a) * (b))";
        case MathFn::Sqrt: return "(0.5 * (a) / sqrt(b))";
        case MathFn::Log: return "((a) / (b))";
        case MathFn::Exp: return "((a) * exp(b))";
        case MathFn::Clip:
            return "((a) * step(vec4(" + glslFloat(a) + "), (b)) * step((b), vec4(" + glslFloat(b) + ")))";
        case MathFn::Affine: return "(" + glslFloat(a) + " * (a))";
        case MathFn::Huber: return "((a) * clamp((b), -" + glslFloat(a) + ", " + glslFloat(a) + "))";
        case MathFn::Relu: return "((a) * vec4(greaterThan((b), vec4(0.0))))";
    }
    return "(a)";
}
inline void requireMathConstants(MathFn f, float a, float b) {
    if (!std::isfinite(a) || !std::isfinite(b))
        throw ShapeError(std::string(mathFnName(f)) + ": its constants must be finite");
    if (f == MathFn::Clip && !(a <= b))
        throw ShapeError("clip: the lower bound " + std::to_string(a) + " is above the upper " + std::to_string(b));
    if (f == MathFn::Huber && !(a > 0.0f)) throw ShapeError("huber: delta must be > 0, got " + std::to_string(a));
}
inline void requireRows(const char* what, const Shape& s) {
    if (s != Shape{kBatch, 1}) throw ShapeError(std::string(what) + " must be [B, 1], got " + s.str());
}
}  // namespace op_detail

// dy * f'(x): inputs dy, x (same shape).
struct UnaryGrad {
    static constexpr const char* kName = "unary_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    MathFn fn = MathFn::Abs;
    float a = 0.0f, b = 0.0f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireMathConstants(fn, a, b);
        op_detail::requireSame("the gradient and the input", in[0], in[1]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordBinary(r.list(), "unary_grad", op_detail::glslMathFnGrad(fn, a, b), r.in(0), r.in(1), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const float *dy = c.in(0).data.data(), *x = c.in(1).data.data();
        float* y = c.out(0).data.data();
        for (size_t i = 0, n = c.out(0).data.size(); i < n; ++i)
            y[i] = dy[i] * op_detail::mathFnDerivative(fn, a, b, x[i]);
    }
    static std::vector<Example<UnaryGrad>> examples() {
        return {{{MathFn::Huber, 0.7f, 0.0f}, {{Shape::batched({5})}, {Shape::batched({5})}}},
                {{MathFn::Log, 0.0f, 0.0f}, {{Shape::batched({2, 3})}, {Shape::batched({2, 3}), Fill::Positive}}}};
    }
};

// y = f(x) element by element, any shape.
struct Unary {
    static constexpr const char* kName = "unary";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    MathFn fn = MathFn::Abs;
    float a = 0.0f, b = 0.0f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireMathConstants(fn, a, b);
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(UnaryGrad{fn, a, b}, {g.dOut(0), g.in(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordUnary(r.list(), "unary", op_detail::glslMathFn(fn, a, b), r.in(0), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const float* x = c.in(0).data.data();
        float* y = c.out(0).data.data();
        for (size_t i = 0, n = c.out(0).data.size(); i < n; ++i) y[i] = op_detail::mathFn(fn, a, b, x[i]);
    }
    static std::vector<Example<Unary>> examples() {
        const Shape odd = Shape::batched({7}), image = Shape::batched({2, 3, 3});
        return {{{MathFn::Abs}, {{odd}}},
                {{MathFn::Square}, {{image}}},
                {{MathFn::Sqrt}, {{odd, Fill::Positive}}},
                {{MathFn::Log}, {{image, Fill::Positive}}},
                {{MathFn::Exp}, {{odd}}},
                {{MathFn::Clip, -0.6f, 0.45f}, {{odd}}},
                {{MathFn::Affine, -1.5f, 0.25f}, {{image}}},
                {{MathFn::Huber, 0.8f}, {{odd}}},
                {{MathFn::Relu}, {{image}}}};
    }
};

// Each row's value over the row: input [B, 1]; output `shape` ([B, ...]).
struct RowBroadcast;
// The sum of each row of x [B, ...]: output [B, 1].
struct RowSum {
    static constexpr const char* kName = "row_sum";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("row_sum's input", in[0]);
        return {Shape{kBatch, 1}};
    }
    template <class G>
    void grad(G& g) const;
    template <class R>
    void gpu(R& r) const {
        recordSumRows(r.list(), r.in(0), r.out(0, Layout::Unpacked));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        for (int r = 0; r < x.rows; ++r) {
            double s = 0;
            for (int j = 0; j < x.cols; ++j) s += x.data[size_t(r) * size_t(x.cols) + size_t(j)];
            c.out(0).data[size_t(r)] = float(s);
        }
    }
    static std::vector<Example<RowSum>> examples() {
        return {{{}, {{Shape::batched({9})}}}, {{}, {{Shape::batched({3, 2, 3})}}}};
    }
};
struct RowBroadcast {
    static constexpr const char* kName = "row_broadcast";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shape shape = Shape::batched({1});  // the output's
    Shapes shapes(const Shapes& in) const {
        op_detail::requireRows("row_broadcast's input", in[0]);
        op_detail::requireBatched("row_broadcast's output", shape);
        return {shape};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(RowSum{}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordRowBroadcast(r.list(), r.in(0), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        HostMatrix& y = c.out(0);
        for (int r = 0; r < y.rows; ++r)
            std::fill_n(y.data.begin() + std::ptrdiff_t(size_t(r) * size_t(y.cols)), y.cols, c.in(0).data[size_t(r)]);
    }
    static std::vector<Example<RowBroadcast>> examples() {
        return {{{Shape::batched({6})}, {{Shape{kBatch, 1}}}}, {{Shape::batched({2, 5})}, {{Shape{kBatch, 1}}}}};
    }
};
template <class G>
void RowSum::grad(G& g) const {
    if (g.needs(0)) g.grad(0, g.add(RowBroadcast{g.shape(g.in(0))}, {g.dOut(0)}));
}

// d where x equals its row's max y, else 0 (ties: each of them): inputs d [B, 1], x, y [B, 1].
struct RowMaxGrad {
    static constexpr const char* kName = "row_max_grad";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireRows("row_max_grad's gradient", in[0]);
        op_detail::requireBatched("row_max_grad's input", in[1]);
        op_detail::requireRows("row_max_grad's max", in[2]);
        return {in[1]};
    }
    template <class R>
    void gpu(R& r) const {
        recordRowMaxGrad(r.list(), r.in(0), r.in(1), r.in(2), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &d = c.in(0), &x = c.in(1), &y = c.in(2);
        HostMatrix& g = c.out(0);
        for (int r = 0; r < x.rows; ++r)
            for (int j = 0; j < x.cols; ++j) {
                const size_t at = size_t(r) * size_t(x.cols) + size_t(j);
                g.data[at] = x.data[at] == y.data[size_t(r)] ? d.data[size_t(r)] : 0.0f;
            }
    }
    static std::vector<Example<RowMaxGrad>> examples() {
        return {{{}, {{Shape{kBatch, 1}}, {Shape::batched({6})}, {Shape{kBatch, 1}}}}};
    }
};

// The max of each row of x [B, ...]: output [B, 1]; its gradient goes to the elements equal to it.
struct RowMax {
    static constexpr const char* kName = "row_max";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("row_max's input", in[0]);
        return {Shape{kBatch, 1}};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(RowMaxGrad{}, {g.dOut(0), g.in(0), g.out(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordMaxRows(r.list(), r.in(0), r.out(0, Layout::Unpacked));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        for (int r = 0; r < x.rows; ++r) {
            const float* row = x.data.data() + size_t(r) * size_t(x.cols);
            float m = row[0];
            for (int j = 1; j < x.cols; ++j) m = std::isnan(row[j]) || row[j] > m ? row[j] : m;
            c.out(0).data[size_t(r)] = m;
        }
    }
    static std::vector<Example<RowMax>> examples() {
        return {{{}, {{Shape::batched({7})}}}, {{}, {{Shape::batched({2, 2, 3})}}}};
    }
};

// seed / B in each of B rows: inputs the mean's gradient [1], the rows [B, 1] (their count).
struct BatchMeanGrad {
    static constexpr const char* kName = "batch_mean_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shapes shapes(const Shapes& in) const {
        if (in[0] != Shape{1}) throw ShapeError("the seed (the mean's gradient) must be [1], got " + in[0].str());
        op_detail::requireRows("batch_mean_grad's rows", in[1]);
        return {in[1]};
    }
    template <class R>
    void gpu(R& r) const {
        recordBatchMeanGrad(r.list(), r.in(0), r.out(0, Layout::Unpacked));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        HostMatrix& y = c.out(0);
        const float v = float(double(c.in(0).data[0]) / double(y.rows));
        std::fill(y.data.begin(), y.data.end(), v);
    }
    static std::vector<Example<BatchMeanGrad>> examples() { return {{{}, {{Shape{1}}, {Shape{kBatch, 1}}}}}; }
};

// The mean of the rows' values [B, 1]: output [1] (a loss's mean over the batch).
struct BatchMean {
    static constexpr const char* kName = "batch_mean";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireRows("batch_mean's input", in[0]);
        return {Shape{1}};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(BatchMeanGrad{}, {g.dOut(0), g.in(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordMeanAll(r.list(), r.in(0), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        double s = 0;
        for (float v : c.in(0).data) s += v;
        c.out(0).data[0] = float(s / double(c.in(0).rows));
    }
    static std::vector<Example<BatchMean>> examples() { return {{{}, {{Shape{kBatch, 1}}}}}; }
};

}  // namespace gltrain::graph
