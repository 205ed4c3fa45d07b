// The training loop, written once over an engine (engine/engine.hpp): epochs
// of `batchSize` steps over an order drawn from (seed, epoch), the short last
// batch (unless dropRemainder), losses read every `lossEvery` steps (now, or
// through a fence with asyncLoss), the NaN policy, epoch means of the losses
// read weighted by their steps' rows, accuracy and metrics over the epoch's rows,
// validation at each epoch's end, history and callbacks.
//
// After a lost context the engine rebuilds itself from its snapshot and the
// model's step goes back to it; the loop then replays the steps since, without
// reporting them again: onStep sees every step once, in order.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gltrain/engine/engine.hpp"

namespace gltrain {

class FitLoop {
public:
    // `step` is the model's global step: the loop advances it. `data` must
    // outlive the loop (the engine keeps a pointer to it).
    // `checkpoint` makes the model's checkpoint now (for the callbacks that keep the best epoch's).
    FitLoop(Engine& engine, const CompileOptions& compiled, const FitData& data, Callbacks cb, long& step,
            std::vector<EpochInfo>& history, std::function<std::vector<uint8_t>()> checkpoint)
        : engine_(engine),
          compiled_(compiled),
          data_(data),
          o_(data.options),
          callbacks_(std::move(cb)),
          step_(step),
          history_(history),
          checkpoint_(std::move(checkpoint)),
          lr_(compiled.optimizer.lr) {
        stepsPerEpoch_ = int(stepsPerEpoch(data.trainRows, o_));
        endStep_ = fitEndStep(data.trainRows, o_);
        start_ = Clock::now();
        history_.clear();
        engine_.beginFit(data);
    }
    // One step; false when the fit is done (the engine has ended it then).
    // Throws TrainingError (the engine has ended the fit) when the NaN policy stops it.
    bool stepOnce() {
        if (!started_) {
            engine_.fitStarting(step_);
            started_ = true;
        }
        const int epoch = int(step_ / stepsPerEpoch_), batch = int(step_ % stepsPerEpoch_);
        // A replayed step ran before the context was lost and was reported then.
        const bool replay = step_ + 1 <= reportedStep_;
        if (startedEpoch_ != epoch) {
            startedEpoch_ = epoch;
            epochStart_ = Clock::now();
            epochLossSum_ = 0;
            epochLossRows_ = epochRows_ = 0;
            engine_.startEpoch();
        }
        StepRequest r;
        r.step = step_;
        r.epoch = epoch;
        r.batch = batch;
        r.firstRow = batch * o_.batchSize;
        r.rows = std::min(o_.batchSize, data_.trainRows - r.firstRow);
        r.counted = !replay;
        const bool wanted = !replay && o_.lossEvery > 0 && (step_ + 1) % o_.lossEvery == 0;
        const bool everyLoss = engine_.everyLossKnown();
        r.readLoss = everyLoss || (wanted && !o_.asyncLoss);
        const StepResult result = engine_.step(r);
        ++step_;
        epochRows_ += r.rows;
        lastRows_ = r.rows;
        // An engine that knows every step's loss stops on the very step whose loss
        // went bad (its update skipped, and the step before, whose weights gave it,
        // undone), or whose update was not finite.
        if (everyLoss && compiled_.onNaN == NanPolicy::Stop && (!std::isfinite(result.loss) || result.updateRejected))
            stop(std::isfinite(result.loss)
                     ? "the update of step " + std::to_string(step_) + " made a parameter or optimizer slot NaN or Inf"
                     : lossProblem(result.loss, step_, step_));
        engine_.stepDone(step_, o_.snapshotEvery);

        StepInfo info;
        info.step = step_;
        info.epoch = epoch;
        const bool epochEnd = batch + 1 == stepsPerEpoch_ || step_ == endStep_;  // `steps` may cut one short
        if (auto earlier = engine_.takeLossRead(epochEnd)) takeLoss(*earlier, &info);
        if (wanted) {
            if (r.readLoss) takeLoss({result.loss, step_, r.rows}, &info);
            else engine_.issueLossRead(step_, r.rows);
        }
        info.elapsedSeconds = seconds(start_);
        info.samplesPerSecond = double(epochRows_) / std::max(1e-9, seconds(epochStart_));
        if (!replay) {
            reportedStep_ = step_;
            if (callbacks_.onStep) callbacks_.onStep(info);
        }
        // An epoch end the replay passes again was reported before the loss.
        if (epochEnd && (history_.empty() || history_.back().epoch < epoch)) endEpoch(epoch);
        if (step_ >= endStep_ || stopEarly_) {
            engine_.endFit(step_);
            return false;
        }
        return true;
    }

    // The best epoch's checkpoint (KeepBest; empty: none) and that epoch.
    const std::vector<uint8_t>& best() const { return keep_.bytes; }
    int bestEpoch() const { return keep_.epoch; }
    // The state EarlyStopping's restoreBest ends the fit in (empty: the last).
    const std::vector<uint8_t>& restoreAtEnd() const { return restore_; }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

    static std::string lossProblem(float loss, long from, long at) {
        return "the loss is " + std::string(std::isnan(loss) ? "NaN" : "Inf") +
               (from == at ? " at step " + std::to_string(at)
                           : " by step " + std::to_string(at) + " (first bad step in " + std::to_string(from) + ".." +
                                 std::to_string(at) + ")");
    }
    [[noreturn]] void stop(const std::string& problem) {
        engine_.endFit(step_);
        throw TrainingError("fit: " + problem + "; training stopped and the weights of the last good step are kept");
    }

    // A step's mean loss over its rows: reported, and weighted by its rows in the epoch's mean.
    void takeLoss(const LossReading& r, StepInfo* info) {
        if (!std::isfinite(r.loss) && compiled_.onNaN == NanPolicy::Stop)
            stop(lossProblem(r.loss, std::max(1L, r.step - std::max(1, o_.lossEvery) + 1), r.step));
        if (std::isfinite(r.loss)) {
            epochLossSum_ += double(r.loss) * r.rows;
            epochLossRows_ += r.rows;
        }
        if (info) {
            info->loss = r.loss;
            info->lossRead = true;
            info->lossStep = r.step;
        }
    }

    void endEpoch(int epoch) {
        EpochInfo e;
        e.epoch = epoch;
        e.step = step_;
        if (epochLossRows_ == 0 || o_.lossEvery == 0) takeLoss({engine_.lastLoss(), step_, lastRows_}, nullptr);
        e.loss = float(epochLossSum_ / double(std::max(1L, epochLossRows_)));
        const EpochSums sums = engine_.epochSums();
        e.accuracy = data_.accuracy ? float(sums.correct / double(std::max(1L, sums.rows)))
                                    : std::numeric_limits<float>::quiet_NaN();
        if (data_.io) metricFigures(*data_.io, sums.metrics, sums.rows, e.metrics, e.accuracy);
        e.seconds = seconds(epochStart_);
        e.samplesPerSecond = double(epochRows_) / std::max(1e-9, e.seconds);
        if (data_.valRows > 0 || o_.validationX) {
            const Evaluation v = engine_.validate(o_.batchSize);
            e.valLoss = v.loss;
            e.valAccuracy = v.accuracy;
            for (const auto& [name, value] : v.metrics) e.metrics["val_" + name] = value;
        }
        history_.push_back(e);
        epochCallbacks(e);  // first: onEpoch sees the best checkpoint of this epoch
        if (callbacks_.onEpoch) callbacks_.onEpoch(e);
    }

    // One monitored figure's best so far and the epochs since it.
    struct Watch {
        float best = std::numeric_limits<float>::quiet_NaN();
        int since = 0, epoch = -1;
        std::vector<uint8_t> bytes;  // the checkpoint at the best, where kept
        // Whether e improves the figure (and counts the epochs without).
        bool update(const EpochInfo& e, const Monitor& m) {
            const float v = monitored(e, m);
            if (improves(m, v, best)) {
                best = v;
                since = 0;
                epoch = e.epoch;
                return true;
            }
            ++since;
            return false;
        }
    };
    void epochCallbacks(const EpochInfo& e) {
        if (o_.keepBest.enabled && keep_.update(e, o_.keepBest.monitor)) keep_.bytes = checkpoint_();
        const EarlyStopping& es = o_.earlyStopping;
        if (es.patience > 0) {
            if (stop_.update(e, es.monitor) && es.restoreBest) stop_.bytes = checkpoint_();
            if (stop_.since >= es.patience) {
                stopEarly_ = true;
                if (es.restoreBest && stop_.epoch != e.epoch) restore_ = stop_.bytes;
            }
        }
        const ReduceLrOnPlateau& rl = o_.reduceLrOnPlateau;
        if (rl.patience > 0 && !plateau_.update(e, rl.monitor) && plateau_.since >= rl.patience) {
            lr_ = std::max(rl.minLr, lr_ * rl.factor);
            engine_.setLearningRate(lr_);
            plateau_.since = 0;
        }
    }

    Engine& engine_;
    const CompileOptions& compiled_;
    const FitData& data_;
    const FitOptions& o_;
    Callbacks callbacks_;
    long& step_;
    std::vector<EpochInfo>& history_;
    std::function<std::vector<uint8_t>()> checkpoint_;
    float lr_;
    Watch keep_, stop_, plateau_;
    bool stopEarly_ = false;
    std::vector<uint8_t> restore_;
    int stepsPerEpoch_ = 1, startedEpoch_ = -1, lastRows_ = 0;
    long endStep_ = 0, reportedStep_ = 0;
    bool started_ = false;
    Clock::time_point start_, epochStart_;
    double epochLossSum_ = 0;
    long epochLossRows_ = 0, epochRows_ = 0;
};

}  // namespace gltrain
