// update/loss_scale: one step of dynamic loss scaling, decided on the GPU (no readback).
// inputs: LS, GMAX, LOSS?, NORM?
// outputs: NEXT, FACTOR, GUARD
// uses: reduce/common
// LS (1 x 1): x = the scale S this step's loss gradient was multiplied by, y = good steps since
//   S last changed. GMAX (1 x 1) = max |g| over the step's scaled gradients (globalMaxAbs: NaN or
//   inf when any gradient overflowed; some drivers, llvmpipe among them, saturate a half float at
//   65504 instead of making it inf, so reaching overflowAt counts as overflow too). LOSS (1 x 1) = the step's mean loss. NORM (1 x 1) = the
//   scaled gradients' global L2 norm, for clipping by norm. All outputs are 1 x 1.
// uniforms: growthInterval (good steps before S doubles), minScale, maxScale, maxNorm (with NORM),
//           overflowAt (the largest finite value of the storage: 65504 for half floats)
// formula: overflow = !(GMAX < overflowAt) (NaN included)
//   NEXT   = overflow: (max(S / 2, minScale), 0); else y + 1 >= growthInterval: (min(2 S, maxScale), 0);
//            else (S, y + 1)
//   FACTOR = f / S: the updates multiply the gradients by it (f = the clip factor of NORM / S as
//            reduce/clip_factor computes it, 1 without NORM)
//   GUARD  = NaN when overflow or LOSS is not finite (the updates then keep the last good values,
//            update/*: LOSS input), else 0
uniform float growthInterval;
uniform float minScale;
uniform float maxScale;
uniform float maxNorm;
uniform float overflowAt;

bool finite(float v) { return (floatBitsToUint(v) & 0x7fffffffu) < 0x7f800000u; }

void main() {
    vec4 ls = LS_texel(0, 0);
    float s = ls.x, good = ls.y;
    // finite() by its bits: NVIDIA's compiler turns !(g < overflowAt) into g >= overflowAt, false for NaN.
    float gmax = GMAX_at(0, 0);
    bool overflow = !finite(gmax) || !(gmax < overflowAt);
    vec4 next;
    if (overflow) next = vec4(max(s * 0.5, minScale), 0.0, 0.0, 0.0);
    else if (good + 1.0 >= growthInterval) next = vec4(min(s * 2.0, maxScale), 0.0, 0.0, 0.0);
    else next = vec4(s, good + 1.0, 0.0, 0.0);
    float f = 1.0;
#if NORM_BOUND
    float n = NORM_at(0, 0) / s;
    f = !red_isnan(n) && n > maxNorm ? maxNorm / n : 1.0;
#endif
    bool bad = overflow;
#if LOSS_BOUND
    bad = bad || !finite(LOSS_at(0, 0));
#endif
    setNEXT(next);
    setFACTOR(vec4(f / s));
    setGUARD(vec4(bad ? uintBitsToFloat(0x7fc00000u) : 0.0));
}
