// reduce/reduce: one level of a reduction tree. Every output element is the
// OP of a block of input texels; ops/reduce.hpp chains levels until the
// requested shape (N x 1, 1 x C or 1 x 1) is reached.
// inputs: X, ACC?
// uses: reduce/common
// defines: OP        0 sum, 1 max (NaN-propagating, see reduce/common)
//          PRE       0 none, 1 square every input value first (sum of squares; OP 0 only),
//                    2 absolute value first (max |x|: OP 1)
//          KEEP_LANES 1: column reduction — output texel (x, y) = OP over the input
//                    texels (x, y*block.x ...) lane by lane, so the lanes (columns
//                    when packed) stay apart and the output has X's columns;
//                    0: block reduction — output element (r, c) = OP over input rows
//                    [r*block.x, +block.x) x texels [c*block.y, +block.y), lanes
//                    folded together (padding lanes and unpacked .yzw excluded).
// uniforms: block (ivec2: rows, texels per block);
//           post: 0 none, 1 divide by `count` (mean), 2 sqrt (L2 norm) — uniforms,
//           not defines, to keep the number of compiled variants down (a compile
//           costs 100+ ms on llvmpipe; the branch is uniform and runs once per fragment)
// output: KEEP_LANES: ceil(N / block.x) x C; else ceil(N / block.x) x ceil(T / block.y),
//         T = texels per row of X; any layout; ACC (same shape) is combined by OP (sum: added,
//         max: NaN-propagating max) before `post`.
// formula: sum: Y = sum of the block (tree order), max: NaN if any NaN else the max.
uniform ivec2 block;
uniform int post;
uniform float count;

#if OP == 0
#define IDENTITY 0.0
vec4 combine(vec4 a, vec4 b) { return a + b; }
float fold(vec4 a) { return (a.x + a.y) + (a.z + a.w); }
#else
#define IDENTITY red_neg_inf()
vec4 combine(vec4 a, vec4 b) { return red_max(a, b); }
float fold(vec4 a) { return red_max(red_max(a.x, a.y), red_max(a.z, a.w)); }
#endif

vec4 pre(vec4 v) {
#if PRE == 1
    return v * v;
#elif PRE == 2
    return abs(v);
#else
    return v;
#endif
}

#if KEEP_LANES
vec4 reduceTexel() {
    ivec2 t = outTexel();
    int r0 = t.y * block.x, r1 = min(r0 + block.x, X_shape().x);
#if X_PACKED == OUT_PACKED
    // Same layout: whole texels, lane by lane (padding lanes reduce zeros, masked on output).
    vec4 acc = pre(X_texel(t.x, r0));
    for (int r = r0 + 1; r < r1; ++r) acc = combine(acc, pre(X_texel(t.x, r)));
    return acc;
#else
    // Layouts differ (only the last level, into an output of the other layout):
    // element by element; lanes past the last column repeat it and are masked.
    int last = X_shape().y - 1;
#if OUT_PACKED
    ivec4 cs = ivec4(t.x * 4, min(t.x * 4 + 1, last), min(t.x * 4 + 2, last), min(t.x * 4 + 3, last));
#else
    ivec4 cs = ivec4(t.x);
#endif
    vec4 acc = pre(vec4(X_at(r0, cs.x), X_at(r0, cs.y), X_at(r0, cs.z), X_at(r0, cs.w)));
    for (int r = r0 + 1; r < r1; ++r)
        acc = combine(acc, pre(vec4(X_at(r, cs.x), X_at(r, cs.y), X_at(r, cs.z), X_at(r, cs.w))));
    return acc;
#endif
}
#else
int xTexelsPerRow() {
#if X_PACKED
    return (X_shape().y + 3) >> 2;
#else
    return X_shape().y;
#endif
}

// Output element (r, c): the block of input rows r*block.x.. and texels c*block.y..
float reduceElement(int r, int c) {
    int r0 = r * block.x, r1 = min(r0 + block.x, X_shape().x);
    int tpr = xTexelsPerRow();
    int x0 = c * block.y, x1 = min(x0 + block.y, tpr);
    vec4 acc = vec4(IDENTITY);
#if X_PACKED && OP != 0
    // Max must not see the padding zeros of the last texel of a row.
    int lastX = tpr - 1;
    bvec4 pad = greaterThanEqual(ivec4(lastX * 4) + ivec4(0, 1, 2, 3), ivec4(X_shape().y));
#endif
    for (int y = r0; y < r1; ++y)
        for (int x = x0; x < x1; ++x) {
            // pre() first, then the lanes outside the matrix become the identity
            // (|-inf| would be +inf). Sum: padding is zero and 0*0 = 0, so whole texels add safely.
            vec4 v = pre(X_texel(x, y));
#if !X_PACKED
            v = vec4(v.x, IDENTITY, IDENTITY, IDENTITY);
#elif OP != 0
            if (x == lastX) v = mix(v, vec4(IDENTITY), pad);
#endif
            acc = combine(acc, v);
        }
    return fold(acc);
}

vec4 reduceTexel() {
    ivec2 t = outTexel();
#if OUT_PACKED
    int c = t.x * 4, n = outShape().y;
    return vec4(reduceElement(t.y, c), c + 1 < n ? reduceElement(t.y, c + 1) : 0.0,
                c + 2 < n ? reduceElement(t.y, c + 2) : 0.0, c + 3 < n ? reduceElement(t.y, c + 3) : 0.0);
#else
    return vec4(reduceElement(t.y, t.x), 0.0, 0.0, 0.0);
#endif
}
#endif

void main() {
    vec4 v = reduceTexel();
#if ACC_BOUND
    v = combine(v, ACC_aligned());
#endif
    if (post == 1) v = v / count;
    else if (post == 2) v = sqrt(v);
    setOutput(v);
}
