// Batch normalization over channels: the reference for forward/bn_stats,
// forward/bn_apply, backward/bn_* and update/moving_average.
//
// X is N x (P*C) (P pixels of C channels; P = 1 after a Dense layer). Each
// channel is normalised over its N*P values:
//   mean[c] = sum x / M, var[c] = sum (x - mean)^2 / M   (M = N*P, biased)
//   y = gamma (x - mean) / sqrt(var + eps) + beta
// Training uses the batch's mean and var and moves the running averages:
//   movingMean = m movingMean + (1 - m) mean
//   movingVar  = m movingVar  + (1 - m) var * M / (M - 1)   (unbiased, as
//   PyTorch and TensorFlow's fused kernel do); inference uses the moving ones.
#pragma once
#include <cmath>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/conv.hpp"

namespace gltrain::ref {

template <class T>
struct BatchStats {
    HostMatrixT<T> mean, var;  // 1 x C each
};

template <class T>
BatchStats<T> batchStats(const HostMatrixT<T>& X, int channels) {
    HostMatrixT<T> mean = channelSum(X, channels);
    const T m = T(X.rows) * T(X.cols / channels);
    for (T& v : mean.data) v /= m;
    HostMatrixT<T> var(1, channels);
    for (int n = 0; n < X.rows; ++n)
        for (int j = 0; j < X.cols; ++j) {
            T d = X(n, j) - mean(0, j % channels);
            var(0, j % channels) += d * d;
        }
    for (T& v : var.data) v /= m;
    return {mean, var};
}

template <class T>
HostMatrixT<T> batchNormApply(const HostMatrixT<T>& X, const HostMatrixT<T>& mean, const HostMatrixT<T>& var,
                              const HostMatrixT<T>& gamma, const HostMatrixT<T>& beta, detail::NonDeduced<T> eps) {
    const int C = gamma.cols;
    for (const HostMatrixT<T>* p : {&mean, &var, &beta})
        if (p->rows != 1 || p->cols != C)
            detail::fail("batchNorm",
                         "mean, var, gamma and beta must all be 1x" + std::to_string(C) + ", got " + detail::shape(*p));
    if (C <= 0 || X.cols % C != 0)
        detail::fail("batchNorm", "X is " + detail::shape(X) + ", not a whole number of pixels of " +
                                      std::to_string(C) + " channels");
    HostMatrixT<T> Y(X.rows, X.cols);
    for (int n = 0; n < X.rows; ++n)
        for (int j = 0; j < X.cols; ++j) {
            int c = j % C;
            Y(n, j) = gamma(0, c) * (X(n, j) - mean(0, c)) / std::sqrt(var(0, c) + eps) + beta(0, c);
        }
    return Y;
}

template <class T>
struct BatchNormGrads {
    HostMatrixT<T> dX, dGamma, dBeta;
};

// Backward of training-mode batch normalization (the batch statistics
// depend on X):  xhat = (x - mean) rstd, rstd = 1 / sqrt(var + eps)
//   dBeta = sum dy, dGamma = sum dy xhat
//   dx = gamma rstd / M (M dy - dBeta - xhat dGamma)
template <class T>
BatchNormGrads<T> batchNormBackward(const HostMatrixT<T>& X, const HostMatrixT<T>& dY, const HostMatrixT<T>& gamma,
                                    detail::NonDeduced<T> eps) {
    detail::requireSameShape("batchNormBackward", "dY", dY, "X", X);
    const int C = gamma.cols;
    BatchStats<T> s = batchStats(X, C);
    const T m = T(X.rows) * T(X.cols / C);
    BatchNormGrads<T> g{HostMatrixT<T>(X.rows, X.cols), HostMatrixT<T>(1, C), HostMatrixT<T>(1, C)};
    auto xhat = [&](int n, int j) {
        int c = j % C;
        return (X(n, j) - s.mean(0, c)) / std::sqrt(s.var(0, c) + eps);
    };
    for (int n = 0; n < X.rows; ++n)
        for (int j = 0; j < X.cols; ++j) {
            g.dBeta(0, j % C) += dY(n, j);
            g.dGamma(0, j % C) += dY(n, j) * xhat(n, j);
        }
    for (int n = 0; n < X.rows; ++n)
        for (int j = 0; j < X.cols; ++j) {
            int c = j % C;
            T rstd = T(1) / std::sqrt(s.var(0, c) + eps);
            g.dX(n, j) = gamma(0, c) * rstd / m * (m * dY(n, j) - g.dBeta(0, c) - xhat(n, j) * g.dGamma(0, c));
        }
    return g;
}

// A running average moved toward a statistic (both 1 x C): the moving mean with
// scale 1, the moving variance with scale M / (M - 1).
template <class T>
HostMatrixT<T> movingAverage(const HostMatrixT<T>& avg, const HostMatrixT<T>& stat, detail::NonDeduced<T> momentum,
                             detail::NonDeduced<T> scale) {
    if (avg.rows != stat.rows || avg.cols != stat.cols)
        detail::fail("movingAverage",
                     "the average is " + detail::shape(avg) + " but the statistic " + detail::shape(stat));
    HostMatrixT<T> out(avg.rows, avg.cols);
    for (size_t i = 0; i < out.data.size(); ++i)
        out.data[i] = momentum * avg.data[i] + (1 - momentum) * scale * stat.data[i];
    return out;
}

}  // namespace gltrain::ref
