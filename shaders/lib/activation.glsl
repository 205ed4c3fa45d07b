// lib/activation: activations and their derivatives, for kernels that "use" it.
// defines: ACT (act_f, act_df) = 0 linear, 1 relu, 2 leaky_relu, 3 sigmoid, 4 tanh, 5 gelu, 6 softplus
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

// By kind (the ACT numbering), for kernels that apply several activations
// (lib/mlp); with a constant kind the compiler keeps one branch.
vec4 act_f_kind(int kind, vec4 z, float alpha) {
    if (kind == 0) return z;
    // Optimisers may turn the select into max(z, 0), which drops NaN; isnan keeps it.
    if (kind == 1) return mix(mix(z, vec4(0.0), lessThan(z, vec4(0.0))), z, isnan(z));
    if (kind == 2) return mix(mix(z, alpha * z, lessThan(z, vec4(0.0))), z, isnan(z));
    if (kind == 3) return act_sigmoid(z);
    if (kind == 4) return act_tanh(z);
    if (kind == 5) return 0.5 * z * (1.0 + act_gelu_t(z));
    // SwiftShader's max() and exp() drop NaN; isnan keeps it.
    return mix(max(z, vec4(0.0)) + log(1.0 + exp(-abs(z))), z, isnan(z));
}

vec4 act_df_kind(int kind, vec4 z, float alpha) {
    if (kind == 0) return vec4(1.0);
    if (kind == 1) return vec4(greaterThan(z, vec4(0.0)));
    if (kind == 2) return mix(vec4(alpha), vec4(1.0), greaterThan(z, vec4(0.0)));
    if (kind == 3) {
        vec4 s = act_sigmoid(z);
        return s * (1.0 - s);
    }
    if (kind == 4) {
        vec4 t = act_tanh(z);
        return 1.0 - t * t;
    }
    if (kind == 5) {
        vec4 t = act_gelu_t(z);
        vec4 sech2 = 1.0 - t * t;
        vec4 first = 0.5 * (1.0 + t);
        // Once tanh saturates drop the second term: z^3 may be inf there (inf * 0).
        return mix(first + 0.5 * z * sech2 * 0.7978845608028654 * (1.0 + 0.134145 * z * z), first,
                   equal(sech2, vec4(0.0)));
    }
    return act_sigmoid(z);
}

#ifndef ACT
#define ACT 0
#endif
vec4 act_f(vec4 z) { return act_f_kind(ACT, z, act_alpha); }
vec4 act_df(vec4 z) { return act_df_kind(ACT, z, act_alpha); }
