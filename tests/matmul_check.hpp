// Shared by the matmul kernel-family tests (compute, feedback): one product
// against the CPU reference (double), the kernels a recorded matmul runs, and
// the fused epilogues.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gltrain/ops/matmul.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

namespace gltrain::test {

enum class Form { NN, TN, NT };
inline const char* formName(Form f) { return f == Form::NN ? "A·B" : f == Form::TN ? "Aᵀ·B" : "A·Bᵀ"; }

// C = op(A)·op(B) for an M x K x N product, operands in layout `in`, C in `out`:
// max |gpu - ref| <= 1e-5 * max(1, max |ref|), as kernels_matmul_test.
// `base`: options besides the form (e.g. a forced compute tile).
inline void checkMatmul(Context& ctx, Form f, int m, int k, int n, Layout in, Layout out,
                        const MatmulOptions& base = {}) {
    HostMatrix a = f == Form::TN ? randomMatrix(k, m, unsigned(m + k)) : randomMatrix(m, k, unsigned(m + k));
    HostMatrix b = f == Form::NT ? randomMatrix(n, k, unsigned(n + 1)) : randomMatrix(k, n, unsigned(n + 1));
    auto ad = a.cast<double>(), bd = b.cast<double>();
    auto want = (f == Form::NN   ? ref::matmul(ad, bd)
                 : f == Form::TN ? ref::matmulTN(ad, bd)
                                 : ref::matmulNT(ad, bd))
                    .cast<float>();
    Tensor ta(ctx, a, in), tb(ctx, b, in), tc(ctx, m, n, out);
    MatmulOptions o = base;
    o.transA = f == Form::TN;
    o.transB = f == Form::NT;
    matmul(ta, tb, tc, o);
    EXPECT_LE(relativeError(tc.download(), want), 1e-5)
        << formName(f) << " M=" << m << " K=" << k << " N=" << n << " " << layoutName(in) << " -> " << layoutName(out);
}

// The kernels one recorded matmul runs.
inline std::vector<std::string> kernelsOf(const Tensor& a, const Tensor& b, Tensor& c, const MatmulOptions& o = {}) {
    PassList l;
    recordMatmul(l, a, b, c, o);
    std::vector<std::string> names;
    for (auto& p : l.passes()) names.push_back(p.kernel());
    return names;
}

// The fused epilogues on `ctx`: Y = f(X·W + b) into Y of layout `yLayout`, and
// (dZ·Wᵀ) ⊙ f'(Z) for the backward, whose kernels must be `kernels` (the family
// under test), for a few activations (lib/activation is shared with the
// fragment kernels and tested with them). Tolerance as checkMatmul.
// (`base` forces a kernel choice, e.g. a compute tile: then the forward runs
// matmul with the bias and activation instead of dense().)
inline void expectFusedEpilogues(Context& ctx, Layout yLayout, const std::vector<std::string>& kernels,
                                 const MatmulOptions& base = {}) {
    HostMatrix x = randomMatrix(129, 97, 1), w = randomMatrix(97, 67, 2, -0.1f, 0.1f), b = randomMatrix(1, 67, 3),
               zprev = randomMatrix(129, 97, 4, -3, 3);
    Tensor tx(ctx, x), tw(ctx, w), tb(ctx, b), ty(ctx, 129, 67, yLayout), tz(ctx, zprev), dx(ctx, 129, 97);
    for (Activation act : {Activation::ReLU, Activation::LeakyReLU, Activation::GELU}) {
        if (base.computeTile == ComputeTile::Auto) {
            dense(tx, tw, tb, act, ty, 0.2f);
        } else {
            MatmulOptions f = base;
            f.bias = &tb;
            f.act = act;
            f.actAlpha = 0.2f;
            EXPECT_EQ(kernelsOf(tx, tw, ty, f), kernels) << activationName(act);
            matmul(tx, tw, ty, f);
        }
        auto want = ref::dense(x.cast<double>(), w.cast<double>(), b.cast<double>(), act, 0.2).cast<float>();
        EXPECT_LE(relativeError(ty.download(), want), 1e-5) << activationName(act);
        MatmulOptions o = base;
        o.transB = true;
        o.act = act;
        o.actAlpha = 0.2f;
        o.dactZ = &tz;
        EXPECT_EQ(kernelsOf(ty, tw, dx, o), kernels) << activationName(act);
        matmul(ty, tw, dx, o);
        auto g =
            ref::activationGrad(ref::matmulNT(want.cast<double>(), w.cast<double>()), zprev.cast<double>(), act, 0.2);
        EXPECT_LE(relativeError(dx.download(), g.cast<float>()), 1e-5) << activationName(act);
    }
}

}  // namespace gltrain::test
