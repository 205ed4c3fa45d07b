// Reductions: sum, mean and max, per row (N x 1), per column (1 x C) or over
// everything (1 x 1). Naming: xxxRows reduces each ROW to one value, xxxCols
// each COLUMN, xxxAll the whole matrix.
//
// Sums accumulate in T in row-major order (a GPU tree reduction rounds
// differently; compare with a tolerance). mean = sum / count.
// Empty sets: sum is 0; mean and max throw ArgumentError (they are undefined).
// NaN: sum and mean propagate it by arithmetic; max propagates it explicitly
// (a NaN anywhere in the reduced set gives NaN, like numpy.max), so a NaN is
// never hidden. GLSL's max() is undefined for NaN, so GPU tests should not
// compare max on NaN inputs.
#pragma once
#include <cmath>
#include <string>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

namespace detail {
// NaN-propagating max: once a NaN is seen the result stays NaN.
template <class T>
T maxPropagatingNaN(T acc, T v) {
    if (std::isnan(acc) || std::isnan(v)) return acc + v;  // NaN
    return v > acc ? v : acc;
}
}  // namespace detail

// ---- per row: N x 1
template <class T>
HostMatrixT<T> sumRows(const HostMatrixT<T>& X) {
    HostMatrixT<T> out(X.rows, 1);
    for (int r = 0; r < X.rows; ++r)
        for (int c = 0; c < X.cols; ++c) out(r, 0) += X(r, c);
    return out;
}

template <class T>
HostMatrixT<T> meanRows(const HostMatrixT<T>& X) {
    if (X.cols == 0 && X.rows > 0)
        detail::fail("meanRows", "X is " + detail::shape(X) + " (mean of an empty row is undefined)");
    HostMatrixT<T> out = sumRows(X);
    for (T& v : out.data) v /= T(X.cols);
    return out;
}

template <class T>
HostMatrixT<T> maxRows(const HostMatrixT<T>& X) {
    if (X.cols == 0 && X.rows > 0)
        detail::fail("maxRows", "X is " + detail::shape(X) + " (max of an empty row is undefined)");
    HostMatrixT<T> out(X.rows, 1);
    for (int r = 0; r < X.rows; ++r) {
        T m = X(r, 0);
        for (int c = 1; c < X.cols; ++c) m = detail::maxPropagatingNaN(m, X(r, c));
        out(r, 0) = m;
    }
    return out;
}

// ---- per column: 1 x C
template <class T>
HostMatrixT<T> sumCols(const HostMatrixT<T>& X) {
    HostMatrixT<T> out(1, X.cols);
    for (int r = 0; r < X.rows; ++r)
        for (int c = 0; c < X.cols; ++c) out(0, c) += X(r, c);
    return out;
}

template <class T>
HostMatrixT<T> meanCols(const HostMatrixT<T>& X) {
    if (X.rows == 0 && X.cols > 0)
        detail::fail("meanCols", "X is " + detail::shape(X) + " (mean of an empty column is undefined)");
    HostMatrixT<T> out = sumCols(X);
    for (T& v : out.data) v /= T(X.rows);
    return out;
}

template <class T>
HostMatrixT<T> maxCols(const HostMatrixT<T>& X) {
    if (X.rows == 0 && X.cols > 0)
        detail::fail("maxCols", "X is " + detail::shape(X) + " (max of an empty column is undefined)");
    HostMatrixT<T> out(1, X.cols);
    for (int c = 0; c < X.cols; ++c) out(0, c) = X(0, c);
    for (int r = 1; r < X.rows; ++r)
        for (int c = 0; c < X.cols; ++c) out(0, c) = detail::maxPropagatingNaN(out(0, c), X(r, c));
    return out;
}

// ---- everything: 1 x 1
template <class T>
HostMatrixT<T> sumAll(const HostMatrixT<T>& X) {
    HostMatrixT<T> out(1, 1);
    for (T v : X.data) out(0, 0) += v;
    return out;
}

template <class T>
HostMatrixT<T> meanAll(const HostMatrixT<T>& X) {
    detail::requireNonEmpty("meanAll", "X", X);
    HostMatrixT<T> out = sumAll(X);
    out(0, 0) /= T(X.size());
    return out;
}

template <class T>
HostMatrixT<T> maxAll(const HostMatrixT<T>& X) {
    detail::requireNonEmpty("maxAll", "X", X);
    HostMatrixT<T> out(1, 1, X.data[0]);
    for (T v : X.data) out(0, 0) = detail::maxPropagatingNaN(out(0, 0), v);
    return out;
}

}  // namespace gltrain::ref
