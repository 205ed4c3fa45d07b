// Kernels of the LSTM and the GRU (graph/ops/recurrent.hpp): the time loop
// runs on the GPU as a pass (LSTM) or two (GRU) per step, and nothing is read
// back. A step's pass draws only the texels of its own step's columns
// (Pass::columns), alternating between two spare sequences (the other
// texels of a texel it draws are copied from the previous pass), and one
// pass at the end merges the two into the op's output: T passes of one step
// each instead of T passes that each rewrite the whole sequence (W5's LSTM:
// 64 steps). A step's fragment computes its unit's gates from h(t-1)·R
// itself; the input's share, x·W + b for every step, is one product before
// the loop. A GRU's candidate reads r ⊙ h(t-1) of every unit, so its reset
// gates are a pass of their own before the step's outputs.
#pragma once
#include <string>

#include "gltrain/activation.hpp"
#include "gltrain/error.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/pass_list.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

// What the recurrent kernels share: the units, the two activations and the direction.
struct RecurrentCell {
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
// ArgumentError unless xz is N x (T*gates*U), r U x gates*U and every state tensor N x (T*U*width) (in one
// layout if `layouts` says so).
inline int requireCell(const char* fn, const RecurrentCell& cell, int gates, const Tensor& xz, const Tensor& r,
                       std::initializer_list<const Tensor*> states, int width, StateLayouts layouts) {
    const int U = cell.units, G = gates * U;
    bool ok = U > 0 && xz && r && xz.cols() % G == 0 && r.rows() == U && r.cols() == G;
    const int T = ok ? xz.cols() / G : 0;
    const bool one = layouts == StateLayouts::One;
    for (const Tensor* s : states)
        ok = ok && *s && s->rows() == xz.rows() && s->cols() == T * U * width &&
             (!one || s->layout() == (*states.begin())->layout());
    if (!ok)
        throw ArgumentError(std::string(fn) + ": xz must be N x (T*" + std::to_string(gates) + "*" + std::to_string(U) +
                            "), r " + std::to_string(U) + " x " + std::to_string(G) + " and the sequences N x (T*" +
                            std::to_string(U * width) + ")" + (one ? " in one layout" : "") + ", got xz " +
                            shapeOf(xz) + ", r " + shapeOf(r) + ", first sequence " + shapeOf(**states.begin()) +
                            (one ? std::string(" ") + layoutName((*states.begin())->layout()) : std::string()));
    return T;
}
// A pass of a step kernel with the cell's uniforms: units, step and the input step it reads.
inline Pass& stepPass(PassList& list, const Tensor& xz, const char* kernel, const Defines& defines,
                      const RecurrentCell& cell, int s, int steps) {
    return list.add(Pass(xz.context(), kernel, defines))
        .input("XZ", xz)
        .uniformInt("units", cell.units)
        .uniformInt("step", s)
        .uniformInt("position", cell.position(s, steps));
}
inline Defines cellDefines(const char* fn, const RecurrentCell& cell) {
    return {{"ACT", detail::actDefine(fn, cell.activation, 0.0f)},
            {"RACT", detail::actDefine(fn, cell.recurrentActivation, 0.0f)}};
}
}  // namespace recurrent_detail

// Two spare sequences (the op's output's shape and layout) that a loop's steps alternate between: step s
// writes at(s), drawing only its own columns, and reads the previous step's from the other.
struct StepPair {
    Tensor* even;
    Tensor* odd;
    Tensor& at(int s) const { return s % 2 ? *odd : *even; }
};

// out = the sequence the steps of `pair` wrote, each block of `width` columns from the tensor that its step
// wrote: block b's step is b (flip 0) or has b's parity flipped (flip 1: a backward loop of a reversed cell,
// whose blocks are by input step).
inline Pass& recordMergeSteps(PassList& list, const StepPair& pair, int width, int flip, Tensor& out) {
    if (!out || !*pair.even || !*pair.odd || width < 1 || out.cols() % width != 0)
        throw ArgumentError("mergeSteps: out must be N x (T*" + std::to_string(width) + "), got " +
                            recurrent_detail::shapeOf(out));
    for (const Tensor* t : {pair.even, pair.odd})
        if (t->rows() != out.rows() || t->cols() != out.cols() || t->layout() != out.layout())
            throw ArgumentError("mergeSteps: the step pair must have the output's shape and layout (" +
                                out.shapeString() + " " + layoutName(out.layout()) + "), got " + t->shapeString() +
                                " " + layoutName(t->layout()));
    return list.add(Pass(out.context(), "util/merge_steps"))
        .input("EVEN", *pair.even)
        .input("ODD", *pair.odd)
        .output(out)
        .uniformInt("width", width)
        .uniformInt("flip", flip & 1);
}

// H and C [N, T*U] of an LSTM over xz = x·W + b [N, T*4U] with recurrent kernel r [U, 4U]: one pass per
// step into the step pairs (h's shape and layout), then one merge of each.
inline void recordLstmSequence(PassList& list, const Tensor& xz, const Tensor& r, const RecurrentCell& cell, Tensor& h,
                               Tensor& c, const StepPair& hs, const StepPair& cs) {
    const int T = recurrent_detail::requireCell("lstm", cell, 4, xz, r, {&h, &c, hs.even, hs.odd, cs.even, cs.odd}, 1,
                                                recurrent_detail::StateLayouts::One);
    const Defines defines = recurrent_detail::cellDefines("lstm", cell);
    const int U = cell.units;
    for (int s = 0; s < T; ++s) {
        Pass& p = recurrent_detail::stepPass(list, xz, "forward/lstm_step", defines, cell, s, T)
                      .input("R", r)
                      .output("H", hs.at(s))
                      .output("C", cs.at(s))
                      .columns(s * U, U);
        if (s > 0) p.input("HP", hs.at(s - 1)).input("CP", cs.at(s - 1));
    }
    recordMergeSteps(list, hs, U, 0, h);
    recordMergeSteps(list, cs, U, 0, c);
}

// The flip of recordMergeSteps for a backward loop's outputs by input step: step s (from the last) writes
// block position(s), whose parity differs from s's by T - 1 when the cell is reversed.
inline int backwardFlip(const RecurrentCell& cell, int steps) { return cell.reverse ? (steps - 1) & 1 : 0; }

// DZ (the gradient of xz) and DCF [N, T*4U] of recordLstmSequence from dh [N, T*U]: one pass per step, from
// the last, into the step pairs (dz's shape and layout), then one merge of each.
inline void recordLstmSequenceGrad(PassList& list, const Tensor& xz, const Tensor& r, const Tensor& h, const Tensor& c,
                                   const Tensor& dh, const RecurrentCell& cell, Tensor& dz, Tensor& dcf,
                                   const StepPair& dzs, const StepPair& dcfs) {
    // dh comes from whatever reads the outputs (a Dense per step writes 4-row blocks), h and c from the forward.
    const int T = recurrent_detail::requireCell("lstmGrad", cell, 4, xz, r, {&h, &c, &dh}, 1,
                                                recurrent_detail::StateLayouts::Any);
    recurrent_detail::requireCell("lstmGrad", cell, 4, xz, r, {&dz, &dcf, dzs.even, dzs.odd, dcfs.even, dcfs.odd}, 4,
                                  recurrent_detail::StateLayouts::One);
    const Defines defines = recurrent_detail::cellDefines("lstmGrad", cell);
    const int G = 4 * cell.units;
    for (int s = T - 1; s >= 0; --s) {
        Pass& p = recurrent_detail::stepPass(list, xz, "backward/lstm_step", defines, cell, s, T)
                      .input("R", r)
                      .input("H", h)
                      .input("C", c)
                      .input("DH", dh)
                      .output("DZ", dzs.at(s))
                      .output("DCF", dcfs.at(s))
                      .columns(cell.position(s, T) * G, G)
                      .uniformInt("nextPosition", s + 1 < T ? cell.position(s + 1, T) : 0);
        if (s + 1 < T) p.input("DZP", dzs.at(s + 1)).input("DCFP", dcfs.at(s + 1));
    }
    recordMergeSteps(list, dzs, G, backwardFlip(cell, T), dz);
    recordMergeSteps(list, dcfs, G, backwardFlip(cell, T), dcf);
}

// H and RH (each step's r ⊙ h(t-1)) [N, T*U] of a GRU over xz = x·W + b [N, T*3U] (gates z, r, h) with recurrent
// kernel r [U, 3U]: per step, a pass of the reset gates and one of the outputs, into the step pairs (h's shape
// and layout), then one merge of each.
inline void recordGruSequence(PassList& list, const Tensor& xz, const Tensor& r, const RecurrentCell& cell, Tensor& h,
                              Tensor& rh, const StepPair& hs, const StepPair& rhs) {
    const int T = recurrent_detail::requireCell("gru", cell, 3, xz, r, {&h, &rh, hs.even, hs.odd, rhs.even, rhs.odd}, 1,
                                                recurrent_detail::StateLayouts::One);
    const Defines defines = recurrent_detail::cellDefines("gru", cell);
    const int U = cell.units;
    for (int s = 0; s < T; ++s) {
        Pass& reset = recurrent_detail::stepPass(list, xz, "forward/gru_reset", defines, cell, s, T)
                          .input("R", r)
                          .output(rhs.at(s))
                          .columns(s * U, U);
        Pass& step = recurrent_detail::stepPass(list, xz, "forward/gru_step", defines, cell, s, T)
                         .input("R", r)
                         .input("RH", rhs.at(s))
                         .output(hs.at(s))
                         .columns(s * U, U);
        if (s > 0) {
            reset.input("H", hs.at(s - 1)).input("RHP", rhs.at(s - 1));
            step.input("H", hs.at(s - 1));
        }
    }
    recordMergeSteps(list, hs, U, 0, h);
    recordMergeSteps(list, rhs, U, 0, rh);
}

// DZ (the gradient of xz) [N, T*3U] and DHT (each step's whole output gradient) [N, T*U] of recordGruSequence
// from dh [N, T*U]: per step from the last, a pass of DHT (into the step pair dhts, then merged), one of the
// update and candidate gates' gradients (into dzSpare) and one of the reset gates' (into dz). Every pass draws
// only its step's columns; dz and dzSpare each hold every step's block once the loop is done (each is
// written at every step), dht's steps alternate.
inline void recordGruSequenceGrad(PassList& list, const Tensor& xz, const Tensor& r, const Tensor& h, const Tensor& rh,
                                  const Tensor& dh, const RecurrentCell& cell, Tensor& dz, Tensor& dht, Tensor& dzSpare,
                                  const StepPair& dhts) {
    // dh comes from whatever reads the outputs, in any layout (as the LSTM's).
    const int T = recurrent_detail::requireCell("gruGrad", cell, 3, xz, r, {&h, &rh, &dh}, 1,
                                                recurrent_detail::StateLayouts::Any);
    recurrent_detail::requireCell("gruGrad", cell, 3, xz, r, {&dht, dhts.even, dhts.odd}, 1,
                                  recurrent_detail::StateLayouts::One);
    recurrent_detail::requireCell("gruGrad", cell, 3, xz, r, {&dz, &dzSpare}, 3, recurrent_detail::StateLayouts::One);
    const Defines defines = recurrent_detail::cellDefines("gruGrad", cell);
    const int U = cell.units, G = 3 * U;
    for (int s = T - 1; s >= 0; --s) {
        const int block = cell.position(s, T) * G;
        Pass& total = recurrent_detail::stepPass(list, xz, "backward/gru_dh", defines, cell, s, T)
                          .input("R", r)
                          .input("H", h)
                          .input("DH", dh)
                          .output(dhts.at(s))
                          .columns(s * U, U)
                          .uniformInt("nextPosition", s + 1 < T ? cell.position(s + 1, T) : 0);
        Pass& gates = recurrent_detail::stepPass(list, xz, "backward/gru_step", defines, cell, s, T)
                          .input("R", r)
                          .input("H", h)
                          .input("RH", rh)
                          .input("DHT", dhts.at(s))
                          .output(dzSpare)
                          .columns(block, G);
        if (s + 1 < T) {
            total.input("DZP", dz).input("DHTP", dhts.at(s + 1));
            gates.input("DZP", dz);
        }
        recurrent_detail::stepPass(list, xz, "backward/gru_reset", defines, cell, s, T)
            .input("R", r)
            .input("H", h)
            .input("DZP", dzSpare)
            .output(dz)
            .columns(block, G);
    }
    recordMergeSteps(list, dhts, U, 0, dht);
}

// dR [U, gates*U] of an LSTM (gates 4) or a GRU (gates 3): the sum over steps s >= 1 of h(s-1)ᵀ · dz(s), except a
// GRU's candidate columns, rh(s)ᵀ · dz(s). h and rh [N, T*U] by step, dz [N, T*gates*U] by input step; rh: null for
// an LSTM.
inline Pass& recordRecurrentKernelGrad(PassList& list, const Tensor& h, const Tensor* rh, const Tensor& dz,
                                       const RecurrentCell& cell, int gates, Tensor& dr) {
    const int U = cell.units;
    if (!h || !dz || !dr || U < 1 || h.rows() != dz.rows() || h.cols() % U != 0 ||
        int64_t(dz.cols()) != gates * int64_t(h.cols()) || dr.rows() != U || dr.cols() != gates * U ||
        (rh && (!*rh || rh->rows() != h.rows() || rh->cols() != h.cols())))
        throw ArgumentError("recurrentKernelGrad: h (and rh) must be N x (T*" + std::to_string(U) + "), dz N x (T*" +
                            std::to_string(gates * U) + ") and dr " + std::to_string(U) + " x " +
                            std::to_string(gates * U) + ", got h " + recurrent_detail::shapeOf(h) + ", dz " +
                            recurrent_detail::shapeOf(dz) + ", dr " + recurrent_detail::shapeOf(dr));
    Pass& p = list.add(Pass(h.context(), "backward/recurrent_kernel"))
                  .input("H", h)
                  .input("DZ", dz)
                  .output(dr)
                  .uniformInt("units", U)
                  .uniformInt("gates", gates)
                  .uniformInt("reverse", cell.reverse ? 1 : 0);
    if (rh) p.input("RH", *rh);
    return p;
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
