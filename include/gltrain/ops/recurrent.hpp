// Kernels of the LSTM (graph/ops/recurrent.hpp): the time loop runs on the GPU
// as one pass per step, each writing the whole sequence (the step's values,
// the others copied from the previous pass), so the steps ping-pong between
// the op's outputs and two spare tensors and nothing is read back. A step's
// fragment computes its unit's four gates from h(t-1)·R itself; the input's
// share, x·W + b for every step, is one product before the loop.
#pragma once
#include <string>

#include "gltrain/activation.hpp"
#include "gltrain/error.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

// What the LSTM kernels share: the units, the two activations and the direction.
struct LstmCell {
    // The state's size U.
    int units = 1;
    // The cell's activation (Keras's `activation`).
    Activation activation = Activation::Tanh;
    // The gates' activation (Keras's `recurrent_activation`).
    Activation recurrentActivation = Activation::Sigmoid;
    // Whether step s reads input step T-1-s (Keras's go_backwards).
    bool reverse = false;

    // The input step that step s of T reads.
    int position(int s, int steps) const { return reverse ? steps - 1 - s : s; }
};

namespace recurrent_detail {
inline std::string shapeOf(const Tensor& t) { return t ? t.shapeString() : std::string("empty"); }
// Whether the sequences a step reads may differ in layout (each input has its own texel helpers), or must
// share one (a step's outputs and their spares: a pass writes its render targets in one layout).
enum class StateLayouts { Any, One };
// ArgumentError unless xz is N x (T*4U), r U x 4U and every state tensor N x (T*U*width) (in one layout if
// `layouts` says so).
inline int requireLstm(const char* fn, const LstmCell& cell, const Tensor& xz, const Tensor& r,
                       std::initializer_list<const Tensor*> states, int width, StateLayouts layouts) {
    const int U = cell.units;
    bool ok = U > 0 && xz && r && xz.cols() % (4 * U) == 0 && r.rows() == U && r.cols() == 4 * U;
    const int T = ok ? xz.cols() / (4 * U) : 0;
    const bool one = layouts == StateLayouts::One;
    for (const Tensor* s : states)
        ok = ok && *s && s->rows() == xz.rows() && s->cols() == T * U * width &&
             (!one || s->layout() == (*states.begin())->layout());
    if (!ok)
        throw ArgumentError(std::string(fn) + ": xz must be N x (T*4*" + std::to_string(U) + "), r " +
                            std::to_string(U) + " x " + std::to_string(4 * U) + " and the sequences N x (T*" +
                            std::to_string(U * width) + ")" + (one ? " in one layout" : "") + ", got xz " +
                            shapeOf(xz) + ", r " + shapeOf(r) + ", first sequence " + shapeOf(**states.begin()) +
                            (one ? std::string(" ") + layoutName((*states.begin())->layout()) : std::string()));
    return T;
}
inline Defines cellDefines(const char* fn, const LstmCell& cell) {
    return {{"ACT", detail::actDefine(fn, cell.activation, 0.0f)},
            {"RACT", detail::actDefine(fn, cell.recurrentActivation, 0.0f)}};
}
// Which of a pair step s of T writes: the last step writes the first (the op's output).
inline int pairIndex(int s, int steps, bool backwards) { return (backwards ? s : steps - 1 - s) % 2; }
}  // namespace recurrent_detail

// H and C [N, T*U] of an LSTM over xz = x·W + b [N, T*4U] with recurrent kernel r [U, 4U]: one pass per
// step. hSpare and cSpare (h's shape and layout) hold every other step's pass.
inline void recordLstmSequence(PassList& list, const Tensor& xz, const Tensor& r, const LstmCell& cell, Tensor& h,
                               Tensor& c, Tensor& hSpare, Tensor& cSpare) {
    const int T = recurrent_detail::requireLstm("lstm", cell, xz, r, {&h, &c, &hSpare, &cSpare}, 1,
                                                recurrent_detail::StateLayouts::One);
    const Defines defines = recurrent_detail::cellDefines("lstm", cell);
    Tensor* hs[2] = {&h, &hSpare};
    Tensor* cs[2] = {&c, &cSpare};
    for (int s = 0; s < T; ++s) {
        const int w = recurrent_detail::pairIndex(s, T, false);
        Pass& p = list.add(Pass(xz.context(), "forward/lstm_step", defines))
                      .input("XZ", xz)
                      .input("R", r)
                      .output("H", *hs[w])
                      .output("C", *cs[w])
                      .uniformInt("units", cell.units)
                      .uniformInt("step", s)
                      .uniformInt("position", cell.position(s, T));
        if (s > 0) p.input("HP", *hs[1 - w]).input("CP", *cs[1 - w]);
    }
}

// DZ (the gradient of xz) and DCF [N, T*4U] of recordLstmSequence from dh [N, T*U]: one pass per step, from
// the last; dzSpare and dcfSpare (dz's shape and layout) hold every other step's pass.
inline void recordLstmSequenceGrad(PassList& list, const Tensor& xz, const Tensor& r, const Tensor& h, const Tensor& c,
                                   const Tensor& dh, const LstmCell& cell, Tensor& dz, Tensor& dcf, Tensor& dzSpare,
                                   Tensor& dcfSpare) {
    // dh comes from whatever reads the outputs (a Dense per step writes 4-row blocks), h and c from the forward.
    const int T =
        recurrent_detail::requireLstm("lstmGrad", cell, xz, r, {&h, &c, &dh}, 1, recurrent_detail::StateLayouts::Any);
    recurrent_detail::requireLstm("lstmGrad", cell, xz, r, {&dz, &dcf, &dzSpare, &dcfSpare}, 4,
                                  recurrent_detail::StateLayouts::One);
    const Defines defines = recurrent_detail::cellDefines("lstmGrad", cell);
    Tensor* dzs[2] = {&dz, &dzSpare};
    Tensor* dcfs[2] = {&dcf, &dcfSpare};
    for (int s = T - 1; s >= 0; --s) {
        const int w = recurrent_detail::pairIndex(s, T, true);
        Pass& p = list.add(Pass(xz.context(), "backward/lstm_step", defines))
                      .input("XZ", xz)
                      .input("R", r)
                      .input("H", h)
                      .input("C", c)
                      .input("DH", dh)
                      .output("DZ", *dzs[w])
                      .output("DCF", *dcfs[w])
                      .uniformInt("units", cell.units)
                      .uniformInt("step", s)
                      .uniformInt("position", cell.position(s, T))
                      .uniformInt("nextPosition", s + 1 < T ? cell.position(s + 1, T) : 0);
        if (s + 1 < T) p.input("DZP", *dzs[1 - w]).input("DCFP", *dcfs[1 - w]);
    }
}

// dR [U, 4U] = sum over steps s >= 1 of h(s-1)ᵀ · dz(s): h [N, T*U] by step, dz [N, T*4U] by input step.
inline Pass& recordLstmRecurrentGrad(PassList& list, const Tensor& h, const Tensor& dz, const LstmCell& cell,
                                     Tensor& dr) {
    const int U = cell.units;
    if (!h || !dz || !dr || U < 1 || h.rows() != dz.rows() || h.cols() % U != 0 ||
        int64_t(dz.cols()) != 4 * int64_t(h.cols()) || dr.rows() != U || dr.cols() != 4 * U)
        throw ArgumentError("lstmRecurrentGrad: h must be N x (T*" + std::to_string(U) + "), dz N x (T*" +
                            std::to_string(4 * U) + ") and dr " + std::to_string(U) + " x " + std::to_string(4 * U) +
                            ", got h " + recurrent_detail::shapeOf(h) + ", dz " + recurrent_detail::shapeOf(dz) +
                            ", dr " + recurrent_detail::shapeOf(dr));
    return list.add(Pass(h.context(), "backward/lstm_recurrent_kernel"))
        .input("H", h)
        .input("DZ", dz)
        .output(dr)
        .uniformInt("units", U)
        .uniformInt("reverse", cell.reverse ? 1 : 0);
}

// out[r, t*C + c] = x[r, (T-1-t)*C + c]: each row's T steps of `channels` values in reverse order.
inline Pass& recordReverseSteps(PassList& list, const Tensor& x, int channels, Tensor& out) {
    if (!x || !out || channels < 1 || x.cols() % channels != 0 || out.rows() != x.rows() || out.cols() != x.cols())
        throw ArgumentError("reverseSteps: x must be N x (T*" + std::to_string(channels) +
                            ") and out its shape, got x " + recurrent_detail::shapeOf(x) + ", out " +
                            recurrent_detail::shapeOf(out));
    return list.add(Pass(x.context(), "util/reverse_steps")).input("X", x).output(out).uniformInt("channels", channels);
}

}  // namespace gltrain
