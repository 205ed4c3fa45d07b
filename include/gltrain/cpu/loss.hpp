// Losses on the CPU, each fused into one pass over the outputs that yields
// the gradient of the mean loss, the sum of the per-row losses and (softmax
// cross-entropy) how many rows were classified right — what a training step,
// an evaluation and the epoch's accuracy need. Formulas: reference/loss.hpp
// and reference/metrics.hpp (argmax: the first maximum, NaN never wins).
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>

#include "gltrain/cpu/activation.hpp"

namespace gltrain::cpu {

struct LossSums {
    double loss = 0;  // sum over rows of the row's loss (softmax CE) or of its mean element loss (MSE, BCE)
    int correct = 0;  // rows whose argmax is the label (softmax CE)
};

// Softmax cross-entropy with labels: grad = (softmax(x) - onehot) / gradRows
// (grad may be null: evaluation). gradRows is the batch size the mean runs over.
inline LossSums softmaxCrossEntropy(const float* X, const int* labels, int rows, int C, float* grad, int gradRows) {
    LossSums s;
    const float invN = 1.0f / float(gradRows);
    for (int r = 0; r < rows; ++r) {
        const float* x = X + size_t(r) * size_t(C);
        float m = -std::numeric_limits<float>::infinity();
        int arg = 0;
        for (int c = 0; c < C; ++c)
            if (x[c] > m) {
                m = x[c];
                arg = c;
            }
        float sum = 0.0f;
        for (int c = 0; c < C; ++c) sum += std::exp(x[c] - m);
        const int y = labels[r];
        s.loss += double(m + std::log(sum) - x[y]);
        s.correct += arg == y;
        if (grad) {
            float* g = grad + size_t(r) * size_t(C);
            const float inv = 1.0f / sum;
            for (int c = 0; c < C; ++c) g[c] = std::exp(x[c] - m) * inv * invN;
            g[y] -= invN;
        }
    }
    return s;
}

// Mean squared error or binary cross-entropy on logits, element-wise against
// targets T: loss = mean over all elements, grad = d loss / d x over
// gradCount = batch rows x C elements.
enum class PointwiseLoss { SquaredError, BinaryCrossEntropy };
inline LossSums pointwiseLoss(PointwiseLoss kind, const float* X, const float* T, int rows, int C, float* grad,
                              int gradRows) {
    LossSums s;
    const float inv = 1.0f / (float(gradRows) * float(C));
    for (int r = 0; r < rows; ++r) {
        double row = 0;
        for (int c = 0; c < C; ++c) {
            const size_t i = size_t(r) * size_t(C) + size_t(c);
            const float x = X[i], t = T[i];
            if (kind == PointwiseLoss::SquaredError) {
                const float d = x - t;
                row += double(d * d);
                if (grad) grad[i] = 2.0f * d * inv;
            } else {
                const float pos = x < 0.0f ? 0.0f : x;
                row += double(pos - x * t + std::log1p(std::exp(-std::abs(x))));
                if (grad) grad[i] = (scalar::sigmoid(x) - t) * inv;
            }
        }
        s.loss += row / C;
    }
    return s;
}

}  // namespace gltrain::cpu
