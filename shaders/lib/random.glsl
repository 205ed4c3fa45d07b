// lib/random: the counter-based generator of include/gltrain/random.hpp,
// bit for bit: every value is a pure function of (seed, step, index), index the
// row-major element index r * cols + c (so results do not depend on layout or
// paging). highp uint arithmetic wraps mod 2^32 in GLSL ES 3.00, as in C++.
// uniforms: rng_seed (ivec2: the low and high 16 bits of the 32-bit seed — a
//           Pass stores uniforms as floats, exact only below 2^24),
//           step (int, the draw counter: updated per replay with uniformInt)
//   pcg(v)      = PCG-RXS-M-XS output permutation of one LCG step
//   hash3(s,t,i) = pcg(i ^ pcg(t ^ pcg(s)))
//   uniform01   = float(hash3 >> 8) * 2^-24, exact: k * 2^-24, k in [0, 2^24)
//   normal      = Box-Muller on the uniforms at 2i (u1 = (k + 0.5) 2^-24, in (0, 1]) and 2i + 1
uniform ivec2 rng_seed;
uniform int step;

uint rng_pcg(uint v) {
    uint s = v * 747796405u + 2891336453u;
    uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}
// pcg(step ^ pcg(seed)): the part shared by every element of a draw.
uint rng_key() {
    uint seed = (uint(rng_seed.x) & 0xFFFFu) | (uint(rng_seed.y) << 16u);
    return rng_pcg(uint(step) ^ rng_pcg(seed));
}
uint rng_hash(uint key, uint index) { return rng_pcg(index ^ key); }
// k * 2^-24: both the conversion (k < 2^24) and the scaling are exact.
float rng_uniform01(uint key, uint index) { return float(rng_hash(key, index) >> 8u) * exp2(-24.0); }
// The transcendental part of Box-Muller is computed here rather than with the
// GPU's log() and cos(), whose accuracy is implementation-defined: SwiftShader's
// are off by ~1e-4, and any log() is only absolutely accurate near 1, which
// sqrt(-2 log u1) turns into large errors in small normals.
// log(u), u > 0 normal: u = 2^e m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(y),
// y = (m - 1) / (m + 1) (|y| < 0.172, m - 1 exact), seven terms of the series
// (< 1e-10 relative); then e ln 2 + log m.
float rng_log(float u) {
    uint bits = floatBitsToUint(u);
    int e = int(bits >> 23u) - 127;
    float m = uintBitsToFloat((bits & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
    if (m > 1.4142135) {
        m *= 0.5;
        e += 1;
    }
    float y = (m - 1.0) / (m + 1.0);
    float y2 = y * y;
    float series = 1.0 / 11.0 + y2 * (1.0 / 13.0);
    series = 1.0 / 9.0 + y2 * series;
    series = 1.0 / 7.0 + y2 * series;
    series = 1.0 / 5.0 + y2 * series;
    series = 1.0 / 3.0 + y2 * series;
    return float(e) * 0.6931471805599453 + 2.0 * y * (1.0 + y2 * series);
}
// cos(2 pi u), u in [0, 1): u is in turns, so the range reduction is exact: 4u =
// q + f with q the quarter turn and f in [-1/2, 1/2], then cos or sin of
// theta = f pi / 2 (|theta| <= pi / 4) by Taylor polynomials (< 2e-9).
float rng_cos_turns(float u) {
    float v = u * 4.0;  // exact
    float q = floor(v + 0.5);
    float theta = (v - q) * 1.5707963267948966;  // v - q exact
    float t2 = theta * theta;
    float c = 1.0 + t2 * (-1.0 / 2.0 + t2 * (1.0 / 24.0 + t2 * (-1.0 / 720.0 + t2 * (1.0 / 40320.0 + t2 * (-1.0 / 3628800.0)))));
    float s = theta * (1.0 + t2 * (-1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (-1.0 / 5040.0 + t2 * (1.0 / 362880.0)))));
    int quarter = int(q) & 3;  // cos(pi/2 (quarter + f)): cos, -sin, -cos, sin
    return quarter == 0 ? c : quarter == 1 ? -s : quarter == 2 ? -c : s;
}
float rng_normal(uint key, uint index) {
    float u1 = (float(rng_hash(key, 2u * index) >> 8u) + 0.5) * exp2(-24.0);
    float u2 = float(rng_hash(key, 2u * index + 1u) >> 8u) * exp2(-24.0);
    return sqrt(-2.0 * rng_log(u1)) * rng_cos_turns(u2);
}
