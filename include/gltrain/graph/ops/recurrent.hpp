// The LSTM's and the GRU's ops. The layer computes the input's share of the
// gates, x·W + b for every step, as one product (Dense on a sequence);
// LstmSequence runs the time loop over it: [B, 1, T, 4U] gate inputs in
// Keras's order (i, f, c, o) and the recurrent kernel R [U, 4U] -> the outputs
// h and the cells c, each [B, 1, T, U] by step. GruSequence is TF.js's GRU
// (gates z, r, h; the reset gate multiplies h(t-1) before the candidate's
// product): [B, 1, T, 3U] and R [U, 3U] -> h and rh = r ⊙ h(t-1), which its
// gradient reads. The gradients are backpropagation through time:
// Lstm/GruSequenceGrad walk the steps backwards to the gate gradients dZ
// (which are x·W + b's gradient), and Lstm/GruRecurrentGrad sum R's gradient
// from them. On the GPU each step is a pass or a few (ops/recurrent.hpp); on
// the CPU each step is a blocked product h(t-1)·R over the batch or two
// (cpu/matmul.hpp).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "gltrain/cpu/activation.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/recurrent.hpp"

namespace gltrain::graph {

namespace recurrent_detail {
// Two temporaries of like's shape and layout for a GPU time loop's steps to alternate between.
template <class R>
StepPair stepPair(R& r, const Tensor& like) {
    return {&r.temp(like.rows(), like.cols(), like.layout()), &r.temp(like.rows(), like.cols(), like.layout())};
}
// The steps T of [B, 1, T, width * units] values; ShapeError naming `what` unless x is such a sequence.
inline int64_t sequenceSteps(const char* what, const Shape& x, int width, int units) {
    if (x.rank() != 4 || !x.isBatched() || x.dims[1] != 1 || x.dims[3] != int64_t(width) * units)
        throw ShapeError(std::string(what) + " must be a sequence [B, 1, T, " + std::to_string(width * units) +
                         "], got " + x.str());
    return x.dims[2];
}
// The units of a cell; ShapeError naming the layer `kind` unless positive.
inline void requireUnits(const char* kind, const RecurrentCell& cell) {
    if (cell.units < 1) throw ShapeError(std::string(kind) + " needs units >= 1, got " + std::to_string(cell.units));
}
// T steps of gate inputs [B, 1, T, gates*U], the recurrent kernel [U, gates*U] and RecurrentCell's activations.
inline int64_t requireCell(const char* kind, const RecurrentCell& cell, int gates, const Shapes& in) {
    requireUnits(kind, cell);
    for (Activation a : {cell.activation, cell.recurrentActivation})
        if (!isActivation(a) || activationUsesAlpha(a))
            throw ShapeError(std::string(kind) + "'s activations take no alpha, got " + activationName(a));
    const int64_t T = sequenceSteps("the gate inputs", in[0], gates, cell.units);
    if (in[1] != Shape{cell.units, gates * cell.units})
        throw ShapeError("the recurrent kernel must be [" + std::to_string(cell.units) + ", " +
                         std::to_string(gates * cell.units) + "], got " + in[1].str());
    return T;
}
inline int64_t requireLstm(const RecurrentCell& cell, const Shapes& in) { return requireCell("an LSTM", cell, 4, in); }
inline int64_t requireGru(const RecurrentCell& cell, const Shapes& in) { return requireCell("a GRU", cell, 3, in); }
// ShapeError naming `what` unless every input from `first` on is a sequence [B, 1, T, U].
inline void requireStates(const RecurrentCell& cell, const Shapes& in, size_t first, int64_t T, const char* what) {
    for (size_t i = first; i < in.size(); ++i)
        if (sequenceSteps(what, in[i], 1, cell.units) != T)
            throw ShapeError(std::string(what) + " must have the gate inputs' " + std::to_string(T) + " steps, got " +
                             in[i].str());
}
inline Shape stateShape(int64_t T, int units) { return Shape::batched({1, T, units}); }

// C[B, cols] += A[B, k] (row stride lda) · B (k x cols, row stride ldb), or Bᵀ where `transposed`.
inline void addProduct(int rows, int cols, int k, const float* a, int lda, const float* b, int ldb, bool transposed,
                       float* c, int ldc, cpu::Workspace& ws) {
    cpu::Epilogue e;
    e.accumulate = true;
    cpu::matmul(rows, cols, k, a, lda, false, b, ldb, transposed, c, ldc, e, ws);
}
// Step s's input share of the gates for every row, xz at the step's input position: z [B, gates*U].
inline void stepInputs(const RecurrentCell& cell, int gates, const HostMatrix& xz, int s, int steps, float* z) {
    const size_t G = size_t(gates) * size_t(cell.units), p = size_t(cell.position(s, steps));
    for (int b = 0; b < xz.rows; ++b)
        std::copy_n(xz.data.data() + size_t(b) * size_t(xz.cols) + p * G, G, z + size_t(b) * G);
}
// The gate pre-activations of an LSTM's step s for every row: xz's input step, plus h(s-1)·R after the first step.
inline void gateInputs(const RecurrentCell& cell, const HostMatrix& xz, const HostMatrix& R, const float* h, int s,
                       int steps, float* z, cpu::Workspace& ws) {
    const int G = 4 * cell.units;
    stepInputs(cell, 4, xz, s, steps, z);
    if (s > 0)
        addProduct(xz.rows, G, cell.units, h + size_t(s - 1) * size_t(cell.units), steps * cell.units, R.data.data(), G,
                   false, z, G, ws);
}
// A GRU's gate pre-activations of step s for every row: xz's input step, plus h(s-1)·R for the update and reset
// gates and rh(s)·R for the candidate after the first step.
inline void gruInputs(const RecurrentCell& cell, const HostMatrix& xz, const HostMatrix& R, const float* h,
                      const float* rh, int s, int steps, float* z, cpu::Workspace& ws) {
    const int U = cell.units, G = 3 * U, ld = steps * U;
    stepInputs(cell, 3, xz, s, steps, z);
    if (s == 0) return;
    addProduct(xz.rows, 2 * U, U, h + size_t(s - 1) * size_t(U), ld, R.data.data(), G, false, z, G, ws);
    addProduct(xz.rows, U, U, rh + size_t(s) * size_t(U), ld, R.data.data() + 2 * U, G, false, z + 2 * U, G, ws);
}
// dR[:, from .. from+cols) += sum over steps s >= 1 of x(s - lag)ᵀ dz(s)[from .. from+cols): x [B, T*U] by step
// (lag 1: the previous output; 0: the step's own), dz [B, T*gates*U] by input step.
inline void addStepProducts(const RecurrentCell& cell, int gates, const HostMatrix& x, int lag, const HostMatrix& dz,
                            int from, int cols, HostMatrix& dr, cpu::Workspace& ws) {
    const int U = cell.units, G = gates * U, T = x.cols / U;
    cpu::Epilogue e;
    e.accumulate = true;
    for (int s = 1; s < T; ++s)
        cpu::matmul(U, cols, x.rows, x.data.data() + size_t(s - lag) * size_t(U), T * U, true,
                    dz.data.data() + size_t(cell.position(s, T)) * size_t(G) + size_t(from), T * G, false,
                    dr.data.data() + from, G, e, ws);
}
// A cell's activation (`recurrent`: the gates') at x, or its slope there.
inline float act(const RecurrentCell& cell, bool recurrent, float x, bool derivative = false) {
    const Activation a = recurrent ? cell.recurrentActivation : cell.activation;
    return derivative ? cpu::scalar::derivative(x, a, 0.0f) : cpu::scalar::activate(x, a, 0.0f);
}
// Gate k's activation of a unit whose 4 pre-activations are z[0], z[U], z[2U], z[3U] (i, f, c, o): the cell's
// activation for the candidate c, the recurrent activation for the others; `derivative`: its slope there.
inline float gate(const RecurrentCell& cell, const float* z, int k, bool derivative = false) {
    return act(cell, k != 2, z[size_t(k) * size_t(cell.units)], derivative);
}
}  // namespace recurrent_detail

// dZ [B, 1, T, 4U] (by input step) and DCF (dc·f of each step, what flows to the earlier cell; the same
// for each of a unit's 4 gates) from the LSTM's inputs, outputs and dh: inputs xz, R, h, c, dh.
struct LstmSequenceGrad {
    static constexpr const char* kName = "lstm_sequence_grad";
    static constexpr int kInputs = 5, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    RecurrentCell cell;
    Shapes shapes(const Shapes& in) const {
        recurrent_detail::requireStates(cell, in, 2, recurrent_detail::requireLstm(cell, in), "h, c and dh");
        return {in[0], in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        Tensor& dz = r.out(0);
        Tensor& dcf = r.out(1, dz.layout());
        recordLstmSequenceGrad(r.list(), r.in(0), r.in(1), r.in(2), r.in(3), r.in(4), cell, dz, dcf,
                               recurrent_detail::stepPair(r, dz), recurrent_detail::stepPair(r, dz));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &xz = c.in(0), &R = c.in(1), &h = c.in(2), &cs = c.in(3), &dh = c.in(4);
        HostMatrix &dz = c.out(0), &dcf = c.out(1);
        const int U = cell.units, G = 4 * U, B = xz.rows, T = xz.cols / G;
        std::vector<float>& scratch = c.scratch();
        scratch.resize(size_t(B) * size_t(G + U));
        float *z = scratch.data(), *dhs = z + size_t(B) * size_t(G);
        cpu::Epilogue e;
        e.accumulate = true;
        for (int s = T - 1; s >= 0; --s) {
            recurrent_detail::gateInputs(cell, xz, R, h.data.data(), s, T, z, c.ws());
            for (int b = 0; b < B; ++b)
                std::copy_n(dh.data.data() + size_t(b) * size_t(T * U) + size_t(s * U), U, dhs + size_t(b * U));
            const size_t p = size_t(cell.position(s, T));
            const size_t next = s + 1 < T ? size_t(cell.position(s + 1, T)) : 0;
            if (s + 1 < T)
                cpu::matmul(B, U, G, dz.data.data() + next * size_t(G), T * G, false, R.data.data(), G, true, dhs, U, e,
                            c.ws());
            for (int b = 0; b < B; ++b)
                for (int u = 0; u < U; ++u) {
                    const float* zu = z + size_t(b * G + u);
                    const size_t row = size_t(b) * size_t(T * G), at = size_t(b) * size_t(T * U) + size_t(s * U + u);
                    const float i = recurrent_detail::gate(cell, zu, 0), f = recurrent_detail::gate(cell, zu, 1);
                    const float cNow = cs.data[at], cBefore = s > 0 ? cs.data[at - size_t(U)] : 0.0f;
                    const float dhu = dhs[b * U + u];
                    const float dc = dhu * recurrent_detail::gate(cell, zu, 3) *
                                         cpu::scalar::derivative(cNow, cell.activation, 0.0f) +
                                     (s + 1 < T ? dcf.data[row + next * size_t(G) + size_t(u)] : 0.0f);
                    const float dgate[4] = {dc * recurrent_detail::gate(cell, zu, 2), dc * cBefore, dc * i,
                                            dhu * cpu::scalar::activate(cNow, cell.activation, 0.0f)};
                    float* out = dz.data.data() + row + p * size_t(G) + size_t(u);
                    for (int k = 0; k < 4; ++k) out[k * U] = dgate[k] * recurrent_detail::gate(cell, zu, k, true);
                    for (int k = 0; k < 4; ++k) dcf.data[row + p * size_t(G) + size_t(k * U + u)] = dc * f;
                }
        }
    }
    static std::vector<Example<LstmSequenceGrad>> examples() {
        const RecurrentCell backwards{2, Activation::Tanh, Activation::HardSigmoid, true};
        return {{{{3}},
                 {{Shape::batched({1, 5, 12})},
                  {Shape{3, 12}},
                  {Shape::batched({1, 5, 3})},
                  {Shape::batched({1, 5, 3})},
                  {Shape::batched({1, 5, 3})}}},
                {{backwards},
                 {{Shape::batched({1, 4, 8})},
                  {Shape{2, 8}},
                  {Shape::batched({1, 4, 2})},
                  {Shape::batched({1, 4, 2})},
                  {Shape::batched({1, 4, 2})}}},
                // 4 units backwards: backward/lstm_step's four-unit texels.
                {{{4, Activation::Tanh, Activation::HardSigmoid, true}},
                 {{Shape::batched({1, 3, 16})},
                  {Shape{4, 16}},
                  {Shape::batched({1, 3, 4})},
                  {Shape::batched({1, 3, 4})},
                  {Shape::batched({1, 3, 4})}}}};
    }
};

// dR [U, 4U] = sum over steps s >= 1 of h(s-1)ᵀ dz(s): inputs h [B, 1, T, U] by step, dz [B, 1, T, 4U] by
// input step.
struct LstmRecurrentGrad {
    static constexpr const char* kName = "lstm_recurrent_grad";
    static constexpr int kInputs = 2, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    RecurrentCell cell;
    Shapes shapes(const Shapes& in) const {
        recurrent_detail::requireUnits("an LSTM", cell);
        const int64_t T = recurrent_detail::sequenceSteps("h", in[0], 1, cell.units);
        if (recurrent_detail::sequenceSteps("dz", in[1], 4, cell.units) != T)
            throw ShapeError("dz must have h's " + std::to_string(T) + " steps, got " + in[1].str());
        return {Shape{cell.units, 4 * cell.units}};
    }
    template <class R>
    void gpu(R& r) const {
        recordRecurrentKernelGrad(r.list(), r.in(0), nullptr, r.in(1), cell, 4, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        HostMatrix& dr = c.out(0);
        std::fill(dr.data.begin(), dr.data.end(), 0.0f);
        recurrent_detail::addStepProducts(cell, 4, c.in(0), 1, c.in(1), 0, 4 * cell.units, dr, c.ws());
    }
    static std::vector<Example<LstmRecurrentGrad>> examples() {
        return {{{{3}}, {{Shape::batched({1, 5, 3})}, {Shape::batched({1, 5, 12})}}},
                {{{2, Activation::Tanh, Activation::Sigmoid, true}},
                 {{Shape::batched({1, 4, 2})}, {Shape::batched({1, 4, 8})}}}};
    }
};

// An LSTM's time loop: inputs xz = x·W + b [B, 1, T, 4U] (gates i, f, c, o) and the recurrent kernel R
// [U, 4U]; outputs h and c [B, 1, T, U] by step (step s reads input step T-1-s when cell.reverse).
struct LstmSequence {
    static constexpr const char* kName = "lstm_sequence";
    static constexpr int kInputs = 2, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    RecurrentCell cell;
    Shapes shapes(const Shapes& in) const {
        const int64_t T = recurrent_detail::requireLstm(cell, in);
        return {recurrent_detail::stateShape(T, cell.units), recurrent_detail::stateShape(T, cell.units)};
    }
    template <class G>
    void grad(G& g) const {
        const auto dz = g.addN(LstmSequenceGrad{cell}, {g.in(0), g.in(1), g.out(0), g.out(1), g.dOut(0)})[0];
        if (g.needs(0)) g.grad(0, dz);
        if (g.needs(1)) g.grad(1, g.add(LstmRecurrentGrad{cell}, {g.out(0), dz}));
    }
    template <class R>
    void gpu(R& r) const {
        Tensor& h = r.out(0);
        Tensor& c = r.out(1, h.layout());
        recordLstmSequence(r.list(), r.in(0), r.in(1), cell, h, c, recurrent_detail::stepPair(r, h),
                           recurrent_detail::stepPair(r, h));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &xz = c.in(0), &R = c.in(1);
        HostMatrix &h = c.out(0), &cs = c.out(1);
        const int U = cell.units, G = 4 * U, B = xz.rows, T = xz.cols / G;
        std::vector<float>& z = c.scratch();
        z.resize(size_t(B) * size_t(G));
        for (int s = 0; s < T; ++s) {
            recurrent_detail::gateInputs(cell, xz, R, h.data.data(), s, T, z.data(), c.ws());
            for (int b = 0; b < B; ++b)
                for (int u = 0; u < U; ++u) {
                    const float* zu = z.data() + size_t(b * G + u);
                    const size_t at = size_t(b) * size_t(T * U) + size_t(s * U + u);
                    using recurrent_detail::gate;
                    const float before = s > 0 ? cs.data[at - size_t(U)] : 0.0f;
                    cs.data[at] = gate(cell, zu, 1) * before + gate(cell, zu, 0) * gate(cell, zu, 2);
                    h.data[at] = gate(cell, zu, 3) * cpu::scalar::activate(cs.data[at], cell.activation, 0.0f);
                }
        }
    }
    // T=5, U=3; backwards with hard sigmoid gates; 4 units (forward/lstm_step's four-unit texels); a 7-step
    // 10-unit one whose gate inputs (70 texels) are paged on the op tests' small textures.
    static std::vector<Example<LstmSequence>> examples() {
        const RecurrentCell backwards{2, Activation::Tanh, Activation::HardSigmoid, true};
        return {{{{3}}, {{Shape::batched({1, 5, 12})}, {Shape{3, 12}}}},
                {{backwards}, {{Shape::batched({1, 4, 8})}, {Shape{2, 8}}}},
                {{{4}}, {{Shape::batched({1, 3, 16})}, {Shape{4, 16}}}},
                {{{10}}, {{Shape::batched({1, 7, 40})}, {Shape{10, 40}}}}};
    }
};

// dZ [B, 1, T, 3U] (by input step) and DHT (each step's whole output gradient, [B, 1, T, U] by step) from the
// GRU's inputs, outputs and dh: inputs xz, R, h, rh, dh.
struct GruSequenceGrad {
    static constexpr const char* kName = "gru_sequence_grad";
    static constexpr int kInputs = 5, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    RecurrentCell cell;
    Shapes shapes(const Shapes& in) const {
        const int64_t T = recurrent_detail::requireGru(cell, in);
        recurrent_detail::requireStates(cell, in, 2, T, "h, rh and dh");
        return {in[0], recurrent_detail::stateShape(T, cell.units)};
    }
    template <class R>
    void gpu(R& r) const {
        Tensor& dz = r.out(0);
        Tensor& dht = r.out(1, dz.layout());
        recordGruSequenceGrad(r.list(), r.in(0), r.in(1), r.in(2), r.in(3), r.in(4), cell, dz, dht,
                              r.temp(dz.rows(), dz.cols(), dz.layout()), recurrent_detail::stepPair(r, dht));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &xz = c.in(0), &R = c.in(1), &h = c.in(2), &rh = c.in(3), &dh = c.in(4);
        HostMatrix &dz = c.out(0), &dht = c.out(1);
        const int U = cell.units, G = 3 * U, B = xz.rows, T = xz.cols / G;
        std::vector<float>& scratch = c.scratch();
        scratch.resize(size_t(B) * size_t(G + 2 * U));
        // z: the step's pre-activations; carry: what step s gives dh(s-1); drh: the gradient of r ⊙ h(s-1).
        float *z = scratch.data(), *carry = z + size_t(B) * size_t(G), *drh = carry + size_t(B) * size_t(U);
        using recurrent_detail::act;
        for (int s = T - 1; s >= 0; --s) {
            recurrent_detail::gruInputs(cell, xz, R, h.data.data(), rh.data.data(), s, T, z, c.ws());
            const size_t p = size_t(cell.position(s, T));
            for (int b = 0; b < B; ++b)
                for (int u = 0; u < U; ++u) {
                    const size_t at = size_t(b) * size_t(T * U) + size_t(s * U + u);
                    const float* zu = z + size_t(b * G + u);
                    const float previous = s > 0 ? h.data[at - size_t(U)] : 0.0f;
                    const float g = dh.data[at] + (s + 1 < T ? carry[b * U + u] : 0.0f);
                    dht.data[at] = g;
                    float* out = dz.data.data() + size_t(b) * size_t(T * G) + p * size_t(G) + size_t(u);
                    out[0] = g * (previous - act(cell, false, zu[2 * U])) * act(cell, true, zu[0], true);
                    out[2 * U] = g * (1.0f - act(cell, true, zu[0])) * act(cell, false, zu[2 * U], true);
                }
            float* dzs = dz.data.data() + p * size_t(G);
            std::fill(drh, drh + size_t(B) * size_t(U), 0.0f);
            recurrent_detail::addProduct(B, U, U, dzs + 2 * U, T * G, R.data.data() + 2 * U, G, true, drh, U, c.ws());
            for (int b = 0; b < B; ++b)
                for (int u = 0; u < U; ++u) {
                    const size_t at = size_t(b) * size_t(T * U) + size_t(s * U + u);
                    const float* zu = z + size_t(b * G + u);
                    const float previous = s > 0 ? h.data[at - size_t(U)] : 0.0f, d = drh[b * U + u];
                    dzs[size_t(b) * size_t(T * G) + size_t(U + u)] = d * previous * act(cell, true, zu[U], true);
                    carry[b * U + u] = act(cell, true, zu[0]) * dht.data[at] + act(cell, true, zu[U]) * d;
                }
            if (s > 0) recurrent_detail::addProduct(B, U, 2 * U, dzs, T * G, R.data.data(), G, true, carry, U, c.ws());
        }
    }
    static std::vector<Example<GruSequenceGrad>> examples() {
        const RecurrentCell backwards{2, Activation::Tanh, Activation::HardSigmoid, true};
        return {{{{3}},
                 {{Shape::batched({1, 5, 9})},
                  {Shape{3, 9}},
                  {Shape::batched({1, 5, 3})},
                  {Shape::batched({1, 5, 3})},
                  {Shape::batched({1, 5, 3})}}},
                {{backwards},
                 {{Shape::batched({1, 4, 6})},
                  {Shape{2, 6}},
                  {Shape::batched({1, 4, 2})},
                  {Shape::batched({1, 4, 2})},
                  {Shape::batched({1, 4, 2})}}}};
    }
};

// dR [U, 3U]: the update and reset gates' columns sum h(s-1)ᵀ dz(s), the candidate's rh(s)ᵀ dz(s), over steps
// s >= 1: inputs h and rh [B, 1, T, U] by step, dz [B, 1, T, 3U] by input step.
struct GruRecurrentGrad {
    static constexpr const char* kName = "gru_recurrent_grad";
    static constexpr int kInputs = 3, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    RecurrentCell cell;
    Shapes shapes(const Shapes& in) const {
        recurrent_detail::requireUnits("a GRU", cell);
        const int64_t T = recurrent_detail::sequenceSteps("h", in[0], 1, cell.units);
        if (recurrent_detail::sequenceSteps("rh", in[1], 1, cell.units) != T ||
            recurrent_detail::sequenceSteps("dz", in[2], 3, cell.units) != T)
            throw ShapeError("rh and dz must have h's " + std::to_string(T) + " steps, got " + in[1].str() + " and " +
                             in[2].str());
        return {Shape{cell.units, 3 * cell.units}};
    }
    template <class R>
    void gpu(R& r) const {
        recordRecurrentKernelGrad(r.list(), r.in(0), &r.in(1), r.in(2), cell, 3, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        HostMatrix& dr = c.out(0);
        const int U = cell.units;
        std::fill(dr.data.begin(), dr.data.end(), 0.0f);
        recurrent_detail::addStepProducts(cell, 3, c.in(0), 1, c.in(2), 0, 2 * U, dr, c.ws());
        recurrent_detail::addStepProducts(cell, 3, c.in(1), 0, c.in(2), 2 * U, U, dr, c.ws());
    }
    static std::vector<Example<GruRecurrentGrad>> examples() {
        return {{{{3}}, {{Shape::batched({1, 5, 3})}, {Shape::batched({1, 5, 3})}, {Shape::batched({1, 5, 9})}}},
                {{{2, Activation::Tanh, Activation::Sigmoid, true}},
                 {{Shape::batched({1, 4, 2})}, {Shape::batched({1, 4, 2})}, {Shape::batched({1, 4, 6})}}}};
    }
};

// A GRU's time loop, TF.js's (reset before the candidate's product): inputs xz = x·W + b [B, 1, T, 3U] (gates z, r,
// h) and the recurrent kernel R [U, 3U]; outputs h and rh = r ⊙ h(t-1) [B, 1, T, U] by step (step s reads input
// step T-1-s when cell.reverse).
struct GruSequence {
    static constexpr const char* kName = "gru_sequence";
    static constexpr int kInputs = 2, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0b11, kGradOutputs = 0b1;
    RecurrentCell cell;
    Shapes shapes(const Shapes& in) const {
        const int64_t T = recurrent_detail::requireGru(cell, in);
        return {recurrent_detail::stateShape(T, cell.units), recurrent_detail::stateShape(T, cell.units)};
    }
    template <class G>
    void grad(G& g) const {
        const auto dz = g.addN(GruSequenceGrad{cell}, {g.in(0), g.in(1), g.out(0), g.out(1), g.dOut(0)})[0];
        if (g.needs(0)) g.grad(0, dz);
        if (g.needs(1)) g.grad(1, g.add(GruRecurrentGrad{cell}, {g.out(0), g.out(1), dz}));
    }
    template <class R>
    void gpu(R& r) const {
        Tensor& h = r.out(0);
        Tensor& rh = r.out(1, h.layout());
        recordGruSequence(r.list(), r.in(0), r.in(1), cell, h, rh, recurrent_detail::stepPair(r, h),
                          recurrent_detail::stepPair(r, h));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &xz = c.in(0), &R = c.in(1);
        HostMatrix &h = c.out(0), &rh = c.out(1);
        const int U = cell.units, G = 3 * U, B = xz.rows, T = xz.cols / G;
        std::vector<float>& z = c.scratch();
        z.resize(size_t(B) * size_t(G));
        using recurrent_detail::act;
        for (int s = 0; s < T; ++s) {
            // The update and reset gates first: the candidate's product reads every unit's r ⊙ h(s-1).
            recurrent_detail::stepInputs(cell, 3, xz, s, T, z.data());
            if (s > 0)
                recurrent_detail::addProduct(B, 2 * U, U, h.data.data() + size_t(s - 1) * size_t(U), T * U,
                                             R.data.data(), G, false, z.data(), G, c.ws());
            for (int b = 0; b < B; ++b)
                for (int u = 0; u < U; ++u) {
                    const size_t at = size_t(b) * size_t(T * U) + size_t(s * U + u);
                    rh.data[at] = s > 0 ? act(cell, true, z[size_t(b * G + U + u)]) * h.data[at - size_t(U)] : 0.0f;
                }
            if (s > 0)
                recurrent_detail::addProduct(B, U, U, rh.data.data() + size_t(s) * size_t(U), T * U,
                                             R.data.data() + 2 * U, G, false, z.data() + 2 * U, G, c.ws());
            for (int b = 0; b < B; ++b)
                for (int u = 0; u < U; ++u) {
                    const size_t at = size_t(b) * size_t(T * U) + size_t(s * U + u);
                    const float* zu = z.data() + size_t(b * G + u);
                    const float update = act(cell, true, zu[0]), previous = s > 0 ? h.data[at - size_t(U)] : 0.0f;
                    h.data[at] = update * previous + (1.0f - update) * act(cell, false, zu[2 * U]);
                }
        }
    }
    // T=5, U=3; backwards with hard sigmoid gates; a 9-step 10-unit one whose gate inputs (68 texels) are paged on
    // the op tests' small textures.
    static std::vector<Example<GruSequence>> examples() {
        const RecurrentCell backwards{2, Activation::Tanh, Activation::HardSigmoid, true};
        return {{{{3}}, {{Shape::batched({1, 5, 9})}, {Shape{3, 9}}}},
                {{backwards}, {{Shape::batched({1, 4, 6})}, {Shape{2, 6}}}},
                {{{10}}, {{Shape::batched({1, 9, 30})}, {Shape{10, 30}}}}};
    }
};

// Each example's steps in reverse order: [B, 1, T, C] -> the same shape (Bidirectional aligns its backward
// direction's outputs with the input's steps).
struct ReverseSteps {
    static constexpr const char* kName = "reverse_steps";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b1, kGradOutputs = 0b1;
    int channels = 1;
    Shapes shapes(const Shapes& in) const {
        if (channels < 1) throw ShapeError("a sequence needs channels >= 1, got " + std::to_string(channels));
        recurrent_detail::sequenceSteps("x", in[0], 1, channels);
        return {in[0]};
    }
    template <class G>
    void grad(G& g) const {
        if (g.needs(0)) g.grad(0, g.add(ReverseSteps{channels}, {g.dOut(0)}));
    }
    template <class R>
    void gpu(R& r) const {
        recordReverseSteps(r.list(), r.in(0), channels, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        HostMatrix& y = c.out(0);
        const size_t C = size_t(channels), T = size_t(x.cols) / C;
        for (size_t r = 0; r < size_t(x.rows); ++r)
            for (size_t s = 0; s < T; ++s)
                std::copy_n(x.data.data() + r * T * C + (T - 1 - s) * C, C, y.data.data() + r * T * C + s * C);
    }
    static std::vector<Example<ReverseSteps>> examples() {
        return {{{3}, {{Shape::batched({1, 5, 3})}}}, {{7}, {{Shape::batched({1, 2, 7})}}}};
    }
};

}  // namespace gltrain::graph
