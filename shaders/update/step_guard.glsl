// update/step_guard: the verdict the step's update kernels read as their LOSS input
// (lib/step_guard), from the step's loss and what the previous step left.
// inputs: LOSS, SKIP?, CHECK
// LOSS (1 x 1): the step's mean loss. SKIP (1 x 1, optional): dynamic loss scaling's step
//   guard (NaN when the scaled gradients overflowed). CHECK (R x C): update/step_check's flags
//   over the state (parameters, optimizer slots, moving averages) the previous step left, 1
//   where something is NaN or Inf; -1 when the host wrote the state since (no earlier state
//   is kept to go back to).
// defines: REVERT_ON_BAD_LOSS 1: a non-finite loss undoes the previous step too (NanPolicy::Stop:
//   the weights that gave it are not good weights); 0: it only skips this one (Skip)
// output: 1 x 1: -Inf revert the previous step (and skip this one), NaN skip this one, 0 apply
// formula: revert = CHECK >= 0 && (a flag is 1 || REVERT_ON_BAD_LOSS && LOSS not finite)
//          skip = LOSS or SKIP not finite, or a flag is 1 (nothing to go back to)
bool finite(float v) { return (floatBitsToUint(v) & 0x7fffffffu) < 0x7f800000u; }
void main() {
    float loss = LOSS_at(0, 0);
    bool badState = false;
    ivec2 n = CHECK_shape();
    for (int r = 0; r < n.x; ++r)
        for (int c = 0; c < n.y; ++c) badState = badState || CHECK_at(r, c) > 0.5;
    bool kept = CHECK_at(0, 0) >= 0.0;
    bool badLoss = !finite(loss);
    bool revert = kept && (badState || (REVERT_ON_BAD_LOSS != 0 && badLoss));
    bool skip = badLoss || badState;
#if SKIP_BOUND
    skip = skip || !finite(SKIP_at(0, 0));
#endif
    setOutput(vec4(revert ? uintBitsToFloat(0xff800000u) : skip ? uintBitsToFloat(0x7fc00000u) : 0.0));
}
