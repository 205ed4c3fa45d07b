// Joining and cutting values along one axis of each example: Concat
// (Concatenate's merge) and Slice (its gradient). The axis counts the batch
// as 0; a row of a batched value is then [outer, axis, inner] values, so both
// ops are one strided copy per row (shaders/util/concat, util/slice).
#pragma once
#include <algorithm>
#include <string>

#include "gltrain/graph/op.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain::graph {

namespace concat_detail {
// A batched value's row around axis `axis` (1..rank-1): values before, along and after it.
struct Around {
    int64_t outer = 1, along = 1, inner = 1;
};
inline Around around(const Shape& s, int axis) {
    Around a;
    for (int k = 1; k < s.rank(); ++k) (k < axis ? a.outer : k == axis ? a.along : a.inner) *= s.dims[size_t(k)];
    return a;
}
// The axis as an index of s's dimensions (negative: from the end); ShapeError unless 1..rank-1.
inline int axisOf(const Shape& s, int axis, const char* what) {
    op_detail::requireBatched(what, s);
    const int k = axis < 0 ? s.rank() + axis : axis;
    if (k < 1 || k >= s.rank())
        throw ShapeError(std::string(what) + ": axis " + std::to_string(axis) + " is not an axis of " + s.str() +
                         " after the batch");
    return k;
}
}  // namespace concat_detail

struct Slice;

// A and B side by side along `axis`: they agree on every other dimension.
struct Concat {
    static constexpr const char* kName = "concat";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    int axis = -1;  // of the batched shape (0 is the batch); negative from the end
    Shapes shapes(const Shapes& in) const {
        const int k = concat_detail::axisOf(in[0], axis, "the first operand");
        op_detail::requireBatched("the second operand", in[1]);
        Shape out = in[0];
        bool agree = in[1].rank() == in[0].rank();
        for (int d = 1; agree && d < in[0].rank(); ++d)
            agree = d == k || in[0].dims[size_t(d)] == in[1].dims[size_t(d)];
        if (!agree)
            throw ShapeError("the operands " + in[0].str() + " and " + in[1].str() + " differ beyond axis " +
                             std::to_string(k));
        out.dims[size_t(k)] += in[1].dims[size_t(k)];
        return {out};
    }
    template <class G>
    void grad(G& g) const;
    template <class R>
    void gpu(R& r) const {
        const Shape& a = r.shape(0);
        const Shape& b = r.shape(1);
        const int k = concat_detail::axisOf(a, axis, "concat");
        r.list()
            .add(Pass(r.in(0).context(), "util/concat"))
            .input("A", r.in(0))
            .input("B", r.in(1))
            .output(r.out(0))
            .uniformInt("inner", int(concat_detail::around(a, k).inner))
            .uniformInt("aAxis", int(a.dims[size_t(k)]))
            .uniformInt("bAxis", int(b.dims[size_t(k)]));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const Shape& a = c.shape(0);
        const Shape& b = c.shape(1);
        const int k = concat_detail::axisOf(a, axis, "concat");
        const concat_detail::Around A = concat_detail::around(a, k);
        const int64_t la = A.along * A.inner, lb = b.dims[size_t(k)] * A.inner;
        const HostMatrix &x = c.in(0), &y = c.in(1);
        HostMatrix& out = c.out(0);
        for (int r = 0; r < out.rows; ++r) {
            float* o = out.data.data() + size_t(r) * size_t(out.cols);
            const float* pa = x.data.data() + size_t(r) * size_t(x.cols);
            const float* pb = y.data.data() + size_t(r) * size_t(y.cols);
            for (int64_t q = 0; q < A.outer; ++q) {
                o = std::copy(pa + q * la, pa + (q + 1) * la, o);
                o = std::copy(pb + q * lb, pb + (q + 1) * lb, o);
            }
        }
    }
    static std::vector<Example<Concat>> examples() {
        return {{{-1}, {{Shape::batched({2, 3, 5})}, {Shape::batched({2, 3, 2})}}},
                {{1}, {{Shape::batched({3, 2, 4})}, {Shape::batched({1, 2, 4})}}},
                {{2}, {{Shape::batched({2, 1, 3})}, {Shape::batched({2, 2, 3})}}},
                {{1}, {{Shape::batched({6})}, {Shape::batched({5})}}}};
    }
};

// Indices [start, start + length) along `axis` of each example.
struct Slice {
    static constexpr const char* kName = "slice";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;  // (only Concat's gradient so far)
    int axis = -1, start = 0, length = 0;
    Shapes shapes(const Shapes& in) const {
        const int k = concat_detail::axisOf(in[0], axis, "x");
        if (start < 0 || length <= 0 || start + length > in[0].dims[size_t(k)])
            throw ShapeError("[" + std::to_string(start) + ", " + std::to_string(start + length) +
                             ") is not a range of axis " + std::to_string(k) + " of " + in[0].str());
        Shape out = in[0];
        out.dims[size_t(k)] = length;
        return {out};
    }
    template <class R>
    void gpu(R& r) const {
        const Shape& x = r.shape(0);
        const int k = concat_detail::axisOf(x, axis, "slice");
        r.list()
            .add(Pass(r.in(0).context(), "util/slice"))
            .input("X", r.in(0))
            .output(r.out(0))
            .uniformInt("inner", int(concat_detail::around(x, k).inner))
            .uniformInt("axis", int(x.dims[size_t(k)]))
            .uniformInt("start", start)
            .uniformInt("len", length);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const Shape& s = c.shape(0);
        const int k = concat_detail::axisOf(s, axis, "slice");
        const concat_detail::Around A = concat_detail::around(s, k);
        const HostMatrix& x = c.in(0);
        HostMatrix& out = c.out(0);
        for (int r = 0; r < out.rows; ++r) {
            float* o = out.data.data() + size_t(r) * size_t(out.cols);
            const float* px = x.data.data() + size_t(r) * size_t(x.cols);
            for (int64_t q = 0; q < A.outer; ++q) {
                const float* from = px + (q * A.along + start) * A.inner;
                o = std::copy(from, from + int64_t(length) * A.inner, o);
            }
        }
    }
    static std::vector<Example<Slice>> examples() {
        return {{{-1, 1, 3}, {{Shape::batched({2, 3, 5})}}}, {{1, 2, 1}, {{Shape::batched({3, 2, 4})}}}};
    }
};

template <class G>
void Concat::grad(G& g) const {
    const Shape& a = g.shape(g.in(0));
    const int k = concat_detail::axisOf(a, axis, "concat");
    const int la = int(a.dims[size_t(k)]), lb = int(g.shape(g.in(1)).dims[size_t(k)]);
    if (g.needs(0)) g.grad(0, g.add(Slice{k, 0, la}, {g.dOut(0)}));
    if (g.needs(1)) g.grad(1, g.add(Slice{k, la, lb}, {g.dOut(0)}));
}

}  // namespace gltrain::graph
