// Element-wise arithmetic on equally shaped matrices: the reference for the
// GPU's map passes (residual adds, gradient accumulation, masks).
#pragma once
#include <cstddef>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

namespace detail {
template <class T, class Op>
HostMatrixT<T> zipWith(const char* fn, const HostMatrixT<T>& A, const HostMatrixT<T>& B, Op op) {
    requireSameShape(fn, "A", A, "B", B);
    HostMatrixT<T> C(A.rows, A.cols);
    for (size_t i = 0; i < C.data.size(); ++i) C.data[i] = op(A.data[i], B.data[i]);
    return C;
}
}  // namespace detail

// A + B
template <class T>
HostMatrixT<T> add(const HostMatrixT<T>& A, const HostMatrixT<T>& B) {
    return detail::zipWith("add", A, B, [](T a, T b) { return a + b; });
}

// A - B
template <class T>
HostMatrixT<T> sub(const HostMatrixT<T>& A, const HostMatrixT<T>& B) {
    return detail::zipWith("sub", A, B, [](T a, T b) { return a - b; });
}

// A ⊙ B (Hadamard product)
template <class T>
HostMatrixT<T> mul(const HostMatrixT<T>& A, const HostMatrixT<T>& B) {
    return detail::zipWith("mul", A, B, [](T a, T b) { return a * b; });
}

// s X
template <class T>
HostMatrixT<T> scale(const HostMatrixT<T>& X, detail::NonDeduced<T> s) {
    HostMatrixT<T> Y(X.rows, X.cols);
    for (size_t i = 0; i < Y.data.size(); ++i) Y.data[i] = s * X.data[i];
    return Y;
}

// a X + Y, evaluated as a * x + y per element (one rounding per operation;
// a GPU using fma() may differ in the last bit).
template <class T>
HostMatrixT<T> axpy(detail::NonDeduced<T> a, const HostMatrixT<T>& X, const HostMatrixT<T>& Y) {
    detail::requireSameShape("axpy", "X", X, "Y", Y);
    HostMatrixT<T> Z(X.rows, X.cols);
    for (size_t i = 0; i < Z.data.size(); ++i) Z.data[i] = a * X.data[i] + Y.data[i];
    return Z;
}

}  // namespace gltrain::ref
