// Row-wise softmax and log-sum-exp, both max-subtracted so that logits of any
// finite magnitude (±1e4 and beyond) give no overflow, NaN or Inf.
//
// The row maximum skips NaN (it is taken with "v > m", starting at -inf), so
// a NaN in a row reaches exp(), makes the row's sum NaN and thereby every
// output of that row NaN; other rows are unaffected. The same holds for a
// +inf logit (inf - inf = NaN) and for a row that is entirely -inf.
// A -inf logit in a row with a finite maximum simply gets probability 0.
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

namespace detail {
// max over a row ignoring NaN; -inf for an empty or all-NaN row.
template <class T>
T rowMaxIgnoringNaN(const T* x, int n) {
    T m = -std::numeric_limits<T>::infinity();
    for (int i = 0; i < n; ++i)
        if (x[i] > m) m = x[i];
    return m;
}
}  // namespace detail

// log(sum_c exp(X(r, c))) per row, computed as m + log(sum exp(x - m)) with m
// the row max. N x 1. A row with no columns gives -inf (log of an empty sum).
template <class T>
HostMatrixT<T> logSumExpRows(const HostMatrixT<T>& X) {
    HostMatrixT<T> out(X.rows, 1);
    for (int r = 0; r < X.rows; ++r) {
        const T* x = X.data.data() + size_t(r) * size_t(X.cols);
        const T m = detail::rowMaxIgnoringNaN(x, X.cols);
        T s = T(0);
        for (int c = 0; c < X.cols; ++c) s += std::exp(x[c] - m);
        out(r, 0) = X.cols == 0 ? m : m + std::log(s);
    }
    return out;
}

// P(r, c) = exp(X(r, c) - m_r) / sum_c' exp(X(r, c') - m_r), m_r the row max.
template <class T>
HostMatrixT<T> softmaxRows(const HostMatrixT<T>& X) {
    HostMatrixT<T> P(X.rows, X.cols);
    for (int r = 0; r < X.rows; ++r) {
        const T* x = X.data.data() + size_t(r) * size_t(X.cols);
        T* p = P.data.data() + size_t(r) * size_t(X.cols);
        const T m = detail::rowMaxIgnoringNaN(x, X.cols);
        T s = T(0);
        for (int c = 0; c < X.cols; ++c) {
            p[c] = std::exp(x[c] - m);
            s += p[c];
        }
        // s >= 1 whenever the row is finite (the max contributes exp(0) = 1).
        for (int c = 0; c < X.cols; ++c) p[c] /= s;
    }
    return P;
}

}  // namespace gltrain::ref
