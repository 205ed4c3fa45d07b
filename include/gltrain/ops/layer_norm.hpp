// Kernels of layer normalization (graph/ops/layer_norm.hpp): each group of
// `channels` consecutive values of a row (the last axis of an NHWC row)
// standardized, scaled and shifted, and the input's gradient. A first pass
// computes each group's statistics (and, for the gradient, its two sums) into
// a temporary of the pass list, which the elements then read: O(channels) per
// group instead of per element (a transformer's 128 features: 2 x 128 reads
// per element before). The statistics are not kept between forward and
// backward: the backward pass list computes them again, one pass.
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

namespace layer_norm_detail {
inline void requireGroups(const char* fn, const Tensor& x, int channels, const Tensor& out,
                          std::initializer_list<const Tensor*> vectors) {
    bool ok = x && out && channels > 0 && x.cols() % channels == 0 && out.rows() == x.rows() && out.cols() == x.cols();
    for (const Tensor* v : vectors) ok = ok && *v && v->rows() == 1 && v->cols() == channels;
    if (!ok)
        throw ArgumentError(std::string(fn) + ": x must be N x (k * " + std::to_string(channels) +
                            "), out its shape and gamma, beta 1 x " + std::to_string(channels) + ", got x " +
                            (x ? x.shapeString() : std::string("empty")) + ", out " +
                            (out ? out.shapeString() : std::string("empty")));
}
// Each group's (mean, 1 / sqrt(var + epsilon)): an N x 2G packed temporary.
inline Tensor& recordStats(PassList& list, const Tensor& x, int channels, float epsilon) {
    Tensor& stats = list.temp(x.context(), x.rows(), 2 * (x.cols() / channels), Layout::Packed);
    list.add(Pass(x.context(), "forward/layer_norm_stats"))
        .input("X", x)
        .output(stats)
        .uniformInt("channels", channels)
        .uniform("epsilon", epsilon);
    return stats;
}
}  // namespace layer_norm_detail

// y = (x - mean) / sqrt(var + epsilon) * gamma + beta over each group of `channels`;
// gamma and beta null: the standardized values alone.
inline void recordLayerNorm(PassList& list, const Tensor& x, const Tensor* gamma, const Tensor* beta, int channels,
                            float epsilon, Tensor& out) {
    const bool affine = gamma && beta;
    if (affine) layer_norm_detail::requireGroups("layerNorm", x, channels, out, {gamma, beta});
    else layer_norm_detail::requireGroups("layerNorm", x, channels, out, {});
    const Tensor& stats = layer_norm_detail::recordStats(list, x, channels, epsilon);
    Pass& p = list.add(Pass(x.context(), "forward/layer_norm"))
                  .input("X", x)
                  .input("STATS", stats)
                  .output(out)
                  .uniformInt("channels", channels);
    if (affine) p.input("GAMMA", *gamma).input("BETA", *beta);
}

// dx of recordLayerNorm from dy.
inline void recordLayerNormGrad(PassList& list, const Tensor& x, const Tensor& gamma, const Tensor& dy, int channels,
                                float epsilon, Tensor& dx) {
    layer_norm_detail::requireGroups("layerNormGrad", x, channels, dx, {&gamma});
    layer_norm_detail::requireGroups("layerNormGrad", x, channels, dy, {});
    const Tensor& stats = layer_norm_detail::recordStats(list, x, channels, epsilon);
    Tensor& sums = list.temp(x.context(), x.rows(), stats.cols(), Layout::Packed);
    list.add(Pass(x.context(), "backward/layer_norm_sums"))
        .input("X", x)
        .input("STATS", stats)
        .input("GAMMA", gamma)
        .input("DY", dy)
        .output(sums)
        .uniformInt("channels", channels);
    list.add(Pass(x.context(), "backward/layer_norm"))
        .input("X", x)
        .input("STATS", stats)
        .input("SUMS", sums)
        .input("GAMMA", gamma)
        .input("DY", dy)
        .output(dx)
        .uniformInt("channels", channels);
}

}  // namespace gltrain
