// Optimizer updates on the GPU: one fused pass per parameter that reads the
// parameter, its gradient and its state slots and writes all of them at once
// through multiple render targets, or, where compute kernels run
// (Capabilities::computeKernels), the same kernel as one compute dispatch
// writing them as images (as every fragment kernel: Pass). Parameters and state slots are PingPong
// pairs (an update reads front and writes back; swap() after the step).
// Formulas: include/gltrain/reference/optimizer.hpp (the CPU oracle) and the
// kernels in shaders/update/.
//
// Each optimizer declares how many state slots a parameter needs (SGD 0,
// momentum 1, Adam/AdamW 2 (m, v), RMSProp 1 or 2); hyper-parameters that
// change per step (learning rate, Adam's bias corrections) are uniforms the
// training loop sets on the recorded pass before replaying it.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/optimizer_config.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/ping_pong.hpp"

namespace gltrain {

// Sets the per-step uniforms of a recorded update: the learning rate and, for
// Adam/AdamW, the bias corrections of step t >= 1 (computed in float, as the
// reference does).
inline void setStep(Pass& pass, const OptimizerConfig& c, int t, float lr) {
    // 0 is fine (a schedule may decay to it); NaN or Inf would poison every parameter.
    if (!(lr >= 0.0f) || !std::isfinite(lr))
        throw ArgumentError("optimizer: the learning rate of step " + std::to_string(t) + " is " + std::to_string(lr) +
                            " (must be finite and >= 0)");
    pass.uniform("lr", lr);
    if (c.kind == OptimizerKind::Adam || c.kind == OptimizerKind::AdamW) {
        if (t < 1) throw ArgumentError("optimizer: Adam's step number t must be >= 1, got " + std::to_string(t));
        pass.uniform("bc1", 1.0f - std::pow(c.beta1, float(t))).uniform("bc2", 1.0f - std::pow(c.beta2, float(t)));
    }
}

// What the gradient given to an update is.
enum class GradientForm {
    Same,      // the parameter's gradient, shaped like it
    ColumnSum  // N x C rows for a 1 x C parameter, whose column sums are the gradient: a
               // bias's dZ, summed over the batch inside the update (one pass, not a
               // reduction tree before it); N <= kColumnSumMaxRows
};
// The longest column an update sums itself: each fragment loops over the N rows,
// and a browser's GPU watchdog punishes long loops.
constexpr int kColumnSumMaxRows = 1024;

namespace detail {
// Checks an update's parameter, state slots and loss guard (the gradient is the caller's).
inline void requireUpdatable(const OptimizerConfig& c, PingPong& param, const std::vector<PingPong*>& state,
                             const Tensor* lossGuard) {
    c.validate();
    Tensor& p = param.front();
    if (!p) throw ArgumentError("optimizer update: the parameter is an empty tensor");
    if (int(state.size()) != c.stateSlots())
        throw ArgumentError(std::string("optimizer update: ") + optimizerName(c.kind) + " needs " +
                            std::to_string(c.stateSlots()) + " state slots, got " + std::to_string(state.size()));
    for (auto* s : state)
        if (!s || !s->front() || s->front().rows() != p.rows() || s->front().cols() != p.cols())
            throw ArgumentError("optimizer update: a state slot is " +
                                (s && s->front() ? s->front().shapeString() : std::string("missing or empty")) +
                                " but the parameter is " + p.shapeString());
    requireSameContext("optimizer update", "the parameter", p, "its next value", param.back());
    for (auto* s : state) {
        requireSameContext("optimizer update", "the parameter", p, "a state slot", s->front());
        requireSameContext("optimizer update", "the parameter", p, "a state slot", s->back());
    }
    if (lossGuard) requireSameContext("optimizer update", "the parameter", p, "the loss guard", *lossGuard);
}

// The update pass of optimizer c for `param` and its state slots (checked by
// the caller), with its hyper-parameters set; the caller binds the gradient
// (G, or lib/mlp's inputs), GSCALE and LOSS.
inline Pass& addUpdatePass(PassList& list, const OptimizerConfig& c, PingPong& param,
                           const std::vector<PingPong*>& state, Defines defines) {
    Context& ctx = param.front().context();
    Tensor& p = param.front();
    auto with = [&](Defines extra) {
        extra.insert(extra.end(), defines.begin(), defines.end());
        return extra;
    };
    Pass* pass = nullptr;
    switch (c.kind) {
        case OptimizerKind::SGD:
            pass = &list.add(Pass(ctx, "update/sgd", defines));
            pass->input("P", p).output(param.back());
            break;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov:
            pass = &list.add(
                Pass(ctx, "update/momentum", with({{"NESTEROV", c.kind == OptimizerKind::Nesterov ? "1" : "0"}})));
            pass->input("P", p).input("V", state[0]->front());
            pass->output("PN", param.back()).output("VN", state[0]->back()).uniform("mu", c.momentum);
            break;
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:
            pass =
                &list.add(Pass(ctx, "update/adam", with({{"DECOUPLED", c.kind == OptimizerKind::AdamW ? "1" : "0"}})));
            pass->input("P", p).input("M", state[0]->front()).input("V", state[1]->front());
            pass->output("PN", param.back()).output("MN", state[0]->back()).output("VN", state[1]->back());
            pass->uniform("b1", c.beta1).uniform("b2", c.beta2).uniform("eps", c.eps);
            break;
        case OptimizerKind::RMSProp:
            pass = &list.add(Pass(ctx, "update/rmsprop", defines));
            pass->input("P", p).input("S", state[0]->front());
            pass->output("PN", param.back()).output("SN", state[0]->back());
            // Without momentum BN is a scratch target the list owns.
            if (state.size() == 2) pass->input("B", state[1]->front()).output("BN", state[1]->back());
            else pass->output("BN", list.temp(ctx, p.rows(), p.cols(), p.layout()));
            pass->uniform("rho", c.rho).uniform("eps", c.eps).uniform("mu", c.momentum);
            break;
    }
    pass->uniform("lr", c.lr).uniform("wd", c.weightDecay);
    if (c.kind == OptimizerKind::Adam || c.kind == OptimizerKind::AdamW) setStep(*pass, c, 1, c.lr);
    return *pass;
}
}  // namespace detail

// Records the update of one parameter. `state` must hold config.stateSlots()
// pairs shaped like the parameter; `gscale`, if given, is a 1x1 tensor the
// gradient is multiplied by (clip by global norm); `lossGuard`, if given, is
// the step's 1x1 loss: when it is NaN or Inf the update keeps the parameter
// and its state as they were (the last good step survives). Returns the pass so
// the caller can set per-step uniforms (see setStep). `form` says whether
// `grad` is the gradient or rows to sum into it (GradientForm).
inline Pass& recordOptimizerUpdate(PassList& list, const OptimizerConfig& c, PingPong& param, const Tensor& grad,
                                   std::vector<PingPong*> state, const Tensor* gscale = nullptr,
                                   const Tensor* lossGuard = nullptr, GradientForm form = GradientForm::Same) {
    detail::requireUpdatable(c, param, state, lossGuard);
    Tensor& p = param.front();
    const bool sumRows = form == GradientForm::ColumnSum;
    if (sumRows && p.rows() != 1)
        throw ArgumentError("optimizer update: a column-sum gradient needs a 1 x C parameter, got " + p.shapeString());
    if (!grad || (!sumRows && grad.rows() != p.rows()) || grad.cols() != p.cols())
        throw ArgumentError("optimizer update: gradient is " + grad.shapeString() + " but the parameter is " +
                            p.shapeString() + (sumRows ? " (a column-sum gradient: N x C for 1 x C)" : ""));
    if (sumRows && grad.rows() > kColumnSumMaxRows)
        throw ArgumentError("optimizer update: a column-sum gradient of " + std::to_string(grad.rows()) +
                            " rows; at most " + std::to_string(kColumnSumMaxRows) + " (reduce it first)");
    detail::requireSameContext("optimizer update", "the parameter", p, "its gradient", grad);
    if (gscale) detail::requireSameContext("optimizer update", "the parameter", p, "the gradient scale", *gscale);
    Pass& pass = detail::addUpdatePass(list, c, param, state, {{"G_SUM_ROWS", sumRows ? "1" : "0"}});
    pass.input("G", grad);
    if (gscale) pass.input("GSCALE", *gscale);
    if (lossGuard) pass.input("LOSS", *lossGuard);
    return pass;
}

}  // namespace gltrain
