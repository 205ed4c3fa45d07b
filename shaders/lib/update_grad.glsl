// lib/update_grad: the gradient an update kernel applies at the output texel,
// for kernels with inputs G?, GSCALE? and lib/mlp's that "use" it.
// uses: lib/mlp
// G unbound: the parameter belongs to a small dense network the update runs
//   itself (lib/mlp's inputs and defines), g = mlpGrad();
// defines: G_SUM_ROWS 0: G has the parameter's shape, g = G;
//          1: G is N x C for a 1 x C parameter and g is its column sum — a
//          bias's gradient is dZ summed over the batch, added up here rather
//          than by a reduction pass of its own (ops/optimizer.hpp: GradientForm)
// formula: g = G (or sum_r G[r, :], or mlpGrad()), times GSCALE[0, 0] when bound (clip by global norm)
#ifndef G_SUM_ROWS
#define G_SUM_ROWS 0
#endif
vec4 updateGrad() {
#if !G_BOUND
    vec4 g = mlpGrad();
#elif G_SUM_ROWS
    ivec2 t = outTexel();
    int n = G_shape().x;
    vec4 g = vec4(0.0);
#if G_PACKED == OUT_PACKED
    // Whole texels, lane by lane (padding lanes add zeros and are masked on output).
    for (int r = 0; r < n; ++r) g += G_texel(t.x, r);
#elif OUT_PACKED
    int c = t.x * 4, last = G_shape().y - 1;
    ivec4 cs = min(ivec4(c) + ivec4(0, 1, 2, 3), ivec4(last));
    for (int r = 0; r < n; ++r) g += vec4(G_at(r, cs.x), G_at(r, cs.y), G_at(r, cs.z), G_at(r, cs.w));
#else
    for (int r = 0; r < n; ++r) g.x += G_at(r, t.x);
#endif
#else
    vec4 g = G_aligned();
#endif
#if GSCALE_BOUND
    g *= GSCALE_at(0, 0);
#endif
    return g;
}
