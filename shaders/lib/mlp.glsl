// lib/mlp: a small stack of dense layers (a multilayer perceptron) run inside
// one fragment, for kernels that recompute a tiny model's training step per
// output texel instead of reading activations and gradients from earlier
// passes: such a step is the loss pass and one update pass per parameter
// (ops/mlp.hpp). Without MLP_LAYERS defined this library is empty.
// uses: lib/activation, lib/pointwise_loss
// inputs (the kernel's): X (B x N0, the batch), T (B x NL, targets), and per layer
//   l < MLP_LAYERS: W<l> (N(l) x N(l+1), the kernel), B<l> (1 x N(l+1), the bias)
// defines: MLP_LAYERS (1 .. 4); MLP_WIDTHS int[](N0, ..., NL); MLP_ACTS int[](...), each
//          layer's activation (lib/activation's kinds);
//          MLP_SIZE = N0 + ... + NL; MLP_MAXW = max N(l); MLP_BATCH = B;
//          MLP_PARAMS = sum (N(l) + 1) N(l+1), the weights and biases;
//          PW_LOSS (lib/pointwise_loss, on the last layer's output);
//          MLP_PARAM_LAYER, MLP_PARAM_BIAS: the parameter mlpGrad() differentiates
// uniforms: invCount = 1 / (B NL); mlp_alpha: layer l's LeakyReLU slope in lane l
// formulas (include/gltrain/reference/dense.hpp, activations.hpp, loss.hpp), batch row r:
//   forward   a0 = X[r];  z(l+1) = a(l) W(l) + b(l);  a(l+1) = f_l(z(l+1))
//   loss      mean over r and j of pw_loss(aL[j], T[r, j])
//   backward  d(L) = pw_grad(aL, T[r]) * invCount * f'_{L-1}(zL);  d(l) = (d(l+1) W(l)^T) * f'_{l-1}(z(l))
//   gradients dW(l) = sum_r a(l)^T d(l+1);  db(l) = sum_r d(l+1)
#ifdef MLP_LAYERS
uniform float invCount;

const int mlpWidth[MLP_LAYERS + 1] = MLP_WIDTHS;
const int mlpAct[MLP_LAYERS] = MLP_ACTS;
uniform vec4 mlp_alpha;
// Batch row r's values: layer l's input at mlpOffset(l) (a: activations, z:
// pre-activations; z of the network's input is unused).
float mlpA[MLP_SIZE];
float mlpZ[MLP_SIZE];
// Every weight, fetched once a fragment (mlpLoad) rather than once a batch row:
// layer l's kernel row-major from mlpParamOffset(l), then its bias.
float mlpP[MLP_PARAMS];

int mlpOffset(int l) {
    int o = 0;
    for (int k = 0; k < l; ++k) o += mlpWidth[k];
    return o;
}
float mlpKernel(int l, int i, int j) {
#if MLP_LAYERS > 1
    if (l == 1) return W1_at(i, j);
#endif
#if MLP_LAYERS > 2
    if (l == 2) return W2_at(i, j);
#endif
#if MLP_LAYERS > 3
    if (l == 3) return W3_at(i, j);
#endif
    return W0_at(i, j);
}
float mlpBias(int l, int j) {
#if MLP_LAYERS > 1
    if (l == 1) return B1_at(0, j);
#endif
#if MLP_LAYERS > 2
    if (l == 2) return B2_at(0, j);
#endif
#if MLP_LAYERS > 3
    if (l == 3) return B3_at(0, j);
#endif
    return B0_at(0, j);
}

int mlpParamOffset(int l) {
    int o = 0;
    for (int k = 0; k < l; ++k) o += (mlpWidth[k] + 1) * mlpWidth[k + 1];
    return o;
}
// Layer l's kernel element (i, j) (i = N(l): its bias) in mlpP.
float mlpWeight(int l, int i, int j) { return mlpP[mlpParamOffset(l) + i * mlpWidth[l + 1] + j]; }

// Fills mlpP.
void mlpLoad() {
    for (int l = 0; l < MLP_LAYERS; ++l) {
        int o = mlpParamOffset(l), n = mlpWidth[l], m = mlpWidth[l + 1];
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < m; ++j) mlpP[o + i * m + j] = mlpKernel(l, i, j);
        for (int j = 0; j < m; ++j) mlpP[o + n * m + j] = mlpBias(l, j);
    }
}

// Fills mlpA and mlpZ for batch row r (after mlpLoad).
void mlpForward(int r) {
    for (int i = 0; i < mlpWidth[0]; ++i) mlpA[i] = X_at(r, i);
    int o = 0;
    for (int l = 0; l < MLP_LAYERS; ++l) {
        int n = mlpWidth[l], next = o + n;
        for (int j = 0; j < mlpWidth[l + 1]; ++j) {
            float s = mlpWeight(l, n, j);
            for (int i = 0; i < n; ++i) s += mlpA[o + i] * mlpWeight(l, i, j);
            mlpZ[next + j] = s;
            mlpA[next + j] = act_f_kind(mlpAct[l], vec4(s), mlp_alpha[l]).x;
        }
        o = next;
    }
}

// The sum of row r's element losses (after mlpForward(r)).
float mlpRowLoss(int r) {
    int o = mlpOffset(MLP_LAYERS);
    float sum = 0.0;
    for (int j = 0; j < mlpWidth[MLP_LAYERS]; ++j) sum += pw_loss(vec4(mlpA[o + j]), vec4(T_at(r, j))).x;
    return sum;
}

#ifdef MLP_PARAM_LAYER
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
    ivec4 cs = min(ivec4(c0) + ivec4(0, 1, 2, 3), ivec4(mlpWidth[MLP_PARAM_LAYER + 1] - 1));
    int inRow = mlpOffset(MLP_PARAM_LAYER) + t.y;
    float d[MLP_MAXW], dn[MLP_MAXW];
    vec4 g = vec4(0.0);
    mlpLoad();
    for (int r = 0; r < MLP_BATCH; ++r) {
        mlpForward(r);
        int o = mlpOffset(MLP_LAYERS);
        for (int j = 0; j < mlpWidth[MLP_LAYERS]; ++j)
            d[j] = pw_grad(vec4(mlpA[o + j]), vec4(T_at(r, j)), invCount).x *
                   act_df_kind(mlpAct[MLP_LAYERS - 1], vec4(mlpZ[o + j]), mlp_alpha[MLP_LAYERS - 1]).x;
        // d is the gradient at layer l's output (pre-activation); take it to its input.
        for (int l = MLP_LAYERS - 1; l > MLP_PARAM_LAYER; --l) {
            int ol = mlpOffset(l);
            for (int i = 0; i < mlpWidth[l]; ++i) {
                float s = 0.0;
                for (int j = 0; j < mlpWidth[l + 1]; ++j) s += d[j] * mlpWeight(l, i, j);
                dn[i] = s * act_df_kind(mlpAct[l - 1], vec4(mlpZ[ol + i]), mlp_alpha[l - 1]).x;
            }
            for (int i = 0; i < mlpWidth[l]; ++i) d[i] = dn[i];
        }
        vec4 dz = vec4(d[cs.x], d[cs.y], d[cs.z], d[cs.w]);
#if MLP_PARAM_BIAS
        g += dz;
#else
        g += mlpA[inRow] * dz;
#endif
    }
    return g;
}
#endif
#endif
