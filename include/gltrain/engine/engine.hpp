// What a model asks of the engine that holds its numbers and runs its graph:
// the GPU engine (engine/gpu_engine.hpp: textures and recorded pass lists)
// or the CPU engine (engine/cpu_engine.hpp: host matrices and SIMD kernels).
// Everything else — shapes, validation, the fit loop (model/fit_loop.hpp),
// callbacks, checkpoints — is written once over this interface (model/model.hpp).
//
// An engine stores the model's variables (model/variables.hpp) by index; a
// step is asked for by number and position in its epoch, so an engine keeps
// no training state the loop does not know of except its own caches (data on
// the device, recorded plans, the counts of correct predictions).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gltrain/graph/model_graph.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain {

// What a fit trains and validates on. x (and validationX) are the caller's and
// outlive the fit; y is a copy (often a temporary made from labels).
struct FitData {
    const HostMatrix* x = nullptr;
    Targets y;
    int trainRows = 0;  // x's first rows train
    int valRows = 0;    // the next ones validate (validationSplit); or options.validationX/Y
    FitOptions options;
    bool accuracy = true;                // the model reports accuracy (it has a softmax cross-entropy output)
    const graph::ModelIO* io = nullptr;  // the model's metrics (null: none)
};

// One training step: the global step it is (0-based: the update's t is step + 1),
// its epoch and index in the epoch, which rows (of the epoch's order) it trains on.
struct StepRequest {
    long step = 0;
    int epoch = 0, batch = 0;
    int firstRow = 0, rows = 0;
    bool readLoss = false;  // the loss now (a synchronous read on the GPU)
    bool counted = true;    // its correct predictions count toward the epoch's accuracy (not a replayed step)
};
struct StepResult {
    float loss = std::numeric_limits<float>::quiet_NaN();  // when read
    bool lossRead = false;
    bool updateRejected =
        false;  // the update left a value that is not finite and was undone (engines that know at once)
};
struct LossReading {
    float loss = 0;
    long step = 0;  // the step it belongs to
    int rows = 0;
};
using graph::EpochSums;
using graph::metricFigures;

class Engine {
public:
    virtual ~Engine() = default;

    // ---- the variables (model/variables.hpp's order); slot -1 is the value ----
    virtual HostMatrix read(size_t var, int slot) const = 0;
    virtual void write(size_t var, int slot, const HostMatrix& value) = 0;
    // The host wrote the state, now at `step`: no step before it may be undone.
    // `checkpoint`: the state as checkpoint bytes, when the host has them.
    virtual void stateWritten(long step, const std::vector<uint8_t>* checkpoint) = 0;

    // Every entry that computes calls this first. It throws while the engine
    // cannot run (a lost GL context); after it came back the engine rebuilds
    // itself from its last snapshot and returns the step that snapshot is of.
    virtual std::optional<long> ensureUsable(const char* what) = 0;

    // ---- a fit (model/fit_loop.hpp drives these) ----
    // Whether every step's loss is known at once (the CPU): the loop then judges
    // every step's loss and update, and asyncLoss reads at once.
    virtual bool everyLossKnown() const = 0;
    virtual void beginFit(const FitData& data) = 0;
    virtual void fitStarting(long /*step*/) {}
    virtual void startEpoch() = 0;  // the correct counts and metric sums start again
    virtual StepResult step(const StepRequest& r) = 0;
    virtual void stepDone(long /*step*/, int /*snapshotEvery*/) {}
    // asyncLoss: a read of the last step's loss through a fence, one at a time.
    virtual void issueLossRead(long /*step*/, int /*rows*/) {}
    virtual std::optional<LossReading> takeLossRead(bool /*wait*/) { return std::nullopt; }
    virtual float lastLoss() = 0;  // the last step's mean loss
    virtual EpochSums epochSums() = 0;
    virtual Evaluation validate(int batchSize) = 0;  // on the fit's validation data
    // The fit ended (done, stopped or abandoned): the engine settles its last
    // step and, unless lost, keeps the state as the snapshot.
    virtual void endFit(long step) = 0;

    // ---- outside a fit ----
    virtual Evaluation evaluate(const HostMatrix& x, const Targets& y, int batchSize) = 0;
    virtual HostMatrix predict(const HostMatrix& x, int batchSize) = 0;
    // A training step's parts at this batch size on the first rows, each timed
    // `reps` times; the model does not change.
    virtual std::vector<PassTiming> profileStep(const HostMatrix& x, const Targets& y, int batchSize, int reps,
                                                long step) = 0;

    // ---- lost contexts ----
    // The state a lost context restores, as a checkpoint (the state now for an engine that cannot lose it).
    virtual std::vector<uint8_t> snapshotCheckpoint() = 0;
    virtual long snapshotStep() const = 0;
    virtual int restorations() const { return 0; }
    // Dynamic loss scaling's scale (0: off).
    virtual float lossScale() = 0;
    // The learning rate the schedule scales from, from the next step on (ReduceLrOnPlateau).
    virtual void setLearningRate(float lr) = 0;
};

}  // namespace gltrain
