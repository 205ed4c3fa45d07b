// HostMatrix: a row-major matrix in host memory, the currency of uploads,
// downloads and the CPU reference ops. Templated on the scalar so that
// gradient checks can run the same reference code in double precision.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace gltrain {

template <class T>
struct HostMatrixT {
    int rows = 0;
    int cols = 0;
    std::vector<T> data;  // rows * cols values, row-major

    HostMatrixT() = default;
    HostMatrixT(int r, int c, T fill = T(0)) : rows(r), cols(c), data(size_t(r) * size_t(c), fill) {
        if (r < 0 || c < 0)
            throw std::invalid_argument("HostMatrix: negative shape " + std::to_string(r) + "x" + std::to_string(c));
    }
    HostMatrixT(int r, int c, std::vector<T> values) : rows(r), cols(c), data(std::move(values)) {
        if (r < 0 || c < 0 || data.size() != size_t(r) * size_t(c))
            throw std::invalid_argument("HostMatrix: " + std::to_string(data.size()) + " values for shape " +
                                        std::to_string(r) + "x" + std::to_string(c));
    }

    size_t size() const { return data.size(); }
    T& operator()(int r, int c) { return data[size_t(r) * size_t(cols) + size_t(c)]; }
    const T& operator()(int r, int c) const { return data[size_t(r) * size_t(cols) + size_t(c)]; }

    template <class U>
    HostMatrixT<U> cast() const {
        HostMatrixT<U> m(rows, cols);
        for (size_t i = 0; i < data.size(); ++i) m.data[i] = U(data[i]);
        return m;
    }
};

using HostMatrix = HostMatrixT<float>;

}  // namespace gltrain
