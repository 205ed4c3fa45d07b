// Kernels of the softmax cross-entropy at every step of a sequence
// (graph/ops/sequence_loss.hpp): logits N x (T*V), target ids N x T, a
// negative id a masked step. The mean is over the counted steps of the whole
// batch (nats per token), so each pass reads the (sum, count) each row keeps.
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

namespace sequence_loss_detail {
inline void requireShapes(const char* fn, const Tensor& logits, const Tensor& targets, int classes) {
    if (!logits || !targets || classes < 1 || logits.rows() != targets.rows() ||
        int64_t(logits.cols()) != int64_t(targets.cols()) * classes)
        throw ArgumentError(std::string(fn) + ": logits must be N x (T * " + std::to_string(classes) +
                            ") and targets N x T, got logits " + (logits ? logits.shapeString() : "empty") +
                            ", targets " + (targets ? targets.shapeString() : "empty"));
}
// Each step's (max, sum of exp) of its logits: an N x 2T packed temporary, computed once
// per step (one fragment per two steps) rather than by every element that needs it.
inline Tensor& recordStats(PassList& list, const Tensor& logits, const Tensor& targets, int classes) {
    Tensor& stats = list.temp(logits.context(), logits.rows(), 2 * targets.cols(), Layout::Packed);
    list.add(Pass(logits.context(), "loss/sequence_xent_stats"))
        .input("X", logits)
        .output(stats)
        .uniformInt("classes", classes);
    return stats;
}
// (sum, count) of each row's counted steps: an N x 2 packed temporary.
inline Tensor& recordSums(PassList& list, const Tensor& logits, const Tensor& targets, const Tensor& stats,
                          int classes) {
    Tensor& sums = list.temp(logits.context(), logits.rows(), 2, Layout::Packed);
    list.add(Pass(logits.context(), "loss/sequence_xent_sums"))
        .input("X", logits)
        .input("Y", targets)
        .input("STATS", stats)
        .output(sums)
        .uniformInt("classes", classes);
    return sums;
}
inline void recordReduce(PassList& list, const Tensor& sums, int what, Tensor& out) {
    list.add(Pass(sums.context(), "loss/sequence_xent_reduce", {{"WHAT", std::to_string(what)}}))
        .input("S", sums)
        .output(out);
}
}  // namespace sequence_loss_detail

// Each row's mean loss over its counted steps (lossPerRow, N x 1) and the mean
// over every counted step of the batch (meanLoss, 1 x 1); either may be null.
inline void recordSequenceCrossEntropy(PassList& list, const Tensor& logits, const Tensor& targets, int classes,
                                       Tensor* lossPerRow, Tensor* meanLoss) {
    sequence_loss_detail::requireShapes("sequenceCrossEntropy", logits, targets, classes);
    const Tensor& stats = sequence_loss_detail::recordStats(list, logits, targets, classes);
    Tensor& sums = sequence_loss_detail::recordSums(list, logits, targets, stats, classes);
    if (lossPerRow) sequence_loss_detail::recordReduce(list, sums, 0, *lossPerRow);
    if (meanLoss) sequence_loss_detail::recordReduce(list, sums, 1, *meanLoss);
}

// grad (N x (T*V)) = d(meanLoss)/d(logits) * seed[0, 0] (null: 1).
inline void recordSequenceCrossEntropyGrad(PassList& list, const Tensor& logits, const Tensor& targets, int classes,
                                           const Tensor* seed, Tensor& grad) {
    sequence_loss_detail::requireShapes("sequenceCrossEntropyGrad", logits, targets, classes);
    if (!grad || grad.rows() != logits.rows() || grad.cols() != logits.cols())
        throw ArgumentError("sequenceCrossEntropyGrad: grad must be shaped like the logits " + logits.shapeString());
    const Tensor& stats = sequence_loss_detail::recordStats(list, logits, targets, classes);
    Tensor& sums = sequence_loss_detail::recordSums(list, logits, targets, stats, classes);
    Tensor& count = list.temp(logits.context(), 1, 1, Layout::Packed);
    sequence_loss_detail::recordReduce(list, sums, 2, count);
    Pass& p = list.add(Pass(logits.context(), "loss/sequence_xent_grad"))
                  .input("X", logits)
                  .input("Y", targets)
                  .input("STATS", stats)
                  .input("COUNT", count)
                  .output(grad)
                  .uniformInt("classes", classes);
    if (seed) p.input("SCALE", *seed);
}

}  // namespace gltrain
