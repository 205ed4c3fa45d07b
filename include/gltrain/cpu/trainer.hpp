// The CPU backend's side of a Sequential: fit (beginFit / stepOnce), evaluate
// and predict on a cpu::Model, with the GPU engine's semantics — the same
// epoch order from (seed, epoch), steps of `batchSize` rows and a short last
// one (unless dropRemainder), loss reports every `lossEvery` steps (the CPU
// has every step's loss at once, so `asyncLoss` reads it at once too), the NaN
// policy, epoch means of the losses read weighted by their steps' rows,
// accuracy over the epoch's rows, validation
// at each epoch's end, history and callbacks. Sequential validates every
// argument before it gets here, and owns the global step (`step` points at it)
// and the checkpoints.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/cpu/model.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain::cpu {

class Trainer {
public:
    Trainer(std::vector<Model::Layer> layers, int inputSize, const CompileOptions& o, long* step)
        : model_(std::move(layers), inputSize, setupOf(o)), options_(o), step_(step), inputSize_(inputSize) {}

    Model& model() { return model_; }

    // Rows [0, nTrain) of (x, y) train; rows [nTrain, nTrain + nVal) (a
    // validation split) or (validationX, validationY) validate.
    void beginFit(const HostMatrix& x, const Targets& y, int nTrain, int nVal, const FitOptions& o, Callbacks cb) {
        auto f = std::make_unique<Fit>();
        f->options = o;
        f->callbacks = std::move(cb);
        f->train = dataset(x, y, 0, nTrain, true);
        if (nVal > 0) f->val = std::make_unique<Dataset>(dataset(x, y, nTrain, nVal, true));
        else if (o.validationX)
            f->val = std::make_unique<Dataset>(dataset(*o.validationX, *o.validationY, 0, o.validationX->rows, true));
        f->stepsPerEpoch = int(gltrain::stepsPerEpoch(nTrain, o));
        f->endStep = long(o.epochs) * f->stepsPerEpoch;
        f->start = Clock::now();
        history_.clear();
        fit_ = *step_ < f->endStep ? std::move(f) : nullptr;
    }

    bool stepOnce() {
        if (!fit_) return false;
        Fit& f = *fit_;
        long& step = *step_;
        const int B = f.options.batchSize;
        const int epoch = int(step / f.stepsPerEpoch), batch = int(step % f.stepsPerEpoch);
        if (f.startedEpoch != epoch) {
            f.startedEpoch = epoch;
            f.epochStart = Clock::now();
            f.epochLossSum = 0;
            f.epochLossRows = f.epochRows = 0;
            model_.resetSums();
            f.train.order = epochOrder(f.train.n, options_.seed, epoch, f.options.shuffle);
        }
        const int rows = std::min(B, f.train.n - batch * B);  // the last may be short
        const float loss = model_.trainStep(f.train, batch * B, rows, step);
        ++step;
        f.epochRows += rows;
        f.lastLoss = loss;
        f.lastRows = rows;
        // Stop on the very step whose loss went bad (its updates were skipped, and the
        // step before, whose weights gave it, undone), or whose update was not finite.
        if (options_.onNaN == NanPolicy::Stop && (!std::isfinite(loss) || model_.updateRejected())) {
            fit_.reset();
            throw TrainingError("fit: " +
                                (std::isfinite(loss) ? std::string("the update of step " + std::to_string(step) +
                                                                   " made a parameter or optimizer slot NaN or Inf")
                                                     : "the loss is " + std::string(std::isnan(loss) ? "NaN" : "Inf") +
                                                           " at step " + std::to_string(step)) +
                                "; training stopped and the weights of the last good step are kept");
        }
        StepInfo info;
        info.step = step;
        info.epoch = epoch;
        if (f.options.lossEvery > 0 && step % f.options.lossEvery == 0) {
            take(f, loss, rows);
            info.loss = loss;
            info.lossRead = true;
            info.lossStep = step;
        }
        info.elapsedSeconds = seconds(f.start);
        info.samplesPerSecond = double(f.epochRows) / std::max(1e-9, seconds(f.epochStart));
        if (f.callbacks.onStep) f.callbacks.onStep(info);
        if (batch + 1 == f.stepsPerEpoch) endEpoch(f, epoch);
        if (step >= f.endStep) {
            fit_.reset();
            return false;
        }
        return true;
    }
    bool fitting() const { return bool(fit_); }
    void endFit() { fit_.reset(); }
    const std::vector<EpochInfo>& history() const { return history_; }

    Evaluation evaluate(const HostMatrix& x, const Targets& y, int batchSize) {
        const Dataset d = dataset(x, y, 0, x.rows, false);
        const LossSums s = model_.evaluate(d, batchSize);
        Evaluation e;
        e.loss = float(s.loss / d.n);
        if (options_.loss == LossKind::SoftmaxCrossEntropy) e.accuracy = float(double(s.correct) / d.n);
        return e;
    }
    HostMatrix predict(const HostMatrix& x, int batchSize) {
        HostMatrix out(x.rows, model_.outputSize());
        model_.predict(x.data.data(), x.rows, batchSize, out.data.data());
        return out;
    }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

    struct Fit {
        FitOptions options;
        Callbacks callbacks;
        Dataset train;
        std::unique_ptr<Dataset> val;
        int stepsPerEpoch = 1, startedEpoch = -1, lastRows = 0;
        long endStep = 0, epochRows = 0, epochLossRows = 0;
        double epochLossSum = 0;
        float lastLoss = 0;
        Clock::time_point start, epochStart;
    };

    static TrainingSetup setupOf(const CompileOptions& o) {
        TrainingSetup s;
        s.softmaxCrossEntropy = o.loss == LossKind::SoftmaxCrossEntropy;
        s.pointwise = o.loss == LossKind::BinaryCrossEntropy ? PointwiseLoss::BinaryCrossEntropy
                                                             : PointwiseLoss::SquaredError;
        s.optimizer = o.optimizer;
        s.schedule = o.schedule;
        s.clipNorm = o.clipNorm;
        s.seed = o.seed;
        s.skipBadSteps = o.onNaN != NanPolicy::Ignore;
        s.revertOnBadLoss = o.onNaN == NanPolicy::Stop;
        return s;
    }

    // Rows [r0, r0 + n) of (x, y): labels (one-hot rows become their argmax,
    // as the GPU engine's upload does) or target values.
    Dataset dataset(const HostMatrix& x, const Targets& y, int r0, int n, bool copy) const {
        Dataset d;
        d.n = n;
        const float* rows = x.data.data() + size_t(r0) * size_t(inputSize_);
        if (copy) {
            d.ownedX.assign(rows, rows + size_t(n) * size_t(inputSize_));
            d.x = d.ownedX.data();
        } else {
            d.x = rows;
        }
        if (y.rows() == 0) return d;
        if (options_.loss == LossKind::SoftmaxCrossEntropy) {
            d.labels.resize(size_t(n));
            for (int i = 0; i < n; ++i) {
                if (y.isLabels()) {
                    d.labels[size_t(i)] = y.labels[size_t(r0 + i)];
                } else {
                    int best = 0;
                    for (int c = 1; c < y.values.cols; ++c)
                        if (y.values(r0 + i, c) > y.values(r0 + i, best)) best = c;
                    d.labels[size_t(i)] = best;
                }
            }
        } else {
            const size_t C = size_t(y.values.cols);
            d.values.assign(y.values.data.begin() + std::ptrdiff_t(size_t(r0) * C),
                            y.values.data.begin() + std::ptrdiff_t(size_t(r0 + n) * C));
        }
        return d;
    }

    // A step's mean loss over `rows` rows, weighted by them in the epoch's mean.
    void take(Fit& f, float loss, int rows) {
        if (!std::isfinite(loss)) return;
        f.epochLossSum += double(loss) * rows;
        f.epochLossRows += rows;
    }

    void endEpoch(Fit& f, int epoch) {
        EpochInfo e;
        e.epoch = epoch;
        e.step = *step_;
        if (f.epochLossRows == 0 || f.options.lossEvery == 0) take(f, f.lastLoss, f.lastRows);
        e.loss = float(f.epochLossSum / double(std::max(1L, f.epochLossRows)));
        e.accuracy = options_.loss == LossKind::SoftmaxCrossEntropy
                         ? float(double(model_.correctSum()) / double(std::max(1L, f.epochRows)))
                         : std::numeric_limits<float>::quiet_NaN();
        e.seconds = seconds(f.epochStart);
        e.samplesPerSecond = double(f.epochRows) / std::max(1e-9, e.seconds);
        if (f.val) {
            const LossSums s = model_.evaluate(*f.val, f.options.batchSize);
            e.valLoss = float(s.loss / f.val->n);
            if (options_.loss == LossKind::SoftmaxCrossEntropy) e.valAccuracy = float(double(s.correct) / f.val->n);
        }
        history_.push_back(e);
        if (f.callbacks.onEpoch) f.callbacks.onEpoch(e);
    }

    Model model_;
    CompileOptions options_;
    long* step_;  // the Sequential's global step
    int inputSize_;
    std::unique_ptr<Fit> fit_;
    std::vector<EpochInfo> history_;
};

}  // namespace gltrain::cpu
