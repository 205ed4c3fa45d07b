// forward/matmul_tiled: the compute-shader matmul (OpenGL ES 3.1, native only;
// ContextOptions::compute). A workgroup of 16 x 16 threads computes a 64 x 64
// tile of C, staging 16-k slices of op(A) and op(B) in shared memory; thread
// (tx, ty) accumulates a 4 x 4 block: rows 4ty..4ty+3 of the tile, columns
// 4tx..4tx+3 (one packed output texel). Why: on a GPU whose graphics pipeline
// runs on a few SMs (H100/H200: 2 of 66 TPCs), the fragment kernels are held
// to those SMs' texture units, while a compute dispatch runs on every SM and
// reads each operand once per 64-wide tile instead of once per 8 x 4 block.
// stage: compute
// tile: 64 x 64
// inputs: A, B, BIAS?, Z?
// uses: lib/activation
// defines: TRANS_A (C = Aᵀ·B, A stored K x M), TRANS_B (C = A·Bᵀ, B stored N x K);
//          ACT, DACT as in forward/matmul. A and B packed (any row layout): staged a
//          texel at a time, their padding lanes being zero.
// output: M x N, packed (any row layout, paged or not)
// formula: C = op(A)·op(B) (+ BIAS, f, * f'(Z)), all of K in one dispatch
layout(local_size_x = 16, local_size_y = 16) in;

shared vec4 As[16][16];  // As[k][g] = op(A)[row0 + 4g .. 4g+3, k0 + k]
shared vec4 Bs[16][16];  // Bs[k][x] = op(B)[k0 + k, col0 + 4x .. 4x+3]

void main() {
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y), tid = ty * 16 + tx;
    int row0 = int(gl_WorkGroupID.y) * 64, col0 = int(gl_WorkGroupID.x) * 64;
    int M = outShape().x, N = outShape().y;
#if TRANS_A
    int K = A_shape().x;
#else
    int K = A_shape().y;
#endif
    // Who stages what: "row" staging (a thread fetches 4 k of one row of op(A),
    // or 4 k of one column of op(B) when B is transposed, and scatters them)
    // and "k" staging (a thread fetches 4 rows or columns at one k).
    int sr = tid >> 2, sq = tid & 3;   // row staging: row/column sr of the tile, k 4sq..4sq+3
    int sk = tid >> 4, sg = tid & 15;  // k staging: k sk, rows/columns 4sg..4sg+3
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
    for (int k0 = 0; k0 < K; k0 += 16) {
#if TRANS_A
        // A stored K x M: texel (g, k) holds op(A)[4g..4g+3, k].
        As[sk][sg] = (k0 + sk < K && row0 + 4 * sg < M) ? A_texel((row0 >> 2) + sg, k0 + sk) : vec4(0.0);
#else
        {
            int r = row0 + sr, k = k0 + 4 * sq;
            vec4 a = (r < M && k < K) ? A_texel(k >> 2, r) : vec4(0.0);
            int g = sr >> 2, lane = sr & 3;
            As[4 * sq][g][lane] = a.x;
            As[4 * sq + 1][g][lane] = a.y;
            As[4 * sq + 2][g][lane] = a.z;
            As[4 * sq + 3][g][lane] = a.w;
        }
#endif
#if TRANS_B
        {
            // B stored N x K: texel (k/4, c) holds op(B)[k..k+3, c].
            int c = col0 + sr, k = k0 + 4 * sq;
            vec4 b = (c < N && k < K) ? B_texel(k >> 2, c) : vec4(0.0);
            int x = sr >> 2, lane = sr & 3;
            Bs[4 * sq][x][lane] = b.x;
            Bs[4 * sq + 1][x][lane] = b.y;
            Bs[4 * sq + 2][x][lane] = b.z;
            Bs[4 * sq + 3][x][lane] = b.w;
        }
#else
        {
            int k = k0 + sk, c = col0 + 4 * sg;
            Bs[sk][sg] = (k < K && c < N) ? B_texel(c >> 2, k) : vec4(0.0);
        }
#endif
        barrier();
        for (int k = 0; k < 16; ++k) {
            vec4 a = As[k][ty], b = Bs[k][tx];
            c0 += a.x * b;
            c1 += a.y * b;
            c2 += a.z * b;
            c3 += a.w * b;
        }
        barrier();
    }

    int col = col0 + 4 * tx, row = row0 + 4 * ty;
    if (col >= N || row >= M) return;
    ivec4 cs = min(ivec4(col) + ivec4(0, 1, 2, 3), ivec4(N - 1));
#if BIAS_BOUND
    vec4 bias = vec4(BIAS_at(0, cs.x), BIAS_at(0, cs.y), BIAS_at(0, cs.z), BIAS_at(0, cs.w));
    c0 += bias;
    c1 += bias;
    c2 += bias;
    c3 += bias;
#endif
    vec4 c[4] = vec4[4](c0, c1, c2, c3);
    for (int i = 0; i < 4; ++i) {
        int r = min(row + i, M - 1);  // rows past the end are computed and not stored
#if DACT
        vec4 z = vec4(Z_at(r, cs.x), Z_at(r, cs.y), Z_at(r, cs.z), Z_at(r, cs.w));
        setTexel(col >> 2, row + i, c[i] * act_df(z));
#else
        setTexel(col >> 2, row + i, act_f(c[i]));
#endif
    }
}
