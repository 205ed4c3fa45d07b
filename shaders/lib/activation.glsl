// lib/activation: activations and their derivatives, for kernels that "use" it.
// defines: ACT (act_f, act_df) = 0 linear, 1 relu, 2 leaky_relu, 3 sigmoid, 4 tanh, 5 gelu, 6 softplus,
//          7 elu, 8 selu, 9 relu6, 10 swish, 11 mish, 12 hard_sigmoid, 13 softsign, 14 gelu_exact
//          (the order of gltrain::Activation)
// uniforms: act_alpha (the LeakyReLU slope, ELU's alpha)
// formulas (mirror include/gltrain/reference/activations.hpp; derivatives take
// the pre-activation z):
//   relu z<0 ? 0 : z, d = z>0          leaky z<0 ? a z : z, d = z>0 ? 1 : a
//   sigmoid 1/(1+e^-z), d = s(1-s)     tanh 1 - 2/(e^2z+1), d = 1 - t^2
//   gelu 0.5 z (1 + tanh(k(z + c z^3))), d = 0.5(1+t) + 0.5 z (1-t^2) k (1 + 3c z^2)
//   softplus max(z,0) + log(1 + e^-|z|), d = sigmoid(z)
//   elu z>0 ? z : a(e^z - 1), d = z>0 ? 1 : a e^z      selu 1.0507 elu(z) with a = 1.6733
//   relu6 clamp(z, 0, 6), d = 0<z<6    hard_sigmoid clamp(0.2z + 0.5, 0, 1), d = |z|<2.5 ? 0.2 : 0
//   swish z s(z), d = s(1 + z(1-s))    mish z tanh(sp(z)), d = t + z(1-t^2)s(z)
//   softsign z/(1+|z|), d = 1/(1+|z|)^2
//   gelu_exact z Phi(z), d = Phi(z) + z phi(z); Phi from erfc (act_erfc)
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
vec4 act_softplus(vec4 z) {
    return max(z, vec4(0.0)) + log(1.0 + exp(-abs(z)));
}
// alpha (e^z - 1) below 0, z above; min keeps e^z finite for large z.
vec4 act_elu(vec4 z, float alpha) {
    return mix(alpha * (exp(min(z, vec4(0.0))) - 1.0), z, greaterThan(z, vec4(0.0)));
}
// erfc(x) for x >= 0, Numerical Recipes' erfcc (relative error < 1.2e-7 for
// every x, so the normal CDF keeps its tiny tail values); GLSL ES has no erf.
vec4 act_erfc(vec4 x) {
    vec4 t = 1.0 / (1.0 + 0.5 * x);
    vec4 p = -0.82215223 + t * 0.17087277;
    p = 1.48851587 + t * p;
    p = -1.13520398 + t * p;
    p = 0.27886807 + t * p;
    p = -0.18628806 + t * p;
    p = 0.09678418 + t * p;
    p = 0.37409196 + t * p;
    p = 1.00002368 + t * p;
    return t * exp(-x * x - 1.26551223 + t * p);
}
// The standard normal CDF: the tail erfc(|z|/sqrt 2)/2 on the negative side.
vec4 act_phi(vec4 z) {
    vec4 tail = 0.5 * act_erfc(abs(z) * 0.7071067811865476);
    return mix(1.0 - tail, tail, lessThan(z, vec4(0.0)));
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
    if (kind == 6) return mix(act_softplus(z), z, isnan(z));
    if (kind == 7) return mix(act_elu(z, alpha), z, isnan(z));
    if (kind == 8) return mix(1.0507009873554805 * act_elu(z, 1.6732632423543772), z, isnan(z));
    if (kind == 9) return mix(clamp(z, 0.0, 6.0), z, isnan(z));
    if (kind == 10) return z * act_sigmoid(z);
    if (kind == 11) return mix(z * act_tanh(act_softplus(z)), z, isnan(z));
    if (kind == 12) return mix(clamp(0.2 * z + 0.5, 0.0, 1.0), z, isnan(z));
    if (kind == 13) return z / (1.0 + abs(z));
    return mix(z * act_phi(z), z, isnan(z));
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
    if (kind == 6) return act_sigmoid(z);
    if (kind == 7) return mix(alpha * exp(min(z, vec4(0.0))), vec4(1.0), greaterThan(z, vec4(0.0)));
    if (kind == 8)
        return 1.0507009873554805 *
               mix(1.6732632423543772 * exp(min(z, vec4(0.0))), vec4(1.0), greaterThan(z, vec4(0.0)));
    if (kind == 9) return vec4(greaterThan(z, vec4(0.0))) * vec4(lessThan(z, vec4(6.0)));
    if (kind == 10) {
        vec4 s = act_sigmoid(z);
        return s * (1.0 + z * (1.0 - s));
    }
    if (kind == 11) {
        vec4 t = act_tanh(act_softplus(z));
        return t + z * (1.0 - t * t) * act_sigmoid(z);
    }
    if (kind == 12) return 0.2 * vec4(greaterThan(z, vec4(-2.5))) * vec4(lessThan(z, vec4(2.5)));
    if (kind == 13) {
        vec4 d = 1.0 / (1.0 + abs(z));
        return d * d;
    }
    // Far out exp(-z^2/2) is 0 (z^2 = inf included) while 0.4 z stays finite: z phi(z) is 0, not NaN.
    return act_phi(z) + z * 0.3989422804014327 * exp(-0.5 * z * z);
}

#ifndef ACT
#define ACT 0
#endif
vec4 act_f(vec4 z) { return act_f_kind(ACT, z, act_alpha); }
vec4 act_df(vec4 z) { return act_df_kind(ACT, z, act_alpha); }
