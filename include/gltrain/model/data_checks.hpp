// The checks of the data a model is given (fit, evaluate, predict,
// setWeight): every error names the call, the matrix and where it is wrong,
// before any time or memory is spent on it.
#pragma once
#include <cmath>
#include <cstdio>
#include <string>

#include "gltrain/error.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain {

inline void requireFinite(const char* what, const HostMatrix& m) {
    for (size_t i = 0; i < m.data.size(); ++i)
        if (!std::isfinite(m.data[i]))
            throw ArgumentError(std::string(what) + ": value at row " + std::to_string(i / size_t(m.cols)) +
                                ", column " + std::to_string(i % size_t(m.cols)) + " is NaN or Inf");
}

// HostMatrix's fields are public: a hand-built one may hold fewer values
// than rows x cols, and reading it would run past its end.
inline void requireConsistent(const char* what, const char* name, const HostMatrix& m) {
    if (m.rows < 0 || m.cols < 0 || m.data.size() != size_t(m.rows) * size_t(m.cols))
        throw ArgumentError(std::string(what) + ": " + name + " has " + std::to_string(m.data.size()) +
                            " values, expected " + std::to_string(m.rows) + "x" + std::to_string(m.cols));
}

// Targets for an output of `outputSize` values trained with `loss`, before any time is spent.
inline void checkTargets(const char* what, const Targets& y, int outputSize, const LossSpec& loss) {
    if (!y.isLabels()) requireConsistent(what, "y", y.values);
    if (loss.labels()) {
        if (y.isLabels()) {
            for (size_t i = 0; i < y.labels.size(); ++i)
                if (y.labels[i] < 0 || y.labels[i] >= outputSize)
                    throw ArgumentError(std::string(what) + ": label " + std::to_string(y.labels[i]) + " at row " +
                                        std::to_string(i) + " is outside [0, " + std::to_string(outputSize) + ")");
        } else {
            if (y.values.cols != outputSize)
                throw ArgumentError(std::string(what) + ": one-hot targets have " + std::to_string(y.values.cols) +
                                    " columns, the model outputs " + std::to_string(outputSize));
            requireFinite(what, y.values);
        }
        return;
    }
    if (y.isLabels()) throw ArgumentError(std::string(what) + ": this loss needs target values (a matrix), not labels");
    if (loss.kind == LossKind::SequenceCrossEntropy && y.values.cols != outputSize)
        throw ArgumentError(std::string(what) + ": y has " + std::to_string(y.values.cols) +
                            " columns, the model's output has " + std::to_string(outputSize) +
                            " steps (a class id per step)");
    if (y.values.cols != outputSize)
        throw ArgumentError(std::string(what) + ": y has " + std::to_string(y.values.cols) +
                            " columns, the model outputs " + std::to_string(outputSize));
    requireFinite(what, y.values);
    // A probability: labels 0/1/2 trained silently toward nonsense before.
    if (loss.kind == LossKind::BinaryCrossEntropy)
        for (size_t i = 0; i < y.values.data.size(); ++i)
            if (!(y.values.data[i] >= 0.0f && y.values.data[i] <= 1.0f)) {
                char value[32];
                std::snprintf(value, sizeof value, "%g", double(y.values.data[i]));
                throw ArgumentError(std::string(what) +
                                    ": binary cross-entropy targets are probabilities in "
                                    "[0, 1], but y at row " +
                                    std::to_string(i / size_t(y.values.cols)) + ", column " +
                                    std::to_string(i % size_t(y.values.cols)) + " is " + value);
            }
}

// Rows for a model of `inputSize` inputs and `outputSize` outputs trained with `loss`.
// `classes`: the sequence loss's classes per step (its targets must be integers below it; negative: masked).
inline void checkData(const char* what, const HostMatrix& x, const Targets& y, int inputSize, int outputSize,
                      const LossSpec& loss, int classes = 0) {
    if (x.rows <= 0) throw ArgumentError(std::string(what) + ": x has no rows");
    requireConsistent(what, "x", x);
    if (!y.isLabels()) requireConsistent(what, "y", y.values);
    if (x.cols != inputSize)
        throw ArgumentError(std::string(what) + ": x has " + std::to_string(x.cols) + " columns, the model expects " +
                            std::to_string(inputSize));
    if (y.rows() != size_t(x.rows))
        throw ArgumentError(std::string(what) + ": x has " + std::to_string(x.rows) + " rows but y has " +
                            std::to_string(y.rows()));
    requireFinite(what, x);
    checkTargets(what, y, outputSize, loss);
    if (loss.kind == LossKind::SequenceCrossEntropy)
        for (size_t i = 0; i < y.values.data.size(); ++i) {
            const float v = y.values.data[i];
            if (v != std::floor(v) || v >= float(classes))
                throw ArgumentError(std::string(what) + ": the class id " + std::to_string(v) + " at row " +
                                    std::to_string(i / size_t(y.values.cols)) + ", step " +
                                    std::to_string(i % size_t(y.values.cols)) + " is not an integer below " +
                                    std::to_string(classes) + " (negative: a masked step)");
        }
}

}  // namespace gltrain
