// forward/matmul_rows4: the register-blocked matmul — each fragment computes a
// 4 x 4 block of C (rows 4g..4g+3, columns 4x..4x+3) and writes its four rows
// at once to the four row layers of a PackedRows4 output.
// inputs: A, B, CPREV?, BIAS?, Z?
// outputs: R0, R1, R2, R3
// blocks: rows4
// uses: lib/activation
// defines: TRANS_A (C = Aᵀ·B, A stored K x M), TRANS_B (C = A·Bᵀ, B stored N x K) — not both;
//          ACT, DACT as in forward/matmul. All inputs packed (any row layout).
// uniforms: k0, k1 (the K slice; multiples of 4 except at K)
// output: M x N, PackedRows4
// formula: as forward/matmul: C = CPREV + op(A)·op(B) (+ BIAS, f, * f'(Z))
// Fetches per 64 multiply-adds: NN 8 (4 texels of A's rows, 4 of B's), NT 8,
// TN 8 (one texel of A holds the 4 rows' coefficients of one k) — against 20
// for four one-texel fragments (forward/matmul).
uniform int k0;
uniform int k1;

void main() {
    ivec2 t = outTexel();
    int x = t.x, lastRow = outShape().x - 1;
    // The block's rows; rows past the end repeat the last one (their results are never read).
    ivec4 r = min(ivec4(t.y) + ivec4(0, 1, 2, 3), ivec4(lastRow));
    vec4 c0 = vec4(0.0), c1 = vec4(0.0), c2 = vec4(0.0), c3 = vec4(0.0);
#if TRANS_A
    // C[m, :] = sum_k A[k, m] B[k, :]: A's texel (m/4, k) holds A[k, 4g..4g+3].
    int g = t.y >> 2;
    for (int k = k0; k < k1; ++k) {
        vec4 a = A_texel(g, k);
        vec4 b = B_texel(x, k);
        c0 += a.x * b; c1 += a.y * b; c2 += a.z * b; c3 += a.w * b;
    }
#elif TRANS_B
    // C[r, c] = dot(A[r, :], B[c, :]) four k at a time; padding lanes are zero.
    int lastCol = B_geom.x - 1;
    ivec4 cs = min(ivec4(x * 4) + ivec4(0, 1, 2, 3), ivec4(lastCol));
    for (int k = k0; k < k1; k += 4) {
        int k4 = k >> 2;
        vec4 b0 = B_texel(k4, cs.x), b1 = B_texel(k4, cs.y), b2 = B_texel(k4, cs.z), b3 = B_texel(k4, cs.w);
        vec4 a = A_texel(k4, r.x);
        c0 += vec4(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3));
        a = A_texel(k4, r.y);
        c1 += vec4(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3));
        a = A_texel(k4, r.z);
        c2 += vec4(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3));
        a = A_texel(k4, r.w);
        c3 += vec4(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3));
    }
#else
    // C[r, :] = sum_k A[r, k] B[k, :]: four k per step, A's padding lanes are zero.
    int kEnd4 = k0 + ((k1 - k0) / 4) * 4;
    for (int k = k0; k < kEnd4; k += 4) {
        int k4 = k >> 2;
        vec4 b0 = B_texel(x, k), b1 = B_texel(x, k + 1), b2 = B_texel(x, k + 2), b3 = B_texel(x, k + 3);
        vec4 a = A_texel(k4, r.x);
        c0 += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3;
        a = A_texel(k4, r.y);
        c1 += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3;
        a = A_texel(k4, r.z);
        c2 += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3;
        a = A_texel(k4, r.w);
        c3 += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3;
    }
    for (int k = kEnd4; k < k1; ++k) {
        vec4 b = B_texel(x, k);
        c0 += A_at(r.x, k) * b; c1 += A_at(r.y, k) * b; c2 += A_at(r.z, k) * b; c3 += A_at(r.w, k) * b;
    }
#endif
#if CPREV_BOUND
    c0 += CPREV_texel(x, r.x); c1 += CPREV_texel(x, r.y); c2 += CPREV_texel(x, r.z); c3 += CPREV_texel(x, r.w);
#endif
#if BIAS_BOUND
    vec4 b = BIAS_texel(x, 0);
    c0 += b; c1 += b; c2 += b; c3 += b;
#endif
#if DACT
    c0 *= act_df(Z_texel(x, r.x)); c1 *= act_df(Z_texel(x, r.y));
    c2 *= act_df(Z_texel(x, r.z)); c3 *= act_df(Z_texel(x, r.w));
#else
    c0 = act_f(c0); c1 = act_f(c1); c2 = act_f(c2); c3 = act_f(c3);
#endif
    setR0(c0);
    setR1(c1);
    setR2(c2);
    setR3(c3);
}
