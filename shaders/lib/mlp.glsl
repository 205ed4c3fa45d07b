// lib/mlp: a small stack of dense layers (a multilayer perceptron) run inside
// one fragment, for kernels that recompute a tiny model's training step per
// output texel instead of reading activations and gradients from earlier
// passes: such a step is the loss pass and one update pass per parameter
// (ops/mlp.hpp). Without MLP_LAYERS defined this library is empty.
// uses: lib/activation, lib/pointwise_loss
// inputs (the kernel's): X (B x N0, the batch), T (B x NL, targets), and per layer
//   l < MLP_LAYERS: W<l> (N(l) x N(l+1), the kernel), B<l> (1 x N(l+1), the bias)
// defines (ops/mlp.hpp writes the statement lists out for the network, element by
// element: every array index in them is a constant, so the arrays can live in
// registers; a loop over them indexes memory, lane by lane on a software renderer):
//   MLP_LAYERS; MLP_SIZE = N0 + ... + NL; MLP_PARAMS = sum (N(l) + 1) N(l+1); MLP_BATCH = B
//   MLP_LOAD          mlpP = every kernel (row-major) and bias, layer by layer
//   MLP_FORWARD       batch row r: mlpA = X[r] and each layer's output after it, mlpZ = the
//                     pre-activations (layer l's values at offset N0 + ... + N(l-1))
//   MLP_ROW_LOSS      sum += row r's element losses (softmax cross-entropy: its row loss)
//   MLP_ROW_CORRECT   right += 1 where row r's argmax is its label (softmax networks)
//   MLP_BACKWARD      mlpD = the loss gradient at the pre-activations, from the last layer
//                     down to the output of layer MLP_PARAM_LAYER (same offsets)
//   MLP_PARAM_IN, MLP_PARAM_OUT, MLP_PARAM_WIDTH: where that layer's input (mlpA) and output
//   gradient (mlpD) start, and its width; MLP_PARAM_BIAS: the bias instead of the kernel
//   PW_LOSS (lib/pointwise_loss, on the last layer's output), unless the network
//   ends in softmax cross-entropy against class labels T (B x 1)
// uniforms: invCount = 1 / (B NL), softmax cross-entropy 1 / B; mlp_alpha: layer l's
//   LeakyReLU slope in lane l
// formulas (include/gltrain/reference/dense.hpp, activations.hpp, loss.hpp), batch row r:
//   forward   a0 = X[r];  z(l+1) = a(l) W(l) + b(l);  a(l+1) = f_l(z(l+1))
//   loss      mean over r and j of pw_loss(aL[j], T[r, j]);
//             softmax: mean over r of logsumexp(aL) - aL[T[r, 0]]
//   backward  d(L) = pw_grad(aL, T[r]) * invCount * f'_{L-1}(zL)
//             (softmax: (softmax(aL) - onehot(T[r, 0])) * invCount * f'_{L-1}(zL));
//             d(l) = (d(l+1) W(l)^T) * f'_{l-1}(z(l))
//   gradients dW(l) = sum_r a(l)^T d(l+1);  db(l) = sum_r d(l+1)
#ifdef MLP_LAYERS
uniform float invCount;
uniform vec4 mlp_alpha;

float mlpP[MLP_PARAMS];
float mlpA[MLP_SIZE];
float mlpZ[MLP_SIZE];
float mlpD[MLP_SIZE];

// Fetched once a fragment, not once a batch row.
void mlpLoad() { MLP_LOAD }

void mlpForward(int r) { MLP_FORWARD }

// The sum of row r's element losses (after mlpForward(r)).
float mlpRowLoss(int r) {
    float sum = 0.0;
    MLP_ROW_LOSS
    return sum;
}

#ifdef MLP_BACKWARD
// The gradient of the parameter (layer MLP_PARAM_LAYER's kernel, or its bias
// with MLP_PARAM_BIAS) at the output texel's elements, summed over the batch.
vec4 mlpGrad() {
    ivec2 t = outTexel();
#if OUT_PACKED
    int c0 = t.x * 4;
#else
    int c0 = t.x;
#endif
    // Lanes past the parameter's columns read its last one; the output masks them.
    ivec4 cs = MLP_PARAM_OUT + min(ivec4(c0) + ivec4(0, 1, 2, 3), ivec4(MLP_PARAM_WIDTH - 1));
    vec4 g = vec4(0.0);
    mlpLoad();
    for (int r = 0; r < MLP_BATCH; ++r) {
        mlpForward(r);
        MLP_BACKWARD
        vec4 dz = vec4(mlpD[cs.x], mlpD[cs.y], mlpD[cs.z], mlpD[cs.w]);
#if MLP_PARAM_BIAS
        g += dz;
#else
        g += mlpA[MLP_PARAM_IN + t.y] * dz;
#endif
    }
    return g;
}
#endif
#endif
