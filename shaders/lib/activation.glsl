// lib/activation: activations and their derivatives, for kernels that "use" it.
// defines: ACT = 0 linear, 1 relu, 2 leaky_relu, 3 sigmoid, 4 tanh, 5 gelu, 6 softplus
// uniforms: act_alpha (the LeakyReLU slope)
// formulas (mirror include/gltrain/reference/activations.hpp; derivatives take
// the pre-activation z):
//   relu z<0 ? 0 : z, d = z>0          leaky z<0 ? a z : z, d = z>0 ? 1 : a
//   sigmoid 1/(1+e^-z), d = s(1-s)     tanh 1 - 2/(e^2z+1), d = 1 - t^2
//   gelu 0.5 z (1 + tanh(k(z + c z^3))), d = 0.5(1+t) + 0.5 z (1-t^2) k (1 + 3c z^2)
//   softplus max(z,0) + log(1 + e^-|z|), d = sigmoid(z)
// Written so that no intermediate overflows to inf*0 for |z| up to 1e30, and
// NaN stays NaN in the forward direction.
uniform float act_alpha;

vec4 act_sigmoid(vec4 z) {
    vec4 e = exp(-abs(z));  // in (0, 1]: never overflows
    return mix(e / (1.0 + e), 1.0 / (1.0 + e), greaterThanEqual(z, vec4(0.0)));
}
vec4 act_tanh(vec4 z) {
    vec4 e = exp(-2.0 * abs(z));
    return sign(z) * (1.0 - e) / (1.0 + e);
}
vec4 act_gelu_t(vec4 z) {
    return act_tanh(0.7978845608028654 * (z + 0.044715 * z * z * z));
}

vec4 act_f(vec4 z) {
#if ACT == 0
    return z;
#elif ACT == 1
    // Optimisers may turn the select into max(z, 0), which drops NaN; isnan keeps it.
    return mix(mix(z, vec4(0.0), lessThan(z, vec4(0.0))), z, isnan(z));
#elif ACT == 2
    return mix(mix(z, act_alpha * z, lessThan(z, vec4(0.0))), z, isnan(z));
#elif ACT == 3
    return act_sigmoid(z);
#elif ACT == 4
    return act_tanh(z);
#elif ACT == 5
    return 0.5 * z * (1.0 + act_gelu_t(z));
#else
    // SwiftShader's max() and exp() drop NaN; isnan keeps it.
    return mix(max(z, vec4(0.0)) + log(1.0 + exp(-abs(z))), z, isnan(z));
#endif
}

vec4 act_df(vec4 z) {
#if ACT == 0
    return vec4(1.0);
#elif ACT == 1
    return vec4(greaterThan(z, vec4(0.0)));
#elif ACT == 2
    return mix(vec4(act_alpha), vec4(1.0), greaterThan(z, vec4(0.0)));
#elif ACT == 3
    vec4 s = act_sigmoid(z);
    return s * (1.0 - s);
#elif ACT == 4
    vec4 t = act_tanh(z);
    return 1.0 - t * t;
#elif ACT == 5
    vec4 t = act_gelu_t(z);
    vec4 sech2 = 1.0 - t * t;
    vec4 first = 0.5 * (1.0 + t);
    // Once tanh saturates drop the second term: z^3 may be inf there (inf * 0).
    return mix(first + 0.5 * z * sech2 * 0.7978845608028654 * (1.0 + 0.134145 * z * z), first,
               equal(sech2, vec4(0.0)));
#else
    return act_sigmoid(z);
#endif
}
