// forward/matmul_feedback: C = op(A)·op(B) as a vertex kernel whose outputs
// transform feedback captures — each vertex computes a BLOCK_ROWS x 2-texel
// (BLOCK_ROWS x 8 element) block of C, its slice of K in one loop. A fragment can write
// 8 texels; a vertex 16 on every OpenGL ES 3.0 device (an 8-row block) and 32 on
// SwiftShader (a 12-row block). Per 4 k a 12-row block fetches 20 texels for 384
// multiply-adds, an 8-row one 16 for 256, the 8x4 fragment kernel 12 for 128
// (bench/probes/feedback_blocks.html: 9.1 against 8.4 GFLOP/s for 12 against 8
// rows, medians of nine rounds at N = 960 in Chromium on SwiftShader).
// A loop iteration covers 8 k in A·B and A·Bᵀ, 4 in Aᵀ·B (SwiftShader pays per
// iteration).
// inputs: A, B
// stage: feedback
// block: BLOCK_ROWS x 2
// defines: BLOCK_ROWS 8 or 12 (ops/matmul.hpp: feedbackBlockRows);
//          TRANS_A (C = Aᵀ·B, A stored K x M), TRANS_B (C = A·Bᵀ, B stored N x K)
//          — not both. All inputs packed (any row layout).
// uniforms: c_shape (C's rows and texels per row); k_range: the k it sums, [x, y)
//           (x a multiple of 8; ops/matmul.hpp runs a long K as slices and adds them)
// output: F(2p + j) = texel (x0 + j) of row (r0 + p) of C, (x0, r0) = blockOrigin();
//         rows and texels past C's end repeat its last (forward/matmul_epilogue never
//         reads them). No epilogue here: forward/matmul_epilogue applies it.
// formula: C[r, c] = sum_{k in k_range} op(A)[r, k] op(B)[k, c]
uniform ivec2 c_shape;
uniform ivec2 k_range;

void main() {
    ivec2 o = blockOrigin();
    int lastRow = c_shape.x - 1, lastX = c_shape.y - 1;
    int x0 = min(o.x, lastX), x1 = min(o.x + 1, lastX);
    // c<p>: texel x0 of the block's row p, d<p>: texel x1.
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
    vec4 c4 = vec4(0.0), c5 = vec4(0.0), c6 = vec4(0.0), c7 = vec4(0.0);
    vec4 d0 = vec4(0.0), d1 = vec4(0.0), d2 = vec4(0.0), d3 = vec4(0.0);
    vec4 d4 = vec4(0.0), d5 = vec4(0.0), d6 = vec4(0.0), d7 = vec4(0.0);
#if BLOCK_ROWS == 12
    vec4 c8 = vec4(0.0), c9 = vec4(0.0), c10 = vec4(0.0), c11 = vec4(0.0);
    vec4 d8 = vec4(0.0), d9 = vec4(0.0), d10 = vec4(0.0), d11 = vec4(0.0);
#endif
#if TRANS_A
    // C[m, :] = sum_k A[k, m] B[k, :]: A's texel (m/4, k) holds A[k, 4g..4g+3]; the
    // block's rows are whole texels (r0 is a multiple of BLOCK_ROWS). Four k per
    // step, their products summed before they meet an accumulator (SwiftShader
    // keeps accumulators in memory: one update per 4 k, not per k).
#define SUM4(a0, a1, a2, a3, lane, b0, b1, b2, b3) (a0.lane * b0 + a1.lane * b1 + a2.lane * b2 + a3.lane * b3)
#define QUAD4(gg, c0, c1, c2, c3, d0, d1, d2, d3) { \
        vec4 a0 = A_texel(gg, k), a1 = A_texel(gg, k + 1), a2 = A_texel(gg, k + 2), a3 = A_texel(gg, k + 3); \
        c0 += SUM4(a0, a1, a2, a3, x, b0, b1, b2, b3); c1 += SUM4(a0, a1, a2, a3, y, b0, b1, b2, b3); \
        c2 += SUM4(a0, a1, a2, a3, z, b0, b1, b2, b3); c3 += SUM4(a0, a1, a2, a3, w, b0, b1, b2, b3); \
        d0 += SUM4(a0, a1, a2, a3, x, e0, e1, e2, e3); d1 += SUM4(a0, a1, a2, a3, y, e0, e1, e2, e3); \
        d2 += SUM4(a0, a1, a2, a3, z, e0, e1, e2, e3); d3 += SUM4(a0, a1, a2, a3, w, e0, e1, e2, e3); }
#define QUAD(a, c0, c1, c2, c3, d0, d1, d2, d3) \
        c0 += a.x * b; c1 += a.y * b; c2 += a.z * b; c3 += a.w * b; \
        d0 += a.x * e; d1 += a.y * e; d2 += a.z * e; d3 += a.w * e;
#if BLOCK_ROWS == 12
#define QUAD4_3 QUAD4(g2, c8, c9, c10, c11, d8, d9, d10, d11)
#define QUAD3(k) a = A_texel(g2, k); QUAD(a, c8, c9, c10, c11, d8, d9, d10, d11)
#else
#define QUAD4_3
#define QUAD3(k)
#endif
#define STEP(k) { \
        vec4 b = B_texel(x0, k), e = B_texel(x1, k); \
        vec4 a = A_texel(g, k); QUAD(a, c0, c1, c2, c3, d0, d1, d2, d3) \
        a = A_texel(g1, k); QUAD(a, c4, c5, c6, c7, d4, d5, d6, d7) \
        QUAD3(k) }
    // Rows past the end: texels clamped to the last (their results are discarded).
    int lastG = lastRow >> 2, g = o.y >> 2, g1 = min(g + 1, lastG), g2 = min(g + 2, lastG);
    int k0 = k_range.x, K = k_range.y, kEnd4 = k0 + ((K - k0) & ~3);
    // Four k per iteration (SwiftShader pays per loop iteration), then the tail.
    for (int k = k0; k < kEnd4; k += 4) {
        vec4 b0 = B_texel(x0, k), b1 = B_texel(x0, k + 1), b2 = B_texel(x0, k + 2), b3 = B_texel(x0, k + 3);
        vec4 e0 = B_texel(x1, k), e1 = B_texel(x1, k + 1), e2 = B_texel(x1, k + 2), e3 = B_texel(x1, k + 3);
        QUAD4(g, c0, c1, c2, c3, d0, d1, d2, d3)
        QUAD4(g1, c4, c5, c6, c7, d4, d5, d6, d7)
        QUAD4_3
    }
    for (int k = kEnd4; k < K; ++k) STEP(k)
#else
    ivec4 r = min(ivec4(o.y) + ivec4(0, 1, 2, 3), ivec4(lastRow));
    ivec4 s = min(ivec4(o.y) + ivec4(4, 5, 6, 7), ivec4(lastRow));
#if BLOCK_ROWS == 12
    ivec4 u = min(ivec4(o.y) + ivec4(8, 9, 10, 11), ivec4(lastRow));
#define ROWS3(M) M(c8, d8, u.x) M(c9, d9, u.y) M(c10, d10, u.z) M(c11, d11, u.w)
#else
#define ROWS3(M)
#endif
    // M(c, d, row) for each row of the block.
#define ROWS(M) M(c0, d0, r.x) M(c1, d1, r.y) M(c2, d2, r.z) M(c3, d3, r.w) \
        M(c4, d4, s.x) M(c5, d5, s.y) M(c6, d6, s.z) M(c7, d7, s.w) ROWS3(M)
#if TRANS_B
    // C[r, c] = dot(A[r, :], B[c, :]) four k at a time; padding lanes are zero.
#define ROW(c, d, row) { vec4 a = A_texel(k4, row); \
        c += vec4(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3)); \
        d += vec4(dot(a, e0), dot(a, e1), dot(a, e2), dot(a, e3)); }
    int lastCol = B_shape().x - 1;
    ivec4 cs = min(ivec4(x0 * 4) + ivec4(0, 1, 2, 3), ivec4(lastCol));
    ivec4 ct = min(ivec4(x1 * 4) + ivec4(0, 1, 2, 3), ivec4(lastCol));
#define STEP4(kt) { int k4 = (kt); \
        vec4 b0 = B_texel(k4, cs.x), b1 = B_texel(k4, cs.y), b2 = B_texel(k4, cs.z), b3 = B_texel(k4, cs.w); \
        vec4 e0 = B_texel(k4, ct.x), e1 = B_texel(k4, ct.y), e2 = B_texel(k4, ct.z), e3 = B_texel(k4, ct.w); \
        ROWS(ROW) }
    // Two texels (8 k) per iteration: SwiftShader pays per loop iteration.
    int t0 = k_range.x >> 2, K4 = (k_range.y + 3) >> 2, K8 = t0 + ((K4 - t0) & ~1);
    for (int t = t0; t < K8; t += 2) { STEP4(t) STEP4(t + 1) }
    if (K8 < K4) STEP4(K8)
#else
    // C[r, :] = sum_k A[r, k] B[k, :]: four k per step, A's padding lanes are zero.
#define ROW(c, d, row) { vec4 a = A_texel(k4, row); \
        c += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3; d += a.x * e0 + a.y * e1 + a.z * e2 + a.w * e3; }
#define TAIL(c, d, row) { float a = A_at(row, k); c += a * b; d += a * e; }
#define STEP4(kk) { int k = (kk), k4 = k >> 2; \
        vec4 b0 = B_texel(x0, k), b1 = B_texel(x0, k + 1), b2 = B_texel(x0, k + 2), b3 = B_texel(x0, k + 3); \
        vec4 e0 = B_texel(x1, k), e1 = B_texel(x1, k + 1), e2 = B_texel(x1, k + 2), e3 = B_texel(x1, k + 3); \
        ROWS(ROW) }
    // Eight k per iteration (SwiftShader pays per loop iteration), then four, then the tail.
    int k0 = k_range.x, K = k_range.y, kEnd4 = k0 + ((K - k0) & ~3), kEnd8 = k0 + ((K - k0) & ~7);
    for (int k8 = k0; k8 < kEnd8; k8 += 8) { STEP4(k8) STEP4(k8 + 4) }
    if (kEnd8 < kEnd4) STEP4(kEnd8)
    for (int k = kEnd4; k < K; ++k) {
        vec4 b = B_texel(x0, k), e = B_texel(x1, k);
        ROWS(TAIL)
    }
#endif
#endif
    F0 = c0; F1 = d0; F2 = c1; F3 = d1; F4 = c2; F5 = d2; F6 = c3; F7 = d3;
    F8 = c4; F9 = d4; F10 = c5; F11 = d5; F12 = c6; F13 = d6; F14 = c7; F15 = d7;
#if BLOCK_ROWS == 12
    F16 = c8; F17 = d8; F18 = c9; F19 = d9; F20 = c10; F21 = d10; F22 = c11; F23 = d11;
#endif
    gl_Position = vec4(0.0);  // nothing is rasterized (RASTERIZER_DISCARD)
    gl_PointSize = 1.0;
}
