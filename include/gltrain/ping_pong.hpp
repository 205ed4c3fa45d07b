// PingPong: a tensor that is updated by a pass which reads its current value
// and writes the next one. A pass never reads and writes one texture, so the
// value lives in two textures: passes read front() and write back(), then
// swap() exchanges their contents. Passes recorded with &front() and &back()
// stay valid across swaps: the Tensor objects stay put, their textures move.
#pragma once
#include <utility>

#include "gltrain/tensor.hpp"

namespace gltrain {

class PingPong {
public:
    PingPong() = default;
    PingPong(Context& ctx, int rows, int cols, Layout layout = Layout::Packed)
        : front_(ctx, rows, cols, layout), back_(ctx, rows, cols, layout) {}
    PingPong(Context& ctx, const HostMatrix& value, Layout layout = Layout::Packed)
        : front_(ctx, value, layout), back_(ctx, value.rows, value.cols, layout) {}

    Tensor& front() { return front_; }
    const Tensor& front() const { return front_; }
    Tensor& back() { return back_; }
    void swap() { std::swap(front_, back_); }

private:
    Tensor front_, back_;
};

}  // namespace gltrain
