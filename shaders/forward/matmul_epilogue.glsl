// forward/matmul_epilogue: finishes forward/matmul_feedback — reads C's texel
// from the captured blocks, adds the bias, applies f (or * f'(Z)) and writes C
// in its own layout.
// inputs: P, BIAS?, Z?
// uses: lib/activation, lib/bias, lib/epilogue
// defines: FBR, FBC (the feedback kernel's block: rows, column texels), ACT, DACT
//          as in forward/matmul
// output: M x N, packed (any row layout); one texel per fragment
// formula: C[r, c] = P's element (r, c) (+ BIAS[0, c]; then f(.) if ACT; then * f'(Z[r, c]) if DACT),
//          where P's texel row R holds block row R (blocks of FBR x FBC texels):
//          block b of it at texels b*FBR*FBC.., texel (r % FBR) * FBC + (x % FBC) of the block
//          holding texel x of row r
void main() {
    ivec2 t = outTexel();
    int bx = t.x / FBC, by = t.y / FBR;
    int inBlock = (t.y - by * FBR) * FBC + (t.x - bx * FBC);
    vec4 c = P_texel(bx * (FBR * FBC) + inBlock, by);
    setOutput(epilogue(c));
}
