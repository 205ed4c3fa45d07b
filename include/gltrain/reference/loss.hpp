// Losses with their gradients, the reference for the GPU's fused loss
// kernels. Each returns the loss and dLoss/dInput of the MEAN loss (mean over
// rows for the softmax cross-entropies, over all elements for MSE and BCE),
// so the gradient can go straight into the backward pass.
#pragma once
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/activations.hpp"
#include "gltrain/reference/check.hpp"
#include "gltrain/reference/softmax.hpp"

namespace gltrain::ref {

// A loss that is one number per sample (row).
template <class T>
struct RowLoss {
    HostMatrixT<T> lossPerRow;  // N x 1
    HostMatrixT<T> grad;        // N x C, gradient of mean(lossPerRow)

    // mean(lossPerRow): the scalar that grad is the gradient of.
    T mean() const {
        T s = T(0);
        for (T v : lossPerRow.data) s += v;
        return lossPerRow.data.empty() ? T(0) : s / T(lossPerRow.data.size());
    }
};

// A loss that is one number for the whole batch.
template <class T>
struct ScalarLoss {
    T loss;               // mean over all elements
    HostMatrixT<T> grad;  // same shape as the prediction
};

// Softmax cross-entropy with integer class labels, labels[r] in [0, C):
//   loss_r = logsumexp(x_r) - x_r[label_r]
//   grad   = (softmax(x) - onehot(label)) / N
// Labels are a std::vector<int> of length N (the same vector argmaxRows(X).data
// and correctCount use). A label outside [0, C) throws ArgumentError.
// NaN in a row of logits makes that row's loss and gradient NaN.
template <class T>
RowLoss<T> softmaxCrossEntropy(const HostMatrixT<T>& logits, const std::vector<int>& labels) {
    const int N = logits.rows, C = logits.cols;
    if (labels.size() != size_t(N))
        detail::fail("softmaxCrossEntropy", "logits are " + detail::shape(logits) + " but labels has " +
                                                std::to_string(labels.size()) + " entries (need one per row)");
    for (int r = 0; r < N; ++r)
        if (labels[size_t(r)] < 0 || labels[size_t(r)] >= C)
            detail::fail("softmaxCrossEntropy", "label " + std::to_string(labels[size_t(r)]) + " at row " +
                                                    std::to_string(r) + " is outside [0, " + std::to_string(C) +
                                                    ") for logits " + detail::shape(logits));
    const HostMatrixT<T> lse = logSumExpRows(logits);
    RowLoss<T> out{HostMatrixT<T>(N, 1), softmaxRows(logits)};
    const T invN = T(1) / T(N);
    for (int r = 0; r < N; ++r) {
        const int y = labels[size_t(r)];
        out.lossPerRow(r, 0) = lse(r, 0) - logits(r, y);
        out.grad(r, y) -= T(1);
        for (int c = 0; c < C; ++c) out.grad(r, c) *= invN;
    }
    return out;
}

// Softmax cross-entropy against target distributions (one-hot or smoothed),
// targets N x C with each row summing to 1:
//   loss_r = sum_c t_rc (logsumexp(x_r) - x_rc)     (terms with t_rc == 0 skipped,
//                                                    so a -inf logit there costs nothing)
//   grad   = (softmax(x) - t) / N                   (exact when rows of t sum to 1)
template <class T>
RowLoss<T> softmaxCrossEntropyOneHot(const HostMatrixT<T>& logits, const HostMatrixT<T>& targets) {
    detail::requireSameShape("softmaxCrossEntropyOneHot", "logits", logits, "targets", targets);
    const int N = logits.rows, C = logits.cols;
    const HostMatrixT<T> lse = logSumExpRows(logits);
    RowLoss<T> out{HostMatrixT<T>(N, 1), softmaxRows(logits)};
    const T invN = T(1) / T(N);
    for (int r = 0; r < N; ++r) {
        T loss = T(0);
        for (int c = 0; c < C; ++c) {
            const T t = targets(r, c);
            if (t != T(0)) loss += t * (lse(r, 0) - logits(r, c));
            out.grad(r, c) = (out.grad(r, c) - t) * invN;
        }
        out.lossPerRow(r, 0) = loss;
    }
    return out;
}

// Mean squared error over all elements: loss = mean((p - t)^2),
// grad = 2 (p - t) / count.
template <class T>
ScalarLoss<T> mse(const HostMatrixT<T>& pred, const HostMatrixT<T>& target) {
    detail::requireSameShape("mse", "pred", pred, "target", target);
    detail::requireNonEmpty("mse", "pred", pred);
    const T invCount = T(1) / T(pred.size());
    ScalarLoss<T> out{T(0), HostMatrixT<T>(pred.rows, pred.cols)};
    T s = T(0);
    for (size_t i = 0; i < pred.size(); ++i) {
        const T d = pred.data[i] - target.data[i];
        s += d * d;
        out.grad.data[i] = T(2) * d * invCount;
    }
    out.loss = s * invCount;
    return out;
}

// Binary cross-entropy on logits x with targets t in [0, 1], in the stable
// form (no log(0), no exp overflow for any finite x):
//   loss = mean(max(x, 0) - x t + log1p(exp(-|x|)))
//   grad = (sigmoid(x) - t) / count
template <class T>
ScalarLoss<T> binaryCrossEntropyWithLogits(const HostMatrixT<T>& logits, const HostMatrixT<T>& targets) {
    detail::requireSameShape("binaryCrossEntropyWithLogits", "logits", logits, "targets", targets);
    detail::requireNonEmpty("binaryCrossEntropyWithLogits", "logits", logits);
    const T invCount = T(1) / T(logits.size());
    ScalarLoss<T> out{T(0), HostMatrixT<T>(logits.rows, logits.cols)};
    T s = T(0);
    for (size_t i = 0; i < logits.size(); ++i) {
        const T x = logits.data[i], t = targets.data[i];
        const T pos = x < T(0) ? T(0) : x;
        s += pos - x * t + std::log1p(std::exp(-std::abs(x)));
        out.grad.data[i] = (scalar::sigmoid(x) - t) * invCount;
    }
    out.loss = s * invCount;
    return out;
}

}  // namespace gltrain::ref
