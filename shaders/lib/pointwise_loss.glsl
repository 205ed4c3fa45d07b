// lib/pointwise_loss: element losses and their gradients for loss/pointwise_*.
// defines: PW_LOSS = 0 squared error (MSE, the default), 1 binary cross-entropy on logits (BCE)
// formulas (mirror include/gltrain/reference/loss.hpp; p the prediction or logit, t the target):
//   MSE  loss (p - t)^2                                grad 2 (p - t) * invCount
//   BCE  loss max(p, 0) - p t + log1p(exp(-|p|))       grad (sigmoid(p) - t) * invCount
// log1p(e) for e = exp(-|p|) in (0, 1] is 2 atanh(y), y = e / (2 + e) <= 1/3, by its
// series (nine terms: < 3e-10 relative), so the tiny loss of a confident, correct
// logit is not rounded to 0 as log(1 + e) would. (The textbook log(u) e / (u - 1),
// u = 1 + e, is undone by compilers that simplify (1 + e) - 1 to e.)
// sigmoid is split on the sign, as the reference's.
#ifndef PW_LOSS
#define PW_LOSS 0
#endif
vec4 pw_loss(vec4 p, vec4 t) {
#if PW_LOSS == 0
    vec4 d = p - t;
    return d * d;
#else
    vec4 e = exp(-abs(p));
    vec4 y = e / (2.0 + e);
    vec4 y2 = y * y;
    vec4 series = 1.0 / 15.0 + y2 * (1.0 / 17.0);
    series = 1.0 / 13.0 + y2 * series;
    series = 1.0 / 11.0 + y2 * series;
    series = 1.0 / 9.0 + y2 * series;
    series = 1.0 / 7.0 + y2 * series;
    series = 1.0 / 5.0 + y2 * series;
    series = 1.0 / 3.0 + y2 * series;
    vec4 l1p = 2.0 * y * (1.0 + y2 * series);
    // max() may drop a NaN: the select keeps it (and -p t carries it anyway).
    vec4 pos = mix(p, vec4(0.0), lessThan(p, vec4(0.0)));
    return pos - p * t + l1p;
#endif
}

vec4 pw_grad(vec4 p, vec4 t, float invCount) {
#if PW_LOSS == 0
    return 2.0 * (p - t) * invCount;
#else
    vec4 e = exp(-abs(p));
    vec4 sig = mix(e / (1.0 + e), 1.0 / (1.0 + e), greaterThanEqual(p, vec4(0.0)));
    return (sig - t) * invCount;
#endif
}
