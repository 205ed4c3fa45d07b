// Dynamic loss scaling on the GPU (reference: reference/loss_scale.hpp).
// The state — the scale S and the count of good steps — is a 1 x 2 PingPong
// that one pass per training step reads and rewrites, so the steady state
// reads nothing back:
//
//   loss gradient * S  (the loss ops' gradScale input: S is state.front())
//   backward           (every gradient is scaled by S)
//   gmax = globalMaxAbs(gradients)
//   loss_scale pass    -> next state, FACTOR = clip / S, GUARD (NaN: skip the step)
//   updates            (gscale = FACTOR, lossGuard = GUARD)
//   state.swap()
//
// Sequential turns it on for the half-float backend (CompileOptions::lossScaling).
#pragma once
#include <cmath>
#include <limits>
#include <string>

#include "gltrain/pass_list.hpp"
#include "gltrain/ping_pong.hpp"

namespace gltrain {

struct LossScaling {
    enum Mode {
        Auto,  // on for the gpu-float16 backend, off for gpu-float32
        Off,
        On
    };
    Mode mode = Auto;
    float initialScale = 1024.0f;  // a power of two in [1, 32768] (32768 is the largest a half float holds)
    int growthInterval = 200;      // good steps before the scale doubles, in [1, 2048]

    bool enabled(bool halfFloat) const { return mode == On || (mode == Auto && halfFloat); }
    void validate() const {
        auto bad = [](const std::string& what) { throw ArgumentError("lossScaling: " + what); };
        if (mode != Auto && mode != Off && mode != On)
            bad("mode " + std::to_string(int(mode)) + " is not a LossScaling::Mode");
        int e = 0;
        if (!(initialScale >= 1.0f && initialScale <= 32768.0f) || std::frexp(initialScale, &e) != 0.5f)
            bad("initialScale must be a power of two in [1, 32768], got " + std::to_string(initialScale));
        if (growthInterval < 1 || growthInterval > 2048)
            bad("growthInterval must be in [1, 2048] (a half float counts exactly to 2048), got " +
                std::to_string(growthInterval));
    }
};

// The scale never leaves [1, 32768]: powers of two a half float holds exactly.
constexpr float kMinLossScale = 1.0f, kMaxLossScale = 32768.0f;
// The largest finite half float: a gradient that reaches it has overflowed
// (drivers saturate there or make inf).
constexpr float kHalfMax = 65504.0f;

// A fresh loss-scale state (1 x 2: scale, good steps).
inline PingPong makeLossScaleState(Context& ctx, const LossScaling& c) {
    return PingPong(ctx, HostMatrix(1, 2, std::vector<float>{c.initialScale, 0.0f}));
}

// Records the per-step pass. gmax: globalMaxAbs of the scaled gradients;
// loss (optional): the step's 1 x 1 mean loss, whose NaN/Inf also skips the
// step; norm (optional, with maxNorm > 0): the scaled gradients' global L2
// norm for clipping. factor and guard: 1 x 2 outputs for the updates.
inline Pass& recordLossScaleStep(PassList& list, const LossScaling& c, PingPong& state, const Tensor& gmax,
                                 const Tensor* loss, const Tensor* norm, float maxNorm, Tensor& factor, Tensor& guard) {
    c.validate();
    auto shape = [](const Tensor& t, int r, int k, const char* what) {
        if (!t || t.rows() != r || t.cols() != k)
            throw ArgumentError(std::string("lossScaleStep: ") + what + " is " + (t ? t.shapeString() : "empty") +
                                ", expected " + std::to_string(r) + "x" + std::to_string(k));
    };
    shape(state.front(), 1, 2, "the state");
    shape(gmax, 1, 1, "gmax");
    shape(factor, 1, 2, "factor");
    shape(guard, 1, 2, "guard");
    if (loss) shape(*loss, 1, 1, "loss");
    if (norm) {
        shape(*norm, 1, 1, "norm");
        if (!(maxNorm > 0.0f)) throw ArgumentError("lossScaleStep: maxNorm must be > 0 with a norm");
    }
    Context& ctx = gmax.context();
    Pass& p = list.add(Pass(ctx, "update/loss_scale"));
    p.input("LS", state.front())
        .input("GMAX", gmax)
        .output("NEXT", state.back())
        .output("FACTOR", factor)
        .output("GUARD", guard);
    if (loss) p.input("LOSS", *loss);
    if (norm) p.input("NORM", *norm).uniform("maxNorm", maxNorm);
    p.uniform("growthInterval", float(c.growthInterval))
        .uniform("minScale", kMinLossScale)
        .uniform("maxScale", kMaxLossScale);
    p.uniform("overflowAt", ctx.renderFormat() == GL_RGBA16F ? kHalfMax : std::numeric_limits<float>::max());
    return p;
}

}  // namespace gltrain
