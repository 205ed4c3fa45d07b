// Learning-rate schedules: lr(step) for step = 0, 1, 2, ... evaluated on the
// host each step and handed to the update passes as a uniform.
#pragma once
#include <cmath>
#include <string>

#include "gltrain/error.hpp"

namespace gltrain {

// A learning-rate schedule (CompileOptions::schedule): constant, step, exponential or cosine, with warm-up.
struct Schedule {
    // The kind of schedule.
    enum Kind { Constant, Step, Exponential, Cosine } kind = Constant;
    int stepSize = 1000;     // Step: multiply by gamma every stepSize steps
    float gamma = 0.1f;      // Step, Exponential: lr * gamma^(step / stepSize) (exponential: continuous)
    int warmupSteps = 0;     // Cosine: linear warm-up from 0
    int totalSteps = 10000;  // Cosine: decays to minLr at totalSteps
    // The floor the cosine schedule decays to.
    float minLr = 0.0f;

    // The learning rate at `step` for a base rate `baseLr`.
    float at(float baseLr, long step) const {
        switch (kind) {
            case Constant: return baseLr;
            case Step: return baseLr * std::pow(gamma, float(step / stepSize));
            case Exponential: return baseLr * std::pow(gamma, float(step) / float(stepSize));
            case Cosine: {
                if (step < warmupSteps) return baseLr * float(step + 1) / float(warmupSteps);
                float t = std::min(1.0f, float(step - warmupSteps) / float(std::max(1, totalSteps - warmupSteps)));
                return minLr + (baseLr - minLr) * 0.5f * (1.0f + std::cos(3.14159265f * t));
            }
        }
        return baseLr;
    }

    // Throws ArgumentError naming a parameter out of its range.
    void validate() const {
        if (kind != Constant && kind != Step && kind != Exponential && kind != Cosine)
            throw ArgumentError("schedule: unknown kind " + std::to_string(int(kind)) + " (not a Schedule::Kind)");
        if (stepSize <= 0) throw ArgumentError("schedule: stepSize must be positive, got " + std::to_string(stepSize));
        if (!(gamma > 0.0f) || !std::isfinite(gamma))
            throw ArgumentError("schedule: gamma must be positive and finite, got " + std::to_string(gamma));
        if (warmupSteps < 0 || totalSteps <= 0) throw ArgumentError("schedule: warmupSteps >= 0 and totalSteps > 0");
        if (!(minLr >= 0.0f) || !std::isfinite(minLr))
            throw ArgumentError("schedule: minLr must be finite and >= 0, got " + std::to_string(minLr));
    }
};

}  // namespace gltrain
