// Softmax and the losses, with the gradients the backward pass consumes
// (include/gltrain/reference/loss.hpp is the oracle; conventions match it):
//
//   softmax                  P = softmax(X) row-wise, max-subtracted
//   softmaxCrossEntropy      labels N x 1 (class indices stored as floats, 0 .. C-1):
//                            grad = (softmax(X) - onehot) / N, lossPerRow[r] = lse_r - X[r, y_r]
//   softmaxCrossEntropyOneHot targets N x C (rows summing to 1): grad = (softmax(X) - T) / N,
//                            lossPerRow[r] = sum_c T[r, c] (lse_r - X[r, c])
//   mse                      grad = 2 (P - T) / count, loss = (P - T)^2 per element or its row mean
//   binaryCrossEntropyWithLogits
//                            grad = (sigmoid(X) - T) / count,
//                            loss = max(x, 0) - x t + log1p(exp(-|x|)) per element or its row mean
//
// The loss is the mean of the tensor `loss`; pass `meanLoss` (1 x 1) to have
// it reduced on the GPU (ops/reduce.hpp's meanAll, a tree of passes; the
// per-row/per-element losses then go to a temporary if `loss` is null). MSE and
// BCE with `loss` null and at most 2 kReduceBlockFactor texels of predictions
// write the mean in one pass instead.
// `count` is N x C for MSE and BCE, so the gradient is the gradient of that
// mean whatever shape the loss tensor has.
//
// Passes: the softmax cross-entropies record (1) a row-statistics pass into a
// temporary N x 2 (row max m, sum of exp(x - m)), (2) the gradient pass, which
// reads X, the statistics and the labels and writes (softmax - onehot) / N
// directly (the probabilities are never stored), and (3) when a loss tensor
// is given, the per-row loss pass. The Pass API's multiple render targets
// need outputs of one shape, and the gradient (N x C) and the loss (N x 1)
// differ, hence separate passes; each reads the row once (O(N C) work in
// all), where one fragment per output texel looping over its whole row
// would cost O(N C^2 / 4).
//
// Labels out of range: the GPU cannot throw. A label that is not an integer in
// [0, C) (or is NaN) gives a NaN loss and a NaN gradient row — loud, not
// silent. Upload labels with uploadLabels(), which checks them on the host and
// throws ArgumentError, as ref::softmaxCrossEntropy does.
// Logits: finite for any finite magnitude (±1e4 and beyond); a NaN or +inf
// in a row makes that row's loss and gradient NaN, other rows are unaffected.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gltrain/ops/matmul.hpp"
#include "gltrain/ops/reduce.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain {

namespace loss_detail {
inline std::string shapeOf(const Tensor& t) { return t ? t.shapeString() : std::string("empty"); }
inline void requireShape(const char* op, const char* what, const Tensor& t, int rows, int cols, const Tensor& ref,
                         const char* refName) {
    if (!t || t.rows() != rows || t.cols() != cols)
        throw ArgumentError(std::string(op) + ": " + what + " is " + shapeOf(t) + ", expected " + std::to_string(rows) +
                            "x" + std::to_string(cols) + " for " + refName + " " + ref.shapeString());
    detail::requireSameContext(op, what, t, refName, ref);
}
inline void requireLogits(const char* op, const Tensor& x) {
    if (!x) throw ArgumentError(std::string(op) + ": logits is an empty tensor");
}
// An axis of `count` values `stride` apart must tile x's rows.
inline void requireAxisGroups(const char* op, const Tensor& x, int count, int stride) {
    if (count < 1 || stride < 1 || x.cols() % (int64_t(count) * stride) != 0)
        throw ArgumentError(std::string(op) + ": an axis of " + std::to_string(count) + " values " +
                            std::to_string(stride) + " apart does not tile rows of " + std::to_string(x.cols()));
}
// Row max and sum of exp into a temporary N x 2 (packed) owned by the list.
inline Tensor& recordSoftmaxStats(PassList& list, const Tensor& x) {
    Tensor& stats = list.temp(x.context(), x.rows(), 2, Layout::Packed);
    list.add(Pass(x.context(), "forward/softmax_stats")).input("X", x).output(stats);
    return stats;
}
inline void requireMean(const char* op, const Tensor* meanLoss, const Tensor& ref, const char* refName) {
    if (meanLoss) requireShape(op, "meanLoss", *meanLoss, 1, 1, ref, refName);
}
inline void requireScale(const char* op, const Tensor* gradScale, const Tensor& ref) {
    if (!gradScale) return;
    if (!*gradScale || gradScale->rows() != 1)
        throw ArgumentError(std::string(op) + ": gradScale is " + shapeOf(*gradScale) + ", expected 1 x n");
    detail::requireSameContext(op, "gradScale", *gradScale, "the prediction", ref);
}
inline void recordSoftmaxXent(PassList& list, const char* op, bool onehot, const Tensor& logits, const Tensor& y,
                              Tensor* grad, Tensor* lossPerRow, Tensor* meanLoss, const Tensor* gradScale = nullptr) {
    requireLogits(op, logits);
    const int n = logits.rows(), c = logits.cols();
    requireShape(op, onehot ? "targets" : "labels", y, n, onehot ? c : 1, logits, "logits");
    if (!grad && !lossPerRow && !meanLoss)
        throw ArgumentError(std::string(op) + ": nothing to compute (no grad, lossPerRow or meanLoss)");
    if (grad) requireShape(op, "grad", *grad, n, c, logits, "logits");
    if (lossPerRow) requireShape(op, "lossPerRow", *lossPerRow, n, 1, logits, "logits");
    requireMean(op, meanLoss, logits, "logits");
    requireScale(op, gradScale, logits);
    Context& ctx = logits.context();
    if (meanLoss && !lossPerRow) lossPerRow = &list.temp(ctx, n, 1, Layout::Unpacked);
    const Defines d = {{"ONEHOT", onehot ? "1" : "0"}};
    Tensor& stats = recordSoftmaxStats(list, logits);
    if (grad) {
        Pass& g = list.add(Pass(ctx, "loss/softmax_xent_grad", d))
                      .input("X", logits)
                      .input("STATS", stats)
                      .input("Y", y)
                      .output(*grad)
                      .uniform("invN", 1.0f / float(n));
        if (gradScale) g.input("SCALE", *gradScale);
    }
    if (lossPerRow)
        list.add(Pass(ctx, "loss/softmax_xent_loss", d))
            .input("X", logits)
            .input("STATS", stats)
            .input("Y", y)
            .output(*lossPerRow);
    if (meanLoss) recordMeanAll(list, *lossPerRow, *meanLoss);
}
// PW_LOSS: 0 MSE, 1 BCE with logits.
inline void recordPointwiseLoss(PassList& list, const char* op, int loss, const Tensor& pred, const Tensor& target,
                                Tensor* grad, Tensor* lossOut, Tensor* meanLoss, const Tensor* gradScale = nullptr) {
    if (!pred) throw ArgumentError(std::string(op) + ": prediction is an empty tensor");
    const int n = pred.rows(), c = pred.cols();
    requireShape(op, "target", target, n, c, pred, "prediction");
    requireMean(op, meanLoss, pred, "prediction");
    requireScale(op, gradScale, pred);
    Context& ctx = pred.context();
    // Only the mean wanted, and few enough values for one fragment (the reduce
    // tree's budget for its last level): one pass writes it.
    const bool meanOnly =
        meanLoss && !lossOut && int64_t(n) * detail::texelsPerRow(c, pred.layout()) <= 2 * kReduceBlockFactor;
    if (meanLoss && !lossOut && !meanOnly) lossOut = &list.temp(ctx, n, 1, Layout::Unpacked);
    if (grad) {
        requireShape(op, "grad", *grad, n, c, pred, "prediction");
        Pass& g = list.add(Pass(ctx, "loss/pointwise_grad", {{"PW_LOSS", std::to_string(loss)}}))
                      .input("P", pred)
                      .input("T", target)
                      .output(*grad)
                      .uniform("invCount", 1.0f / float(size_t(n) * size_t(c)));  // as the reference: 1 / float(count)
        if (gradScale) g.input("SCALE", *gradScale);
    }
    if (lossOut) {
        const bool rows = lossOut->cols() == 1 && c != 1;
        if (!*lossOut || lossOut->rows() != n || (lossOut->cols() != c && lossOut->cols() != 1))
            throw ArgumentError(std::string(op) + ": loss is " + shapeOf(*lossOut) + ", expected " + std::to_string(n) +
                                "x" + std::to_string(c) + " (per element) or " + std::to_string(n) +
                                "x1 (per row) for prediction " + pred.shapeString());
        Pass& p =
            list.add(Pass(ctx, "loss/pointwise_loss", {{"PW_LOSS", std::to_string(loss)}, {"ROWS", rows ? "1" : "0"}}));
        p.input("P", pred).input("T", target).output(*lossOut);
        if (rows) p.uniform("invCols", 1.0f / float(c));
    }
    if (meanOnly) {
        list.add(Pass(ctx, "loss/pointwise_loss", {{"PW_LOSS", std::to_string(loss)}, {"ROWS", "2"}}))
            .input("P", pred)
            .input("T", target)
            .output(*meanLoss)
            .uniform("invCount", 1.0f / float(size_t(n) * size_t(c)));
    } else if (meanLoss) {
        recordMeanAll(list, *lossOut, *meanLoss);
    }
}
}  // namespace loss_detail

// Checks class labels on the host (each in [0, numClasses), ArgumentError
// naming the first bad one otherwise) and uploads them into `labels` (N x 1)
// as floats, the form the cross-entropy kernels read.
inline void uploadLabels(Tensor& labels, const std::vector<int>& values, int numClasses) {
    if (!labels || labels.cols() != 1 || size_t(labels.rows()) != values.size())
        throw ArgumentError("uploadLabels: labels tensor is " + loss_detail::shapeOf(labels) + ", expected " +
                            std::to_string(values.size()) + "x1 for " + std::to_string(values.size()) + " labels");
    std::vector<float> f(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        if (values[i] < 0 || values[i] >= numClasses)
            throw ArgumentError("uploadLabels: label " + std::to_string(values[i]) + " at row " + std::to_string(i) +
                                " is outside [0, " + std::to_string(numClasses) + ")");
        f[i] = float(values[i]);  // exact: class counts are far below 2^24
    }
    labels.upload(f);
}

// out = softmax(x) row-wise (any layouts; out may not be x).
inline void recordSoftmax(PassList& list, const Tensor& x, Tensor& out) {
    loss_detail::requireLogits("softmax", x);
    loss_detail::requireShape("softmax", "out", out, x.rows(), x.cols(), x, "x");
    Tensor& stats = loss_detail::recordSoftmaxStats(list, x);
    list.add(Pass(x.context(), "forward/softmax")).input("X", x).input("STATS", stats).output(out);
}

// Softmax over one axis of each row of x: over the `count` values `stride`
// apart that share their other coordinates (the channels of NHWC rows: stride 1).
inline void recordSoftmaxAxis(PassList& list, const Tensor& x, int count, int stride, Tensor& out) {
    loss_detail::requireLogits("softmaxAxis", x);
    loss_detail::requireShape("softmaxAxis", "out", out, x.rows(), x.cols(), x, "x");
    loss_detail::requireAxisGroups("softmaxAxis", x, count, stride);
    list.add(Pass(x.context(), "forward/softmax_axis"))
        .input("X", x)
        .output(out)
        .uniformInt("count", count)
        .uniformInt("stride", stride);
}
// dx of recordSoftmaxAxis from its output y: dx = y (dy - sum over the axis of dy y).
inline void recordSoftmaxAxisGrad(PassList& list, const Tensor& y, const Tensor& dy, int count, int stride,
                                  Tensor& dx) {
    loss_detail::requireShape("softmaxAxisGrad", "dy", dy, y.rows(), y.cols(), y, "y");
    loss_detail::requireShape("softmaxAxisGrad", "dx", dx, y.rows(), y.cols(), y, "y");
    loss_detail::requireAxisGroups("softmaxAxisGrad", y, count, stride);
    list.add(Pass(y.context(), "backward/softmax_axis"))
        .input("Y", y)
        .input("DY", dy)
        .output(dx)
        .uniformInt("count", count)
        .uniformInt("stride", stride);
}

// Softmax cross-entropy with class labels (N x 1, floats holding 0 .. C-1):
// grad (N x C) = (softmax(logits) - onehot) / N; lossPerRow (N x 1), if not null,
// = logsumexp(logits[r]) - logits[r, label[r]]; meanLoss (1 x 1), if not null, = mean of those.
// gradScale (optional, 1 x n): the gradient is multiplied by gradScale[0, 0] (dynamic loss scaling).
// grad may be null (an evaluation: the loss alone), then lossPerRow or meanLoss must not be.
inline void recordSoftmaxCrossEntropy(PassList& list, const Tensor& logits, const Tensor& labels, Tensor* grad,
                                      Tensor* lossPerRow = nullptr, Tensor* meanLoss = nullptr,
                                      const Tensor* gradScale = nullptr) {
    loss_detail::recordSoftmaxXent(list, "softmaxCrossEntropy", false, logits, labels, grad, lossPerRow, meanLoss,
                                   gradScale);
}
inline void recordSoftmaxCrossEntropy(PassList& list, const Tensor& logits, const Tensor& labels, Tensor& grad,
                                      Tensor* lossPerRow = nullptr, Tensor* meanLoss = nullptr,
                                      const Tensor* gradScale = nullptr) {
    recordSoftmaxCrossEntropy(list, logits, labels, &grad, lossPerRow, meanLoss, gradScale);
}
// Softmax cross-entropy with target distributions (N x C, one-hot or smoothed):
// grad = (softmax(logits) - targets) / N; lossPerRow[r] = sum_c t (lse - x), zero-target terms skipped.
inline void recordSoftmaxCrossEntropyOneHot(PassList& list, const Tensor& logits, const Tensor& targets, Tensor& grad,
                                            Tensor* lossPerRow = nullptr, Tensor* meanLoss = nullptr) {
    loss_detail::recordSoftmaxXent(list, "softmaxCrossEntropyOneHot", true, logits, targets, &grad, lossPerRow,
                                   meanLoss);
}
// Mean squared error: grad (if not null) = 2 (pred - target) / (N C); loss (if not null)
// N x C per element (pred - target)^2, or N x 1 per row (the row's mean). mean(loss) = MSE,
// written to meanLoss (1 x 1) if not null.
inline void recordMse(PassList& list, const Tensor& pred, const Tensor& target, Tensor* grad, Tensor* loss = nullptr,
                      Tensor* meanLoss = nullptr, const Tensor* gradScale = nullptr) {
    loss_detail::recordPointwiseLoss(list, "mse", 0, pred, target, grad, loss, meanLoss, gradScale);
}
// Binary cross-entropy on logits, targets in [0, 1]: grad = (sigmoid(x) - t) / (N C);
// loss N x C or N x 1 (row mean) of max(x, 0) - x t + log1p(exp(-|x|)); meanLoss (1 x 1) its mean.
inline void recordBinaryCrossEntropyWithLogits(PassList& list, const Tensor& logits, const Tensor& targets,
                                               Tensor* grad, Tensor* loss = nullptr, Tensor* meanLoss = nullptr,
                                               const Tensor* gradScale = nullptr) {
    loss_detail::recordPointwiseLoss(list, "binaryCrossEntropyWithLogits", 1, logits, targets, grad, loss, meanLoss,
                                     gradScale);
}

// The point-wise losses a dense layer's forward pass can take the gradient of itself.
enum class PointwiseLoss { MeanSquaredError = 0, BinaryCrossEntropyWithLogits = 1 };  // = PW_LOSS of the kernels

// The last dense layer of a model trained on a point-wise loss, linear, fused
// with the loss's gradient: z = x·w + b (the logits: the loss value and
// predictions read them) and grad = what mse / binaryCrossEntropyWithLogits
// would write from z (times gradScale[0, 0] when given), in one pass per K
// slice (forward/dense_train with T) instead of a dense pass and a gradient pass.
inline void recordDenseLossGrad(PassList& l, const Tensor& x, const Tensor& w, const Tensor& b, PointwiseLoss loss,
                                const Tensor& target, Tensor& z, Tensor& grad, const Tensor* gradScale = nullptr) {
    const char* op = "denseLossGrad";
    MatmulOptions o;
    o.bias = &b;
    detail::validateMatmul(x, w, z, o);
    const int n = z.rows(), c = z.cols();
    loss_detail::requireShape(op, "target", target, n, c, z, "z");
    loss_detail::requireShape(op, "grad", grad, n, c, z, "z");
    if (grad.layout() != z.layout())
        throw ArgumentError(std::string(op) + ": grad is " + layoutName(grad.layout()) + " but z is " +
                            layoutName(z.layout()) + " (one pass writes both: they share a layout)");
    loss_detail::requireScale(op, gradScale, z);
    detail::recordMatmulSlices(l, x, w, z, o, "forward/dense_train",
                               [&](Pass& p) {
                                   p.input("BIAS", b).input("T", target).output("Z", z).output("Y", grad);
                                   p.uniform("invCount",
                                             1.0f / float(size_t(n) * size_t(c)));  // as loss/pointwise_grad's
                                   if (gradScale) p.input("SCALE", *gradScale);
                               },
                               "forward/matmul", {{"PW_LOSS", std::to_string(int(loss))}});
}

GLTRAIN_IMMEDIATE(softmax, recordSoftmax, (const Tensor& x, Tensor& out), (l, x, out))
GLTRAIN_IMMEDIATE(softmaxCrossEntropy, recordSoftmaxCrossEntropy,
                  (const Tensor& logits, const Tensor& labels, Tensor& grad, Tensor* lossPerRow = nullptr,
                   Tensor* meanLoss = nullptr),
                  (l, logits, labels, grad, lossPerRow, meanLoss))
GLTRAIN_IMMEDIATE(softmaxCrossEntropyOneHot, recordSoftmaxCrossEntropyOneHot,
                  (const Tensor& logits, const Tensor& targets, Tensor& grad, Tensor* lossPerRow = nullptr,
                   Tensor* meanLoss = nullptr),
                  (l, logits, targets, grad, lossPerRow, meanLoss))
GLTRAIN_IMMEDIATE(mse, recordMse,
                  (const Tensor& pred, const Tensor& target, Tensor* grad, Tensor* loss = nullptr,
                   Tensor* meanLoss = nullptr),
                  (l, pred, target, grad, loss, meanLoss))
GLTRAIN_IMMEDIATE(binaryCrossEntropyWithLogits, recordBinaryCrossEntropyWithLogits,
                  (const Tensor& logits, const Tensor& targets, Tensor* grad, Tensor* loss = nullptr,
                   Tensor* meanLoss = nullptr),
                  (l, logits, targets, grad, loss, meanLoss))

}  // namespace gltrain
