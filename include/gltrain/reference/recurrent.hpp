// The LSTM's and the GRU's formulas, in any precision, written from the
// definitions with plain loops: Keras's LSTM cell (gates i, f, c, o from
// x·W + b + h(t-1)·R, then c = f c(t-1) + i g, h = o act(c)), TF.js's GRU
// cell (z, r from x·W + b + h(t-1)·R; the candidate from x·W + b +
// (r ⊙ h(t-1))·R; h = z h(t-1) + (1 - z) candidate) and their
// backpropagation through time, step by step from the last, by the chain rule.
#pragma once
#include <vector>

#include "gltrain/graph/ops/recurrent.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/activations.hpp"

namespace gltrain::ref {

namespace recurrent_detail {
// Gate g's pre-activation of unit u, row r, step s: xz at the step's input position plus h(s-1)·R.
template <class T>
T gateInput(const RecurrentCell& cell, const HostMatrixT<T>& xz, const HostMatrixT<T>& R, const HostMatrixT<T>& h,
            int r, int s, int g, int u) {
    const int U = cell.units, steps = xz.cols / (4 * U);
    T z = xz(r, cell.position(s, steps) * 4 * U + g * U + u);
    for (int k = 0; s > 0 && k < U; ++k) z += h(r, (s - 1) * U + k) * R(k, g * U + u);
    return z;
}
template <class T>
T gate(const RecurrentCell& cell, int g, T z) {
    return scalar::activate(z, g == 2 ? cell.activation : cell.recurrentActivation, T(0));
}
template <class T>
T gateDerivative(const RecurrentCell& cell, int g, T z) {
    return scalar::derivative(z, g == 2 ? cell.activation : cell.recurrentActivation, T(0));
}
}  // namespace recurrent_detail

// h and c [N, T*U] by step from xz [N, T*4U] and R [U, 4U].
template <class T>
std::vector<HostMatrixT<T>> lstmSequence(const RecurrentCell& cell, const HostMatrixT<T>& xz, const HostMatrixT<T>& R) {
    const int U = cell.units, steps = xz.cols / (4 * U);
    HostMatrixT<T> h(xz.rows, steps * U), c(xz.rows, steps * U);
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < xz.rows; ++r)
            for (int u = 0; u < U; ++u) {
                T a[4];
                for (int g = 0; g < 4; ++g)
                    a[g] = recurrent_detail::gate(cell, g, recurrent_detail::gateInput(cell, xz, R, h, r, s, g, u));
                const T before = s > 0 ? c(r, (s - 1) * U + u) : T(0);
                c(r, s * U + u) = a[1] * before + a[0] * a[2];
                h(r, s * U + u) = a[3] * scalar::activate(c(r, s * U + u), cell.activation, T(0));
            }
    return {h, c};
}

// dZ [N, T*4U] by input step and DCF (dc·f of each step, repeated for each of a unit's 4 gates) from xz, R,
// the forward's h and c and dh [N, T*U].
template <class T>
std::vector<HostMatrixT<T>> lstmSequenceGrad(const RecurrentCell& cell, const HostMatrixT<T>& xz,
                                             const HostMatrixT<T>& R, const HostMatrixT<T>& h, const HostMatrixT<T>& c,
                                             const HostMatrixT<T>& dh) {
    const int U = cell.units, G = 4 * U, steps = xz.cols / G;
    HostMatrixT<T> dz(xz.rows, xz.cols), dcf(xz.rows, xz.cols);
    for (int s = steps - 1; s >= 0; --s) {
        const int p = cell.position(s, steps), next = s + 1 < steps ? cell.position(s + 1, steps) : -1;
        for (int r = 0; r < xz.rows; ++r)
            for (int u = 0; u < U; ++u) {
                // dL/dh(s): the output's own gradient and, through every gate of the next step, R's row u.
                T dhs = dh(r, s * U + u);
                for (int m = 0; next >= 0 && m < G; ++m) dhs += dz(r, next * G + m) * R(u, m);
                T z[4], a[4];
                for (int g = 0; g < 4; ++g) {
                    z[g] = recurrent_detail::gateInput(cell, xz, R, h, r, s, g, u);
                    a[g] = recurrent_detail::gate(cell, g, z[g]);
                }
                const T cs = c(r, s * U + u), before = s > 0 ? c(r, (s - 1) * U + u) : T(0);
                const T dc = dhs * a[3] * scalar::derivative(cs, cell.activation, T(0)) +
                             (next >= 0 ? dcf(r, next * G + u) : T(0));
                const T dgate[4] = {dc * a[2], dc * before, dc * a[0],
                                    dhs * scalar::activate(cs, cell.activation, T(0))};
                for (int g = 0; g < 4; ++g) {
                    dz(r, p * G + g * U + u) = dgate[g] * recurrent_detail::gateDerivative(cell, g, z[g]);
                    dcf(r, p * G + g * U + u) = dc * a[1];
                }
            }
    }
    return {dz, dcf};
}

// dR [U, 4U]: sum over rows and steps s >= 1 of h(r, s-1, k) dz(r, position(s), m).
template <class T>
HostMatrixT<T> lstmRecurrentGrad(const RecurrentCell& cell, const HostMatrixT<T>& h, const HostMatrixT<T>& dz) {
    const int U = cell.units, G = 4 * U, steps = h.cols / U;
    HostMatrixT<T> dr(U, G);
    for (int k = 0; k < U; ++k)
        for (int m = 0; m < G; ++m)
            for (int r = 0; r < h.rows; ++r)
                for (int s = 1; s < steps; ++s)
                    dr(k, m) += h(r, (s - 1) * U + k) * dz(r, cell.position(s, steps) * G + m);
    return dr;
}

template <class T>
std::vector<HostMatrixT<T>> run(const graph::LstmSequence& o, const std::vector<const HostMatrixT<T>*>& in) {
    return lstmSequence(o.cell, *in[0], *in[1]);
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::LstmSequenceGrad& o, const std::vector<const HostMatrixT<T>*>& in) {
    return lstmSequenceGrad(o.cell, *in[0], *in[1], *in[2], *in[3], *in[4]);
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::LstmRecurrentGrad& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {lstmRecurrentGrad(o.cell, *in[0], *in[1])};
}

// A GRU step's pre-activation of gate g (0 z, 1 r, 2 the candidate) of unit u, row r, step s: xz at the step's
// input position, plus h(s-1)·R for the gates and rh(s)·R for the candidate.
template <class T>
T gruInput(const RecurrentCell& cell, const HostMatrixT<T>& xz, const HostMatrixT<T>& R, const HostMatrixT<T>& h,
           const HostMatrixT<T>& rh, int r, int s, int g, int u) {
    const int U = cell.units, steps = xz.cols / (3 * U);
    T z = xz(r, cell.position(s, steps) * 3 * U + g * U + u);
    for (int k = 0; s > 0 && k < U; ++k) z += (g == 2 ? rh(r, s * U + k) : h(r, (s - 1) * U + k)) * R(k, g * U + u);
    return z;
}

// h and rh = r ⊙ h(t-1) [N, T*U] by step from xz [N, T*3U] and R [U, 3U].
template <class T>
std::vector<HostMatrixT<T>> gruSequence(const RecurrentCell& cell, const HostMatrixT<T>& xz, const HostMatrixT<T>& R) {
    const int U = cell.units, steps = xz.cols / (3 * U);
    HostMatrixT<T> h(xz.rows, steps * U), rh(xz.rows, steps * U);
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < xz.rows; ++r) {
            for (int u = 0; s > 0 && u < U; ++u)
                rh(r, s * U + u) =
                    recurrent_detail::gate(cell, 1, gruInput(cell, xz, R, h, rh, r, s, 1, u)) * h(r, (s - 1) * U + u);
            for (int u = 0; u < U; ++u) {
                const T z = recurrent_detail::gate(cell, 1, gruInput(cell, xz, R, h, rh, r, s, 0, u));
                const T candidate = recurrent_detail::gate(cell, 2, gruInput(cell, xz, R, h, rh, r, s, 2, u));
                h(r, s * U + u) = z * (s > 0 ? h(r, (s - 1) * U + u) : T(0)) + (T(1) - z) * candidate;
            }
        }
    return {h, rh};
}

// dZ [N, T*3U] by input step and DHT (dL/dh(s) whole, [N, T*U] by step) from xz, R, the forward's h and rh and dh.
template <class T>
std::vector<HostMatrixT<T>> gruSequenceGrad(const RecurrentCell& cell, const HostMatrixT<T>& xz,
                                            const HostMatrixT<T>& R, const HostMatrixT<T>& h, const HostMatrixT<T>& rh,
                                            const HostMatrixT<T>& dh) {
    const int U = cell.units, G = 3 * U, steps = xz.cols / G;
    HostMatrixT<T> dz(xz.rows, xz.cols), dht(xz.rows, steps * U);
    auto gate = [&](int r, int s, int g, int u, bool derivative) {
        const T x = gruInput(cell, xz, R, h, rh, r, s, g, u);
        return derivative ? recurrent_detail::gateDerivative(cell, g, x) : recurrent_detail::gate(cell, g, x);
    };
    for (int s = steps - 1; s >= 0; --s) {
        const int p = cell.position(s, steps), next = s + 1 < steps ? cell.position(s + 1, steps) : -1;
        for (int r = 0; r < xz.rows; ++r) {
            for (int u = 0; u < U; ++u) {
                // dL/dh(s): its own, and from step s+1 through h(s+1) = z h(s) + ..., its gates' inputs h(s)·R and
                // its candidate's (r ⊙ h(s))·R.
                T total = dh(r, s * U + u);
                if (next >= 0) {
                    T reset = 0;
                    for (int j = 0; j < U; ++j) reset += dz(r, next * G + 2 * U + j) * R(u, 2 * U + j);
                    total +=
                        gate(r, s + 1, 0, u, false) * dht(r, (s + 1) * U + u) + gate(r, s + 1, 1, u, false) * reset;
                    for (int m = 0; m < 2 * U; ++m) total += dz(r, next * G + m) * R(u, m);
                }
                dht(r, s * U + u) = total;
                const T before = s > 0 ? h(r, (s - 1) * U + u) : T(0);
                dz(r, p * G + u) = total * (before - gate(r, s, 2, u, false)) * gate(r, s, 0, u, true);
                dz(r, p * G + 2 * U + u) = total * (T(1) - gate(r, s, 0, u, false)) * gate(r, s, 2, u, true);
            }
            for (int u = 0; s > 0 && u < U; ++u) {
                T reset = 0;
                for (int j = 0; j < U; ++j) reset += dz(r, p * G + 2 * U + j) * R(u, 2 * U + j);
                dz(r, p * G + U + u) = reset * h(r, (s - 1) * U + u) * gate(r, s, 1, u, true);
            }
        }
    }
    return {dz, dht};
}

// dR [U, 3U]: sum over rows and steps s >= 1 of h(r, s-1, k) dz(r, position(s), m) for the gates' columns, and
// rh(r, s, k) dz(r, position(s), m) for the candidate's.
template <class T>
HostMatrixT<T> gruRecurrentGrad(const RecurrentCell& cell, const HostMatrixT<T>& h, const HostMatrixT<T>& rh,
                                const HostMatrixT<T>& dz) {
    const int U = cell.units, G = 3 * U, steps = h.cols / U;
    HostMatrixT<T> dr(U, G);
    for (int k = 0; k < U; ++k)
        for (int m = 0; m < G; ++m)
            for (int r = 0; r < h.rows; ++r)
                for (int s = 1; s < steps; ++s)
                    dr(k, m) +=
                        (m < 2 * U ? h(r, (s - 1) * U + k) : rh(r, s * U + k)) * dz(r, cell.position(s, steps) * G + m);
    return dr;
}

template <class T>
std::vector<HostMatrixT<T>> run(const graph::GruSequence& o, const std::vector<const HostMatrixT<T>*>& in) {
    return gruSequence(o.cell, *in[0], *in[1]);
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::GruSequenceGrad& o, const std::vector<const HostMatrixT<T>*>& in) {
    return gruSequenceGrad(o.cell, *in[0], *in[1], *in[2], *in[3], *in[4]);
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::GruRecurrentGrad& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {gruRecurrentGrad(o.cell, *in[0], *in[1], *in[2])};
}

// Y(r, t*C + c) = X(r, (T-1-t)*C + c).
template <class T>
HostMatrixT<T> reverseSteps(const HostMatrixT<T>& x, int channels) {
    HostMatrixT<T> y(x.rows, x.cols);
    const int steps = x.cols / channels;
    for (int r = 0; r < x.rows; ++r)
        for (int s = 0; s < steps; ++s)
            for (int c = 0; c < channels; ++c) y(r, s * channels + c) = x(r, (steps - 1 - s) * channels + c);
    return y;
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::ReverseSteps& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {reverseSteps(*in[0], o.channels)};
}

}  // namespace gltrain::ref
