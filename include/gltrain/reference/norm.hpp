// Global L2 norm over a list of matrices (all gradients of a model) and
// clipping by it: the reference for the GPU's gradient-clipping pass.
//
// The list is given as a std::vector of matrices, a std::vector of pointers,
// or a braced list of pointers: clipByGlobalNorm({&dW1, &db1}, 5.0).
#pragma once
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

namespace detail {
// sqrt of the sum of squares of every element, accumulated in T, matrix by
// matrix in list order, each in row-major order.
template <class T, class It>
T l2NormOf(It first, It last) {
    T s = T(0);
    for (; first != last; ++first)
        for (T v : (*first)->data) s += v * v;
    return std::sqrt(s);
}

// When norm > maxNorm, multiplies every element by maxNorm / norm; returns
// norm either way. A NaN norm compares false and leaves the list untouched.
template <class T, class It>
T clipList(It first, It last, T maxNorm) {
    if (!(maxNorm > T(0))) fail("clipByGlobalNorm", "maxNorm is " + std::to_string(maxNorm) + " (must be > 0)");
    const T norm = l2NormOf<T>(first, last);
    if (norm > maxNorm) {
        const T factor = maxNorm / norm;
        for (; first != last; ++first)
            for (T& v : (*first)->data) v *= factor;
    }
    return norm;
}

template <class T>
std::vector<const HostMatrixT<T>*> pointersTo(const std::vector<HostMatrixT<T>>& list) {
    std::vector<const HostMatrixT<T>*> ptrs;
    for (const auto& m : list) ptrs.push_back(&m);
    return ptrs;
}
}  // namespace detail

// sqrt(sum over all matrices and elements of x^2).
template <class T>
T globalL2Norm(const std::vector<const HostMatrixT<T>*>& list) {
    return detail::l2NormOf<T>(list.begin(), list.end());
}
template <class T>
T globalL2Norm(const std::vector<HostMatrixT<T>*>& list) {
    return detail::l2NormOf<T>(list.begin(), list.end());
}
template <class T>
T globalL2Norm(std::initializer_list<const HostMatrixT<T>*> list) {
    return detail::l2NormOf<T>(list.begin(), list.end());
}
template <class T>
T globalL2Norm(const std::vector<HostMatrixT<T>>& list) {
    const auto ptrs = detail::pointersTo(list);
    return detail::l2NormOf<T>(ptrs.begin(), ptrs.end());
}

// max |x| over every element of every matrix; NaN if any element is NaN
// (so the result is finite exactly when every element is): the overflow test
// of dynamic loss scaling.
template <class T>
T globalMaxAbs(const std::vector<const HostMatrixT<T>*>& list) {
    T m = T(0);
    for (const auto* x : list)
        for (T v : x->data) {
            if (std::isnan(v)) return v;
            m = std::max(m, std::abs(v));
        }
    return m;
}

// Scales every matrix by maxNorm / norm when the global norm exceeds maxNorm
// (so the clipped global norm is maxNorm); returns the norm BEFORE clipping.
// maxNorm must be > 0 (ArgumentError otherwise).
template <class T>
T clipByGlobalNorm(const std::vector<HostMatrixT<T>*>& list, detail::NonDeduced<T> maxNorm) {
    return detail::clipList<T>(list.begin(), list.end(), maxNorm);
}
template <class T>
T clipByGlobalNorm(std::initializer_list<HostMatrixT<T>*> list, detail::NonDeduced<T> maxNorm) {
    return detail::clipList<T>(list.begin(), list.end(), maxNorm);
}
template <class T>
T clipByGlobalNorm(std::vector<HostMatrixT<T>>& list, detail::NonDeduced<T> maxNorm) {
    std::vector<HostMatrixT<T>*> ptrs;
    for (auto& m : list) ptrs.push_back(&m);
    return detail::clipList<T>(ptrs.begin(), ptrs.end(), maxNorm);
}

}  // namespace gltrain::ref
