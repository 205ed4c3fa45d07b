// forward/softmax_stats: the per-row statistics softmax and the softmax
// cross-entropies share, one fragment looping over its row (rows are short:
// C up to a few hundred in our models; C = 1025 is tested).
// inputs: X
// output: N x 2, packed: texel r = (m, s, 0, 0) with
// formula: m = max_c X[r, c] (NaN skipped, as the reference's "v > m" from -inf),
//          s = sum_c exp(X[r, c] - m)            (s >= 1 for a finite row)
// A row holding NaN or +inf, or no finite value at all, gets m = s = NaN, so
// everything computed from it (probabilities, gradient, loss) is NaN, as in
// the reference — set explicitly, since a driver's exp() may clamp NaN.
float nanValue() { return uintBitsToFloat(0x7fc00000u); }

void main() {
    int r = outTexel().y;
    int C = X_shape().y;
    float negInf = uintBitsToFloat(0xff800000u);
    bool bad = false;
    float m = negInf, s = 0.0;
#if X_PACKED
    int full = C >> 2;
    // The last texel's lanes past C are padding (zero): excluded from max and sum.
    bvec4 live = lessThan(ivec4(0, 1, 2, 3), ivec4(C - full * 4));
    vec4 mv = vec4(negInf);
    for (int x = 0; x < full; ++x) {
        vec4 v = X_texel(x, r);
        bad = bad || any(isnan(v));
        mv = mix(mv, v, greaterThan(v, mv));
    }
    vec4 tail = vec4(negInf);
    if (full * 4 < C) {  // a partial last texel (never fetched past the row's texels)
        tail = mix(vec4(negInf), X_texel(full, r), live);
        bad = bad || any(isnan(tail));
        mv = mix(mv, tail, greaterThan(tail, mv));
    }
    m = max(max(mv.x, mv.y), max(mv.z, mv.w));  // no NaN here: lanes are -inf or finite or +inf
    vec4 sv = vec4(0.0);
    for (int x = 0; x < full; ++x) sv += exp(X_texel(x, r) - m);
    if (full * 4 < C) sv += mix(vec4(0.0), exp(tail - m), live);
    s = (sv.x + sv.y) + (sv.z + sv.w);
#else
    for (int c = 0; c < C; ++c) {
        float v = X_at(r, c);
        bad = bad || isnan(v);
        if (v > m) m = v;
    }
    for (int c = 0; c < C; ++c) s += exp(X_at(r, c) - m);
#endif
    if (bad || isinf(m)) {
        m = nanValue();
        s = nanValue();
    }
    setOutput(vec4(m, s, 0.0, 0.0));
}
