// HostMatrix: a row-major matrix in host memory, the currency of uploads,
// downloads and the CPU reference ops. Templated on the scalar so that
// gradient checks can run the same reference code in double precision.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "gltrain/error.hpp"

namespace gltrain {

template <class T>
// A row-major matrix in host memory (HostMatrix: of floats). Its fields are public; data holds rows x cols values.
struct HostMatrixT {
    // Number of rows.
    int rows = 0;
    // Number of columns.
    int cols = 0;
    std::vector<T> data;  // rows * cols values, row-major

    HostMatrixT() = default;
    // The size is checked before the vector is made: a negative shape must be
    // an ArgumentError, not a huge allocation.
    HostMatrixT(int r, int c, T fill = T(0)) : rows(r), cols(c), data(checkedSize(r, c), fill) {}
    // A rows x cols matrix holding `values` (row-major); ArgumentError unless there are rows * cols of them.
    HostMatrixT(int r, int c, std::vector<T> values) : rows(r), cols(c), data(std::move(values)) {
        if (checkedSize(r, c) != data.size())
            throw ArgumentError("HostMatrix: " + std::to_string(data.size()) + " values for shape " +
                                std::to_string(r) + "x" + std::to_string(c) + " (expected " +
                                std::to_string(size_t(r) * size_t(c)) + ")");
    }

    // rows * cols, or ArgumentError when negative or too large to allocate.
    static size_t checkedSize(int r, int c) {
        if (r < 0 || c < 0)
            throw ArgumentError("HostMatrix: negative shape " + std::to_string(r) + "x" + std::to_string(c));
        return size_t(r) * size_t(c);
    }

    // The number of values held.
    size_t size() const { return data.size(); }
    // Element (r, c), unchecked.
    T& operator()(int r, int c) { return data[size_t(r) * size_t(cols) + size_t(c)]; }
    // Element (r, c), unchecked.
    const T& operator()(int r, int c) const { return data[size_t(r) * size_t(cols) + size_t(c)]; }

    template <class U>
    // The same matrix with its values converted to U.
    HostMatrixT<U> cast() const {
        HostMatrixT<U> m(rows, cols);
        for (size_t i = 0; i < data.size(); ++i) m.data[i] = U(data[i]);
        return m;
    }
};

using HostMatrix = HostMatrixT<float>;

}  // namespace gltrain
