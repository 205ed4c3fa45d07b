// Layer normalization's ops: each example's groups of `channels` values (the
// last axis: a sequence's features at each step) standardized, scaled by
// gamma and shifted by beta (LayerNorm); the input's gradient
// (LayerNormGradInput); and the standardized values alone (Standardize),
// which gamma's gradient, sum(dy * xhat) per channel, multiplies. beta's
// gradient is a ChannelSum of dy.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/cpu/parallel_for.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/graph/ops/elementwise.hpp"
#include "gltrain/ops/layer_norm.hpp"

namespace gltrain::graph {

namespace op_detail {
inline void requireGroups(const char* what, const Shape& x, int channels) {
    requireBatched(what, x);
    if (channels < 1 || x.last() != channels)
        throw ShapeError(std::string(what) + " must end in " + std::to_string(channels) + " channels, got " + x.str());
}
inline void requireEpsilon(float epsilon) {
    if (!(epsilon > 0.0f) || !std::isfinite(epsilon))
        throw ShapeError("layer normalization's epsilon must be > 0, got " + std::to_string(epsilon));
}
// The mean and 1 / sqrt(variance + eps) of C values, summed in double in four
// running sums: one sum would be a chain of dependent adds, the op's cost.
inline void groupStats(const float* x, int C, float eps, double& mean, double& rstd) {
    double s[4] = {0, 0, 0, 0}, v[4] = {0, 0, 0, 0};
    const int whole = C - C % 4;
    for (int j = 0; j < whole; j += 4)
        for (int l = 0; l < 4; ++l) s[l] += x[j + l];
    for (int j = whole; j < C; ++j) s[0] += x[j];
    mean = ((s[0] + s[1]) + (s[2] + s[3])) / C;
    for (int j = 0; j < whole; j += 4)
        for (int l = 0; l < 4; ++l) v[l] += (x[j + l] - mean) * (x[j + l] - mean);
    for (int j = whole; j < C; ++j) v[0] += (x[j] - mean) * (x[j] - mean);
    rstd = 1.0 / std::sqrt(((v[0] + v[1]) + (v[2] + v[3])) / C + double(eps));
}
// (x - mean) / sqrt(var + eps) of each group of `C` values of x (n values), times gamma plus beta (null: 1 and 0);
// groups split over the threads of ws.
inline void layerNormRows(const float* x, size_t n, int C, float eps, const float* gamma, const float* beta, float* y,
                          cpu::Workspace& ws) {
    cpu::forParts(ws, n / size_t(C), 8.0 * C, [&](size_t first, size_t end) {
        for (size_t b = first * size_t(C); b < end * size_t(C); b += size_t(C)) {
            double m, s;
            groupStats(x + b, C, eps, m, s);
            for (int j = 0; j < C; ++j) {
                const double xhat = (x[b + size_t(j)] - m) * s;
                y[b + size_t(j)] = gamma ? float(xhat * gamma[j] + beta[j]) : float(xhat);
            }
        }
    });
}
}  // namespace op_detail

// (x - mean) / sqrt(var + epsilon) over each group of `channels`: input x [B, ..., C].
struct Standardize {
    static constexpr const char* kName = "standardize";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    int channels = 1;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireEpsilon(epsilon);
        op_detail::requireGroups("x", in[0], channels);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordLayerNorm(r.list(), r.in(0), nullptr, nullptr, channels, epsilon, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        op_detail::layerNormRows(c.in(0).data.data(), c.in(0).data.size(), channels, epsilon, nullptr, nullptr,
                                 c.out(0).data.data(), c.ws());
    }
    static std::vector<Example<Standardize>> examples() {
        return {{{5, 1e-3f}, {{Shape::batched({1, 3, 5})}}}, {{7, 0.5f}, {{Shape::batched({7})}}}};
    }
};

// dx of LayerNorm: inputs x, gamma [C], dy (x's shape).
struct LayerNormGradInput {
    static constexpr const char* kName = "layer_norm_grad_input";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    int channels = 1;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireEpsilon(epsilon);
        op_detail::requireGroups("x", in[0], channels);
        op_detail::requireChannelVector("gamma", in[0], in[1]);
        op_detail::requireSame("x and dy", in[0], in[2]);
        return {in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        recordLayerNormGrad(r.list(), r.in(0), r.in(1), r.in(2), channels, epsilon, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const float *x = c.in(0).data.data(), *gamma = c.in(1).data.data(), *dy = c.in(2).data.data();
        float* dx = c.out(0).data.data();
        const int C = channels;
        cpu::forParts(c.ws(), c.in(0).data.size() / size_t(C), 12.0 * C, [&](size_t first, size_t end) {
            for (size_t b = first * size_t(C); b < end * size_t(C); b += size_t(C)) {
                double m, s;
                op_detail::groupStats(x + b, C, epsilon, m, s);
                double a = 0, bsum = 0;
                for (int j = 0; j < C; ++j) {
                    const double gdy = double(gamma[j]) * dy[b + size_t(j)];
                    a += gdy;
                    bsum += gdy * (x[b + size_t(j)] - m) * s;
                }
                for (int j = 0; j < C; ++j)
                    dx[b + size_t(j)] = float(
                        s * (double(gamma[j]) * dy[b + size_t(j)] - a / C - (x[b + size_t(j)] - m) * s * bsum / C));
            }
        });
    }
    static std::vector<Example<LayerNormGradInput>> examples() {
        return {{{5, 1e-3f}, {{Shape::batched({1, 3, 5})}, {Shape{5}}, {Shape::batched({1, 3, 5})}}},
                {{6, 0.1f}, {{Shape::batched({6})}, {Shape{6}}, {Shape::batched({6})}}}};
    }
};

// Layer normalization over the last axis: inputs x [B, ..., C], gamma [C], beta [C].
struct LayerNorm {
    static constexpr const char* kName = "layer_norm";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b111, kGradOutputs = 0b1;
    int channels = 1;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireEpsilon(epsilon);
        op_detail::requireGroups("x", in[0], channels);
        op_detail::requireChannelVector("gamma", in[0], in[1]);
        op_detail::requireChannelVector("beta", in[0], in[2]);
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(LayerNormGradInput{channels, epsilon}, {g.in(0), g.in(1), g.dOut(0)}));
        if (g.needs(1)) {
            const auto xhat = g.add(Standardize{channels, epsilon}, {g.in(0)});
            g.grad(1, g.add(ChannelSum{channels}, {g.add(Mul{}, {g.dOut(0), xhat})}));
        }
        if (g.needs(2)) g.grad(2, g.add(ChannelSum{channels}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordLayerNorm(r.list(), r.in(0), &r.in(1), &r.in(2), channels, epsilon, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        op_detail::layerNormRows(c.in(0).data.data(), c.in(0).data.size(), channels, epsilon, c.in(1).data.data(),
                                 c.in(2).data.data(), c.out(0).data.data(), c.ws());
    }
    // A sequence of 3 steps of 5 features, a flat row of 6 and an image's channels.
    static std::vector<Example<LayerNorm>> examples() {
        return {{{5, 1e-3f}, {{Shape::batched({1, 3, 5})}, {Shape{5}}, {Shape{5}}}},
                {{6, 0.1f}, {{Shape::batched({6})}, {Shape{6}}, {Shape{6}}}},
                {{3, 1e-2f}, {{Shape::batched({2, 2, 3})}, {Shape{3}}, {Shape{3}}}}};
    }
};

}  // namespace gltrain::graph
