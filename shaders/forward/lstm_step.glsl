// forward/lstm_step: one time step of an LSTM over the whole batch, Keras's gate order (i, f, c, o); every
// other step's values in a texel it draws are copied from the previous step's outputs (ops/recurrent.hpp).
// inputs: XZ, R, HP?, CP?
// (HP, CP: the sequences after the previous step; unbound at the first step, whose state is zero)
// uses: lib/activation, lib/lstm_gates
// outputs: H, C
// defines: ACT (the cell activation), RACT (the gates'), in lib/activation's numbering
// uniforms: units, step, position (the input step this step reads: step, or steps - 1 - step going backwards)
// output: H, C: N x (T*U), one layout; XZ N x (T*4U) (x·W + b), R U x 4U (the recurrent kernel)
// formula: z = XZ[r, position*4U + g*U + u] + sum_k H[r, (step-1)*U + k] R[k, g*U + u], g = i, f, c, o;
//          C[r, step*U + u] = RACT(z_f) c' + RACT(z_i) ACT(z_c);  H[r, step*U + u] = RACT(z_o) ACT(C)
uniform int units;
uniform int step;
uniform int position;

// (h, c) of unit u of row r at this step.
vec2 cellAt(int r, int u) {
    int base = position * 4 * units + u;
    vec4 z = vec4(XZ_at(r, base), XZ_at(r, base + units), XZ_at(r, base + 2 * units), XZ_at(r, base + 3 * units));
    float previous = 0.0;
#if HP_BOUND
    int h0 = (step - 1) * units;
    for (int k = 0; k < units; ++k)
        z += HP_at(r, h0 + k) * vec4(R_at(k, u), R_at(k, u + units), R_at(k, u + 2 * units), R_at(k, u + 3 * units));
    previous = CP_at(r, h0 + u);
#endif
    vec4 gate = act_f_kind(RACT, z, act_alpha), cell = act_f_kind(ACT, z, act_alpha);
    float c = gate.y * previous + gate.x * cell.z;
    return vec2(gate.w * act_f_kind(ACT, vec4(c), act_alpha).x, c);
}

// lib/lstm_gates' h(t-1): the previous pass's H (none at the first step).
vec4 previousOutputTexel(int x, int r) {
#if HP_BOUND
    return HP_texel(x, r);
#else
    return vec4(0.0);
#endif
}

#if OUT_PACKED && XZ_PACKED && R_PACKED
// cellAt for the 4 units u .. u+3 at once (units and u multiples of 4), the gates from lib/lstm_gates.
void cells4(int r, int u, out vec4 h, out vec4 c) {
    vec4 zi, zf, zc, zo, previous = vec4(0.0);
#if HP_BOUND
    int h0 = (step - 1) * units;
    lstmGates4(r, u, units, position, h0, zi, zf, zc, zo);
    previous = CP_texel((h0 + u) >> 2, r);
#else
    lstmGates4(r, u, units, position, -1, zi, zf, zc, zo);
#endif
    c = act_f_kind(RACT, zf, act_alpha) * previous + act_f_kind(RACT, zi, act_alpha) * act_f_kind(ACT, zc, act_alpha);
    h = act_f_kind(RACT, zo, act_alpha) * act_f_kind(ACT, c, act_alpha);
}
#endif

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 h = vec4(0.0), c = vec4(0.0);
#if OUT_PACKED && XZ_PACKED && R_PACKED
    if (units % 4 == 0 && t.x * 4 / units == step) {
        cells4(t.y, t.x * 4 - step * units, h, c);
        setH(h);
        setC(c);
        return;
    }
#endif
    for (int i = 0; i < lanes; ++i) {
        int col = t.x * lanes + i;
        if (col >= cols) break;
        int s = col / units;
        if (s == step) {
            vec2 hc = cellAt(t.y, col - s * units);
            h[i] = hc.x;
            c[i] = hc.y;
        }
#if HP_BOUND
        else {
            h[i] = HP_at(t.y, col);
            c[i] = CP_at(t.y, col);
        }
#endif
    }
    setH(h);
    setC(c);
}
