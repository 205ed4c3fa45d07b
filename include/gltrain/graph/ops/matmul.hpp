// MatMul: C = op(A)·op(B), op a transpose or not. A dense layer is
// MatMul(x, W) -> BiasAdd -> Activate, which the GPU plan may fuse into one
// pass (ops/matmul.hpp's epilogues); its gradients are MatMuls too.
#pragma once
#include <utility>

#include "gltrain/cpu/matmul.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/matmul.hpp"

namespace gltrain::graph {

struct MatMul {
    static constexpr const char* kName = "matmul";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    bool transA = false, transB = false;

    // A value as a matrix whose rows may be the batch (kBatch): rank 2 only,
    // or a vector [n] as one row.
    static std::pair<int64_t, int64_t> matrix(const char* what, const Shape& s, bool trans) {
        if (s.rank() < 1 || s.rank() > 2)
            throw ShapeError(std::string(what) + " must be a matrix ([B, F] or [K, N]), got " + s.str());
        const int64_t r = s.rank() == 1 ? 1 : s.dims[0], c = s.rank() == 1 ? s.dims[0] : s.dims[1];
        return trans ? std::make_pair(c, r) : std::make_pair(r, c);
    }
    Shapes shapes(const Shapes& in) const {
        const auto a = matrix(transA ? "A (transposed)" : "A", in[0], transA);
        const auto b = matrix(transB ? "B (transposed)" : "B", in[1], transB);
        if (a.second != b.first)
            throw ShapeError("inner sizes differ: op(A) is " + op_detail::dimStr(a.first) + "x" +
                             op_detail::dimStr(a.second) + ", op(B) is " + op_detail::dimStr(b.first) + "x" +
                             op_detail::dimStr(b.second));
        if (b.second == kBatch) throw ShapeError("op(B)'s columns cannot be the batch");
        return {Shape{a.first, b.second}};
    }
    // C = a·b with a = op(A), b = op(B): da = dC·bᵀ, db = aᵀ·dC, transposed back where A or B were.
    template <class G>
    void grad(G& g) const {
        const auto A = g.in(0), B = g.in(1), dC = g.dOut(0);
        if (g.needs(0))
            g.grad(0, transA ? g.add(MatMul{transB, true}, {B, dC}) : g.add(MatMul{false, !transB}, {dC, B}));
        if (g.needs(1))
            g.grad(1, transB ? g.add(MatMul{true, transA}, {dC, A}) : g.add(MatMul{!transA, false}, {A, dC}));
    }
    template <class R>
    void gpu(R& r) const {
        MatmulOptions o;
        o.transA = transA;
        o.transB = transB;
        recordMatmul(r.list(), r.in(0), r.in(1), r.out(0, blockLayout(r.ctx(), r.rows(0))), o);
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &A = c.in(0), &B = c.in(1);
        HostMatrix& Y = c.out(0);
        const int K = transA ? A.rows : A.cols;
        cpu::matmul(Y.rows, Y.cols, K, A.data.data(), A.cols, transA, B.data.data(), B.cols, transB, Y.data.data(),
                    Y.cols, cpu::Epilogue{}, c.ws());
    }
    static std::vector<Example<MatMul>> examples() {
        return {{{false, false}, {{Shape{kBatch, 7}}, {Shape{7, 5}}}},
                {{true, false}, {{Shape{kBatch, 6}}, {Shape{kBatch, 3}}}},
                {{false, true}, {{Shape{kBatch, 5}}, {Shape{9, 5}}}},
                {{true, true}, {{Shape{7, 3}}, {Shape{4, 7}}}}};
    }
};

}  // namespace gltrain::graph
