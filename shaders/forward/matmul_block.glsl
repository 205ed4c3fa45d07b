// forward/matmul_block: the register-blocked matmul — each fragment computes a
// P x 4 block of C (rows Pg..Pg+P-1, columns 4x..4x+3; P = OUT_PHASES, 4 for a
// PackedRows4 output, 8 for PackedRows8) and writes its P rows at once to the
// P row layers of the output, one render target each.
// inputs: A, B, CPREV?, BIAS?, Z?
// blocks: rows
// uses: lib/activation
// defines: TRANS_A (C = Aᵀ·B, A stored K x M), TRANS_B (C = A·Bᵀ, B stored N x K) — not both;
//          ACT, DACT as in forward/matmul. All inputs packed (any row layout).
// uniforms: k0, k1 (the K slice; multiples of 4 except at K)
// output: M x N, PackedRows4 or PackedRows8
// formula: as forward/matmul: C = CPREV + op(A)·op(B) (+ BIAS, f, * f'(Z))
// Fetches per 4 k: NN and NT 4 of B + P of A for 16P multiply-adds (8 per 64
// at P = 4, 12 per 128 at P = 8); TN 1 of B + P/4 of A per k (one texel of A
// holds 4 rows' coefficients) — against 20 per 64 for four one-texel fragments.
// Each loop iteration covers 8 k (NN, NT) or 4 (TN): SwiftShader pays per
// iteration, and W1's step in Chromium took 22-25 against 26-28 ms with one
// 4-k step (TN: one k) per iteration.
uniform int k0;
uniform int k1;

void main() {
    ivec2 t = outTexel();
    int x = t.x, lastRow = outShape().x - 1;
    // The block's rows; rows past the end repeat the last one (their results are never read).
    ivec4 r = min(ivec4(t.y) + ivec4(0, 1, 2, 3), ivec4(lastRow));
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
#if OUT_PHASES == 8
    ivec4 s = min(ivec4(t.y) + ivec4(4, 5, 6, 7), ivec4(lastRow));
    vec4 c4 = vec4(0.0), c5 = vec4(0.0), c6 = vec4(0.0), c7 = vec4(0.0);
#endif
#if TRANS_A
    // C[m, :] = sum_k A[k, m] B[k, :]: A's texel (m/4, k) holds A[k, 4g..4g+3].
    // Four k per step, their products summed before they meet an accumulator
    // (SwiftShader keeps accumulators in memory: one update per 4 k, not per k).
    int g = t.y >> 2;
#define ROWS4(c0, c1, c2, c3, gg) { \
        vec4 a0 = A_texel(gg, k), a1 = A_texel(gg, k + 1), a2 = A_texel(gg, k + 2), a3 = A_texel(gg, k + 3); \
        c0 += a0.x * b0 + a1.x * b1 + a2.x * b2 + a3.x * b3; c1 += a0.y * b0 + a1.y * b1 + a2.y * b2 + a3.y * b3; \
        c2 += a0.z * b0 + a1.z * b1 + a2.z * b2 + a3.z * b3; c3 += a0.w * b0 + a1.w * b1 + a2.w * b2 + a3.w * b3; }
#if OUT_PHASES == 8
    int g2 = min(g + 1, lastRow >> 2);  // rows 4..7 of the block (past the end: clamped, discarded)
#define ROWS4_8 ROWS4(c4, c5, c6, c7, g2)
#define STEP(k) { \
        vec4 b = B_texel(x, k); \
        vec4 a = A_texel(g, k); \
        c0 += a.x * b; c1 += a.y * b; c2 += a.z * b; c3 += a.w * b; \
        a = A_texel(g2, k); \
        c4 += a.x * b; c5 += a.y * b; c6 += a.z * b; c7 += a.w * b; }
#else
#define ROWS4_8
#define STEP(k) { \
        vec4 b = B_texel(x, k); \
        vec4 a = A_texel(g, k); \
        c0 += a.x * b; c1 += a.y * b; c2 += a.z * b; c3 += a.w * b; }
#endif
    // Four k per iteration (SwiftShader pays per loop iteration), then the tail.
    int kEnd4 = k0 + ((k1 - k0) / 4) * 4;
    for (int k = k0; k < kEnd4; k += 4) {
        vec4 b0 = B_texel(x, k), b1 = B_texel(x, k + 1), b2 = B_texel(x, k + 2), b3 = B_texel(x, k + 3);
        ROWS4(c0, c1, c2, c3, g)
        ROWS4_8
    }
    for (int k = kEnd4; k < k1; ++k) STEP(k)
#elif TRANS_B
    // C[r, c] = dot(A[r, :], B[c, :]) four k at a time; padding lanes are zero;
    // two steps per iteration (SwiftShader pays per loop iteration).
#define ROW(c, row) { vec4 a = A_texel(kt, row); c += vec4(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3)); }
#if OUT_PHASES == 8
#define STEP4(k4) { int kt = (k4); \
        vec4 b0 = B_texel(kt, cs.x), b1 = B_texel(kt, cs.y), b2 = B_texel(kt, cs.z), b3 = B_texel(kt, cs.w); \
        ROW(c0, r.x) ROW(c1, r.y) ROW(c2, r.z) ROW(c3, r.w) ROW(c4, s.x) ROW(c5, s.y) ROW(c6, s.z) ROW(c7, s.w) }
#else
#define STEP4(k4) { int kt = (k4); \
        vec4 b0 = B_texel(kt, cs.x), b1 = B_texel(kt, cs.y), b2 = B_texel(kt, cs.z), b3 = B_texel(kt, cs.w); \
        ROW(c0, r.x) ROW(c1, r.y) ROW(c2, r.z) ROW(c3, r.w) }
#endif
    int lastCol = B_geom.x - 1;
    ivec4 cs = min(ivec4(x * 4) + ivec4(0, 1, 2, 3), ivec4(lastCol));
    // Texels k0/4 .. ceil(k1/4) - 1 of each row (k1 past a multiple of 4 only at K, in padding).
    int t0 = k0 >> 2, t1 = (k1 + 3) >> 2, t2 = t0 + ((t1 - t0) / 2) * 2;
    for (int k4 = t0; k4 < t2; k4 += 2) { STEP4(k4) STEP4(k4 + 1) }
    if (t2 < t1) STEP4(t2)
#else
    // C[r, :] = sum_k A[r, k] B[k, :]: four k per step, A's padding lanes are zero;
    // two steps per iteration (SwiftShader pays per loop iteration).
#define ROW(c, row) { vec4 a = A_texel(k4, row); c += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3; }
#if OUT_PHASES == 8
#define STEP4(k) { int k4 = (k) >> 2; \
        vec4 b0 = B_texel(x, k), b1 = B_texel(x, (k) + 1), b2 = B_texel(x, (k) + 2), b3 = B_texel(x, (k) + 3); \
        ROW(c0, r.x) ROW(c1, r.y) ROW(c2, r.z) ROW(c3, r.w) ROW(c4, s.x) ROW(c5, s.y) ROW(c6, s.z) ROW(c7, s.w) }
#else
#define STEP4(k) { int k4 = (k) >> 2; \
        vec4 b0 = B_texel(x, k), b1 = B_texel(x, (k) + 1), b2 = B_texel(x, (k) + 2), b3 = B_texel(x, (k) + 3); \
        ROW(c0, r.x) ROW(c1, r.y) ROW(c2, r.z) ROW(c3, r.w) }
#endif
    int kEnd4 = k0 + ((k1 - k0) / 4) * 4, kEnd8 = k0 + ((k1 - k0) / 8) * 8;
    for (int k = k0; k < kEnd8; k += 8) { STEP4(k) STEP4(k + 4) }
    if (kEnd8 < kEnd4) STEP4(kEnd8)
    for (int k = kEnd4; k < k1; ++k) {
        vec4 b = B_texel(x, k);
        c0 += A_at(r.x, k) * b; c1 += A_at(r.y, k) * b; c2 += A_at(r.z, k) * b; c3 += A_at(r.w, k) * b;
#if OUT_PHASES == 8
        c4 += A_at(s.x, k) * b; c5 += A_at(s.y, k) * b; c6 += A_at(s.z, k) * b; c7 += A_at(s.w, k) * b;
#endif
    }
#endif
#if CPREV_BOUND
    c0 += CPREV_texel(x, r.x); c1 += CPREV_texel(x, r.y); c2 += CPREV_texel(x, r.z); c3 += CPREV_texel(x, r.w);
#if OUT_PHASES == 8
    c4 += CPREV_texel(x, s.x); c5 += CPREV_texel(x, s.y); c6 += CPREV_texel(x, s.z); c7 += CPREV_texel(x, s.w);
#endif
#endif
#if BIAS_BOUND
    vec4 bias = BIAS_texel(x, 0);
    c0 += bias; c1 += bias; c2 += bias; c3 += bias;
#if OUT_PHASES == 8
    c4 += bias; c5 += bias; c6 += bias; c7 += bias;
#endif
#endif
#if DACT
    c0 *= act_df(Z_texel(x, r.x)); c1 *= act_df(Z_texel(x, r.y));
    c2 *= act_df(Z_texel(x, r.z)); c3 *= act_df(Z_texel(x, r.w));
#if OUT_PHASES == 8
    c4 *= act_df(Z_texel(x, s.x)); c5 *= act_df(Z_texel(x, s.y));
    c6 *= act_df(Z_texel(x, s.z)); c7 *= act_df(Z_texel(x, s.w));
#endif
#else
    c0 = act_f(c0); c1 = act_f(c1); c2 = act_f(c2); c3 = act_f(c3);
#if OUT_PHASES == 8
    c4 = act_f(c4); c5 = act_f(c5); c6 = act_f(c6); c7 = act_f(c7);
#endif
#endif
    setR0(c0);
    setR1(c1);
    setR2(c2);
    setR3(c3);
#if OUT_PHASES == 8
    setR4(c4);
    setR5(c5);
    setR6(c6);
    setR7(c7);
#endif
}
