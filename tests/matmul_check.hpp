// Shared by the matmul kernel-family tests (compute, feedback): one product
// against the CPU reference (double), and the kernels a recorded matmul runs.
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
inline void checkMatmul(Context& ctx, Form f, int m, int k, int n, Layout in, Layout out) {
    HostMatrix a = f == Form::TN ? randomMatrix(k, m, unsigned(m + k)) : randomMatrix(m, k, unsigned(m + k));
    HostMatrix b = f == Form::NT ? randomMatrix(n, k, unsigned(n + 1)) : randomMatrix(k, n, unsigned(n + 1));
    auto ad = a.cast<double>(), bd = b.cast<double>();
    auto want = (f == Form::NN ? ref::matmul(ad, bd) : f == Form::TN ? ref::matmulTN(ad, bd) : ref::matmulNT(ad, bd))
                    .cast<float>();
    Tensor ta(ctx, a, in), tb(ctx, b, in), tc(ctx, m, n, out);
    MatmulOptions o;
    o.transA = f == Form::TN;
    o.transB = f == Form::NT;
    matmul(ta, tb, tc, o);
    EXPECT_LE(relativeError(tc.download(), want), 1e-5) << formName(f) << " M=" << m << " K=" << k << " N=" << n << " "
                                                        << layoutName(in) << " -> " << layoutName(out);
}

// The kernels one recorded matmul runs.
inline std::vector<std::string> kernelsOf(const Tensor& a, const Tensor& b, Tensor& c, const MatmulOptions& o = {}) {
    PassList l;
    recordMatmul(l, a, b, c, o);
    std::vector<std::string> names;
    for (auto& p : l.passes()) names.push_back(p.kernel());
    return names;
}

}  // namespace gltrain::test
