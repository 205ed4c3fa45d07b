// reduce/common: IEEE helpers for the reduction kernels (a library: no main).
// NaN and infinity are tested on the bits, not with isnan()/comparisons, so a
// compiler that assumes finite math cannot fold the tests away.
bvec4 red_isnan(vec4 v) {
    return greaterThan(floatBitsToUint(v) & uvec4(0x7fffffffu), uvec4(0x7f800000u));
}
bool red_isnan(float v) { return (floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u; }
float red_neg_inf() { return uintBitsToFloat(0xff800000u); }

// max that propagates NaN: GLSL's max() is undefined for NaN operands, so a
// NaN in either operand selects a + b (NaN) through a bvec mix (a select, no arithmetic
// on the chosen lane).
vec4 red_max(vec4 a, vec4 b) {
    bvec4 n = notEqual(uvec4(red_isnan(a)) + uvec4(red_isnan(b)), uvec4(0u));
    return mix(max(a, b), a + b, n);
}
float red_max(float a, float b) {
    return red_isnan(a) || red_isnan(b) ? a + b : max(a, b);
}
