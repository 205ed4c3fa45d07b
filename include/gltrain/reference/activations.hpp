// Activations, forward and backward, element-wise. The scalar functions in
// ref::scalar are the per-texel formulas the GLSL kernels follow.
//
// Backward convention: activationGrad takes the PRE-activation Z (not the
// output Y) for every activation, so one kernel signature serves all of them:
//   dZ = dY ⊙ f'(Z).
//
// Kinks: ReLU'(0) = 0 and LeakyReLU'(0) = alpha (the derivative uses z > 0).
//
// NaN: every forward maps NaN to NaN (ReLU/LeakyReLU are written as
// "z < 0 ? ... : z" so a NaN falls through to z instead of being clamped to 0).
// Derivatives of the smooth activations at NaN are NaN; ReLU'(NaN) = 0 and
// LeakyReLU'(NaN) = alpha, so a NaN pre-activation with a finite dY gives a
// finite gradient there (the NaN will already have reached the loss).
#pragma once
#include <cmath>
#include <cstddef>

#include "gltrain/activation.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

namespace scalar {

// sqrt(2/pi) and the cubic coefficient of the GELU tanh approximation.
inline constexpr double kGeluK = 0.7978845608028654;
inline constexpr double kGeluC = 0.044715;

// Logistic sigmoid, split on the sign so exp() never overflows: for z < 0 it
// uses e^z / (1 + e^z). Exactly 0 or 1 only where the true value rounds so.
template <class T>
T sigmoid(T z) {
    if (z >= T(0)) return T(1) / (T(1) + std::exp(-z));
    const T e = std::exp(z);  // NaN lands here and stays NaN
    return e / (T(1) + e);
}

// log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no overflow for large z, no
// loss of the tiny result for very negative z.
template <class T>
T softplus(T z) {
    const T pos = z < T(0) ? T(0) : z;  // NaN propagates through z
    return pos + std::log1p(std::exp(-std::abs(z)));
}

template <class T>
T gelu(T z) {
    const T u = T(kGeluK) * (z + T(kGeluC) * z * z * z);
    return T(0.5) * z * (T(1) + std::tanh(u));
}

// d/dz gelu = 0.5 (1 + tanh u) + 0.5 z (1 - tanh^2 u) k (1 + 3 c z^2).
// Once tanh saturates (1 - tanh^2 u == 0) the second term is dropped so a
// huge |z|, whose z^2 overflows, still gives 0 or 1 instead of 0 * inf.
template <class T>
T geluDerivative(T z) {
    const T t = std::tanh(T(kGeluK) * (z + T(kGeluC) * z * z * z));
    const T sech2 = T(1) - t * t;
    const T first = T(0.5) * (T(1) + t);
    if (sech2 == T(0)) return first;
    return first + T(0.5) * z * sech2 * T(kGeluK) * (T(1) + T(3 * kGeluC) * z * z);
}

// f(z). alpha is the LeakyReLU negative slope and ignored by the others.
template <class T>
T activate(T z, Activation act, T alpha) {
    switch (act) {
        case Activation::Linear: return z;
        case Activation::ReLU: return z < T(0) ? T(0) : z;
        case Activation::LeakyReLU: return z < T(0) ? alpha * z : z;
        case Activation::Sigmoid: return sigmoid(z);
        case Activation::Tanh: return std::tanh(z);
        case Activation::GELU: return gelu(z);
        case Activation::Softplus: return softplus(z);
    }
    return z;
}

// f'(z), from the pre-activation z.
template <class T>
T derivative(T z, Activation act, T alpha) {
    switch (act) {
        case Activation::Linear: return T(1);
        case Activation::ReLU: return z > T(0) ? T(1) : T(0);
        case Activation::LeakyReLU: return z > T(0) ? T(1) : alpha;
        case Activation::Sigmoid: {
            const T s = sigmoid(z);
            return s * (T(1) - s);
        }
        case Activation::Tanh: {
            const T t = std::tanh(z);
            return T(1) - t * t;
        }
        case Activation::GELU: return geluDerivative(z);
        case Activation::Softplus: return sigmoid(z);
    }
    return T(1);
}

}  // namespace scalar

// Y = f(Z), element-wise. alpha: LeakyReLU's negative slope.
template <class T>
HostMatrixT<T> activate(const HostMatrixT<T>& Z, Activation act, detail::NonDeduced<T> alpha = T(0.01)) {
    HostMatrixT<T> Y(Z.rows, Z.cols);
    for (size_t i = 0; i < Y.data.size(); ++i) Y.data[i] = scalar::activate(Z.data[i], act, alpha);
    return Y;
}

// dZ = dY ⊙ f'(Z), where Z is the PRE-activation (the input of activate).
template <class T>
HostMatrixT<T> activationGrad(const HostMatrixT<T>& dY, const HostMatrixT<T>& Z, Activation act,
                              detail::NonDeduced<T> alpha = T(0.01)) {
    detail::requireSameShape("activationGrad", "dY", dY, "Z", Z);
    HostMatrixT<T> dZ(Z.rows, Z.cols);
    for (size_t i = 0; i < dZ.data.size(); ++i) dZ.data[i] = dY.data[i] * scalar::derivative(Z.data[i], act, alpha);
    return dZ;
}

}  // namespace gltrain::ref
