// Weight initialisers, deterministic from a seed and identical natively and
// in the browser: values come from the counter-based hash of
// random.hpp (integer arithmetic, exact everywhere); normals use
// Box–Muller in double, rounded to float once.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/random.hpp"

namespace gltrain {

// How a variable's initial values are drawn: Glorot or He (uniform or normal), zeros, a constant, a normal of a
// given standard deviation (GPT-style models: normal(0, 0.02)), or an orthogonal matrix (TF.js's default for
// recurrent kernels); deterministic from the seed.
struct Initializer {
    // The kinds of initializer.
    enum Kind { GlorotUniform, GlorotNormal, HeUniform, HeNormal, Zeros, Constant, RandomNormal, Orthogonal };
    // This one's kind.
    Kind kind = GlorotUniform;
    float value = 0.0f;  // Constant: the value; RandomNormal: the standard deviation
    float mean = 0.0f;   // RandomNormal: the mean
    float gain = 1.0f;   // Orthogonal: the factor on the orthogonal matrix

    // The constant initializer: every value `v`.
    static Initializer constant(float v) { return {Constant, v}; }
    // Keras's RandomNormal: normal(mean, stddev), whatever the fans.
    static Initializer randomNormal(float stddev, float mean = 0.0f) { return {RandomNormal, stddev, mean}; }
    // Keras's Orthogonal: an orthogonal matrix times `g`.
    static Initializer orthogonal(float g) {
        Initializer i{Orthogonal};
        i.gain = g;
        return i;
    }
    // The kinds a name alone selects (a constant needs its value), in the order messages list them.
    static constexpr std::array<Kind, 6> kNamedKinds = {GlorotUniform, GlorotNormal, HeUniform,
                                                        HeNormal,      Zeros,        Orthogonal};
    // The initializer a model config or the JavaScript API names ("glorot_uniform", ...); ArgumentError for another
    // name.
    static Initializer parse(const std::string& name) {
        std::string valid;
        for (Kind k : kNamedKinds) {
            if (name == Initializer{k, 0}.name()) return {k, 0};
            valid += (valid.empty() ? "" : ", ") + std::string(Initializer{k, 0}.name());
        }
        throw ArgumentError("initializer: unknown '" + name + "' (valid: " + valid + ")");
    }
    // The name parse() takes.
    const char* name() const {
        switch (kind) {
            case GlorotUniform: return "glorot_uniform";
            case GlorotNormal: return "glorot_normal";
            case HeUniform: return "he_uniform";
            case HeNormal: return "he_normal";
            case Zeros: return "zeros";
            case Constant: return "constant";
            case RandomNormal: return "random_normal";
            case Orthogonal: return "orthogonal";
        }
        return "?";
    }

    // Same kind (and the same value, mean and gain, where the kind has them).
    bool operator==(const Initializer& o) const {
        return kind == o.kind && (kind != Constant || value == o.value) &&
               (kind != RandomNormal || (value == o.value && mean == o.mean)) && (kind != Orthogonal || gain == o.gain);
    }
    // Not operator==.
    bool operator!=(const Initializer& o) const { return !(*this == o); }

    // ArgumentError unless the kind is known and a constant is finite (a NaN
    // weight would make every prediction NaN).
    void validate() const {
        if (std::string(name()) == "?")
            throw ArgumentError("initializer: unknown kind " + std::to_string(int(kind)) +
                                " (not an Initializer::Kind)");
        if (kind == Constant && !std::isfinite(value))
            throw ArgumentError("initializer: constant value must be finite, got " + std::to_string(value));
        if (kind == RandomNormal && !(std::isfinite(value) && value >= 0.0f && std::isfinite(mean)))
            throw ArgumentError("initializer: random_normal needs a finite stddev >= 0 and a finite mean, got stddev " +
                                std::to_string(value) + ", mean " + std::to_string(mean));
        if (kind == Orthogonal && !std::isfinite(gain))
            throw ArgumentError("initializer: orthogonal needs a finite gain, got " + std::to_string(gain));
    }

    // A fanIn x fanOut matrix (a dense kernel; a bias is 1 x fanOut with the same fans).
    HostMatrix make(int rows, int cols, int fanIn, int fanOut, uint32_t seed, uint32_t stream) const {
        validate();
        if (fanIn <= 0 || fanOut <= 0)
            throw ArgumentError("initializer: fans must be positive, got fanIn " + std::to_string(fanIn) + ", fanOut " +
                                std::to_string(fanOut));
        if (kind == Orthogonal) return orthogonalMatrix(rows, cols, seed, stream);
        HostMatrix m(rows, cols);
        if (kind == Zeros) return m;
        if (kind == Constant) {
            for (auto& v : m.data) v = value;
            return m;
        }
        const bool uniform = kind == GlorotUniform || kind == HeUniform;
        const double fans = (kind == GlorotUniform || kind == GlorotNormal) ? double(fanIn + fanOut) / 2.0 : fanIn;
        // Variance 1/fans (Glorot: 2/(in+out), He: 2/in) — uniform limit sqrt(3 var), normal std sqrt(var).
        const double var = kind == RandomNormal                      ? double(value) * double(value)
                           : (kind == HeUniform || kind == HeNormal) ? 2.0 / fans
                                                                     : 1.0 / fans;
        const double shift = kind == RandomNormal ? double(mean) : 0.0;
        for (size_t i = 0; i < m.data.size(); ++i) {
            const uint32_t idx = uint32_t(i);
            if (uniform) {
                double u = double(uniform01(seed, stream, idx));
                m.data[i] = float((2.0 * u - 1.0) * std::sqrt(3.0 * var));
            } else {
                m.data[i] = float(shift + normal(seed, stream, idx) * std::sqrt(var));
            }
        }
        return m;
    }

private:
    // Draw idx of a standard normal (Box–Muller in double on two hashes).
    static double normal(uint32_t seed, uint32_t stream, uint32_t idx) {
        double u1 = (double(hash3(seed, stream, 2 * idx) >> 8) + 0.5) * 0x1p-24;
        double u2 = double(hash3(seed, stream, 2 * idx + 1) >> 8) * 0x1p-24;
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.141592653589793 * u2);
    }
    // TF.js's orthogonal (tfjs-layers initializers.ts): a standard normal matrix [max(r, c), min(r, c)], the Q of
    // its QR decomposition with R's diagonal made positive (which makes Q unique), transposed where rows < cols,
    // times the gain. Gram–Schmidt in double gives that Q directly (its R's diagonal is the column norms); each
    // column is orthogonalised twice, which keeps it orthogonal to rounding. O(max * min²): as TF.js, slow past a
    // few million values.
    HostMatrix orthogonalMatrix(int rows, int cols, uint32_t seed, uint32_t stream) const {
        const size_t n = size_t(std::max(rows, cols)), k = size_t(std::min(rows, cols));
        std::vector<double> q(n * k);  // column j at q[j * n ..], the normal matrix's row-major draws
        for (size_t i = 0; i < n; ++i)
            for (size_t j = 0; j < k; ++j) q[j * n + i] = normal(seed, stream, uint32_t(i * k + j));
        for (size_t j = 0; j < k; ++j) {
            double* v = q.data() + j * n;
            for (int pass = 0; pass < 2; ++pass)
                for (size_t p = 0; p < j; ++p) {
                    const double* e = q.data() + p * n;
                    double dot = 0.0;
                    for (size_t i = 0; i < n; ++i) dot += e[i] * v[i];
                    for (size_t i = 0; i < n; ++i) v[i] -= dot * e[i];
                }
            double norm = 0.0;
            for (size_t i = 0; i < n; ++i) norm += v[i] * v[i];
            norm = std::sqrt(norm);
            for (size_t i = 0; i < n; ++i) v[i] /= norm;
        }
        HostMatrix m(rows, cols);
        for (size_t i = 0; i < n; ++i)
            for (size_t j = 0; j < k; ++j)
                m.data[rows >= cols ? i * k + j : j * n + i] = float(double(gain) * q[j * n + i]);
        return m;
    }
};

}  // namespace gltrain
