// Batch normalization over channels of N x (P*C) rows (P pixels of C
// channels; P = 1 after a Dense layer). Reference: reference/batchnorm.hpp.
//
//   batchStats:        mean, var (biased) per channel        forward/bn_stats (mean, then var), reduce/sum_slices
//   batchNormApply:    act(gamma (x - mean) rstd + beta)     forward/bn_apply
//   batchNormParamGrads: dgamma, dbeta                        backward/bn_params (2 targets), reduce/sum_slices
//   batchNormInputGrad: dX of training-mode normalization    backward/bn_input
//   movingAverage:     momentum avg + (1 - momentum) scale stat  update/moving_average
//
// Every kernel takes a vectorised path when C is a multiple of 4 (a texel is
// 4 channels of one pixel) and a per-lane path otherwise.
#pragma once
#include <cmath>
#include <string>

#include "gltrain/activation.hpp"
#include "gltrain/ops/conv.hpp"
#include "gltrain/ping_pong.hpp"

namespace gltrain {

namespace detail {
inline void requireChannels(const char* op, const Tensor& x, int channels) {
    if (!x) throw ArgumentError(std::string(op) + ": x is an empty tensor");
    if (channels <= 0 || x.cols() % channels != 0)
        throw ArgumentError(std::string(op) + ": x is " + x.shapeString() + ", not a whole number of pixels of " +
                            std::to_string(channels) + " channels");
}
inline Defines channelDefines(int channels, std::initializer_list<const Tensor*> ts, Defines more = {}) {
    more.push_back({"VEC_C", flag(channels % 4 == 0 && allPacked(ts))});
    return more;
}
}  // namespace detail

// mean, var (1 x C): two passes of forward/bn_stats (the mean, then the
// variance around it), each over slices of rows added by reduce/sum_slices.
inline void recordBatchStats(PassList& list, const Tensor& x, int channels, Tensor& mean, Tensor& var,
                             int tapsPerSlice = 0) {
    detail::requireChannels("batchStats", x, channels);
    detail::requireShape("batchStats", "mean", mean, 1, channels);
    detail::requireShape("batchStats", "var", var, 1, channels);
    const detail::Slicing sl = detail::sliceRows("batchStats", x, channels, tapsPerSlice, mean);
    for (Tensor* out : {&mean, &var}) {
        Tensor& partial = detail::slicesOf(list, sl, *out, out->layout());
        Pass& p =
            list.add(Pass(x.context(), "forward/bn_stats", detail::channelDefines(channels, {&x, &mean, &partial})));
        p.input("X", x).output(partial).uniformInt("channels", channels).uniformInt("perSlice", sl.samples);
        if (out == &var) p.input("MEAN", mean);
        detail::sumSlices(list, partial, *out);
    }
}

inline Pass& recordBatchNormApply(PassList& list, const Tensor& x, const Tensor& mean, const Tensor& var,
                                  const Tensor& gamma, const Tensor& beta, float eps, Activation act, Tensor& y,
                                  float alpha = 0.01f) {
    const int c = gamma ? gamma.cols() : 0;
    detail::requireChannels("batchNorm", x, c);
    for (auto* t : {&mean, &var, &beta}) detail::requireShape("batchNorm", "mean, var, beta", *t, 1, c);
    detail::requireShape("batchNorm", "y", y, x.rows(), x.cols());
    if (!(eps > 0.0f)) throw ArgumentError("batchNorm: eps must be positive");
    Pass& p = list.add(
        Pass(x.context(), "forward/bn_apply",
             detail::channelDefines(c, {&x, &mean, &var, &gamma, &beta, &y}, {{"ACT", std::to_string(int(act))}})));
    p.input("X", x).input("MEAN", mean).input("VAR", var).input("GAMMA", gamma).input("BETA", beta).output(y);
    if (activationUsesAlpha(act)) p.uniform("act_alpha", alpha);
    return p.uniformInt("channels", c).uniform("eps", eps);
}

// dgamma, dbeta (1 x C): backward/bn_params over slices of rows, each added by
// reduce/sum_slices.
inline void recordBatchNormParamGrads(PassList& list, const Tensor& dy, const Tensor& x, const Tensor& mean,
                                      const Tensor& var, float eps, Tensor& dgamma, Tensor& dbeta,
                                      int tapsPerSlice = 0) {
    const int c = mean ? mean.cols() : 0;
    detail::requireChannels("batchNormParamGrads", x, c);
    detail::requireShape("batchNormParamGrads", "dY", dy, x.rows(), x.cols());
    for (auto* t : {&var, static_cast<const Tensor*>(&dgamma), static_cast<const Tensor*>(&dbeta)})
        detail::requireShape("batchNormParamGrads", "var, dgamma, dbeta", *t, 1, c);
    const detail::Slicing sl = detail::sliceRows("batchNormParamGrads", x, c, tapsPerSlice, dgamma);
    Tensor& pg = detail::slicesOf(list, sl, dgamma, dgamma.layout());
    Tensor& pb = detail::slicesOf(list, sl, dbeta, dbeta.layout());
    Pass& p =
        list.add(Pass(x.context(), "backward/bn_params", detail::channelDefines(c, {&dy, &x, &mean, &var, &pg, &pb})));
    p.input("DY", dy).input("X", x).input("MEAN", mean).input("VAR", var);
    p.output("DGAMMA", pg)
        .output("DBETA", pb)
        .uniformInt("channels", c)
        .uniform("eps", eps)
        .uniformInt("perSlice", sl.samples);
    detail::sumSlices(list, pg, dgamma);
    detail::sumSlices(list, pb, dbeta);
}

inline Pass& recordBatchNormInputGrad(PassList& list, const Tensor& dy, const Tensor& x, const Tensor& mean,
                                      const Tensor& var, const Tensor& gamma, const Tensor& dgamma, const Tensor& dbeta,
                                      float eps, Tensor& dx) {
    const int c = gamma ? gamma.cols() : 0;
    detail::requireChannels("batchNormInputGrad", x, c);
    detail::requireShape("batchNormInputGrad", "dY", dy, x.rows(), x.cols());
    detail::requireShape("batchNormInputGrad", "dX", dx, x.rows(), x.cols());
    for (auto* t : {&mean, &var, &dgamma, &dbeta})
        detail::requireShape("batchNormInputGrad", "mean, var, dgamma, dbeta", *t, 1, c);
    Pass& p = list.add(Pass(x.context(), "backward/bn_input",
                            detail::channelDefines(c, {&dy, &x, &mean, &var, &gamma, &dgamma, &dbeta, &dx})));
    p.input("DY", dy).input("X", x).input("MEAN", mean).input("VAR", var).input("GAMMA", gamma);
    p.input("DGAMMA", dgamma).input("DBETA", dbeta).output(dx);
    return p.uniformInt("channels", c).uniform("eps", eps);
}

// A moving average (1 x C) moved toward this step's statistic: reads avg.front(),
// writes avg.back() (the caller swaps). Recorded after the step's loss, with
// `lossGuard` given (the 1x1 loss, or loss scaling's step guard), a NaN or Inf
// there leaves the average as it was, as recordOptimizerUpdate's guard does.
inline Pass& recordMovingAverage(PassList& list, PingPong& avg, const Tensor& stat, float momentum, float scale,
                                 const Tensor* lossGuard = nullptr) {
    detail::requireShape("movingAverage", "the statistic", stat, avg.front().rows(), avg.front().cols());
    if (!(momentum >= 0.0f && momentum <= 1.0f) || !std::isfinite(scale))
        throw ArgumentError("movingAverage: momentum must be in [0, 1] and the scale finite, got " +
                            std::to_string(momentum) + " and " + std::to_string(scale));
    detail::requireSameContext("movingAverage", "the average", avg.front(), "the statistic", stat);
    Pass& p = list.add(Pass(stat.context(), "update/moving_average"));
    p.input("A", avg.front()).input("X", stat).output(avg.back()).uniform("momentum", momentum).uniform("scale", scale);
    if (lossGuard) {
        detail::requireSameContext("movingAverage", "the average", avg.front(), "the loss guard", *lossGuard);
        p.input("LOSS", *lossGuard);
    }
    return p;
}

}  // namespace gltrain
