// The Embedding layer's ops: each token's row of a table (EmbeddingLookup) and the
// table's gradient (EmbeddingGrad), a deterministic scatter-add. Token ids are
// floats holding integers, [B, T]; the output is a sequence [B, 1, T, D] (an
// image of height 1, layers/conv1d.hpp). An id that is not an integer in
// [0, V) is an error on the CPU; on the GPU it reads a zero row and its
// gradient goes nowhere (a kernel cannot throw).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/graph/op.hpp"
#include "gltrain/ops/embedding.hpp"

namespace gltrain::graph {

namespace op_detail {
// [B, T] token ids.
inline void requireIds(const Shape& ids) {
    if (ids.rank() != 2 || !ids.isBatched()) throw ShapeError("the token ids must be [B, steps], got " + ids.str());
}
// The table row token `id` (row r, step t of the ids) names; throws unless it is an integer in [0, vocab).
inline int tokenRow(float id, int vocab, int r, int t) {
    if (!(id >= 0.0f && id < float(vocab) && id == std::floor(id)))
        throw ArgumentError("embedding: token id " + std::to_string(id) + " (example " + std::to_string(r) + ", step " +
                            std::to_string(t) + ") is not an integer in [0, " + std::to_string(vocab) +
                            "), the table's rows");
    return int(id);
}
}  // namespace op_detail

// dTable from the output's gradient: inputs ids [B, T], dy [B, 1, T, D]; output [vocab, D].
struct EmbeddingGrad {
    static constexpr const char* kName = "embedding_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    int vocab = 1;  // the table's rows
    Shapes shapes(const Shapes& in) const {
        op_detail::requireIds(in[0]);
        const int64_t T = in[0].dims[1];
        if (in[1].rank() != 4 || !in[1].isBatched() || in[1].dims[1] != 1 || in[1].dims[2] != T)
            throw ShapeError("the gradient must be [B, 1, " + std::to_string(T) + ", D] (a sequence), got " +
                             in[1].str());
        if (vocab < 1) throw ShapeError("the table must have rows, got vocab " + std::to_string(vocab));
        return {Shape{vocab, in[1].dims[3]}};
    }
    template <class R>
    void gpu(R& r) const {
        recordEmbeddingGrad(r.list(), r.in(0), r.in(1), r.out(0));
    }
    // The same order as the GPU's: for each row of the table, r then t.
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &ids = c.in(0), &dy = c.in(1);
        HostMatrix& g = c.out(0);
        const size_t D = size_t(g.cols), T = size_t(ids.cols);
        std::fill(g.data.begin(), g.data.end(), 0.0f);
        for (int r = 0; r < ids.rows; ++r)
            for (size_t t = 0; t < T; ++t) {
                const float id = ids.data[size_t(r) * T + t];
                const int row = op_detail::tokenRow(id, vocab, r, int(t));
                const float* d = dy.data.data() + size_t(r) * T * D + t * D;
                float* out = g.data.data() + size_t(row) * D;
                for (size_t k = 0; k < D; ++k) out[k] += d[k];
            }
    }
    static std::vector<Example<EmbeddingGrad>> examples() {
        return {{{7}, {{Shape::batched({5}), Fill::Labels, 7}, {Shape::batched({1, 5, 3})}}},
                {{70}, {{Shape::batched({3}), Fill::Labels, 70}, {Shape::batched({1, 3, 6})}}}};
    }
};

// Each token's row of the table: inputs ids [B, T], table [V, D]; output [B, 1, T, D].
struct EmbeddingLookup {
    static constexpr const char* kName = "embedding_lookup";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b10, kGradOutputs = 0b1;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireIds(in[0]);
        if (in[1].rank() != 2 || in[1].isBatched())
            throw ShapeError("the table must be [vocab, dim], got " + in[1].str());
        return {Shape::batched({1, in[0].dims[1], in[1].dims[1]})};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(1)) g.grad(1, g.add(EmbeddingGrad{int(g.shape(g.in(1)).dims[0])}, {g.in(0), g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordEmbedding(r.list(), r.in(0), r.in(1), r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &ids = c.in(0), &table = c.in(1);
        HostMatrix& y = c.out(0);
        const size_t D = size_t(table.cols), T = size_t(ids.cols);
        for (int r = 0; r < ids.rows; ++r)
            for (size_t t = 0; t < T; ++t) {
                const int row = op_detail::tokenRow(ids.data[size_t(r) * T + t], table.rows, r, int(t));
                std::copy_n(table.data.begin() + std::ptrdiff_t(size_t(row) * D), D,
                            y.data.begin() + std::ptrdiff_t(size_t(r) * T * D + t * D));
            }
    }
    // A table of 70 rows is paged on the op tests' small textures (64 texels).
    static std::vector<Example<EmbeddingLookup>> examples() {
        return {{{}, {{Shape::batched({5}), Fill::Labels, 7}, {Shape{7, 3}}}},
                {{}, {{Shape::batched({3}), Fill::Labels, 70}, {Shape{70, 6}}}},
                {{}, {{Shape::batched({1}), Fill::Labels, 4}, {Shape{4, 9}}}}};
    }
};

}  // namespace gltrain::graph
