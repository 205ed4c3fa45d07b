// update/step_check_groups: update/step_check as a compute kernel, where compute
// kernels run (Capabilities::computeKernels). The fragment form is 256 fragments,
// each reading every 256th row of every checked tensor alone: on an H100 its two
// passes took 1.93 ms of the 784-2048-2048-10 MLP's 3.53 ms step (bench/GPU.md),
// a few hundred threads reading 48 MB one texel after another. Here each flag is a
// workgroup of 256 threads that read its rows' texels side by side and OR their
// verdicts in shared memory: the same rows behind each flag, so the same flags.
// stage: compute
// tile: 1 x 1
// inputs: T0, T1?, T2?, T3?, T4?, T5?, T6?, T7?, ACC?
// output: R x C = K flags, unpacked: flag k = r C + c looks at rows k, k + K, k + 2K, ...
//   of each bound T; ACC (R x C) is an earlier group's output
// formula: out[k] = 1 if ACC[k] = 1 or any element looked at is NaN or Inf, else 0
//   (packed padding lanes are zeros; an unpacked tensor's .yzw are not looked at)
layout(local_size_x = 256) in;

shared uint anyBad;

// The largest magnitude bits of this thread's texels (NaN and Inf are the bit
// patterns from 0x7f800000 up once the sign is masked off): texel j of the
// flag's rows, for j = thread, thread + 256, ... (row k + K (j / w), texel j % w).
#define CHECK_INPUT(SHAPE, TEXEL, PACKED)                                          \
    {                                                                              \
        ivec2 s = SHAPE();                                                         \
        int w = PACKED ? (s.y + 3) >> 2 : s.y;                                      \
        uvec4 mask = PACKED ? uvec4(0x7fffffffu) : uvec4(0x7fffffffu, 0u, 0u, 0u); \
        int rows = s.x > k ? (s.x - k + K - 1) / K : 0;                            \
        for (int j = tid; j < rows * w; j += 256) {                                \
            int q = j / w;                                                         \
            bits = max(bits, floatBitsToUint(TEXEL(j - q * w, k + q * K)) & mask); \
        }                                                                          \
    }
void main() {
    int tid = int(gl_LocalInvocationID.x);
    int c = int(gl_WorkGroupID.x), r = int(gl_WorkGroupID.y);
    int k = r * outShape().y + c, K = outShape().x * outShape().y;
    if (tid == 0) anyBad = 0u;
    barrier();
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
    if (any(greaterThanEqual(bits, uvec4(0x7f800000u)))) atomicOr(anyBad, 1u);
    barrier();
    if (tid != 0) return;
    bool bad = anyBad != 0u;
#if ACC_BOUND
    bad = bad || ACC_at(r, c) > 0.5;
#endif
    setTexel(c, r, vec4(bad ? 1.0 : 0.0, 0.0, 0.0, 0.0));
}
