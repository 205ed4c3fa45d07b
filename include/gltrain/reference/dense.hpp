// A fully connected layer, fused: the reference for the GPU's dense forward
// pass (matmul + bias + activation in one kernel) and its backward.
#pragma once
#include "gltrain/activation.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/activations.hpp"
#include "gltrain/reference/bias.hpp"
#include "gltrain/reference/check.hpp"
#include "gltrain/reference/matmul.hpp"

namespace gltrain::ref {

namespace detail {
template <class T>
void requireDenseShapes(const char* fn, const HostMatrixT<T>& X, const HostMatrixT<T>& W) {
    if (X.cols != W.rows) fail(fn, "X is " + shape(X) + " but W is " + shape(W) + " (X.cols must equal W.rows)");
}
}  // namespace detail

// Z = X W + b, the pre-activation (what denseBackward needs to keep).
// X: N x I, W: I x O, b: 1 x O; Z: N x O.
template <class T>
HostMatrixT<T> densePreactivation(const HostMatrixT<T>& X, const HostMatrixT<T>& W, const HostMatrixT<T>& b) {
    detail::requireDenseShapes("dense", X, W);
    detail::requireBiasRow("dense", W, "W", b, W.cols);
    return addBias(matmul(X, W), b);
}

// Y = act(X W + b).
template <class T>
HostMatrixT<T> dense(const HostMatrixT<T>& X, const HostMatrixT<T>& W, const HostMatrixT<T>& b, Activation act,
                     detail::NonDeduced<T> alpha = T(0.01)) {
    return activate(densePreactivation(X, W, b), act, alpha);
}

template <class T>
struct DenseGrads {
    HostMatrixT<T> dX;  // N x I = dZ W^T
    HostMatrixT<T> dW;  // I x O = X^T dZ
    HostMatrixT<T> db;  // 1 x O = column sum of dZ
};

// Backward of Y = act(X W + b) given dY = dL/dY and the saved pre-activation
// Z = X W + b:  dZ = dY ⊙ act'(Z); dX = dZ W^T; dW = X^T dZ; db = colsum(dZ).
template <class T>
DenseGrads<T> denseBackward(const HostMatrixT<T>& X, const HostMatrixT<T>& W, const HostMatrixT<T>& Z,
                            const HostMatrixT<T>& dY, Activation act, detail::NonDeduced<T> alpha = T(0.01)) {
    detail::requireDenseShapes("denseBackward", X, W);
    if (Z.rows != X.rows || Z.cols != W.cols)
        detail::fail("denseBackward", "Z is " + detail::shape(Z) + " but X W is " + std::to_string(X.rows) + "x" +
                                          std::to_string(W.cols) + " (X is " + detail::shape(X) + ", W is " +
                                          detail::shape(W) + ")");
    detail::requireSameShape("denseBackward", "dY", dY, "Z", Z);
    const HostMatrixT<T> dZ = activationGrad(dY, Z, act, alpha);
    return DenseGrads<T>{matmulNT(dZ, W), matmulTN(X, dZ), biasGrad(dZ)};
}

}  // namespace gltrain::ref
