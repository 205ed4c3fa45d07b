// Batch normalization on the CPU over C interleaved channels (NHWC rows, or
// the columns of a dense layer's output when P = 1): the formulas of
// reference/batchnorm.hpp. Statistics are summed in double (a batch of images
// gives tens of thousands of values per channel) and stored as float.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace gltrain::cpu {

// mean[c], var[c] (biased) over the rows x (cols / C) values of channel c.
inline void batchStats(const float* X, int rows, int cols, int C, float* mean, float* var, std::vector<double>& acc) {
    const size_t total = size_t(rows) * size_t(cols);
    const double m = double(total / size_t(C));
    acc.assign(size_t(2 * C), 0.0);
    double* s = acc.data();
    double* q = s + C;
    for (size_t i = 0; i < total; i += size_t(C))
        for (int c = 0; c < C; ++c) s[c] += X[i + size_t(c)];
    for (int c = 0; c < C; ++c) s[c] /= m;
    for (size_t i = 0; i < total; i += size_t(C))
        for (int c = 0; c < C; ++c) {
            const double d = X[i + size_t(c)] - s[c];
            q[c] += d * d;
        }
    for (int c = 0; c < C; ++c) {
        mean[c] = float(s[c]);
        var[c] = float(q[c] / m);
    }
}

// Y = gamma (X - mean) / sqrt(var + eps) + beta, per channel.
inline void batchNormApply(const float* X, int rows, int cols, int C, const float* mean, const float* var,
                           const float* gamma, const float* beta, float eps, float* Y, std::vector<float>& scratch) {
    scratch.resize(size_t(2 * C));
    float* scale = scratch.data();
    float* shift = scale + C;
    for (int c = 0; c < C; ++c) {
        scale[c] = gamma[c] / std::sqrt(var[c] + eps);
        shift[c] = beta[c] - mean[c] * scale[c];
    }
    const size_t total = size_t(rows) * size_t(cols);
    for (size_t i = 0; i < total; i += size_t(C))
        for (int c = 0; c < C; ++c) Y[i + size_t(c)] = X[i + size_t(c)] * scale[c] + shift[c];
}

// Training-mode backward with the batch's statistics (xhat = (x - mean) rstd):
//   dBeta = sum dy, dGamma = sum dy xhat, dx = gamma rstd / M (M dy - dBeta - xhat dGamma).
// dX may be null (the first layer needs no input gradient).
inline void batchNormBackward(const float* X, const float* dY, int rows, int cols, int C, const float* mean,
                              const float* var, const float* gamma, float eps, float* dGamma, float* dBeta, float* dX,
                              std::vector<double>& acc) {
    const size_t total = size_t(rows) * size_t(cols);
    const double m = double(total / size_t(C));
    acc.assign(size_t(3 * C), 0.0);
    double *sb = acc.data(), *sg = sb + C, *rstd = sg + C;
    for (int c = 0; c < C; ++c) rstd[c] = 1.0 / std::sqrt(double(var[c]) + double(eps));
    for (size_t i = 0; i < total; i += size_t(C))
        for (int c = 0; c < C; ++c) {
            const double dy = dY[i + size_t(c)];
            sb[c] += dy;
            sg[c] += dy * (X[i + size_t(c)] - mean[c]) * rstd[c];
        }
    for (int c = 0; c < C; ++c) {
        dBeta[c] = float(sb[c]);
        dGamma[c] = float(sg[c]);
    }
    if (!dX) return;
    for (size_t i = 0; i < total; i += size_t(C))
        for (int c = 0; c < C; ++c) {
            const double xhat = (X[i + size_t(c)] - mean[c]) * rstd[c];
            dX[i + size_t(c)] = float(gamma[c] * rstd[c] / m * (m * dY[i + size_t(c)] - sb[c] - xhat * sg[c]));
        }
}

}  // namespace gltrain::cpu
