// Kernels of layer normalization (graph/ops/layer_norm.hpp): each group of
// `channels` consecutive values of a row (the last axis of an NHWC row)
// standardized, scaled and shifted, and the input's gradient. Each element
// recomputes its group's statistics, O(channels), so there is no statistics
// tensor to keep between the passes.
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
}  // namespace layer_norm_detail

// y = (x - mean) / sqrt(var + epsilon) * gamma + beta over each group of `channels`;
// gamma and beta null: the standardized values alone.
inline Pass& recordLayerNorm(PassList& list, const Tensor& x, const Tensor* gamma, const Tensor* beta, int channels,
                             float epsilon, Tensor& out) {
    const bool affine = gamma && beta;
    if (affine) layer_norm_detail::requireGroups("layerNorm", x, channels, out, {gamma, beta});
    else layer_norm_detail::requireGroups("layerNorm", x, channels, out, {});
    Pass& p = list.add(Pass(x.context(), "forward/layer_norm"))
                  .input("X", x)
                  .output(out)
                  .uniformInt("channels", channels)
                  .uniform("epsilon", epsilon);
    if (affine) p.input("GAMMA", *gamma).input("BETA", *beta);
    return p;
}

// dx of recordLayerNorm from dy.
inline Pass& recordLayerNormGrad(PassList& list, const Tensor& x, const Tensor& gamma, const Tensor& dy, int channels,
                                 float epsilon, Tensor& dx) {
    layer_norm_detail::requireGroups("layerNormGrad", x, channels, dx, {&gamma});
    layer_norm_detail::requireGroups("layerNormGrad", x, channels, dy, {});
    return list.add(Pass(x.context(), "backward/layer_norm"))
        .input("X", x)
        .input("GAMMA", gamma)
        .input("DY", dy)
        .output(dx)
        .uniformInt("channels", channels)
        .uniform("epsilon", epsilon);
}

}  // namespace gltrain
