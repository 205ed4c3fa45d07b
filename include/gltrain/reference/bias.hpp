// Bias: a 1 x C row added to every row of an N x C matrix, and its gradient,
// the column sum of the upstream gradient.
#pragma once
#include <string>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

namespace detail {
template <class T, class U>
void requireBiasRow(const char* fn, const HostMatrixT<T>& X, const char* xName, const HostMatrixT<U>& b, int cols) {
    if (b.rows != 1 || b.cols != cols)
        fail(fn, std::string(xName) + " is " + shape(X) + " but b is " + shape(b) + " (b must be 1x" +
                     std::to_string(cols) + ")");
}
}  // namespace detail

// Y(r, c) = X(r, c) + b(0, c). b is 1 x X.cols.
template <class T>
HostMatrixT<T> addBias(const HostMatrixT<T>& X, const HostMatrixT<T>& b) {
    detail::requireBiasRow("addBias", X, "X", b, X.cols);
    HostMatrixT<T> Y(X.rows, X.cols);
    for (int r = 0; r < X.rows; ++r)
        for (int c = 0; c < X.cols; ++c) Y(r, c) = X(r, c) + b(0, c);
    return Y;
}

// db(0, c) = sum over r of dY(r, c), accumulated in T in increasing r.
// Result is 1 x dY.cols (zeros when dY has no rows).
template <class T>
HostMatrixT<T> biasGrad(const HostMatrixT<T>& dY) {
    HostMatrixT<T> db(1, dY.cols);
    for (int r = 0; r < dY.rows; ++r)
        for (int c = 0; c < dY.cols; ++c) db(0, c) += dY(r, c);
    return db;
}

}  // namespace gltrain::ref
