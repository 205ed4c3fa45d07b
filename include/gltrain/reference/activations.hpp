// Activations, forward and backward, element-wise. The scalar functions in
// ref::scalar are the per-texel formulas the GLSL kernels follow.
//
// Backward convention: activationGrad takes the PRE-activation Z (not the
// output Y) for every activation, so one kernel signature serves all of them:
//   dZ = dY ⊙ f'(Z).
//
// Kinks: ReLU'(0) = 0 and LeakyReLU'(0) = alpha (the derivative uses z > 0);
// ReLU6' and HardSigmoid' are 0 at their kinks (0 and 6, -2.5 and 2.5) and
// ELU'(0) = alpha.
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

// SELU's constants (Klambauer et al. 2017, as TensorFlow writes them).
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

// alpha (e^z - 1) for z <= 0, z above: ELU, and SELU before its scale. expm1
// keeps the small values near 0 that e^z - 1 would round away.
template <class T>
T elu(T z, T alpha) {
    return z > T(0) ? z : alpha * std::expm1(z);  // NaN takes the second branch and stays NaN
}

// The standard normal CDF Phi(z) = erfc(-z / sqrt 2) / 2: erfc keeps the tiny
// values for very negative z that 1 + erf would cancel.
template <class T>
T normalCdf(T z) {
    return T(0.5) * std::erfc(-z * T(0.70710678118654752440));
}

// f(z). alpha is LeakyReLU's negative slope or ELU's alpha, ignored by the others.
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
        case Activation::ELU: return elu(z, alpha);
        case Activation::SELU: return T(kSeluScale) * elu(z, T(kSeluAlpha));
        case Activation::ReLU6: return z < T(0) ? T(0) : z > T(6) ? T(6) : z;
        case Activation::Swish: return z * sigmoid(z);
        case Activation::Mish: return z * std::tanh(softplus(z));
        case Activation::HardSigmoid: {
            const T y = T(0.2) * z + T(0.5);
            return y < T(0) ? T(0) : y > T(1) ? T(1) : y;
        }
        case Activation::Softsign: return z / (T(1) + std::abs(z));
        case Activation::GELUExact: return z * normalCdf(z);
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
        case Activation::ELU: return z > T(0) ? T(1) : alpha * std::exp(z);
        case Activation::SELU: return T(kSeluScale) * (z > T(0) ? T(1) : T(kSeluAlpha) * std::exp(z));
        case Activation::ReLU6: return z > T(0) && z < T(6) ? T(1) : T(0);
        case Activation::Swish: {
            // d/dz z s(z) = s + z s (1 - s)
            const T s = sigmoid(z);
            return s * (T(1) + z * (T(1) - s));
        }
        case Activation::Mish: {
            // d/dz z tanh(sp(z)) = tanh(sp) + z (1 - tanh^2(sp)) sigmoid(z)
            const T t = std::tanh(softplus(z));
            return t + z * (T(1) - t * t) * sigmoid(z);
        }
        case Activation::HardSigmoid: return z > T(-2.5) && z < T(2.5) ? T(0.2) : T(0);
        case Activation::Softsign: {
            const T d = T(1) / (T(1) + std::abs(z));
            return d * d;
        }
        case Activation::GELUExact:
            // d/dz z Phi(z) = Phi(z) + z phi(z), phi the normal density
            return normalCdf(z) + z * T(0.39894228040143267794) * std::exp(T(-0.5) * z * z);
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
