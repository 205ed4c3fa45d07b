// lib/random: the counter-based generator of include/gltrain/reference/random.hpp,
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
// log(u) for u in (0, 1]. Near 1 a GPU log() is accurate only in absolute terms
// (~1e-7), which sqrt(-2 log u) would turn into a large error in small normals;
// there log(u) = 2 atanh(y), y = (u - 1) / (u + 1) (u - 1 is exact), by its
// series: |y| < 0.053 for u > 0.9, so four terms leave < 1e-11 relative.
float rng_log_unit(float u) {
    if (u <= 0.9) return log(u);
    float y = (u - 1.0) / (u + 1.0);
    float y2 = y * y;
    return 2.0 * y * (1.0 + y2 * (1.0 / 3.0 + y2 * (0.2 + y2 * (1.0 / 7.0))));
}
float rng_normal(uint key, uint index) {
    float u1 = (float(rng_hash(key, 2u * index) >> 8u) + 0.5) * exp2(-24.0);
    float u2 = float(rng_hash(key, 2u * index + 1u) >> 8u) * exp2(-24.0);
    return sqrt(-2.0 * rng_log_unit(u1)) * cos(6.283185307179586 * u2);
}
