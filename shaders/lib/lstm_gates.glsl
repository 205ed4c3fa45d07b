// lib/lstm_gates: an LSTM step's gate pre-activations for 4 units at once, read from packed tensors, for
// forward/lstm_step and backward/lstm_step.
// inputs (the kernel's): XZ (x·W + b, N x (T*4U)), R (the recurrent kernel, U x 4U)
// The kernel defines `vec4 previousOutputTexel(int x, int r)`: texel x of row r of the sequence that holds
// h(t-1) (the forward's previous pass, the backward's H).
vec4 previousOutputTexel(int x, int r);

// Gates i, f, c, o of units u .. u+3 (u and units multiples of 4) of row r at input step `position`: XZ's four
// texels, plus h(t-1)·R when h0 >= 0 (h(t-1)'s first column). A texel of h holds 4 k's and a texel of a row of
// R one gate's 4 units, so 4 k's cost 17 fetches where unit by unit they cost 4 x 20.
void lstmGates4(int r, int u, int units, int position, int h0, out vec4 zi, out vec4 zf, out vec4 zc,
                out vec4 zo) {
    int x0 = (position * 4 * units + u) >> 2, q = units >> 2, ux = u >> 2;
    zi = XZ_texel(x0, r);
    zf = XZ_texel(x0 + q, r);
    zc = XZ_texel(x0 + 2 * q, r);
    zo = XZ_texel(x0 + 3 * q, r);
    if (h0 < 0) return;
    for (int k = 0; k < units; k += 4) {
        vec4 hk = previousOutputTexel((h0 + k) >> 2, r);
        for (int j = 0; j < 4; ++j) {
            zi += hk[j] * R_texel(ux, k + j);
            zf += hk[j] * R_texel(ux + q, k + j);
            zc += hk[j] * R_texel(ux + 2 * q, k + j);
            zo += hk[j] * R_texel(ux + 3 * q, k + j);
        }
    }
}
