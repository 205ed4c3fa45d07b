// The sequence layers' formulas, in any precision: an embedding table's
// lookup and its gradient (the sum of the gradients of each token's uses),
// layer normalization over the last axis with its gradients, written
// from the definitions (mean, variance, and the derivative of
// (x - mean) / sqrt(var + eps) by the chain rule over the whole group), and
// the softmax cross-entropy at every step of a sequence.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "gltrain/graph/ops/embedding.hpp"
#include "gltrain/graph/ops/layer_norm.hpp"
#include "gltrain/graph/ops/sequence_loss.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/check.hpp"

namespace gltrain::ref {

// Y(r, t*D + d) = table(ids(r, t), d): ids N x T, table V x D.
template <class T>
HostMatrixT<T> embeddingLookup(const HostMatrixT<T>& ids, const HostMatrixT<T>& table) {
    HostMatrixT<T> y(ids.rows, ids.cols * table.cols);
    for (int r = 0; r < ids.rows; ++r)
        for (int t = 0; t < ids.cols; ++t) {
            const long id = std::lround(double(ids(r, t)));
            if (id < 0 || id >= table.rows) detail::fail("embeddingLookup", "token id out of range");
            for (int d = 0; d < table.cols; ++d) y(r, t * table.cols + d) = table(int(id), d);
        }
    return y;
}

// dTable(v, d) = sum over (r, t) with ids(r, t) == v of dY(r, t*D + d): a vocab x D matrix.
template <class T>
HostMatrixT<T> embeddingGrad(const HostMatrixT<T>& ids, const HostMatrixT<T>& dy, int vocab) {
    const int D = dy.cols / ids.cols;
    HostMatrixT<T> g(vocab, D);
    for (int v = 0; v < vocab; ++v)
        for (int r = 0; r < ids.rows; ++r)
            for (int t = 0; t < ids.cols; ++t)
                if (std::lround(double(ids(r, t))) == v)
                    for (int d = 0; d < D; ++d) g(v, d) += dy(r, t * D + d);
    return g;
}

// The standardized values of each group of C consecutive values of X's rows:
// (x - mean) / sqrt(var + eps), the variance biased (divided by C).
template <class T>
HostMatrixT<T> standardize(const HostMatrixT<T>& X, int C, double eps) {
    HostMatrixT<T> Y(X.rows, X.cols);
    for (size_t b = 0; b < X.data.size(); b += size_t(C)) {
        T m = 0, v = 0;
        for (int j = 0; j < C; ++j) m += X.data[b + size_t(j)];
        m /= T(C);
        for (int j = 0; j < C; ++j) v += (X.data[b + size_t(j)] - m) * (X.data[b + size_t(j)] - m);
        v /= T(C);
        for (int j = 0; j < C; ++j) Y.data[b + size_t(j)] = (X.data[b + size_t(j)] - m) / std::sqrt(v + T(eps));
    }
    return Y;
}
// standardize(X) * gamma + beta per channel (gamma, beta: 1 x C).
template <class T>
HostMatrixT<T> layerNorm(const HostMatrixT<T>& X, const HostMatrixT<T>& gamma, const HostMatrixT<T>& beta, double eps) {
    HostMatrixT<T> Y = standardize(X, gamma.cols, eps);
    for (size_t i = 0; i < Y.data.size(); ++i)
        Y.data[i] = Y.data[i] * gamma.data[i % size_t(gamma.cols)] + beta.data[i % size_t(gamma.cols)];
    return Y;
}
// dX of layerNorm through its Jacobian: d xhat_j / d x_i = s (δij - 1/C) - xhat_i xhat_j s / C,
// s = 1 / sqrt(var + eps), so dX_i = Σ_j dY_j gamma_j d xhat_j / d x_i (O(C^2) per group).
template <class T>
HostMatrixT<T> layerNormGradInput(const HostMatrixT<T>& X, const HostMatrixT<T>& gamma, const HostMatrixT<T>& dY,
                                  double eps) {
    const int C = gamma.cols;
    const HostMatrixT<T> xhat = standardize(X, C, eps);
    HostMatrixT<T> dX(X.rows, X.cols);
    for (size_t b = 0; b < X.data.size(); b += size_t(C)) {
        T m = 0, v = 0;
        for (int j = 0; j < C; ++j) m += X.data[b + size_t(j)];
        m /= T(C);
        for (int j = 0; j < C; ++j) v += (X.data[b + size_t(j)] - m) * (X.data[b + size_t(j)] - m);
        const T s = T(1) / std::sqrt(v / T(C) + T(eps));
        for (int i = 0; i < C; ++i) {
            T sum = 0;
            for (int j = 0; j < C; ++j) {
                const T jac = s * ((i == j ? T(1) : T(0)) - T(1) / T(C)) -
                              xhat.data[b + size_t(i)] * xhat.data[b + size_t(j)] * s / T(C);
                sum += dY.data[b + size_t(j)] * gamma.data[size_t(j)] * jac;
            }
            dX.data[b + size_t(i)] = sum;
        }
    }
    return dX;
}

template <class T>
std::vector<HostMatrixT<T>> run(const graph::Standardize& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {standardize(*in[0], o.channels, double(o.epsilon))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::LayerNorm& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {layerNorm(*in[0], *in[1], *in[2], double(o.epsilon))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::LayerNormGradInput& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {layerNormGradInput(*in[0], *in[1], *in[2], double(o.epsilon))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::EmbeddingLookup&, const std::vector<const HostMatrixT<T>*>& in) {
    return {embeddingLookup(*in[0], *in[1])};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::EmbeddingGrad& o, const std::vector<const HostMatrixT<T>*>& in) {
    return {embeddingGrad(*in[0], *in[1], o.vocab)};
}

// Softmax cross-entropy at every step: logits N x (T*V), targets N x T (a negative
// target masks its step). rows(r) = the mean of row r's counted steps' losses (0
// with none); mean = the mean over every counted step; grad = d(mean)/d(logits).
template <class T>
struct SequenceLoss {
    HostMatrixT<T> rows;
    T mean = 0;
    HostMatrixT<T> grad;
};
template <class T>
SequenceLoss<T> sequenceCrossEntropy(const HostMatrixT<T>& logits, const HostMatrixT<T>& targets) {
    const int steps = targets.cols, V = logits.cols / steps;
    SequenceLoss<T> out{HostMatrixT<T>(logits.rows, 1), T(0), HostMatrixT<T>(logits.rows, logits.cols)};
    long count = 0;
    for (T v : targets.data) count += v >= T(0);
    T total = 0;
    for (int r = 0; r < logits.rows; ++r) {
        T sum = 0;
        int n = 0;
        for (int t = 0; t < steps; ++t) {
            if (targets(r, t) < T(0)) continue;
            const int label = int(std::lround(double(targets(r, t))));
            T m = logits(r, t * V);
            for (int j = 1; j < V; ++j) m = std::max(m, logits(r, t * V + j));
            T s = 0;
            for (int j = 0; j < V; ++j) s += std::exp(logits(r, t * V + j) - m);
            sum += std::log(s) + m - logits(r, t * V + label);
            ++n;
            for (int j = 0; j < V; ++j)
                out.grad(r, t * V + j) =
                    (std::exp(logits(r, t * V + j) - m) / s - (j == label ? T(1) : T(0))) / T(std::max(count, 1L));
        }
        out.rows(r, 0) = n ? sum / T(n) : T(0);
        total += sum;
    }
    out.mean = count ? total / T(count) : T(0);
    return out;
}

template <class T>
std::vector<HostMatrixT<T>> run(const graph::SequenceCrossEntropy&, const std::vector<const HostMatrixT<T>*>& in) {
    const SequenceLoss<T> l = sequenceCrossEntropy(*in[0], *in[1]);
    return {l.rows, HostMatrixT<T>(1, 1, l.mean)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SequenceCrossEntropyGrad&, const std::vector<const HostMatrixT<T>*>& in) {
    HostMatrixT<T> g = sequenceCrossEntropy(*in[0], *in[1]).grad;
    for (T& v : g.data) v *= (*in[2])(0, 0);
    return {g};
}

}  // namespace gltrain::ref
