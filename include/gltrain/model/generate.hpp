// Text generation from a language model: a model whose input is `context`
// token ids and whose output is logits for the next token at each of those
// steps ([context, vocab], trained with sequence_softmax_cross_entropy).
// Each new token recomputes the whole window (no cache): the window is the
// last `context` tokens; while there are fewer, they fill its first steps and
// the rest is padding (id 0) the next token never sees in a causal model
// (per-step layers, causal attention, RNNs), since the token is drawn from the
// step of the last real token. Draws come from the counter-based generator
// (random.hpp) by (seed, token index), so a seed gives the same tokens
// natively and in the browser from the same logits.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/random.hpp"

namespace gltrain {

// How generate() continues a prompt.
struct GenerateOptions {
    // Tokens to add to the prompt.
    int length = 100;
    // Divides the logits before sampling; 0: always the most likely token (greedy).
    float temperature = 1.0f;
    // Sample only among the k most likely tokens (0: all of them).
    int topK = 0;
    // The draws' generator: the same seed, prompt and weights give the same tokens.
    uint32_t seed = 1;
};

// The most tokens one generate() call adds.
inline constexpr int kMaxGenerateLength = 1 << 20;

// What a language model's shapes say: its window and its vocabulary.
struct TokenModel {
    // Token ids per input row.
    int context = 0;
    // Logits per step.
    int vocab = 0;
};

// Throws ArgumentError naming the option out of its range.
inline void checkGenerateOptions(const GenerateOptions& o, const TokenModel& m) {
    if (o.length < 0 || o.length > kMaxGenerateLength)
        throw ArgumentError("generate: length must be in [0, " + std::to_string(kMaxGenerateLength) + "], got " +
                            std::to_string(o.length));
    if (!(o.temperature >= 0.0f) || !std::isfinite(o.temperature))
        throw ArgumentError("generate: temperature must be finite and >= 0 (0: the most likely token), got " +
                            std::to_string(o.temperature));
    if (o.topK < 0 || o.topK > m.vocab)
        throw ArgumentError("generate: topK must be in [0, " + std::to_string(m.vocab) +
                            "] (0: every token; the model's vocabulary is " + std::to_string(m.vocab) + "), got " +
                            std::to_string(o.topK));
}

// Throws ArgumentError naming the first prompt token outside the vocabulary, or an empty prompt.
inline void checkPrompt(const std::vector<int>& prompt, const TokenModel& m) {
    if (prompt.empty()) throw ArgumentError("generate: the prompt is empty (give at least one token)");
    for (size_t i = 0; i < prompt.size(); ++i)
        if (prompt[i] < 0 || prompt[i] >= m.vocab)
            throw ArgumentError("generate: prompt token " + std::to_string(i) + " is " + std::to_string(prompt[i]) +
                                ", outside the model's vocabulary of " + std::to_string(m.vocab) +
                                " ids (its output's classes per step)");
}

// The next token from one step's logits: the first largest at temperature 0;
// otherwise a draw from softmax(logits / temperature) over the topK largest
// (ties broken toward the lower id), with the uniform u in [0, 1).
inline int sampleToken(const float* logits, int vocab, float temperature, int topK, float u) {
    std::vector<int> ids(static_cast<size_t>(vocab));
    std::iota(ids.begin(), ids.end(), 0);
    // Largest first; NaN logits last, never drawn while a number is left.
    auto before = [&](int a, int b) {
        const float la = logits[a], lb = logits[b];
        if (std::isnan(la) || std::isnan(lb)) return !std::isnan(la) && std::isnan(lb);
        return la > lb || (la == lb && a < b);
    };
    if (temperature == 0.0f) return *std::min_element(ids.begin(), ids.end(), before);
    const int k = topK > 0 ? topK : vocab;
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), before);
    const double top = double(logits[ids[0]]);
    std::vector<double> weights(static_cast<size_t>(k));
    double total = 0;
    for (int i = 0; i < k; ++i) {
        const double l = double(logits[ids[size_t(i)]]);
        weights[size_t(i)] = std::isnan(l) ? 0.0 : std::exp((l - top) / double(temperature));
        total += weights[size_t(i)];
    }
    const double target = double(u) * total;
    double sum = 0;
    for (int i = 0; i < k; ++i) {
        sum += weights[size_t(i)];
        if (target < sum) return ids[size_t(i)];
    }
    return ids[0];  // u * total rounded up to the total: the most likely token
}

// `prompt` continued by o.length tokens (the continuation only), each drawn
// from the logits `predict` gives for a window (1 x context ids -> 1 x
// context * vocab logits). The caller has checked the options and the prompt.
template <class Predict>
std::vector<int> generateTokens(const std::vector<int>& prompt, const GenerateOptions& o, const TokenModel& m,
                                Predict&& predict) {
    std::vector<int> tokens = prompt, out;
    out.reserve(size_t(o.length));
    HostMatrix window(1, m.context);
    for (int i = 0; i < o.length; ++i) {
        const size_t n = std::min(tokens.size(), size_t(m.context));
        const size_t first = tokens.size() - n;
        std::fill(window.data.begin(), window.data.end(), 0.0f);
        for (size_t t = 0; t < n; ++t) window.data[t] = float(tokens[first + t]);
        const HostMatrix logits = predict(window);
        const float u = uniform01(o.seed, uint32_t(i), 0u);
        const int next = sampleToken(logits.data.data() + (n - 1) * size_t(m.vocab), m.vocab, o.temperature, o.topK, u);
        tokens.push_back(next);
        out.push_back(next);
    }
    return out;
}

}  // namespace gltrain
