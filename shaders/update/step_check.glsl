// update/step_check: whether everything a step wrote is finite, in one pass for up
// to 8 tensors (the step guard's check, ops/step_guard.hpp) rather than a reduction
// tree per tensor: W1's 18 Adam tensors took 31 passes as max-|x| trees.
// inputs: T0, T1?, T2?, T3?, T4?, T5?, T6?, T7?, ACC?
// output: R x C = K flags, unpacked: fragment k = r C + c looks at rows k, k + K, k + 2K, ...
//   of each bound T (whole rows: no division per texel); ACC (R x C) is an earlier group's
//   output. Several rows of fragments, not one: SwiftShader gave a 1 x 256 target one thread.
// formula: out[k] = 1 if ACC[k] = 1 or any element looked at is NaN or Inf, else 0
//   (packed padding lanes are zeros; an unpacked tensor's .yzw are not looked at)
// The largest magnitude bits seen, by a max per texel (no branch): NaN and Inf are the
// bit patterns from 0x7f800000 up once the sign is masked off.
#define CHECK_INPUT(SHAPE, TEXEL, PACKED)                                          \
    {                                                                              \
        ivec2 s = SHAPE();                                                         \
        int w = PACKED ? (s.y + 3) >> 2 : s.y;                                      \
        uvec4 mask = PACKED ? uvec4(0x7fffffffu) : uvec4(0x7fffffffu, 0u, 0u, 0u); \
        for (int r = k; r < s.x; r += K)                                           \
            for (int tx = 0; tx < w; ++tx) bits = max(bits, floatBitsToUint(TEXEL(tx, r)) & mask); \
    }
void main() {
    ivec2 t = outTexel();
    int k = t.y * outShape().y + t.x, K = outShape().x * outShape().y;
    uvec4 bits = uvec4(0u);
    CHECK_INPUT(T0_shape, T0_texel, T0_PACKED != 0)
#if T1_BOUND
    CHECK_INPUT(T1_shape, T1_texel, T1_PACKED != 0)
#endif
#if T2_BOUND
    CHECK_INPUT(T2_shape, T2_texel, T2_PACKED != 0)
#endif
#if T3_BOUND
    CHECK_INPUT(T3_shape, T3_texel, T3_PACKED != 0)
#endif
#if T4_BOUND
    CHECK_INPUT(T4_shape, T4_texel, T4_PACKED != 0)
#endif
#if T5_BOUND
    CHECK_INPUT(T5_shape, T5_texel, T5_PACKED != 0)
#endif
#if T6_BOUND
    CHECK_INPUT(T6_shape, T6_texel, T6_PACKED != 0)
#endif
#if T7_BOUND
    CHECK_INPUT(T7_shape, T7_texel, T7_PACKED != 0)
#endif
    bool bad = any(greaterThanEqual(bits, uvec4(0x7f800000u)));
#if ACC_BOUND
    bad = bad || ACC_at(t.y, t.x) > 0.5;
#endif
    setOutput(vec4(bad ? 1.0 : 0.0, 0.0, 0.0, 0.0));
}
