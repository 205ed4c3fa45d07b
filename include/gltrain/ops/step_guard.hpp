// The step guard: a step whose loss is not finite, or that leaves parameters,
// optimizer slots or moving averages that are not finite, never becomes the
// model's state — decided on the GPU, without a readback.
//
// Every updated tensor is a PingPong: a step reads front() and writes back(),
// and the host swaps them. So while step s runs, back() still holds the state
// from before step s - 1. Each step ends with CHECK, flags saying whether
// everything it wrote is finite (recordStepCheck: update/step_check, one pass
// per 8 tensors: W1's Adam step checks its 12 tensors in 2 passes). The next
// step's first pass (recordStepGuard) turns CHECK and that step's loss into the
// verdict its update kernels read as their LOSS input (shaders/lib/step_guard):
// apply, skip (keep front()), or revert (write nothing, so back(), the state
// before the bad step, becomes the state again). A step's own outputs are thus
// judged one step later, and the bad step is undone then; the host settles the
// last step of a fit itself (Sequential::settleLastStep).
#pragma once
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "gltrain/optimizer_config.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/ping_pong.hpp"

namespace gltrain {

// CHECK is kStepCheckRows x kStepCheckCols flags: fragment k of update/step_check
// looks at every K-th row, so a GPU checks in parallel and the guard's loop stays short.
constexpr int kStepCheckRows = 16, kStepCheckCols = 16;
// CHECK's value after the host wrote the state (compile, load, restore): no
// earlier state is kept in the back buffers, so nothing may be reverted to.
constexpr float kStepCheckFresh = -1.0f;
// Update passes per step_check pass: 8 samplers, and ACC, of the 16 every device has.
constexpr size_t kStepCheckInputs = 8;

inline HostMatrix freshStepCheck() {
    return HostMatrix(kStepCheckRows, kStepCheckCols,
                      std::vector<float>(size_t(kStepCheckRows) * kStepCheckCols, kStepCheckFresh));
}
inline PingPong makeStepCheckState(Context& ctx) { return PingPong(ctx, freshStepCheck(), Layout::Unpacked); }
inline void resetStepCheck(PingPong& check) { check.front().upload(freshStepCheck()); }
// Whether a CHECK read back says the state it looked at is not finite.
inline bool stepCheckFailed(const HostMatrix& check) {
    for (float f : check.data)
        if (f > 0.5f) return true;
    return false;
}

// guard (1 x 1) = the verdict of this step from its loss (1 x 1), loss scaling's
// step guard `skip` (optional) and check.front(). revertOnBadLoss: a non-finite
// loss undoes the previous step too (NanPolicy::Stop), not only this one.
inline Pass& recordStepGuard(PassList& list, const Tensor& loss, const Tensor* skip, PingPong& check,
                             bool revertOnBadLoss, Tensor& guard) {
    Pass& p =
        list.add(Pass(loss.context(), "update/step_guard", {{"REVERT_ON_BAD_LOSS", revertOnBadLoss ? "1" : "0"}}));
    p.input("LOSS", loss).input("CHECK", check.front()).output(guard);
    if (skip) p.input("SKIP", *skip);
    return p;
}

// What the check must look at for one parameter's update: its next value and
// its slots of squared gradients (Adam's v, RMSProp's s). The other slots
// cannot go bad alone: from finite state, Adam's m or RMSProp's momentum b
// leave the finite range only through a gradient whose square already did
// (|g| >= 1.8e19 makes g^2 Inf; b's increment g / sqrt(s) is bounded by
// 1 / sqrt(1 - rho)), and momentum's v only by making the parameter, which
// steps by lr v, Inf or NaN. Leaving them out saves Adam a third of the check's reads.
inline void addCheckedOutputs(std::vector<const Tensor*>& checked, PingPong& param, const std::vector<PingPong*>& slots,
                              const OptimizerConfig& c) {
    checked.push_back(&param.back());
    for (size_t i = 0; i < slots.size(); ++i)
        if (c.slotIsSquare(int(i))) checked.push_back(&slots[i]->back());
}

// check.back() = the flags of `written`, the back() buffers the step's updates
// wrote (the caller swaps check with them). Where compute kernels run, as a
// compute dispatch with a workgroup per flag (update/step_check_groups): on an
// H100 the fragment form took over half of a large MLP's step.
inline void recordStepCheck(PassList& list, const std::vector<const Tensor*>& written, PingPong& check) {
    if (written.empty()) throw ArgumentError("stepCheck: no tensors to check");
    Context& ctx = check.front().context();
    const char* kernel = ctx.caps().computeKernels ? "update/step_check_groups" : "update/step_check";
    const Tensor* acc = nullptr;
    for (size_t first = 0; first < written.size(); first += kStepCheckInputs) {
        const size_t end = std::min(written.size(), first + kStepCheckInputs);
        Tensor& out =
            end == written.size() ? check.back() : list.temp(ctx, kStepCheckRows, kStepCheckCols, Layout::Unpacked);
        Pass& p = list.add(Pass(ctx, kernel));
        for (size_t i = first; i < end; ++i) p.input("T" + std::to_string(i - first), *written[i]);
        if (acc) p.input("ACC", *acc);
        p.output(out);
        acc = &out;
    }
}

}  // namespace gltrain
