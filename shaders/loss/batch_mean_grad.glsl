// loss/batch_mean_grad: the gradient of the mean of N rows' losses, seed / N in every row.
// inputs: S
// uniforms: invCount = 1 / N, from the host
// output: N x 1, any layout; S (the mean's incoming gradient) is 1 x 1
// formula: Y[r, 0] = S[0, 0] * invCount
uniform float invCount;
void main() {
    setOutput(vec4(S_at(0, 0) * invCount));
}
