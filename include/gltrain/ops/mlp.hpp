// A tiny dense network's training step in 1 + P passes: the loss in one
// fragment (loss/mlp_loss; with softmax cross-entropy also the running count of
// correct predictions, loss/mlp_correct), then one update pass per parameter whose
// fragments run the network forward and backward over the batch themselves
// (lib/mlp: an update kernel with G unbound) instead of reading activations
// and gradients from earlier passes. No pass reads another's output within
// the step; the general step needs a forward pass per layer, the backward
// matmuls and the updates after them (W4's 2-8-1 MLP: 10 passes, here 5).
//
// Worth it only while the recomputed arithmetic stays below the passes it
// saves (about 0.05-0.1 ms each on a software renderer): Sequential uses it for
// models whose whole recomputed step (smallMlpStepMacs) is at most
// CompileOptions::smallDenseStepMacs (measured: bench_kernels --small-dense).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gltrain/activation.hpp"
#include "gltrain/ops/loss.hpp"
#include "gltrain/ops/optimizer.hpp"

namespace gltrain {

// A small stack of dense layers on one batch, as lib/mlp runs it.
struct SmallMlp {
    struct Layer {
        const Tensor* kernel = nullptr;  // N(l) x N(l+1)
        const Tensor* bias = nullptr;    // 1 x N(l+1)
        Activation act = Activation::Linear;
        float alpha = 0.0f;  // the LeakyReLU slope or ELU alpha
    };
    const Tensor* x = nullptr;  // B x N0, the batch (a row window is fine)
    const Tensor* t = nullptr;  // B x NL, the targets (B x 1 class labels with softmaxLabels)
    std::vector<Layer> layers;
    PointwiseLoss loss = PointwiseLoss::MeanSquaredError;  // of the last layer's output
    // Softmax cross-entropy of the last layer's output against class labels t
    // (B x 1, 0 .. NL-1, as floats) instead of `loss`.
    bool softmaxLabels = false;
};

constexpr int kSmallMlpMaxLayers = 4;             // lib/mlp's W0 .. W3
constexpr int kSmallMlpMaxValues = 128;           // N0 + ... + NL: three arrays of them per fragment
constexpr int kSmallMlpMaxParams = 512;           // the weights and biases a fragment keeps
constexpr int64_t kSmallMlpFragmentMacs = 16384;  // one fragment's work (browser GPU watchdogs)

namespace detail {
inline int smallMlpWidth(const SmallMlp& m, size_t l) { return l == 0 ? m.x->cols() : m.layers[l - 1].kernel->cols(); }
// Multiply-adds one fragment of an update does: the batch forward and back.
inline int64_t smallMlpFragmentMacs(const SmallMlp& m) {
    int64_t macs = 0;
    for (auto& l : m.layers) macs += int64_t(l.kernel->rows()) * l.kernel->cols();
    return 2 * macs * m.x->rows();
}
inline int64_t texels(const Tensor& t) { return int64_t(t.rows()) * t.geometry().texelsPerRow; }
}  // namespace detail

// Why `m` cannot run as lib/mlp ("" when it can): missing or mis-shaped
// tensors, other contexts, more than kSmallMlpMaxLayers layers or the size limits
// (values a row, weights, a fragment's multiply-adds).
inline std::string smallMlpProblem(const SmallMlp& m) {
    if (!m.x || !*m.x) return "the batch x is missing or empty";
    if (!m.t || !*m.t) return "the targets t are missing or empty";
    if (m.layers.empty() || m.layers.size() > size_t(kSmallMlpMaxLayers))
        return std::to_string(m.layers.size()) + " layers (1 to " + std::to_string(kSmallMlpMaxLayers) +
               " run in one fragment)";
    int values = m.x->cols(), params = 0;
    for (size_t l = 0; l < m.layers.size(); ++l) {
        auto& L = m.layers[l];
        const std::string name = "layer " + std::to_string(l);
        if (!L.kernel || !*L.kernel || !L.bias || !*L.bias) return name + "'s kernel or bias is missing or empty";
        if (L.kernel->rows() != detail::smallMlpWidth(m, l))
            return name + "'s kernel is " + L.kernel->shapeString() + " but its input has " +
                   std::to_string(detail::smallMlpWidth(m, l)) + " columns";
        if (L.bias->rows() != 1 || L.bias->cols() != L.kernel->cols())
            return name + "'s bias is " + L.bias->shapeString() + ", expected 1x" + std::to_string(L.kernel->cols());
        if (!L.kernel->sameContext(*m.x) || !L.bias->sameContext(*m.x)) return name + " belongs to another context";
        if (!isActivation(L.act) || (activationUsesAlpha(L.act) && !std::isfinite(L.alpha)))
            return name + " has an unknown activation or a non-finite alpha";
        values += L.kernel->cols();
        params += (L.kernel->rows() + 1) * L.kernel->cols();
    }
    const int outputs = detail::smallMlpWidth(m, m.layers.size()), targetCols = m.softmaxLabels ? 1 : outputs;
    if (m.t->rows() != m.x->rows() || m.t->cols() != targetCols)
        return "the targets are " + m.t->shapeString() + ", expected " + std::to_string(m.x->rows()) + "x" +
               std::to_string(targetCols) + (m.softmaxLabels ? " (class labels)" : "");
    if (m.softmaxLabels && outputs < 2)
        return "softmax cross-entropy over " + std::to_string(outputs) + " output (needs at least 2 classes)";
    if (!m.t->sameContext(*m.x)) return "the targets belong to another context";
    if (values > kSmallMlpMaxValues)
        return std::to_string(values) + " values per row (at most " + std::to_string(kSmallMlpMaxValues) + ")";
    if (params > kSmallMlpMaxParams)
        return std::to_string(params) + " weights and biases (at most " + std::to_string(kSmallMlpMaxParams) + ")";
    if (detail::smallMlpFragmentMacs(m) > kSmallMlpFragmentMacs)
        return std::to_string(detail::smallMlpFragmentMacs(m)) + " multiply-adds per fragment (at most " +
               std::to_string(kSmallMlpFragmentMacs) + ")";
    return "";
}

// The multiply-adds of a whole recomputed step: every update fragment's.
inline int64_t smallMlpStepMacs(const SmallMlp& m) {
    int64_t fragments = 0;
    for (auto& l : m.layers) fragments += detail::texels(*l.kernel) + detail::texels(*l.bias);
    return fragments * detail::smallMlpFragmentMacs(m);
}

namespace detail {
inline void requireSmallMlp(const char* op, const SmallMlp& m) {
    std::string why = smallMlpProblem(m);
    if (!why.empty()) throw ArgumentError(std::string(op) + ": " + why);
}
// lib/mlp's defines for m: the statement lists written out element by element
// (constant indices only). paramLayer >= 0 adds MLP_BACKWARD and the offsets of
// that layer's kernel (or bias) for mlpGrad().
inline Defines smallMlpDefines(const SmallMlp& m, int paramLayer = -1, bool bias = false) {
    const size_t L = m.layers.size();
    std::vector<int> width{m.x->cols()}, value{0}, param{0};  // widths; offsets in mlpA/Z/D and mlpP
    for (auto& l : m.layers) {
        width.push_back(l.kernel->cols());
        value.push_back(value.back() + width[width.size() - 2]);
        param.push_back(param.back() + (l.kernel->rows() + 1) * l.kernel->cols());
    }
    auto n = [](int i) { return std::to_string(i); };
    // Layer l's kernel element (i, j) in mlpP; i = width[l] is its bias.
    auto w = [&](size_t l, int i, int j) { return "mlpP[" + n(param[l] + i * width[l + 1] + j) + "]"; };
    auto act = [&](const char* f, size_t l, const std::string& z) {
        return std::string(f) + "(" + n(int(m.layers[l].act)) + ", vec4(" + z + "), mlp_alpha[" + n(int(l)) + "]).x";
    };
    std::string load, forward, loss, backward;
    for (size_t l = 0; l < L; ++l)
        for (int i = 0; i <= width[l]; ++i)
            for (int j = 0; j < width[l + 1]; ++j)
                load += w(l, i, j) + " = " +
                        (i < width[l] ? "W" + n(int(l)) + "_at(" + n(i) + ", " + n(j) + ")"
                                      : "B" + n(int(l)) + "_at(0, " + n(j) + ")") +
                        "; ";
    for (int i = 0; i < width[0]; ++i) forward += "mlpA[" + n(i) + "] = X_at(r, " + n(i) + "); ";
    for (size_t l = 0; l < L; ++l)
        for (int j = 0; j < width[l + 1]; ++j) {
            const std::string k = n(value[l + 1] + j);
            forward += "mlpZ[" + k + "] = " + w(l, width[l], j);
            for (int i = 0; i < width[l]; ++i) forward += " + mlpA[" + n(value[l] + i) + "] * " + w(l, i, j);
            forward += "; mlpA[" + k + "] = " + act("act_f_kind", l, "mlpZ[" + k + "]") + "; ";
        }
    const auto out = [&](int j) { return "mlpA[" + n(value[L] + j) + "]"; };
    // Softmax cross-entropy: the output's max and sum of exponentials, in a block
    // that MLP_ROW_LOSS and MLP_BACKWARD open (lbl: the row's class label); and
    // whether the prediction is right: argmax (ties to the lowest index, a NaN
    // never wins, as ref::argmaxRows) equals the label.
    std::string softmax, correct;
    if (m.softmaxLabels) {
        softmax = "float lbl = T_at(r, 0); float mx = " + out(0) + "; ";
        for (int j = 1; j < width[L]; ++j) softmax += "mx = max(mx, " + out(j) + "); ";
        softmax += "float se = 0.0";
        for (int j = 0; j < width[L]; ++j) softmax += " + exp(" + out(j) + " - mx)";
        softmax += "; ";
        loss = "{ " + softmax + "sum += log(se) + mx";  // loss_r = logsumexp(a) - a[label]
        for (int j = 0; j < width[L]; ++j) loss += " - (lbl == " + n(j) + ".0 ? " + out(j) + " : 0.0)";
        loss += "; } ";
        correct = "{ float best = uintBitsToFloat(0xff800000u), idx = 0.0; ";
        for (int j = 0; j < width[L]; ++j)
            correct += "if (" + out(j) + " > best) { best = " + out(j) + "; idx = " + n(j) + ".0; } ";
        correct += "right += idx == T_at(r, 0) ? 1.0 : 0.0; } ";
    } else {
        for (int j = 0; j < width[L]; ++j)
            loss += "sum += pw_loss(vec4(" + out(j) + "), vec4(T_at(r, " + n(j) + "))).x; ";
    }
    Defines d = {{"MLP_LAYERS", n(int(L))},   {"MLP_SIZE", n(value[L] + width[L])},
                 {"MLP_PARAMS", n(param[L])}, {"MLP_BATCH", n(m.x->rows())},
                 {"MLP_LOAD", load},          {"MLP_FORWARD", forward},
                 {"MLP_ROW_LOSS", loss},      {"PW_LOSS", n(int(m.loss))}};
    if (m.softmaxLabels) d.push_back({"MLP_ROW_CORRECT", correct});
    if (paramLayer < 0) return d;
    if (m.softmaxLabels) backward += "{ " + softmax;  // d = (softmax(a) - onehot(label)) / B
    for (int j = 0; j < width[L]; ++j) {
        const std::string k = n(value[L] + j);
        const std::string grad =
            m.softmaxLabels ? "(exp(" + out(j) + " - mx) / se - (lbl == " + n(j) + ".0 ? 1.0 : 0.0)) * invCount"
                            : "pw_grad(vec4(" + out(j) + "), vec4(T_at(r, " + n(j) + ")), invCount).x";
        backward += "mlpD[" + k + "] = " + grad + " * " + act("act_df_kind", L - 1, "mlpZ[" + k + "]") + "; ";
    }
    if (m.softmaxLabels) backward += "} ";
    for (size_t l = L - 1; l > size_t(paramLayer); --l)  // d at layer l's output -> its input
        for (int i = 0; i < width[l]; ++i) {
            const std::string k = n(value[l] + i);
            backward += "mlpD[" + k + "] = (0.0";
            for (int j = 0; j < width[l + 1]; ++j) backward += " + mlpD[" + n(value[l + 1] + j) + "] * " + w(l, i, j);
            backward += ") * " + act("act_df_kind", l - 1, "mlpZ[" + k + "]") + "; ";
        }
    const size_t pl = size_t(paramLayer);
    d.push_back({"MLP_BACKWARD", backward});
    d.push_back({"MLP_PARAM_LAYER", n(paramLayer)});
    d.push_back({"MLP_PARAM_BIAS", bias ? "1" : "0"});
    d.push_back({"MLP_PARAM_IN", n(value[pl])});
    d.push_back({"MLP_PARAM_OUT", n(value[pl + 1])});
    d.push_back({"MLP_PARAM_WIDTH", n(width[pl + 1])});
    return d;
}
inline void bindSmallMlp(Pass& p, const SmallMlp& m) {
    p.input("X", *m.x).input("T", *m.t);
    float alpha[4] = {0, 0, 0, 0};
    for (size_t l = 0; l < m.layers.size(); ++l) {
        p.input("W" + std::to_string(l), *m.layers[l].kernel).input("B" + std::to_string(l), *m.layers[l].bias);
        alpha[l] = m.layers[l].alpha;
    }
    // The mean over rows (softmax cross-entropy) or over all elements (MSE, BCE).
    p.uniform("invCount", 1.0f / float(m.softmaxLabels ? int64_t(m.t->rows()) : int64_t(m.t->rows()) * m.t->cols()));
    p.uniform("mlp_alpha", alpha[0], alpha[1], alpha[2], alpha[3]);
}
}  // namespace detail

// mean = the mean loss of m's output on the batch (1 x 1), one pass.
inline Pass& recordSmallMlpLoss(PassList& list, const SmallMlp& m, Tensor& mean) {
    detail::requireSmallMlp("small MLP loss", m);
    if (!mean || mean.rows() != 1 || mean.cols() != 1)
        throw ArgumentError("small MLP loss: mean is " + (mean ? mean.shapeString() : std::string("empty")) +
                            ", expected 1x1");
    detail::requireSameContext("small MLP loss", "mean", mean, "the batch", *m.x);
    Pass& p = list.add(Pass(mean.context(), "loss/mlp_loss", detail::smallMlpDefines(m)));
    detail::bindSmallMlp(p, m);
    p.output(mean);
    return p;
}

// out (1 x 1) = the batch's correct predictions (argmax == label) of a softmax
// network, plus `running` (1 x 1) if given; one pass.
inline Pass& recordSmallMlpCorrectCount(PassList& list, const SmallMlp& m, Tensor& out,
                                        const Tensor* running = nullptr) {
    detail::requireSmallMlp("small MLP correct count", m);
    if (!m.softmaxLabels)
        throw ArgumentError("small MLP correct count: the network has no class labels (softmaxLabels)");
    for (const Tensor* t : {static_cast<const Tensor*>(&out), running})
        if (t && (!*t || t->rows() != 1 || t->cols() != 1))
            throw ArgumentError("small MLP correct count: the count is " +
                                (*t ? t->shapeString() : std::string("empty")) + ", expected 1x1");
    detail::requireSameContext("small MLP correct count", "the count", out, "the batch", *m.x);
    Pass& p = list.add(Pass(out.context(), "loss/mlp_correct", detail::smallMlpDefines(m)));
    detail::bindSmallMlp(p, m);
    if (running) {
        detail::requireSameContext("small MLP correct count", "the count", out, "the running count", *running);
        p.input("RUNNING", *running);
    }
    p.output(out);
    return p;
}

// The optimizer update of m's layer `layer` kernel (or its bias), whose
// fragments compute that parameter's gradient themselves; `param` must hold
// that tensor in front. State slots and the loss guard as recordOptimizerUpdate's.
inline Pass& recordSmallMlpUpdate(PassList& list, const OptimizerConfig& c, const SmallMlp& m, int layer, bool bias,
                                  PingPong& param, std::vector<PingPong*> state, const Tensor* lossGuard = nullptr) {
    detail::requireSmallMlp("small MLP update", m);
    if (layer < 0 || layer >= int(m.layers.size()))
        throw ArgumentError("small MLP update: layer " + std::to_string(layer) + " of " +
                            std::to_string(m.layers.size()));
    detail::requireUpdatable(c, param, state, lossGuard);
    const Tensor& own = bias ? *m.layers[size_t(layer)].bias : *m.layers[size_t(layer)].kernel;
    if (param.front().texture() != own.texture())
        throw ArgumentError("small MLP update: the parameter (" + param.front().shapeString() + ") is not layer " +
                            std::to_string(layer) + "'s " + (bias ? "bias" : "kernel"));
    Pass& p = detail::addUpdatePass(list, c, param, state, detail::smallMlpDefines(m, layer, bias));
    detail::bindSmallMlp(p, m);
    if (lossGuard) p.input("LOSS", *lossGuard);
    return p;
}

}  // namespace gltrain
