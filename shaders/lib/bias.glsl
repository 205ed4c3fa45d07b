// lib/bias: the bias values for the output texel being computed, for kernels
// with an input BIAS (1 x C) that "use" it; one fetch when the layouts agree.
#if BIAS_BOUND
vec4 biasRow() {
    ivec2 t = outTexel();
#if OUT_PACKED && BIAS_PACKED
    return BIAS_texel(t.x, 0);
#elif OUT_PACKED
    int c = t.x * 4, last = BIAS_geom.y - 1;
    return vec4(BIAS_at(0, c), BIAS_at(0, min(c + 1, last)), BIAS_at(0, min(c + 2, last)), BIAS_at(0, min(c + 3, last)));
#else
    return vec4(BIAS_at(0, t.x));
#endif
}
#endif
