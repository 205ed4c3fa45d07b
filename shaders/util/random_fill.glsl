// util/random_fill: fills a tensor with counter-based random numbers (lib/random).
// inputs: none
// uses: lib/random
// defines: DIST = 0 uniform in [a, b), 1 normal (mean a, stddev b), 2 inverted
//          dropout mask (rate a, keep scale b = 1 / (1 - rate), computed on the host)
// uniforms: a, b, rng_seed, step, opaque (0: see below)
// output: any shape, layout and paging; element (r, c) draws index r * cols + c
// formula: uniform  Y = a + (b - a) * u          (the reference's expression, not mix())
//          normal   Y = a + b * z
//          dropout  Y = u >= a ? b : 0
// The uniform fill must match ref::uniformFill bit for bit, so the product
// (b - a) * u must be rounded before the addition: a driver may contract
// a + d * u into one fma (GLSL ES 3.00 has no "precise"), so the product goes
// through an XOR with the uniform `opaque` (always 0), which no compiler can
// see through.
uniform float a;
uniform float b;
uniform int opaque;

float draw(uint key, uint index) {
#if DIST == 0
    float prod = uintBitsToFloat(floatBitsToUint((b - a) * rng_uniform01(key, index)) ^ uint(opaque));
    return a + prod;
#elif DIST == 1
    return a + b * rng_normal(key, index);
#else
    return rng_uniform01(key, index) >= a ? b : 0.0;
#endif
}

void main() {
    ivec2 t = outTexel();
    uint key = rng_key();
    uint cols = uint(outShape().y);
#if OUT_PACKED
    uint i0 = uint(t.y) * cols + uint(t.x) * 4u;
    // Lanes past the last column are padding: setOutput zeroes them.
    setOutput(vec4(draw(key, i0), draw(key, i0 + 1u), draw(key, i0 + 2u), draw(key, i0 + 3u)));
#else
    setOutput(vec4(draw(key, uint(t.y) * cols + uint(t.x))));
#endif
}
