// The LSTM's ops. The layer computes the input's share of the gates, x·W + b
// for every step, as one product (Dense on a sequence); LstmSequence runs the
// time loop over it: [B, 1, T, 4U] gate inputs in Keras's order (i, f, c, o)
// and the recurrent kernel R [U, 4U] -> the outputs h and the cells c, each
// [B, 1, T, U] by step. Its gradient is backpropagation through time:
// LstmSequenceGrad walks the steps backwards to the gate gradients dZ (which
// are x·W + b's gradient), and LstmRecurrentGrad sums R's gradient from them.
// On the GPU each step is one pass (ops/recurrent.hpp); on the CPU each step
// is one blocked product h(t-1)·R over the batch (cpu/matmul.hpp).
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
// The steps T of [B, 1, T, width * units] values; ShapeError naming `what` unless x is such a sequence.
inline int64_t sequenceSteps(const char* what, const Shape& x, int width, int units) {
    if (x.rank() != 4 || !x.isBatched() || x.dims[1] != 1 || x.dims[3] != int64_t(width) * units)
        throw ShapeError(std::string(what) + " must be a sequence [B, 1, T, " + std::to_string(width * units) +
                         "], got " + x.str());
    return x.dims[2];
}
// T steps of gate inputs [B, 1, T, 4U], the recurrent kernel [U, 4U] and LstmCell's activations.
inline int64_t requireLstm(const LstmCell& cell, const Shapes& in) {
    if (cell.units < 1) throw ShapeError("an LSTM needs units >= 1, got " + std::to_string(cell.units));
    for (Activation a : {cell.activation, cell.recurrentActivation})
        if (!isActivation(a) || activationUsesAlpha(a))
            throw ShapeError(std::string("an LSTM's activations take no alpha, got ") + activationName(a));
    const int64_t T = sequenceSteps("the gate inputs", in[0], 4, cell.units);
    if (in[1] != Shape{cell.units, 4 * cell.units})
        throw ShapeError("the recurrent kernel must be [" + std::to_string(cell.units) + ", " +
                         std::to_string(4 * cell.units) + "], got " + in[1].str());
    return T;
}
inline Shape stateShape(int64_t T, int units) { return Shape::batched({1, T, units}); }

// The gate pre-activations of step s for every row: xz's input step, plus h(s-1)·R after the first step.
inline void gateInputs(const LstmCell& cell, const HostMatrix& xz, const HostMatrix& R, const float* h, int s,
                       int steps, float* z, cpu::Workspace& ws) {
    const int G = 4 * cell.units, B = xz.rows;
    const size_t p = size_t(cell.position(s, steps));
    for (int b = 0; b < B; ++b)
        std::copy_n(xz.data.data() + size_t(b) * size_t(xz.cols) + p * size_t(G), G, z + size_t(b) * size_t(G));
    cpu::Epilogue e;
    e.accumulate = true;
    if (s > 0)
        cpu::matmul(B, G, cell.units, h + size_t(s - 1) * size_t(cell.units), steps * cell.units, false, R.data.data(),
                    G, false, z, G, e, ws);
}
// Gate k's activation of a unit whose 4 pre-activations are z[0], z[U], z[2U], z[3U] (i, f, c, o): the cell's
// activation for the candidate c, the recurrent activation for the others; `derivative`: its slope there.
inline float gate(const LstmCell& cell, const float* z, int k, bool derivative = false) {
    const Activation a = k == 2 ? cell.activation : cell.recurrentActivation;
    const float x = z[size_t(k) * size_t(cell.units)];
    return derivative ? cpu::scalar::derivative(x, a, 0.0f) : cpu::scalar::activate(x, a, 0.0f);
}
}  // namespace recurrent_detail

// dZ [B, 1, T, 4U] (by input step) and DCF (dc·f of each step, what flows to the earlier cell; the same
// for each of a unit's 4 gates) from the LSTM's inputs, outputs and dh: inputs xz, R, h, c, dh.
struct LstmSequenceGrad {
    static constexpr const char* kName = "lstm_sequence_grad";
    static constexpr int kInputs = 5, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    LstmCell cell;
    Shapes shapes(const Shapes& in) const {
        const int64_t T = recurrent_detail::requireLstm(cell, in);
        for (int i : {2, 3, 4})
            if (recurrent_detail::sequenceSteps("h, c and dh", in[size_t(i)], 1, cell.units) != T)
                throw ShapeError("h, c and dh must have the gate inputs' " + std::to_string(T) + " steps, got " +
                                 in[size_t(i)].str());
        return {in[0], in[0]};
    }
    template <class R>
    void gpu(R& r) const {
        Tensor& dz = r.out(0);
        Tensor& dcf = r.out(1, dz.layout());
        recordLstmSequenceGrad(r.list(), r.in(0), r.in(1), r.in(2), r.in(3), r.in(4), cell, dz, dcf,
                               r.temp(dz.rows(), dz.cols(), dz.layout()), r.temp(dz.rows(), dz.cols(), dz.layout()));
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
        const LstmCell backwards{2, Activation::Tanh, Activation::HardSigmoid, true};
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
    LstmCell cell;
    Shapes shapes(const Shapes& in) const {
        if (cell.units < 1) throw ShapeError("an LSTM needs units >= 1, got " + std::to_string(cell.units));
        const int64_t T = recurrent_detail::sequenceSteps("h", in[0], 1, cell.units);
        if (recurrent_detail::sequenceSteps("dz", in[1], 4, cell.units) != T)
            throw ShapeError("dz must have h's " + std::to_string(T) + " steps, got " + in[1].str());
        return {Shape{cell.units, 4 * cell.units}};
    }
    template <class R>
    void gpu(R& r) const {
        recordLstmRecurrentGrad(r.list(), r.in(0), r.in(1), cell, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &h = c.in(0), &dz = c.in(1);
        HostMatrix& dr = c.out(0);
        const int U = cell.units, G = 4 * U, T = h.cols / U;
        std::fill(dr.data.begin(), dr.data.end(), 0.0f);
        cpu::Epilogue e;
        e.accumulate = true;
        for (int s = 1; s < T; ++s)
            cpu::matmul(U, G, h.rows, h.data.data() + size_t((s - 1) * U), T * U, true,
                        dz.data.data() + size_t(cell.position(s, T)) * size_t(G), T * G, false, dr.data.data(), G, e,
                        c.ws());
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
    LstmCell cell;
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
        recordLstmSequence(r.list(), r.in(0), r.in(1), cell, h, c, r.temp(h.rows(), h.cols(), h.layout()),
                           r.temp(h.rows(), h.cols(), h.layout()));
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
        const LstmCell backwards{2, Activation::Tanh, Activation::HardSigmoid, true};
        return {{{{3}}, {{Shape::batched({1, 5, 12})}, {Shape{3, 12}}}},
                {{backwards}, {{Shape::batched({1, 4, 8})}, {Shape{2, 8}}}},
                {{{4}}, {{Shape::batched({1, 3, 16})}, {Shape{4, 16}}}},
                {{{10}}, {{Shape::batched({1, 7, 40})}, {Shape{10, 40}}}}};
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
