// lib/step_guard: what an update kernel does with its step, read from its optional
// 1 x 1 input LOSS: the step's loss, dynamic loss scaling's step guard, or the
// verdict of update/step_guard (ops/step_guard.hpp).
//   finite         apply the step
//   NaN or +Inf    keep the old values: the step is skipped (stepKeep)
//   -Inf           write nothing (stepRevert: the kernel discards), so its target, the
//                  ping-pong's back buffer, which still holds the state before the
//                  previous step, becomes the state again: the previous step is undone
// Tested by bits: some compilers (NVIDIA's) fold isnan()/isinf() away.
#if LOSS_BOUND
bool stepRevert() { return floatBitsToUint(LOSS_at(0, 0)) == 0xff800000u; }
bool stepKeep() { return (floatBitsToUint(LOSS_at(0, 0)) & 0x7fffffffu) >= 0x7f800000u; }
#endif
