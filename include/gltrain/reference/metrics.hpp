// Classification metrics: the predicted class per row and how many match.
#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

// Index of the largest value in each row, N x 1 (argmaxRows(X).data is a
// labels vector). The spec the GPU kernel follows:
//   best = -inf; idx = 0; for c in 0..C-1: if (x[c] > best) { best = x[c]; idx = c; }
// so ties go to the lowest index, a NaN never wins (every comparison with it
// is false), and a row that is all NaN / all -inf (or has no columns) gives 0.
template <class T>
HostMatrixT<int> argmaxRows(const HostMatrixT<T>& X) {
    HostMatrixT<int> out(X.rows, 1);
    for (int r = 0; r < X.rows; ++r) {
        T best = -std::numeric_limits<T>::infinity();
        int idx = 0;
        for (int c = 0; c < X.cols; ++c)
            if (X(r, c) > best) {
                best = X(r, c);
                idx = c;
            }
        out(r, 0) = idx;
    }
    return out;
}

// Number of rows r with argmaxRows(X)(r) == labels[r]. labels has one entry
// per row, each in [0, X.cols) (ArgumentError otherwise, as in
// softmaxCrossEntropy: a label that can never match is a bug upstream).
template <class T>
int correctCount(const HostMatrixT<T>& X, const std::vector<int>& labels) {
    if (labels.size() != size_t(X.rows))
        detail::fail("correctCount", "X is " + detail::shape(X) + " but labels has " + std::to_string(labels.size()) +
                                         " entries (need one per row)");
    const HostMatrixT<int> pred = argmaxRows(X);
    int correct = 0;
    for (int r = 0; r < X.rows; ++r) {
        const int y = labels[size_t(r)];
        if (y < 0 || y >= X.cols)
            detail::fail("correctCount", "label " + std::to_string(y) + " at row " + std::to_string(r) +
                                             " is outside [0, " + std::to_string(X.cols) + ") for X " +
                                             detail::shape(X));
        if (pred(r, 0) == y) ++correct;
    }
    return correct;
}

}  // namespace gltrain::ref
