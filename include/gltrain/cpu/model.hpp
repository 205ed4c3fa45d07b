// The CPU backend of a Sequential model: parameters, optimizer state,
// statistics and activations in host memory, and a training step made of the
// kernels in gltrain/cpu/ — the same step the GPU records (forward with Z
// kept, fused loss, backward with the activation derivative fused into the
// product that makes each incoming gradient, clip by global norm, one fused
// update per parameter), with the same formulas, dropout masks and seeds.
//
// Sequential keeps everything that does not depend on where the numbers live
// (shapes, validation, the fit loop, callbacks, checkpoints) and hands a
// CPU-backend model its layers (spec + inferred geometry) and parameters; this
// class only computes. Every buffer is sized on first use of a batch size and
// reused, so the steady state allocates nothing.
//
// As on the GPU, a step whose loss is NaN or Inf (with NanPolicy Stop or Skip)
// changes nothing at all, batch normalization's moving averages included.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gltrain/cpu/activation.hpp"
#include "gltrain/cpu/batchnorm.hpp"
#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/loss.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/cpu/optimizer.hpp"
#include "gltrain/cpu/pooling.hpp"
#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/layers.hpp"
#include "gltrain/optimizer_config.hpp"
#include "gltrain/reference/random.hpp"
#include "gltrain/schedule.hpp"

namespace gltrain::cpu {

// What a training step needs from the compile options.
struct TrainingSetup {
    bool softmaxCrossEntropy = true;  // labels; otherwise `pointwise` against target values
    PointwiseLoss pointwise = PointwiseLoss::SquaredError;
    OptimizerConfig optimizer{};
    Schedule schedule{};
    float clipNorm = 0.0f;  // > 0: clip by global norm
    uint32_t seed = 1;      // dropout masks: uniform01(seed, step, r * cols + c), as on the GPU
    bool skipBadSteps = true;  // a NaN/Inf loss leaves parameters, state and statistics as they were
    // and undoes the previous step too (NanPolicy::Stop: the weights that gave it are not good)
    bool revertOnBadLoss = false;
};

// Rows of data in host memory, their targets, and the order in which
// training visits them. x points at the caller's rows (evaluate, predict) or
// at `ownedX`, a copy a fit keeps (the caller's matrices may go away between
// beginFit and the steps).
struct Dataset {
    int n = 0;
    const float* x = nullptr;   // n x the model's input size
    std::vector<float> ownedX;
    std::vector<int> labels;    // softmax cross-entropy
    std::vector<float> values;  // n x the model's output size (MSE, BCE)
    std::vector<int> order;     // training: a permutation of 0 .. n-1
};

class Model {
public:
    struct Variable {
        std::string name;
        std::vector<int64_t> shape;  // as saved in checkpoints (TensorFlow's shapes)
        HostMatrix value;
        std::vector<HostMatrix> slots;  // optimizer state, each shaped like value
        HostMatrix grad;                // this step's gradient (trainable parameters)
    };
    // One layer: its spec, inferred shapes and window, parameters and statistics.
    struct Layer {
        std::string name;
        gltrain::Layer spec;
        Shape3 in, out;
        Window window;
        std::vector<Variable> params, buffers;
    };

    Model(std::vector<Layer> layers, int inputSize, const TrainingSetup& setup)
        : layers_(std::move(layers)), inputSize_(inputSize), setup_(setup) {
        outputSize_ = layers_.empty() ? inputSize : layers_.back().out.size();
        for (auto& L : layers_)
            for (auto& v : L.params) v.grad = HostMatrix(v.value.rows, v.value.cols);
        act_.resize(layers_.size());
    }

    int outputSize() const { return outputSize_; }
    // Large products share their rows across these threads (not owned; null: this thread alone).
    void useThreads(ThreadPool* pool) { ws_.pool = pool; }
    const std::vector<Layer>& layers() const { return layers_; }
    // What a checkpoint holds, in the GPU engine's order: f(name, variable, value)
    // for every parameter, each of its optimizer slots ("<layer>/<name>/slot<i>")
    // and every statistic.
    template <class F>
    void forEachSaved(F&& f) {
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                f(L.name + "/" + v.name, v, v.value);
                for (size_t s = 0; s < v.slots.size(); ++s) f(L.name + "/" + v.name + "/slot" + std::to_string(s), v, v.slots[s]);
            }
            for (auto& v : L.buffers) f(L.name + "/" + v.name, v, v.value);
        }
    }
    // Parameters ("kernel", "bias", "gamma", "beta") and statistics ("moving_mean", "moving_variance").
    Variable& variable(size_t layer, const std::string& name) {
        for (auto* list : {&layers_.at(layer).params, &layers_.at(layer).buffers})
            for (auto& v : *list)
                if (v.name == name) return v;
        throw Error("cpu::Model: layer " + std::to_string(layer) + " has no variable " + name);
    }

    // One training step on rows order[offset .. offset + batch) of d at global
    // step `step` (0-based: the update uses t = step + 1 and the schedule's
    // learning rate at step). Returns the batch's mean loss; correct
    // predictions are added to correctSum().
    float trainStep(const Dataset& d, int offset, int batch, long step) {
        gatherRows(d, offset, batch, true);
        const float* logits = forward(batch, true, step);
        const LossSums s = lossAndGradient(d, offset, batch, logits, true);
        correct_ += s.correct;
        lastBatch_ = batch;
        const float lossMean = float(s.loss / batch);
        if (setup_.skipBadSteps && !std::isfinite(lossMean)) {
            if (setup_.revertOnBadLoss) revert();
            return lossMean;
        }
        backward(batch);
        update(step);
        // A step that leaves a parameter, slot or statistic not finite is not
        // applied (under a NaN policy), whatever its loss was.
        updateRejected_ = setup_.skipBadSteps && !stateFinite();
        if (updateRejected_) revert();
        return lossMean;
    }
    // Whether the last trainStep's update was not applied because it left a value that is not finite.
    bool updateRejected() const { return updateRejected_; }
    // The host wrote the state (a checkpoint, setWeight): no step before it may be undone.
    void stateWritten() { revertible_ = false; }
    int correctSum() const { return correct_; }
    void resetSums() { correct_ = 0; }

    // Loss (mean over rows) and correct predictions over all of d, in batches
    // (the last may be short); inference mode.
    LossSums evaluate(const Dataset& d, int batchSize) {
        LossSums total;
        for (int r0 = 0; r0 < d.n; r0 += batchSize) {
            const int b = std::min(batchSize, d.n - r0);
            gatherRows(d, r0, b, false);
            const LossSums s = lossAndGradient(d, r0, b, forward(b, false, 0), false);
            total.loss += s.loss;
            total.correct += s.correct;
        }
        return total;
    }

    // The outputs (after a final Softmax, probabilities) for `rows` rows of x.
    void predict(const float* x, int rows, int batchSize, float* out) {
        for (int r0 = 0; r0 < rows; r0 += batchSize) {
            const int b = std::min(batchSize, rows - r0);
            xb_.assign(x + size_t(r0) * size_t(inputSize_), x + size_t(r0 + b) * size_t(inputSize_));
            const float* y = forward(b, false, 0, true);
            std::copy(y, y + size_t(b) * size_t(outputSize_), out + size_t(r0) * size_t(outputSize_));
        }
    }

private:
    // Per-layer buffers of one step (sized for the largest batch seen).
    struct Activations {
        std::vector<float> y, z, mask;  // output; pre-activation (fused activation); dropout mask
        std::vector<int32_t> argmax;    // max pooling
        std::vector<float> mean, var;   // batch normalization's batch statistics
        const float* in = nullptr;      // what the layer read
        const float* out = nullptr;     // what it produced (may be `in`: flatten, dropout off)
        const float* zOf = nullptr;     // its pre-activation, when it has a fused activation
    };

    static Activation fusedActivation(const gltrain::Layer& s, float* alpha) {
        if (auto* d = std::get_if<Dense>(&s)) return *alpha = d->alpha, d->activation;
        if (auto* c = std::get_if<Conv2D>(&s)) return *alpha = c->alpha, c->activation;
        return Activation::Linear;
    }
    static const Variable& find(const std::vector<Variable>& list, const char* name) {
        for (auto& v : list)
            if (v.name == name) return v;
        throw Error(std::string("cpu::Model: missing variable ") + name);
    }
    static Variable& find(std::vector<Variable>& list, const char* name) {
        return const_cast<Variable&>(find(static_cast<const std::vector<Variable>&>(list), name));
    }

    void gatherRows(const Dataset& d, int offset, int batch, bool ordered) {
        xb_.resize(size_t(batch) * size_t(inputSize_));
        for (int r = 0; r < batch; ++r) {
            const int src = ordered ? d.order[size_t(offset + r)] : offset + r;
            std::copy(d.x + size_t(src) * size_t(inputSize_), d.x + size_t(src + 1) * size_t(inputSize_),
                      xb_.begin() + std::ptrdiff_t(size_t(r) * size_t(inputSize_)));
        }
    }

    // Runs the layers on xb_; returns the logits the loss reads (before a final
    // Softmax), or with `probabilities` the model's output (after it).
    const float* forward(int B, bool training, long step, bool probabilities = false) {
        const float* cur = xb_.data();
        const float* logits = nullptr;
        for (size_t i = 0; i < layers_.size(); ++i) {
            Layer& L = layers_[i];
            Activations& a = act_[i];
            const size_t outN = size_t(B) * size_t(L.out.size());
            a.in = cur;
            a.zOf = nullptr;
            float alpha = 0.01f;
            const Activation act = fusedActivation(L.spec, &alpha);
            auto output = [&]() -> float* {
                a.y.resize(outN);
                return a.y.data();
            };
            auto keepZ = [&]() -> float* {  // Z is kept when training needs f'(Z)
                if (!training || act == Activation::Linear) return nullptr;
                a.z.resize(outN);
                a.zOf = a.z.data();
                return a.z.data();
            };
            if (std::holds_alternative<Dense>(L.spec)) {
                float* y = output();
                Epilogue e;
                e.bias = find(L.params, "bias").value.data.data();
                e.activation = act;
                e.alpha = alpha;
                e.preactivation = keepZ();
                const int in = L.in.size(), out = L.out.size();
                matmul(B, out, in, cur, in, false, find(L.params, "kernel").value.data.data(), out, false, y, out, e, ws_);
                cur = y;
            } else if (std::holds_alternative<Conv2D>(L.spec)) {
                float* y = output();
                conv2d(cur, B, L.window, find(L.params, "kernel").value.data.data(),
                       find(L.params, "bias").value.data.data(), act, alpha, y, keepZ(), ws_);
                cur = y;
            } else if (std::holds_alternative<MaxPool2D>(L.spec) || std::holds_alternative<AveragePool2D>(L.spec) ||
                       std::holds_alternative<GlobalAveragePooling2D>(L.spec)) {
                const bool max = std::holds_alternative<MaxPool2D>(L.spec);
                float* y = output();
                if (max) a.argmax.resize(outN);
                pool2d(cur, B, L.window, max ? PoolKind::Max : PoolKind::Average, y, max ? a.argmax.data() : nullptr);
                cur = y;
            } else if (auto* bn = std::get_if<BatchNormalization>(&L.spec)) {
                const int C = L.out.channels, cols = L.out.size();
                float* y = output();
                const float *gamma = find(L.params, "gamma").value.data.data(),
                            *beta = find(L.params, "beta").value.data.data();
                if (training) {
                    a.mean.resize(size_t(C));
                    a.var.resize(size_t(C));
                    batchStats(cur, B, cols, C, a.mean.data(), a.var.data(), dacc_);
                    batchNormApply(cur, B, cols, C, a.mean.data(), a.var.data(), gamma, beta, bn->epsilon, y, facc_);
                } else {
                    batchNormApply(cur, B, cols, C, find(L.buffers, "moving_mean").value.data.data(),
                                   find(L.buffers, "moving_variance").value.data.data(), gamma, beta, bn->epsilon, y,
                                   facc_);
                }
                cur = y;
            } else if (auto* al = std::get_if<ActivationLayer>(&L.spec)) {
                float* y = output();
                activate(y, cur, outN, al->activation, al->alpha);
                cur = y;
            } else if (auto* dr = std::get_if<Dropout>(&L.spec)) {
                if (training && dr->rate > 0.0f) {
                    // Inverted dropout with the GPU's mask: element index r * cols + c of the batch.
                    a.mask.resize(outN);
                    const float keep = 1.0f / (1.0f - dr->rate);
                    const uint32_t stepKey = uint32_t(step & 0xFFFFFF);
                    float* y = output();
                    for (size_t j = 0; j < outN; ++j) {
                        a.mask[j] = ref::uniform01(setup_.seed, stepKey, uint32_t(j)) >= dr->rate ? keep : 0.0f;
                        y[j] = cur[j] * a.mask[j];
                    }
                    cur = y;
                }
            } else if (std::holds_alternative<Softmax>(L.spec)) {
                logits = cur;  // the loss reads the logits; predict applies the softmax
                if (probabilities) {
                    float* y = output();
                    const int C = L.out.size();
                    for (int r = 0; r < B; ++r) {
                        const float* x = cur + size_t(r) * size_t(C);
                        float* p = y + size_t(r) * size_t(C);
                        float m = -INFINITY, s = 0.0f;
                        for (int c = 0; c < C; ++c) m = x[c] > m ? x[c] : m;
                        for (int c = 0; c < C; ++c) s += p[c] = std::exp(x[c] - m);
                        for (int c = 0; c < C; ++c) p[c] /= s;
                    }
                    cur = y;
                }
            }  // Flatten: image rows are already flat
            a.out = cur;
        }
        return probabilities || !logits ? cur : logits;
    }

    // The loss sums of the batch (rows offset.. of d, in training order when
    // `training`) and, when training, its gradient into grad_.
    LossSums lossAndGradient(const Dataset& d, int offset, int B, const float* logits, bool training) {
        const int C = outputSize_;
        if (training) grad_.resize(size_t(B) * size_t(C));
        float* g = training ? grad_.data() : nullptr;
        auto rowOf = [&](int r) { return training ? d.order[size_t(offset + r)] : offset + r; };
        LossSums s{};
        if (setup_.softmaxCrossEntropy) {
            labels_.resize(size_t(B));
            for (int r = 0; r < B; ++r) labels_[size_t(r)] = d.labels[size_t(rowOf(r))];
            s = softmaxCrossEntropy(logits, labels_.data(), B, C, g, B);
        } else {
            targets_.resize(size_t(B) * size_t(C));
            for (int r = 0; r < B; ++r)
                std::copy(d.values.begin() + std::ptrdiff_t(size_t(rowOf(r)) * size_t(C)),
                          d.values.begin() + std::ptrdiff_t(size_t(rowOf(r) + 1) * size_t(C)),
                          targets_.begin() + std::ptrdiff_t(size_t(r) * size_t(C)));
            s = pointwiseLoss(setup_.pointwise, logits, targets_.data(), B, C, g, B);
        }
        return s;
    }

    // Gradients of every parameter from grad_ (dLoss/dlogits).
    void backward(int B) {
        std::vector<float>* dcur = &grad_;
        bool hasDerivative = false;  // *dcur already includes the layer's f'(Z)
        for (size_t i = layers_.size(); i-- > 0;) {
            Layer& L = layers_[i];
            Activations& a = act_[i];
            const bool needDx = i > 0;
            const size_t inN = size_t(B) * size_t(L.in.size());
            std::vector<float>* dnext = dcur == &gradA_ ? &gradB_ : &gradA_;
            float alpha = 0.01f;
            const Activation act = fusedActivation(L.spec, &alpha);
            if (act != Activation::Linear && !hasDerivative)
                multiplyDerivative(dcur->data(), a.zOf, size_t(B) * size_t(L.out.size()), act, alpha);
            hasDerivative = false;
            // The previous layer's f'(Z), fused into the product that makes its incoming gradient.
            float prevAlpha = 0.01f;
            const Activation prevAct = needDx ? fusedActivation(layers_[i - 1].spec, &prevAlpha) : Activation::Linear;
            if (std::holds_alternative<Dense>(L.spec)) {
                Variable &W = find(L.params, "kernel"), &b = find(L.params, "bias");
                const int in = L.in.size(), out = L.out.size();
                // dW = X^T dZ, db = column sums of dZ.
                matmul(in, out, B, a.in, in, true, dcur->data(), out, false, W.grad.data.data(), out, Epilogue{}, ws_);
                channelSum(dcur->data(), B, out, out, b.grad.data.data(), dacc_, facc_);
                if (needDx) {
                    dnext->resize(inN);
                    Epilogue e;
                    if (prevAct != Activation::Linear) {
                        e.derivativeAt = act_[i - 1].zOf;
                        e.derivative = prevAct;
                        e.alpha = prevAlpha;
                        hasDerivative = true;
                    }
                    matmul(B, in, out, dcur->data(), out, false, W.value.data.data(), out, true, dnext->data(), in, e, ws_);
                }
            } else if (std::holds_alternative<Conv2D>(L.spec)) {
                Variable &W = find(L.params, "kernel"), &b = find(L.params, "bias");
                conv2dBackwardFilter(a.in, dcur->data(), B, L.window, W.grad.data.data(), ws_);
                channelSum(dcur->data(), B, L.out.size(), L.out.channels, b.grad.data.data(), dacc_, facc_);
                if (needDx) {
                    dnext->resize(inN);
                    conv2dBackwardInput(dcur->data(), W.value.data.data(), B, L.window, dnext->data(), ws_);
                }
            } else if (std::holds_alternative<MaxPool2D>(L.spec) || std::holds_alternative<AveragePool2D>(L.spec) ||
                       std::holds_alternative<GlobalAveragePooling2D>(L.spec)) {
                if (needDx) {
                    dnext->resize(inN);
                    const bool max = std::holds_alternative<MaxPool2D>(L.spec);
                    pool2dBackward(dcur->data(), a.argmax.data(), B, L.window, max ? PoolKind::Max : PoolKind::Average,
                                   dnext->data());
                }
            } else if (auto* bn = std::get_if<BatchNormalization>(&L.spec)) {
                Variable &gamma = find(L.params, "gamma"), &beta = find(L.params, "beta");
                if (needDx) dnext->resize(inN);
                batchNormBackward(a.in, dcur->data(), B, L.out.size(), L.out.channels, a.mean.data(), a.var.data(),
                                  gamma.value.data.data(), bn->epsilon, gamma.grad.data.data(), beta.grad.data.data(),
                                  needDx ? dnext->data() : nullptr, dacc_);
            } else if (auto* al = std::get_if<ActivationLayer>(&L.spec)) {
                if (needDx) {
                    dnext->assign(dcur->begin(), dcur->begin() + std::ptrdiff_t(inN));
                    multiplyDerivative(dnext->data(), a.in, inN, al->activation, al->alpha);
                }
            } else if (std::holds_alternative<Dropout>(L.spec) && a.out != a.in) {
                if (needDx) {
                    dnext->resize(inN);
                    for (size_t j = 0; j < inN; ++j) (*dnext)[j] = (*dcur)[j] * a.mask[j];
                }
            } else {
                continue;  // Flatten, Softmax, Dropout(0): the gradient passes through
            }
            if (needDx) dcur = dnext;
        }
    }

    // Every array of the training state: parameters, their slots, statistics
    // (listed once: the steps allocate nothing).
    const std::vector<HostMatrix*>& stateArrays() {
        if (stateArrays_.empty())
            for (auto& L : layers_) {
                for (auto& v : L.params) {
                    stateArrays_.push_back(&v.value);
                    for (auto& s : v.slots) stateArrays_.push_back(&s);
                }
                for (auto& v : L.buffers) stateArrays_.push_back(&v.value);
            }
        return stateArrays_;
    }
    bool stateFinite() {
        for (HostMatrix* m : stateArrays())
            for (float x : m->data)
                if (!std::isfinite(x)) return false;
        return true;
    }
    // The state before the last step becomes the state again (as on the GPU,
    // ops/step_guard.hpp: two arrays each, swapped, so keeping it costs no copy).
    void revert() {
        if (!revertible_) return;
        const std::vector<HostMatrix*>& all = stateArrays();
        for (size_t i = 0; i < all.size(); ++i) std::swap(*all[i], previous_[i]);
        revertible_ = false;
    }

    // The step's updates read the state before it (kept in previous_, so that
    // revert() can go back to it) and write the state after it.
    void update(long step) {
        const std::vector<HostMatrix*>& all = stateArrays();
        previous_.resize(all.size());
        for (size_t i = 0; i < all.size(); ++i) {
            if (previous_[i].data.size() != all[i]->data.size()) previous_[i] = *all[i];
            std::swap(*all[i], previous_[i]);
        }
        revertible_ = true;
        float gscale = 1.0f;
        if (setup_.clipNorm > 0.0f) {
            clipList_.clear();
            for (auto& L : layers_)
                for (auto& v : L.params) clipList_.push_back({v.grad.data.data(), v.grad.size()});
            gscale = clipFactor(clipList_, setup_.clipNorm);
        }
        const float lr = setup_.schedule.at(setup_.optimizer.lr, step);
        if (!(lr >= 0.0f) || !std::isfinite(lr))
            throw ArgumentError("optimizer: the learning rate of step " + std::to_string(step + 1) + " is " +
                                std::to_string(lr) + " (must be finite and >= 0)");
        size_t k = 0;  // the index in `all` (stateArrays' order) of the next array
        for (auto& L : layers_) {
            for (auto& v : L.params) {
                const float* p0 = previous_[k++].data.data();
                state0_.clear();
                state_.clear();
                for (auto& s : v.slots) {
                    state0_.push_back(previous_[k++].data.data());
                    state_.push_back(s.data.data());
                }
                optimizerUpdate(setup_.optimizer, p0, v.value.data.data(), v.grad.data.data(), state0_, state_,
                                v.value.size(), gscale, int(step + 1), lr);
            }
            for (auto& v : L.buffers) v.value = previous_[k++];  // moved below, in place (a few values)
        }
        // Batch normalization's moving averages, the variance made unbiased
        // (reference/batchnorm.hpp), only now that the step is known to be good.
        for (size_t i = 0; i < layers_.size(); ++i)
            if (auto* bn = std::get_if<BatchNormalization>(&layers_[i].spec)) {
                Layer& L = layers_[i];
                const double m = double(lastBatch_) * L.out.pixels();
                const float unbias = float(m > 1 ? m / (m - 1) : 1.0), mom = bn->momentum;
                float* mean = find(L.buffers, "moving_mean").value.data.data();
                float* var = find(L.buffers, "moving_variance").value.data.data();
                for (int c = 0; c < L.out.channels; ++c) {
                    mean[c] = mom * mean[c] + (1.0f - mom) * act_[i].mean[size_t(c)];
                    var[c] = mom * var[c] + (1.0f - mom) * unbias * act_[i].var[size_t(c)];
                }
            }
    }

    std::vector<Layer> layers_;
    int inputSize_, outputSize_ = 0;
    TrainingSetup setup_;
    std::vector<Activations> act_;
    std::vector<float> xb_, grad_, gradA_, gradB_, targets_, facc_;
    std::vector<int> labels_;
    std::vector<double> dacc_;
    std::vector<float*> state_;
    std::vector<const float*> state0_;
    std::vector<HostMatrix*> stateArrays_;
    std::vector<HostMatrix> previous_;  // the state before the last step (update, revert)
    bool revertible_ = false;           // previous_ is that state
    bool updateRejected_ = false;
    std::vector<std::pair<const float*, size_t>> clipList_;
    Workspace ws_;
    int correct_ = 0;
    int lastBatch_ = 0;  // the batch size of the step being updated (moving variance's unbiasing)
};

}  // namespace gltrain::cpu
