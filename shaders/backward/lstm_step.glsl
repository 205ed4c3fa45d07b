// backward/lstm_step: one time step of an LSTM's backward pass (backpropagation through time), from the last
// step to the first; the other steps' values in a texel it draws are copied from the previous pass's outputs.
// inputs: XZ, R, H, C, DH, DZP?, DCFP?
// (DZP, DCFP: DZ and DCF after the later step; unbound at the last step)
// uses: lib/activation, lib/lstm_gates
// outputs: DZ, DCF
// defines: ACT, RACT as forward/lstm_step
// uniforms: units, step, position (the input step of `step`), nextPosition (the input step of step + 1)
// output: DZ, DCF: N x (T*4U), one layout, indexed by input step; XZ N x (T*4U), R U x 4U, H, C, DH N x (T*U)
// formula: dh = DH[r, step*U + u] + sum_m DZ[r, nextPosition*4U + m] R[u, m];
//          dc = dh RACT(z_o) ACT'(c) + DCF[r, nextPosition*4U + u];
//          DZ[r, position*4U + g*U + u] = (dc ACT(z_c) RACT'(z_i), dc c' RACT'(z_f), dc RACT(z_i) ACT'(z_c),
//                                          dh ACT(c) RACT'(z_o))[g];
//          DCF[r, position*4U + g*U + u] = dc RACT(z_f) for every g (what flows to the earlier step's cell)
// The gates are recomputed from XZ, H and R (the forward keeps only H and C).
uniform int units;
uniform int step;
uniform int position;
uniform int nextPosition;

// Unit u's gate gradients (i, f, c, o) in .xyzw of the first, dc·f in the second's .x.
void unitGrad(int r, int u, out vec4 dz, out float dcf) {
    int base = position * 4 * units + u, h0 = (step - 1) * units;
    vec4 z = vec4(XZ_at(r, base), XZ_at(r, base + units), XZ_at(r, base + 2 * units), XZ_at(r, base + 3 * units));
    float previous = 0.0;
    if (step > 0) {
        for (int k = 0; k < units; ++k)
            z += H_at(r, h0 + k) * vec4(R_at(k, u), R_at(k, u + units), R_at(k, u + 2 * units), R_at(k, u + 3 * units));
        previous = C_at(r, h0 + u);
    }
    float dh = DH_at(r, step * units + u), dcNext = 0.0;
#if DZP_BOUND
    int n0 = nextPosition * 4 * units;
    for (int m = 0; m < 4 * units; ++m) dh += DZP_at(r, n0 + m) * R_at(u, m);
    dcNext = DCFP_at(r, n0 + u);
#endif
    vec4 gate = act_f_kind(RACT, z, act_alpha), dgate = act_df_kind(RACT, z, act_alpha);
    vec4 cell = act_f_kind(ACT, z, act_alpha), dcell = act_df_kind(ACT, z, act_alpha);
    vec4 c = vec4(C_at(r, step * units + u));
    float dc = dh * gate.w * act_df_kind(ACT, c, act_alpha).x + dcNext;
    dz = vec4(dc * cell.z * dgate.x, dc * previous * dgate.y, dc * gate.x * dcell.z,
              dh * act_f_kind(ACT, c, act_alpha).x * dgate.w);
    dcf = dc * gate.y;
}

// lib/lstm_gates' h(t-1): the forward's H.
vec4 previousOutputTexel(int x, int r) { return H_texel(x, r); }

#if OUT_PACKED && XZ_PACKED && R_PACKED && H_PACKED && C_PACKED && DH_PACKED
// unitGrad for the 4 units u .. u+3 at once (units and u multiples of 4): gate g's gradients of the four in dz,
// their dc·f in dcf. A texel of XZ, H, C, DH, DZP or of a row of R holds 4 consecutive values, so recomputing
// the gates (lib/lstm_gates) costs 17 fetches per 4 k's and dh 5 per 4 m's for all 4 units, where unitGrad costs
// 4 lanes x (20 per 4 k's + 8 per 4 m's).
void unitGrads4(int r, int u, int g, out vec4 dz, out vec4 dcf) {
    int h0 = (step - 1) * units, ux = u >> 2;  // h0 < 0 at the first step: no h(t-1)
    vec4 zi, zf, zc, zo, previous = vec4(0.0);
    lstmGates4(r, u, units, position, h0, zi, zf, zc, zo);
    if (step > 0) previous = C_texel((h0 + u) >> 2, r);
    vec4 dh = DH_texel((step * units + u) >> 2, r), dcNext = vec4(0.0);
#if DZP_BOUND
    // Texel m of the later step's 4U gate gradients against texel m of R's rows u .. u+3.
    int n0 = nextPosition * units;
    for (int m = 0; m < units; ++m) {
        vec4 d = DZP_texel(n0 + m, r);
        dh += vec4(dot(d, R_texel(m, u)), dot(d, R_texel(m, u + 1)), dot(d, R_texel(m, u + 2)),
                   dot(d, R_texel(m, u + 3)));
    }
    dcNext = DCFP_texel(n0 + ux, r);
#endif
    vec4 c = C_texel((step * units + u) >> 2, r);
    vec4 dc = dh * act_f_kind(RACT, zo, act_alpha) * act_df_kind(ACT, c, act_alpha) + dcNext;
    if (g == 0) dz = dc * act_f_kind(ACT, zc, act_alpha) * act_df_kind(RACT, zi, act_alpha);
    else if (g == 1) dz = dc * previous * act_df_kind(RACT, zf, act_alpha);
    else if (g == 2) dz = dc * act_f_kind(RACT, zi, act_alpha) * act_df_kind(ACT, zc, act_alpha);
    else dz = dh * act_f_kind(ACT, c, act_alpha) * act_df_kind(RACT, zo, act_alpha);
    dcf = dc * act_f_kind(RACT, zf, act_alpha);
}
#endif

void main() {
    ivec2 t = outTexel();
    int cols = outShape().y, lanes = OUT_PACKED == 1 ? 4 : 1;
    vec4 dz = vec4(0.0), dcf = vec4(0.0);
#if OUT_PACKED && XZ_PACKED && R_PACKED && H_PACKED && C_PACKED && DH_PACKED
    if (units % 4 == 0 && t.x * 4 / (4 * units) == position) {
        int rest = t.x * 4 - position * 4 * units, g = rest / units;
        unitGrads4(t.y, rest - g * units, g, dz, dcf);
        setDZ(dz);
        setDCF(dcf);
        return;
    }
#endif
    for (int i = 0; i < lanes; ++i) {
        int col = t.x * lanes + i;
        if (col >= cols) break;
        int p = col / (4 * units), rest = col - p * 4 * units, g = rest / units;
        if (p == position) {
            vec4 gates;
            float carry;
            unitGrad(t.y, rest - g * units, gates, carry);
            dz[i] = gates[g];
            dcf[i] = carry;
        }
#if DZP_BOUND
        else {
            dz[i] = DZP_at(t.y, col);
            dcf[i] = DCFP_at(t.y, col);
        }
#endif
    }
    setDZ(dz);
    setDCF(dcf);
}
