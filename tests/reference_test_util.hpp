// Helpers shared by the tests/reference_*_test.cpp files: comparing
// matrices, central-difference gradients, and asserting ArgumentError text.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>

#include "gltrain/reference.hpp"

namespace reftest {

using gltrain::HostMatrixT;
using MatD = gltrain::HostMatrixT<double>;
using MatF = gltrain::HostMatrixT<float>;

// Deterministic test data from the library's own counter-based generator, so
// the same numbers appear on every platform (native and em++).
inline MatD randomMatrix(int rows, int cols, uint32_t seed, double lo = -1.0, double hi = 1.0) {
    return gltrain::ref::uniformFill<double>(rows, cols, seed, 0u, lo, hi);
}

// |a - b| <= absTol + relTol * max(|a|, |b|) element-wise; two NaNs match.
template <class T>
::testing::AssertionResult matricesNear(const HostMatrixT<T>& a, const HostMatrixT<T>& b, double absTol,
                                        double relTol = 0.0) {
    if (a.rows != b.rows || a.cols != b.cols)
        return ::testing::AssertionFailure()
               << "shapes differ: " << a.rows << "x" << a.cols << " vs " << b.rows << "x" << b.cols;
    for (int r = 0; r < a.rows; ++r)
        for (int c = 0; c < a.cols; ++c) {
            const double x = double(a(r, c)), y = double(b(r, c));
            if (std::isnan(x) && std::isnan(y)) continue;
            const double tol = absTol + relTol * std::fmax(std::fabs(x), std::fabs(y));
            if (!(std::fabs(x - y) <= tol))
                return ::testing::AssertionFailure() << "at (" << r << ", " << c << "): " << x << " vs " << y
                                                     << " (diff " << std::fabs(x - y) << ", tol " << tol << ")";
        }
    return ::testing::AssertionSuccess();
}

template <class T>
MatD toDouble(const HostMatrixT<T>& m) {
    return m.template cast<double>();
}

// Central differences: g_i = (f(x + h e_i) - f(x - h e_i)) / (2h).
inline MatD numericGrad(MatD x, const std::function<double(const MatD&)>& f, double h = 1e-6) {
    MatD g(x.rows, x.cols);
    for (size_t i = 0; i < x.data.size(); ++i) {
        const double x0 = x.data[i];
        x.data[i] = x0 + h;
        const double fp = f(x);
        x.data[i] = x0 - h;
        const double fm = f(x);
        x.data[i] = x0;
        g.data[i] = (fp - fm) / (2.0 * h);
    }
    return g;
}

// sum(R ⊙ Y): turns a matrix-valued op into a scalar whose gradient with
// respect to Y is R, so a backward can be checked with an arbitrary dY.
inline double weightedSum(const MatD& R, const MatD& Y) {
    double s = 0.0;
    for (size_t i = 0; i < Y.data.size(); ++i) s += R.data[i] * Y.data[i];
    return s;
}

// The tolerance of every finite-difference check: with h = 1e-6 in double,
// truncation error is ~h^2 |f'''| ~ 1e-12 and rounding ~1e-16 |f| / h ~ 1e-10,
// so 1e-6 relative (plus 1e-9 absolute for gradients that are ~0) is ample
// and still catches any real mistake.
inline constexpr double kGradRelTol = 1e-6;
inline constexpr double kGradAbsTol = 1e-9;

// Runs f, expects ArgumentError, and checks that its message contains every part.
template <class F>
void expectArgumentError(F&& f, std::initializer_list<std::string> parts) {
    try {
        f();
        ADD_FAILURE() << "expected ArgumentError";
    } catch (const gltrain::ArgumentError& e) {
        const std::string what = e.what();
        for (const std::string& part : parts)
            EXPECT_NE(what.find(part), std::string::npos) << "message \"" << what << "\" lacks \"" << part << "\"";
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected ArgumentError, got: " << e.what();
    }
}

}  // namespace reftest
