// Helpers of the CPU backend's kernel tests (tests/cpu_*_test.cpp): random
// data from the library's counter-based generator (the same numbers natively
// and in the browser) and the error of a float result against the reference
// run in double.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gltrain/host_matrix.hpp"
#include "gltrain/reference/random.hpp"

namespace cputest {

using gltrain::HostMatrix;
using MatD = gltrain::HostMatrixT<double>;

inline HostMatrix random(int rows, int cols, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    return gltrain::ref::uniformFill<float>(rows, cols, seed, 7u, lo, hi);
}
inline MatD d(const HostMatrix& m) { return m.cast<double>(); }

// max |got - want| / max(1, max |want|): the error relative to the result's magnitude.
inline double relError(const HostMatrix& got, const MatD& want) {
    double scale = 1.0, err = 0.0;
    for (double v : want.data) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < got.data.size(); ++i) {
        const double e = std::fabs(double(got.data[i]) - want.data[i]);
        err = std::isnan(e) ? INFINITY : std::max(err, e);
    }
    return got.data.size() == want.data.size() && got.rows == want.rows ? err / scale : INFINITY;
}

}  // namespace cputest
