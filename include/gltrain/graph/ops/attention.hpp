// Multi-head attention's ops (layers/multi_head_attention.hpp): a matrix
// product per (example, head) whose operands are strided views of each
// example's row (HeadMatMul, head_product.hpp), and the softmax of each
// query's scores over the keys with an optional causal mask
// (AttentionSoftmax). A product's gradients are the same op on other views
// (dA = dC·Bᵀ, dB = Aᵀ·dC), with no backward kernel of its own. The
// softmax's gradient is SoftmaxAxisGrad: a masked probability is exactly 0,
// so it passes no gradient.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/cpu/attention.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/head_product.hpp"
#include "gltrain/graph/ops/activation.hpp"
#include "gltrain/ops/attention.hpp"

namespace gltrain::graph {

namespace op_detail {
// A view of `heads` matrices of m x n must be the axes of a dense block in
// some order: each value of the row (cols of them) exactly once.
inline void requireTiling(const char* what, const HeadView& v, int heads, int m, int n, int64_t cols) {
    std::array<std::pair<int64_t, int64_t>, 3> axes{{{v.head, heads}, {v.row, m}, {v.col, n}}};  // (stride, size)
    std::sort(axes.begin(), axes.end());
    int64_t next = 1;  // the stride the next axis of more than one element must have
    bool ok = heads >= 1 && m >= 1 && n >= 1;
    for (const auto& [stride, size] : axes)
        if (size > 1) {
            ok = ok && stride == next;
            next *= size;
        }
    if (!ok || next != cols)
        throw ShapeError(std::string(what) + ": " + std::to_string(heads) + " matrices of " + std::to_string(m) + "x" +
                         std::to_string(n) + " at strides (head " + std::to_string(v.head) + ", row " +
                         std::to_string(v.row) + ", column " + std::to_string(v.col) + ") do not tile its " +
                         std::to_string(cols) + " values per example");
}
}  // namespace op_detail

// C[h] = scale * A[h]·B[h] for each example and head h (head_product.hpp),
// each matrix a view of its value's row; the output has shape `out`.
struct HeadMatMul {
    static constexpr const char* kName = "head_matmul";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    HeadProduct p;
    Shape out;  // batched
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("A", in[0]);
        op_detail::requireBatched("B", in[1]);
        op_detail::requireBatched("the output", out);
        op_detail::requireTiling("A", p.a, p.heads, p.m, p.k, in[0].cols());
        op_detail::requireTiling("B", p.b, p.heads, p.k, p.n, in[1].cols());
        op_detail::requireTiling("the output", p.c, p.heads, p.m, p.n, out.cols());
        return {out};
    }
    template <class G>
    void grad(G& g) const {
        const auto A = g.in(0), B = g.in(1), dC = g.dOut(0);
        if (g.needs(0)) g.grad(0, g.add(HeadMatMul{p.gradA(), g.shape(A)}, {dC, B}));
        if (g.needs(1)) g.grad(1, g.add(HeadMatMul{p.gradB(), g.shape(B)}, {A, dC}));
    }
    template <class R>
    void gpu(R& r) const {
        recordHeadMatmul(r.list(), r.in(0), r.in(1), p, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        HostMatrix& y = c.out(0);
        cpu::headMatmul(y.rows, p, c.in(0).data.data(), c.in(0).cols, c.in(1).data.data(), c.in(1).cols, y.data.data(),
                        y.cols, c.ws());
    }
    // Attention's own views (T = 5 steps, 3 heads of 7): scores Q·Kᵀ scaled,
    // and probabilities [3, 5, 4] times values over 4 keys; then a product
    // whose output is transposed (a key gradient) and one whose heads are the
    // innermost axis.
    static std::vector<Example<HeadMatMul>> examples() {
        const int T = 5, H = 3, dk = 7, Tk = 4, dv = 2;
        const Shape q = Shape::batched({1, T, H * dk}), scores = Shape::batched({H, T, T});
        return {{{{H, T, T, dk, {dk, H * dk, 1}, {dk, 1, H * dk}, {T * T, T, 1}, 0.4f}, scores}, {{q}, {q}}},
                {{{H, T, dv, Tk, {T * Tk, Tk, 1}, {dv, H * dv, 1}, {dv, H * dv, 1}}, Shape::batched({1, T, H * dv})},
                 {{Shape::batched({H, T, Tk})}, {Shape::batched({1, Tk, H * dv})}}},
                {{{H, dk, T, T, {dk, 1, H * dk}, {T * T, T, 1}, {dk, 1, H * dk}, 0.5f}, q}, {{q}, {scores}}},
                {{{H, 2, 3, 4, {1, 4 * H, H}, {1, 3 * H, H}, {1, 3 * H, H}}, Shape::batched({2 * 3 * H})},
                 {{Shape::batched({2 * 4 * H})}, {Shape::batched({4 * 3 * H})}}}};
    }
};

// The softmax of each query's scores over the keys: x holds groups of
// `queries` x `keys` scores (a head's [Tq, Tk], its last axis the keys);
// causal: query i sees keys 0..i only, the others get probability exactly 0.
struct AttentionSoftmax {
    static constexpr const char* kName = "attention_softmax";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    int queries = 1, keys = 1;
    bool causal = false;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireBatched("the scores", in[0]);
        if (queries < 1 || keys < 1 || in[0].cols() % (int64_t(queries) * keys) != 0)
            throw ShapeError("the scores must be groups of " + std::to_string(queries) + " queries x " +
                             std::to_string(keys) + " keys, got " + in[0].str());
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(SoftmaxAxisGrad{{keys, 1}}, {g.out(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordAttentionSoftmax(r.list(), r.in(0), queries, keys, causal, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        cpu::attentionSoftmax(c.in(0).data.data(), c.in(0).data.size(), queries, keys, causal, c.out(0).data.data());
    }
    // 3 heads of 5 queries x 5 keys, masked and not; 4 queries of 6 keys (cross-attention).
    static std::vector<Example<AttentionSoftmax>> examples() {
        return {{{5, 5, true}, {{Shape::batched({3, 5, 5})}}},
                {{5, 5, false}, {{Shape::batched({3, 5, 5})}}},
                {{4, 6, true}, {{Shape::batched({2, 4, 6})}}}};
    }
};

}  // namespace gltrain::graph
