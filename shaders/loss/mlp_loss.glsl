// loss/mlp_loss: the mean loss (point-wise, or softmax cross-entropy) of a small dense network on a batch,
// the network run by the one fragment (lib/mlp): a tiny model's step needs no
// forward passes (ops/mlp.hpp).
// inputs: X, T, W0, B0, W1?, B1?, W2?, B2?, W3?, B3?
// uses: lib/mlp
// defines: lib/mlp's (MLP_LAYERS, MLP_LOAD, MLP_FORWARD, MLP_ROW_LOSS, ...; PW_LOSS)
// uniforms: invCount = 1 / (B NL); softmax cross-entropy 1 / B
// output: 1 x 1, L = invCount * sum_r,j pw_loss(aL[r, j], T[r, j]);
//         softmax: invCount * sum_r (logsumexp(aL[r]) - aL[r, T[r, 0]])
void main() {
    float sum = 0.0;
    mlpLoad();
    for (int r = 0; r < MLP_BATCH; ++r) {
        mlpForward(r);
        sum += mlpRowLoss(r);
    }
    setOutput(vec4(sum * invCount));
}
