// Dynamic loss scaling, one step: the reference for update/loss_scale.glsl.
// Half-float storage flushes gradients below 6e-8 to zero (and keeps few bits
// of those below 6e-5), so the loss gradient is multiplied by a scale S and
// the update divides by it again; a step whose scaled gradients overflowed
// (an inf or NaN) is skipped and halves S, and every growthInterval good
// steps double it — as PyTorch's GradScaler and TensorFlow's
// LossScaleOptimizer do.
#pragma once
#include <algorithm>
#include <cmath>

namespace gltrain::ref {

struct LossScaleState {
    float scale = 1024.0f;
    float goodSteps = 0.0f;
};

struct LossScaleStep {
    LossScaleState next;
    float factor = 1.0f;  // what the update multiplies the scaled gradients by
    bool skip = false;    // keep the parameters and optimizer state as they were
};

// gmax: max |g| over the scaled gradients; loss: the step's mean loss;
// norm (when clipping by maxNorm > 0): the scaled gradients' global L2 norm.
// overflowAt: the storage's largest finite value (65504 for half floats,
// which some drivers saturate at instead of making inf).
inline LossScaleStep lossScaleStep(LossScaleState s, float gmax, float loss, int growthInterval, float minScale,
                                   float maxScale, float overflowAt, float norm = 0.0f, float maxNorm = 0.0f) {
    LossScaleStep r;
    const bool overflow = !(gmax < overflowAt);
    if (overflow) r.next = {std::max(s.scale * 0.5f, minScale), 0.0f};
    else if (s.goodSteps + 1.0f >= float(growthInterval)) r.next = {std::min(s.scale * 2.0f, maxScale), 0.0f};
    else r.next = {s.scale, s.goodSteps + 1.0f};
    float f = 1.0f;
    if (maxNorm > 0.0f) {
        const float n = norm / s.scale;
        f = !std::isnan(n) && n > maxNorm ? maxNorm / n : 1.0f;
    }
    r.factor = f / s.scale;
    r.skip = overflow || !std::isfinite(loss);
    return r;
}

}  // namespace gltrain::ref
