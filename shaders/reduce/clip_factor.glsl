// reduce/clip_factor: the factor of clip-by-global-norm, computed on the GPU.
// inputs: NORM
// uses: reduce/common
// uniforms: maxNorm (> 0)
// output: 1 x 1 (any layout); NORM is 1 x 1
// formula: f = norm > maxNorm ? maxNorm / norm : 1 — as ref::clipByGlobalNorm: a NaN
//          norm leaves the tensors untouched (f = 1), an infinite one zeroes them.
uniform float maxNorm;
void main() {
    float n = NORM_at(0, 0);
    setOutput(vec4(!red_isnan(n) && n > maxNorm ? maxNorm / n : 1.0));
}
