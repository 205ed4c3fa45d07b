// Argument checking shared by the reference ops. Every shape error names the
// function and both shapes, so a failing test or a bad model says exactly
// which operands disagreed: "ref::matmul: A is 3x4 but B is 5x2 (...)".
#pragma once
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"

namespace gltrain::ref::detail {

// Wrapping a parameter type in NonDeduced<T> keeps it out of template argument
// deduction, so scale(floatMatrix, 0.5) works: T comes from the matrix alone.
template <class T>
struct Identity {
    using type = T;
};
template <class T>
using NonDeduced = typename Identity<T>::type;

template <class T>
std::string shape(const HostMatrixT<T>& m) {
    return std::to_string(m.rows) + "x" + std::to_string(m.cols);
}

[[noreturn]] inline void fail(const char* fn, const std::string& what) {
    throw ArgumentError(std::string("ref::") + fn + ": " + what);
}

template <class T, class U>
void requireSameShape(const char* fn, const char* nameA, const HostMatrixT<T>& a, const char* nameB,
                      const HostMatrixT<U>& b) {
    if (a.rows != b.rows || a.cols != b.cols)
        fail(fn, std::string(nameA) + " is " + shape(a) + " but " + nameB + " is " + shape(b) + " (shapes must match)");
}

template <class T>
void requireNonEmpty(const char* fn, const char* name, const HostMatrixT<T>& a) {
    if (a.size() == 0) fail(fn, std::string(name) + " is " + shape(a) + " (needs at least one element)");
}

}  // namespace gltrain::ref::detail
