// Learned position embeddings' ops (layers/position_embedding.hpp): a
// sequence [B, 1, T, F] plus the first T rows of a table [L, F], row t at
// step t (PositionAdd), and the table's gradient (PositionAddGrad): the sum
// over the batch at each step, zero for the rows past T.
#pragma once
#include <string>
#include <vector>

#include "gltrain/graph/op.hpp"
#include "gltrain/ops/position_embedding.hpp"

namespace gltrain::graph {

namespace op_detail {
// x [B, 1, T, F] (or [B, T*F]: the steps are x's columns / F) and a table [L, F], L >= T.
inline void requirePositions(const char* what, const Shape& x, const Shape& table) {
    requireBatched(what, x);
    if (table.rank() != 2 || table.isBatched() || table.dims[1] < 1 || x.cols() % table.dims[1] != 0 ||
        x.cols() / table.dims[1] > table.dims[0])
        throw ShapeError("the table must be [L, F] for " + std::string(what) + " " + x.str() +
                         " of at most L steps of F values, got " + table.str());
}
}  // namespace op_detail

// dTable from the output's gradient: input dy [B, 1, T, F]; output [L, F].
struct PositionAddGrad {
    static constexpr const char* kName = "position_add_grad";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    Shape table;  // [L, F]
    Shapes shapes(const Shapes& in) const {
        op_detail::requirePositions("dy", in[0], table);
        return {table};
    }
    template <class R>
    void gpu(R& r) const {
        recordPositionAddGrad(r.list(), r.in(0), r.out(0));
    }
    // Rows in order, as the GPU sums them.
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& dy = c.in(0);
        HostMatrix& g = c.out(0);
        std::fill(g.data.begin(), g.data.end(), 0.0f);
        for (int r = 0; r < dy.rows; ++r)
            for (int j = 0; j < dy.cols; ++j) g.data[size_t(j)] += dy.data[size_t(r) * size_t(dy.cols) + size_t(j)];
    }
    static std::vector<Example<PositionAddGrad>> examples() {
        return {{{Shape{7, 3}}, {{Shape::batched({1, 5, 3})}}}, {{Shape{4, 6}}, {{Shape::batched({1, 4, 6})}}}};
    }
};

// y = x + table[:T]: inputs x [B, 1, T, F], table [L, F] (L >= T).
struct PositionAdd {
    static constexpr const char* kName = "position_add";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        op_detail::requirePositions("x", in[0], in[1]);
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.dOut(0));
        if (g.needs(1)) g.grad(1, g.add(PositionAddGrad{g.shape(g.in(1))}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordPositionAdd(r.list(), r.in(0), r.in(1), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &x = c.in(0), &table = c.in(1);
        HostMatrix& y = c.out(0);
        for (int r = 0; r < x.rows; ++r)
            for (int j = 0; j < x.cols; ++j) {
                const size_t at = size_t(r) * size_t(x.cols) + size_t(j);
                y.data[at] = x.data[at] + table.data[size_t(j)];
            }
    }
    // 5 steps of a 7-row table; a table of 70 rows, paged on the op tests' small textures.
    static std::vector<Example<PositionAdd>> examples() {
        return {{{}, {{Shape::batched({1, 5, 3})}, {Shape{7, 3}}}},
                {{}, {{Shape::batched({1, 4, 6})}, {Shape{4, 6}}}},
                {{}, {{Shape::batched({1, 3, 2})}, {Shape{70, 2}}}}};
    }
};

}  // namespace gltrain::graph
