// The step guard: a step whose loss is not finite, or that leaves parameters,
// optimizer slots or moving averages that are not finite, never becomes the
// model's state — decided on the GPU, without a readback.
//
// Every updated tensor is a PingPong: a step reads front() and writes back(),
// and the host swaps them. So while step s runs, back() still holds the state
// from before step s - 1. Each step ends with CHECK = max |x| over everything
// it wrote (recordStepCheck; NaN or Inf when anything is not finite). The next
// step's first pass (recordStepGuard) turns CHECK and that step's loss into the
// verdict its update kernels read as their LOSS input (shaders/lib/step_guard):
// apply, skip (keep front()), or revert (write nothing, so back(), the state
// before the bad step, becomes the state again). A step's own outputs are thus
// judged one step later, and the bad step is undone then; the host settles the
// last step of a fit itself (Sequential::settleLastStep).
#pragma once
#include <limits>
#include <vector>

#include "gltrain/ops/reduce.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/ping_pong.hpp"

namespace gltrain {

// CHECK's value after the host wrote the state (compile, load, restore): no
// earlier state is kept in the back buffers, so nothing may be reverted to.
constexpr float kStepCheckFresh = -1.0f;

inline PingPong makeStepCheckState(Context& ctx) {
    return PingPong(ctx, HostMatrix(1, 1, std::vector<float>{kStepCheckFresh}), Layout::Unpacked);
}
inline void resetStepCheck(PingPong& check) {
    check.front().upload(HostMatrix(1, 1, std::vector<float>{kStepCheckFresh}));
}

// guard (1 x 1) = the verdict of this step from its loss (1 x 1), loss scaling's
// step guard `skip` (optional) and check.front(). revertOnBadLoss: a non-finite
// loss undoes the previous step too (NanPolicy::Stop), not only this one.
inline Pass& recordStepGuard(PassList& list, const Tensor& loss, const Tensor* skip, PingPong& check,
                             bool revertOnBadLoss, Tensor& guard) {
    Pass& p = list.add(Pass(loss.context(), "update/step_guard", {{"REVERT_ON_BAD_LOSS", revertOnBadLoss ? "1" : "0"}}));
    p.input("LOSS", loss).input("CHECK", check.front()).output(guard);
    if (skip) p.input("SKIP", *skip);
    return p;
}

// check.back() = max |x| over `written`, the back() buffers the step's updates
// wrote (the caller swaps check with them).
inline void recordStepCheck(PassList& list, const std::vector<const Tensor*>& written, PingPong& check) {
    recordGlobalMaxAbs(list, written, check.back());
}

}  // namespace gltrain
