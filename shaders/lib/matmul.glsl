// lib/matmul: the product loop shared by forward/matmul and forward/dense_train.
// Needs inputs A and B; defines TRANS_A, TRANS_B; uniforms k0, k1.
// product() = sum_{k0 <= k < k1} op(A)[r, k] op(B)[k, c] for the output texel.
// The packed paths read 4 k at a time: NN and NT cost 5 fetches per 16
// multiply-adds (padding lanes are zero, so NT needs no tail); TN reads A
// column-wise, 2 fetches per 4.
uniform int k0;
uniform int k1;

float opA(int r, int k) {
#if TRANS_A
    return A_at(k, r);
#else
    return A_at(r, k);
#endif
}
float opB(int k, int c) {
#if TRANS_B
    return B_at(c, k);
#else
    return B_at(k, c);
#endif
}

vec4 product() {
    ivec2 t = outTexel();
    int r = t.y;
    vec4 acc = vec4(0.0);
#if OUT_PACKED && A_PACKED && B_PACKED && !TRANS_A && !TRANS_B
    int x = t.x;
    int kEnd4 = k0 + ((k1 - k0) / 4) * 4;
    for (int k = k0; k < kEnd4; k += 4) {
        vec4 a = A_texel(k >> 2, r);
        acc += a.x * B_texel(x, k) + a.y * B_texel(x, k + 1) + a.z * B_texel(x, k + 2) + a.w * B_texel(x, k + 3);
    }
    for (int k = kEnd4; k < k1; ++k) acc += A_at(r, k) * B_texel(x, k);
#elif OUT_PACKED && A_PACKED && B_PACKED && !TRANS_A && TRANS_B
    int last = B_geom.x - 1;  // rows of B = columns of C
    int c = t.x * 4;
    int c1 = min(c + 1, last), c2 = min(c + 2, last), c3 = min(c + 3, last);
    for (int k = k0; k < k1; k += 4) {
        int k4 = k >> 2;
        vec4 a = A_texel(k4, r);
        acc += vec4(dot(a, B_texel(k4, c)), dot(a, B_texel(k4, c1)), dot(a, B_texel(k4, c2)), dot(a, B_texel(k4, c3)));
    }
#elif OUT_PACKED && B_PACKED && !TRANS_B
    int x = t.x;
    for (int k = k0; k < k1; ++k) acc += opA(r, k) * B_texel(x, k);
#elif OUT_PACKED
    int c = t.x * 4, last = outShape().y - 1;
    ivec4 cs = ivec4(c, min(c + 1, last), min(c + 2, last), min(c + 3, last));
    for (int k = k0; k < k1; ++k) {
        float a = opA(r, k);
        acc += a * vec4(opB(k, cs.x), opB(k, cs.y), opB(k, cs.z), opB(k, cs.w));
    }
#else
    for (int k = k0; k < k1; ++k) acc.x += opA(r, k) * opB(k, t.x);
#endif
    return acc;
}
