// util/precision_probe: the precision probe behind Capabilities::measuredMantissaBits.
// inputs: A, B
// output: same shape as A (the probe uses 1x32: A = 1, B[k-1] = 2^-k)
// formula: out = A + B. The sum reads both operands from textures so the
//          compiler cannot fold it; 1 + 2^-k is exact for k <= mantissa bits.
void main() {
    setOutput(A_aligned() + B_aligned());
}
