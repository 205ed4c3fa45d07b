// Optimizer updates, one step, in place: the reference for the GPU's fused
// update passes (one texel of param, grad and state in, the same out). The
// formula in each comment is the spec the GLSL follows. All arithmetic is in
// T; hyper-parameters are given as double and converted to T first (as the
// GPU converts them to float uniforms). p is a parameter element, g its
// gradient element.
//
// Weight decay: SGD, momentum, Adam and RMSProp add it to the gradient as an
// L2 term (g <- g + wd * p, using p before the step); AdamW decays the
// parameter directly (decoupled).
#pragma once
#include <cmath>
#include <cstddef>
#include <string>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

struct SgdConfig {
    double lr = 0.01;
    double weightDecay = 0.0;
};

struct MomentumConfig {
    double lr = 0.01;
    double momentum = 0.9;
    double weightDecay = 0.0;
    bool nesterov = false;
};

// For adamStep the weight decay is L2 (added to g); for adamWStep decoupled.
struct AdamConfig {
    double lr = 0.001;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weightDecay = 0.0;
};

struct RmspropConfig {
    double lr = 0.01;
    double rho = 0.99;
    double eps = 1e-8;
    double momentum = 0.0;  // 0: no momentum buffer is read or written
    double weightDecay = 0.0;
};

// State matrices, each shaped like the parameter and zero-initialised.
template <class T>
struct MomentumState {
    HostMatrixT<T> velocity;
    MomentumState() = default;
    explicit MomentumState(const HostMatrixT<T>& like) : velocity(like.rows, like.cols) {}
};

template <class T>
struct AdamState {
    HostMatrixT<T> m;  // first moment
    HostMatrixT<T> v;  // second moment
    AdamState() = default;
    explicit AdamState(const HostMatrixT<T>& like) : m(like.rows, like.cols), v(like.rows, like.cols) {}
};

template <class T>
struct RmspropState {
    HostMatrixT<T> square;    // running mean of g^2
    HostMatrixT<T> momentum;  // momentum buffer, used only when config.momentum != 0
    RmspropState() = default;
    explicit RmspropState(const HostMatrixT<T>& like) : square(like.rows, like.cols), momentum(like.rows, like.cols) {}
};

namespace detail {
inline void requireStep(const char* fn, int t) {
    if (t < 1) fail(fn, "step t is " + std::to_string(t) + " (Adam steps count from 1)");
}
}  // namespace detail

// SGD:
//   g' = g + wd * p
//   p  = p - lr * g'
template <class T>
void sgdStep(HostMatrixT<T>& param, const HostMatrixT<T>& grad, const SgdConfig& c) {
    detail::requireSameShape("sgdStep", "param", param, "grad", grad);
    const T lr = T(c.lr), wd = T(c.weightDecay);
    for (size_t i = 0; i < param.size(); ++i) {
        T& p = param.data[i];
        const T g = grad.data[i] + wd * p;
        p = p - lr * g;
    }
}

// SGD with momentum (PyTorch's form, no dampening; v starts at 0):
//   g' = g + wd * p
//   v  = mu * v + g'
//   p  = p - lr * v                    (classical)
//   p  = p - lr * (g' + mu * v)        (Nesterov, with the updated v)
template <class T>
void momentumStep(HostMatrixT<T>& param, const HostMatrixT<T>& grad, MomentumState<T>& state, const MomentumConfig& c) {
    detail::requireSameShape("momentumStep", "param", param, "grad", grad);
    detail::requireSameShape("momentumStep", "param", param, "velocity", state.velocity);
    const T lr = T(c.lr), mu = T(c.momentum), wd = T(c.weightDecay);
    for (size_t i = 0; i < param.size(); ++i) {
        T& p = param.data[i];
        T& v = state.velocity.data[i];
        const T g = grad.data[i] + wd * p;
        v = mu * v + g;
        p = p - lr * (c.nesterov ? g + mu * v : v);
    }
}

namespace detail {
// The Adam moment update and step shared by Adam and AdamW; g already has
// any L2 term. t >= 1 is the number of this step (1 on the first call).
//   m  = b1 * m + (1 - b1) * g
//   v  = b2 * v + (1 - b2) * g^2
//   bc1 = 1 - pow(b1, t);  bc2 = 1 - pow(b2, t)      (in T)
//   p  = p - lr * (m / bc1) / (sqrt(v / bc2) + eps)
template <class T>
T adamDelta(T g, T& m, T& v, T b1, T b2, T bc1, T bc2, T lr, T eps) {
    m = b1 * m + (T(1) - b1) * g;
    v = b2 * v + (T(1) - b2) * g * g;
    return lr * (m / bc1) / (std::sqrt(v / bc2) + eps);
}
}  // namespace detail

// Adam (Kingma & Ba) with bias correction, L2 weight decay, eps outside the sqrt:
//   g' = g + wd * p
//   m  = b1 * m + (1 - b1) * g'
//   v  = b2 * v + (1 - b2) * g'^2
//   p  = p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// t >= 1 is this step's number (ArgumentError otherwise). On the first step
// the update is lr * g / (|g| + eps), i.e. about lr * sign(g).
template <class T>
void adamStep(HostMatrixT<T>& param, const HostMatrixT<T>& grad, AdamState<T>& state, int t, const AdamConfig& c) {
    detail::requireSameShape("adamStep", "param", param, "grad", grad);
    detail::requireSameShape("adamStep", "param", param, "m", state.m);
    detail::requireSameShape("adamStep", "param", param, "v", state.v);
    detail::requireStep("adamStep", t);
    const T b1 = T(c.beta1), b2 = T(c.beta2), lr = T(c.lr), eps = T(c.eps), wd = T(c.weightDecay);
    const T bc1 = T(1) - std::pow(b1, T(t)), bc2 = T(1) - std::pow(b2, T(t));
    for (size_t i = 0; i < param.size(); ++i) {
        T& p = param.data[i];
        const T g = grad.data[i] + wd * p;
        p = p - detail::adamDelta(g, state.m.data[i], state.v.data[i], b1, b2, bc1, bc2, lr, eps);
    }
}

// AdamW (Loshchilov & Hutter): Adam on the raw gradient plus decoupled decay,
// both computed from the parameter before the step:
//   m, v as in Adam with g' = g
//   p  = p - lr * wd * p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// evaluated as p = (p - lr * wd * p) - adamDelta.
template <class T>
void adamWStep(HostMatrixT<T>& param, const HostMatrixT<T>& grad, AdamState<T>& state, int t, const AdamConfig& c) {
    detail::requireSameShape("adamWStep", "param", param, "grad", grad);
    detail::requireSameShape("adamWStep", "param", param, "m", state.m);
    detail::requireSameShape("adamWStep", "param", param, "v", state.v);
    detail::requireStep("adamWStep", t);
    const T b1 = T(c.beta1), b2 = T(c.beta2), lr = T(c.lr), eps = T(c.eps), wd = T(c.weightDecay);
    const T bc1 = T(1) - std::pow(b1, T(t)), bc2 = T(1) - std::pow(b2, T(t));
    for (size_t i = 0; i < param.size(); ++i) {
        T& p = param.data[i];
        const T delta = detail::adamDelta(grad.data[i], state.m.data[i], state.v.data[i], b1, b2, bc1, bc2, lr, eps);
        p = (p - lr * wd * p) - delta;
    }
}

// RMSProp (PyTorch's form, eps outside the sqrt, no centering):
//   g' = g + wd * p
//   s  = rho * s + (1 - rho) * g'^2
//   momentum == 0:  p = p - lr * g' / (sqrt(s) + eps)
//   momentum  > 0:  b = mu * b + g' / (sqrt(s) + eps);  p = p - lr * b
template <class T>
void rmspropStep(HostMatrixT<T>& param, const HostMatrixT<T>& grad, RmspropState<T>& state, const RmspropConfig& c) {
    detail::requireSameShape("rmspropStep", "param", param, "grad", grad);
    detail::requireSameShape("rmspropStep", "param", param, "square", state.square);
    const bool useMomentum = c.momentum != 0.0;
    if (useMomentum) detail::requireSameShape("rmspropStep", "param", param, "momentum", state.momentum);
    const T lr = T(c.lr), rho = T(c.rho), eps = T(c.eps), mu = T(c.momentum), wd = T(c.weightDecay);
    for (size_t i = 0; i < param.size(); ++i) {
        T& p = param.data[i];
        T& s = state.square.data[i];
        const T g = grad.data[i] + wd * p;
        s = rho * s + (T(1) - rho) * g * g;
        const T step = g / (std::sqrt(s) + eps);
        if (useMomentum) {
            T& b = state.momentum.data[i];
            b = mu * b + step;
            p = p - lr * b;
        } else {
            p = p - lr * step;
        }
    }
}

}  // namespace gltrain::ref
