// loss/mlp_correct: how many rows of the batch a small softmax network (lib/mlp,
// run by the one fragment) classifies right, added to a running count — the
// training accuracy of a recomputed step (ops/mlp.hpp), which has no logits
// texture for reduce/argmax to read.
// inputs: X, T, W0, B0, W1?, B1?, W2?, B2?, W3?, B3?, RUNNING?
// (T: B x 1 class labels)
// uses: lib/mlp
// defines: lib/mlp's (MLP_LAYERS, MLP_LOAD, MLP_FORWARD, MLP_ROW_CORRECT, ...)
// output: 1 x 1, RUNNING[0, 0] (0 unbound) + the rows r with argmax(aL[r]) == T[r, 0]
//         (argmax: ties to the lowest index, a NaN never wins, as ref::argmaxRows)
void main() {
    float right = 0.0;
    mlpLoad();
    for (int r = 0; r < MLP_BATCH; ++r) {
        mlpForward(r);
        MLP_ROW_CORRECT
    }
#if RUNNING_BOUND
    right += RUNNING_at(0, 0);
#endif
    setOutput(vec4(right));
}
