// reduce/argmax: one level of the per-row argmax tree, optionally ending in
// "is the prediction the label?".
// inputs: X, LABELS?
// uses: reduce/common
// defines: FIRST 1: X is the N x C score matrix (any layout); 0: X holds the
//                (value, index) pairs of the previous level, N x 2P packed
//                (pair p in columns 2p, 2p+1: two pairs per texel).
//          LAST  1: output N x 1 (any layout) = the index, or with LABELS bound
//                1.0 where it equals round(LABELS[r, 0]) else 0.0;
//                0: output N x 2B packed, the pairs of the B blocks of each row.
// uniforms: block — FIRST: texels of X per block; else pairs per block (even)
// formula (the spec of ref::argmaxRows): best = -inf, idx = first column of the
// block; for each column c in order: if x[c] > best (x not NaN) { best = x[c]; idx = c }.
// Levels combine pairs in column order with the same strict >, so ties go to
// the lowest index, a NaN never wins and an all -inf / NaN row gives 0.
uniform int block;

// The (value, index) of block b of row r.
vec2 blockBest(int r, int b) {
#if FIRST
#if X_PACKED
    const int vpt = 4;
    int tpr = (X_shape().y + 3) >> 2;
#else
    const int vpt = 1;
    int tpr = X_shape().y;
#endif
    int x0 = b * block, x1 = min(x0 + block, tpr), cols = X_shape().y;
    vec2 best = vec2(red_neg_inf(), float(x0 * vpt));
    for (int x = x0; x < x1; ++x) {
        vec4 v = X_texel(x, r);
        for (int l = 0; l < vpt; ++l) {
            int c = x * vpt + l;
            if (c < cols && !red_isnan(v[l]) && v[l] > best.x) best = vec2(v[l], float(c));
        }
    }
    return best;
#else
    int pairs = X_shape().y >> 1;
    int p0 = b * block, p1 = min(p0 + block, pairs);
    vec4 t = X_texel(p0 >> 1, r);  // p0 is even: its pair is t.xy
    vec2 best = t.xy;
    if (p0 + 1 < p1 && t.z > best.x) best = t.zw;
    for (int p = p0 + 2; p < p1; p += 2) {
        t = X_texel(p >> 1, r);
        if (t.x > best.x) best = t.xy;
        if (p + 1 < p1 && t.z > best.x) best = t.zw;
    }
    return best;
#endif
}

void main() {
    ivec2 t = outTexel();
#if LAST
    float idx = blockBest(t.y, 0).y;
#if LABELS_BOUND
    setOutput(vec4(idx == floor(LABELS_at(t.y, 0) + 0.5) ? 1.0 : 0.0));
#else
    setOutput(vec4(idx));
#endif
#else
    int b = t.x * 2, blocks = outShape().y >> 1;
    vec2 p = blockBest(t.y, b);
    vec2 q = b + 1 < blocks ? blockBest(t.y, b + 1) : vec2(0.0);
    setOutput(vec4(p, q));
#endif
}
