// util/transpose: each example's axes permuted (graph's Transpose: the Permute layer).
// inputs: X
// uniforms: outDims — the output's axes after the batch, padded in front with 1s to three;
//           strides — the distance in a row of X between neighbours along each output axis
// output: N x (d0 * d1 * d2), any layout
// formula: Y[n, (i0*d1 + i1)*d2 + i2] = X[n, i0*s0 + i1*s1 + i2*s2]
uniform ivec3 outDims;
uniform ivec3 strides;
void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int c = t.x * lanes + k;
        if (c >= cols) break;
        int q = c / outDims.z, i2 = c - q * outDims.z;
        int i0 = q / outDims.y, i1 = q - i0 * outDims.y;
        v[k] = X_at(t.y, i0 * strides.x + i1 * strides.y + i2 * strides.z);
    }
    setOutput(v);
}
