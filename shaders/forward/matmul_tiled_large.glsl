// forward/matmul_tiled_large: the compute-shader matmul for large products
// (OpenGL ES 3.1, native only; chosen by recordMatmul where the product has
// enough 128 x 128 tiles to fill the GPU, forward/matmul_tiled below that).
// A workgroup of 16 x 16 threads computes a 128 x 128 tile of C; thread
// (tx, ty) accumulates an 8 x 8 block: rows 4ty..4ty+3 and 64+4ty..64+4ty+3 of
// the tile, column texels tx and 16+tx (two packed output texels 64 apart).
// Why this shape (the 2D block tiling of siboehm's CUDA SGEMM walkthrough):
// each k costs a thread 4 vec4 shared-memory reads for 64 multiply-adds,
// against 2 for 16 in the 64 x 64 kernel, so the FMA units rather than
// shared-memory bandwidth set the pace. The split rows/columns (two groups 64
// apart instead of 8 adjacent) make a warp's 16 column texels one contiguous
// 256-byte row of Bs (no bank conflicts) and its row texels two broadcasts.
// k slices of KS staged in two shared buffers: the next slice's texels are
// fetched into registers before the current slice's multiply-adds and stored
// into the other buffer after them, one barrier per slice.
// stage: compute
// tile: 128 x 128
// inputs: A, B, BIAS?, Z?
// uses: lib/activation
// defines: TRANS_A, TRANS_B, ACT, DACT as in forward/matmul_tiled. A and B packed
//          (any row layout), their padding lanes being zero.
// output: M x N, packed (any row layout, paged or not)
// formula: C = op(A)·op(B) (+ BIAS, f, * f'(Z)), all of K in one dispatch
layout(local_size_x = 16, local_size_y = 16) in;

#define KS 8                   // k per slice (8: 26-27 TFLOP/s on an H100 at N = 2048-4096, 16: 20-21)
#define SLICE_TEXELS (KS * 32)  // texels of one operand's slice: 128 rows x KS k / 4
#define STAGED (SLICE_TEXELS / 256)

shared vec4 As[2][KS][32];  // As[s][k][g] = op(A)[row0 + 4g .. 4g+3, k0 + k]
shared vec4 Bs[2][KS][32];  // Bs[s][k][x] = op(B)[k0 + k, col0 + 4x .. 4x+3]

int M, N, K, row0, col0, tid;

// Texel e (0 .. SLICE_TEXELS-1) of the slice at k0. "k" staging (a texel holds 4
// rows or columns at one k) goes straight to shared memory; "row" staging (4 k of
// one row of op(A) or column of op(B)) is scattered. Indices run fastest over rows
// and columns, so that a warp's scattered stores hit 32 different banks.
vec4 fetchA(int k0, int e) {
#if TRANS_A
    int g = e & 31, k = k0 + (e >> 5);  // A stored K x M: texel (g, k) = op(A)[4g..4g+3, k]
    return (k < K && row0 + 4 * g < M) ? A_texel((row0 >> 2) + g, k) : vec4(0.0);
#else
    int r = row0 + (e & 127), k = k0 + 4 * (e >> 7);
    return (r < M && k < K) ? A_texel(k >> 2, r) : vec4(0.0);
#endif
}
// A texel holding four k-values of one tile row (A) or column (B), element e = (k/4) * 128 + rc:
// its lanes go to rows k..k+3 of the [k][rc/4][rc%4] tile (shared arrays cannot be passed to a function).
#define SCATTER_K(TILE, s, v, e)                                              \
    {                                                                         \
        int rc_ = (e)&127, k_ = 4 * ((e) >> 7), g_ = rc_ >> 2, l_ = rc_ & 3; \
        TILE[s][k_][g_][l_] = v.x;                                            \
        TILE[s][k_ + 1][g_][l_] = v.y;                                        \
        TILE[s][k_ + 2][g_][l_] = v.z;                                        \
        TILE[s][k_ + 3][g_][l_] = v.w;                                        \
    }
void storeA(int s, int e, vec4 a) {
#if TRANS_A
    As[s][e >> 5][e & 31] = a;
#else
    SCATTER_K(As, s, a, e);
#endif
}
vec4 fetchB(int k0, int e) {
#if TRANS_B
    int c = col0 + (e & 127), k = k0 + 4 * (e >> 7);  // B stored N x K: texel (k/4, c) = op(B)[k..k+3, c]
    return (c < N && k < K) ? B_texel(k >> 2, c) : vec4(0.0);
#else
    int x = e & 31, k = k0 + (e >> 5);
    return (k < K && col0 + 4 * x < N) ? B_texel((col0 >> 2) + x, k) : vec4(0.0);
#endif
}
void storeB(int s, int e, vec4 b) {
#if TRANS_B
    SCATTER_K(Bs, s, b, e);
#else
    Bs[s][e >> 5][e & 31] = b;
#endif
}

// Row i (0..7) of the thread's block: tile row 4ty + i, or 64 + 4ty + i - 4.
void store(int i, int ty, int tx, vec4 c0, vec4 c1) {
    int row = row0 + (i < 4 ? 4 * ty + i : 60 + 4 * ty + i);
    if (row >= M) return;
    ivec2 texel = ivec2((col0 >> 2) + tx, (col0 >> 2) + 16 + tx);
    vec4 c[2] = vec4[2](c0, c1);
    for (int j = 0; j < 2; ++j) {
        int col = 4 * texel[j];
        if (col >= N) return;
        ivec4 cs = min(ivec4(col) + ivec4(0, 1, 2, 3), ivec4(N - 1));
        vec4 v = c[j];
#if BIAS_BOUND
        v += vec4(BIAS_at(0, cs.x), BIAS_at(0, cs.y), BIAS_at(0, cs.z), BIAS_at(0, cs.w));
#endif
#if DACT
        vec4 z = vec4(Z_at(row, cs.x), Z_at(row, cs.y), Z_at(row, cs.z), Z_at(row, cs.w));
        setTexel(texel[j], row, v * act_df(z));
#else
        setTexel(texel[j], row, act_f(v));
#endif
    }
}

void main() {
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
    tid = ty * 16 + tx;
    row0 = int(gl_WorkGroupID.y) * 128;
    col0 = int(gl_WorkGroupID.x) * 128;
    M = outShape().x;
    N = outShape().y;
#if TRANS_A
    K = A_shape().x;
#else
    K = A_shape().y;
#endif
    // c<i><j>: row i of the block (a0.x..w, then a1.x..w), column texel j.
    vec4 c00 = vec4(0.0), c01 = vec4(0.0), c10 = vec4(0.0), c11 = vec4(0.0), c20 = vec4(0.0), c21 = vec4(0.0),
         c30 = vec4(0.0), c31 = vec4(0.0), c40 = vec4(0.0), c41 = vec4(0.0), c50 = vec4(0.0), c51 = vec4(0.0),
         c60 = vec4(0.0), c61 = vec4(0.0), c70 = vec4(0.0), c71 = vec4(0.0);
    vec4 ra[STAGED], rb[STAGED];
    for (int j = 0; j < STAGED; ++j) {
        storeA(0, tid + 256 * j, fetchA(0, tid + 256 * j));
        storeB(0, tid + 256 * j, fetchB(0, tid + 256 * j));
    }
    barrier();
    int s = 0;
    for (int k0 = 0; k0 < K; k0 += KS) {
        bool more = k0 + KS < K;
        if (more)
            for (int j = 0; j < STAGED; ++j) {
                ra[j] = fetchA(k0 + KS, tid + 256 * j);
                rb[j] = fetchB(k0 + KS, tid + 256 * j);
            }
        for (int k = 0; k < KS; ++k) {
            vec4 a0 = As[s][k][ty], a1 = As[s][k][16 + ty], b0 = Bs[s][k][tx], b1 = Bs[s][k][16 + tx];
            c00 += a0.x * b0;
            c01 += a0.x * b1;
            c10 += a0.y * b0;
            c11 += a0.y * b1;
            c20 += a0.z * b0;
            c21 += a0.z * b1;
            c30 += a0.w * b0;
            c31 += a0.w * b1;
            c40 += a1.x * b0;
            c41 += a1.x * b1;
            c50 += a1.y * b0;
            c51 += a1.y * b1;
            c60 += a1.z * b0;
            c61 += a1.z * b1;
            c70 += a1.w * b0;
            c71 += a1.w * b1;
        }
        // The other buffer was last read before the previous barrier.
        if (more)
            for (int j = 0; j < STAGED; ++j) {
                storeA(1 - s, tid + 256 * j, ra[j]);
                storeB(1 - s, tid + 256 * j, rb[j]);
            }
        barrier();
        s = 1 - s;
    }
    store(0, ty, tx, c00, c01);
    store(1, ty, tx, c10, c11);
    store(2, ty, tx, c20, c21);
    store(3, ty, tx, c30, c31);
    store(4, ty, tx, c40, c41);
    store(5, ty, tx, c50, c51);
    store(6, ty, tx, c60, c61);
    store(7, ty, tx, c70, c71);
}
