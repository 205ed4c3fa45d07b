// The shape of a value in a model's graph. Values that flow through a model
// carry a batch dimension first — [B, F], [B, T, F] or [B, H, W, C] — whose
// size is not known until a plan is made for a batch size, so the graph holds
// it as kBatch. Parameters and statistics have no batch dimension ([K, N],
// [C]); a loss is [1].
//
// Every value is stored as a matrix (a Tensor on the GPU, a HostMatrix on the
// CPU): a batched value as B rows of everything after the batch, an unbatched
// one as dims[0] rows of the rest, and a vector or scalar as one row. Images
// are NHWC rows, as gltrain/window.hpp says, so a reshape between [B, H, W, C]
// and [B, H*W*C] moves no data.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/window.hpp"

namespace gltrain::graph {

inline constexpr int64_t kBatch = -1;

// A shape function's complaint; the graph adds which node and inputs.
struct ShapeError : Error {
    using Error::Error;
};

struct Shape {
    std::vector<int64_t> dims;

    Shape() = default;
    Shape(std::initializer_list<int64_t> d) : dims(d) {}
    explicit Shape(std::vector<int64_t> d) : dims(std::move(d)) {}
    // [B, perExample...]
    static Shape batched(std::vector<int64_t> perExample) {
        perExample.insert(perExample.begin(), kBatch);
        return Shape(std::move(perExample));
    }

    int rank() const { return int(dims.size()); }
    bool isBatched() const { return !dims.empty() && dims[0] == kBatch; }
    int64_t last() const { return dims.empty() ? 1 : dims.back(); }
    // The matrix a value is stored as: rows (B for a batched value) and columns.
    int64_t cols() const {
        if (dims.size() < 2) return dims.empty() ? 1 : dims[0];
        int64_t c = 1;
        for (size_t i = 1; i < dims.size(); ++i) c *= dims[i];
        return c;
    }
    int64_t rows(int64_t batch) const { return dims.size() < 2 ? 1 : isBatched() ? batch : dims[0]; }
    // [B, H, W, C] as the image of one row.
    Shape3 image() const {
        if (!isBatched() || rank() != 4) throw ShapeError("expected an image batch [B, H, W, C], got " + str());
        return Shape3{int(dims[1]), int(dims[2]), int(dims[3])};
    }
    // The same per-example size (cols) whatever the dimensions: a reshape that moves no data.
    bool sameStorage(const Shape& o) const { return isBatched() == o.isBatched() && cols() == o.cols(); }

    std::string str() const {
        std::string s = "[";
        for (size_t i = 0; i < dims.size(); ++i) {
            if (i) s += ", ";
            s += dims[i] == kBatch ? std::string("B") : std::to_string(dims[i]);
        }
        return s + "]";
    }
    bool operator==(const Shape& o) const { return dims == o.dims; }
    bool operator!=(const Shape& o) const { return dims != o.dims; }
};

inline Shape imageShape(const Shape3& s) { return Shape::batched({s.height, s.width, s.channels}); }

}  // namespace gltrain::graph
