// Matrix products, the reference for the GPU matmul kernels. The transposed
// variants read the stored operands directly (no transposed copy), exactly as
// the backward pass needs them: dW = X^T dZ (matmulTN), dX = dZ W^T (matmulNT).
//
// Every output element is accumulated in T, in increasing k order, starting
// from zero; so matmul(A, transpose(B)) and matmulNT(A, B) agree bit for bit
// on IEEE hardware without FMA contraction, and to rounding otherwise.
#pragma once
#include <cstddef>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

// X^T, materialised. Tests use it to build the oracle for matmulTN/NT.
template <class T>
HostMatrixT<T> transpose(const HostMatrixT<T>& X) {
    HostMatrixT<T> Y(X.cols, X.rows);
    for (int r = 0; r < X.rows; ++r)
        for (int c = 0; c < X.cols; ++c) Y(c, r) = X(r, c);
    return Y;
}

// C = A B. A is M x K, B is K x N, C is M x N.
template <class T>
HostMatrixT<T> matmul(const HostMatrixT<T>& A, const HostMatrixT<T>& B) {
    if (A.cols != B.rows)
        detail::fail("matmul",
                     "A is " + detail::shape(A) + " but B is " + detail::shape(B) + " (A.cols must equal B.rows)");
    const int M = A.rows, K = A.cols, N = B.cols;
    HostMatrixT<T> C(M, N);
    // i-k-j order streams rows of B and C; each C(i,j) still sums over k in order.
    for (int i = 0; i < M; ++i) {
        T* c = C.data.data() + size_t(i) * size_t(N);
        for (int k = 0; k < K; ++k) {
            const T a = A(i, k);
            const T* b = B.data.data() + size_t(k) * size_t(N);
            for (int j = 0; j < N; ++j) c[j] += a * b[j];
        }
    }
    return C;
}

// C = A^T B. A is K x M, B is K x N, C is M x N.
template <class T>
HostMatrixT<T> matmulTN(const HostMatrixT<T>& A, const HostMatrixT<T>& B) {
    if (A.rows != B.rows)
        detail::fail("matmulTN",
                     "A is " + detail::shape(A) + " but B is " + detail::shape(B) + " (A.rows must equal B.rows)");
    const int K = A.rows, M = A.cols, N = B.cols;
    HostMatrixT<T> C(M, N);
    // k outermost: row k of A and row k of B are both contiguous.
    for (int k = 0; k < K; ++k) {
        const T* b = B.data.data() + size_t(k) * size_t(N);
        for (int i = 0; i < M; ++i) {
            const T a = A(k, i);
            T* c = C.data.data() + size_t(i) * size_t(N);
            for (int j = 0; j < N; ++j) c[j] += a * b[j];
        }
    }
    return C;
}

// C = A B^T. A is M x K, B is N x K, C is M x N: each element is a dot
// product of a row of A with a row of B.
template <class T>
HostMatrixT<T> matmulNT(const HostMatrixT<T>& A, const HostMatrixT<T>& B) {
    if (A.cols != B.cols)
        detail::fail("matmulNT",
                     "A is " + detail::shape(A) + " but B is " + detail::shape(B) + " (A.cols must equal B.cols)");
    const int M = A.rows, K = A.cols, N = B.rows;
    HostMatrixT<T> C(M, N);
    for (int i = 0; i < M; ++i) {
        const T* a = A.data.data() + size_t(i) * size_t(K);
        for (int j = 0; j < N; ++j) {
            const T* b = B.data.data() + size_t(j) * size_t(K);
            T s = T(0);
            for (int k = 0; k < K; ++k) s += a[k] * b[k];
            C(i, j) = s;
        }
    }
    return C;
}

}  // namespace gltrain::ref
