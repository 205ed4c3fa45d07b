// Byte-level text for sequence models: a UTF-8 file's bytes are its tokens
// (ids 0 .. 255, no tokenizer), cut into windows of `context` bytes whose
// targets are the next bytes, as a character-level language model reads
// them. The tail (`heldOut`, 10% by default: from byte floor(0.9 N)) is the
// validation text; training windows start anywhere in the rest, drawn from
// the counter-based generator (random.hpp) by (seed, epoch, window), so an
// epoch's windows are the same natively and in the browser.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/random.hpp"

namespace gltrain {

// How text is cut into windows.
struct TextOptions {
    // Tokens per window: the model's input [context] and its targets.
    int context = 64;
    // The fraction of the text, at its end, held out as validation, in [0, 1).
    double heldOut = 0.1;
    // The training windows' generator.
    uint32_t seed = 1;
};

// Windows of token ids and their targets, one window per row.
struct TextWindows {
    // N x context byte ids (as floats, the model's input).
    HostMatrix x;
    // N x context: x's next bytes (the ids to predict at each step).
    HostMatrix y;
};

// A text's bytes, split into its training part and its held-out tail.
class TextData {
public:
    // Checks the options and that each part holds a window and its next byte; ArgumentError otherwise.
    TextData(std::vector<uint8_t> bytes, TextOptions o) : bytes_(std::move(bytes)), o_(o) {
        if (o_.context < 1) throw ArgumentError("text: context must be >= 1, got " + std::to_string(o_.context));
        if (!(o_.heldOut >= 0.0 && o_.heldOut < 1.0))
            throw ArgumentError("text: heldOut must be in [0, 1), got " + std::to_string(o_.heldOut));
        split_ = size_t(std::floor((1.0 - o_.heldOut) * double(bytes_.size())));
        const size_t need = size_t(o_.context) + 1;
        if (split_ < need)
            throw ArgumentError("text: " + std::to_string(bytes_.size()) + " bytes leave " + std::to_string(split_) +
                                " for training, fewer than a window of " + std::to_string(o_.context) +
                                " and its next byte");
        if (o_.heldOut > 0.0 && bytes_.size() - split_ < need)
            throw ArgumentError("text: the held-out tail is " + std::to_string(bytes_.size() - split_) +
                                " bytes, fewer than a window of " + std::to_string(o_.context) +
                                " and its next byte (use a longer text or heldOut 0)");
    }

    // The options it was cut with.
    const TextOptions& options() const { return o_; }
    // Bytes of training text: [0, trainBytes()).
    size_t trainBytes() const { return split_; }
    // Bytes of held-out text: [trainBytes(), the end).
    size_t validationBytes() const { return bytes_.size() - split_; }
    // The windows an epoch covers the training text with once: trainBytes() / context.
    int windowsPerEpoch() const { return int(std::max<size_t>(1, split_ / size_t(o_.context))); }

    // `count` training windows (0: windowsPerEpoch()) of epoch `epoch`: window i
    // starts at a uniform position of [0, trainBytes() - context - 1], from (seed, epoch, i).
    TextWindows trainWindows(uint32_t epoch, int count = 0) const {
        if (count < 0) throw ArgumentError("text: the window count must be >= 0, got " + std::to_string(count));
        const int n = count ? count : windowsPerEpoch();
        const uint64_t starts = uint64_t(split_ - size_t(o_.context));  // positions whose window and target fit
        std::vector<size_t> at(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            at[size_t(i)] = size_t((uint64_t(hash3(o_.seed, epoch, uint32_t(i))) * starts) >> 32);
        return windows(at);
    }
    // The held-out tail as consecutive windows (the last partial one left out);
    // empty when nothing is held out.
    TextWindows validationWindows() const {
        std::vector<size_t> at;
        if (validationBytes() > size_t(o_.context))
            for (size_t s = split_; s + size_t(o_.context) < bytes_.size(); s += size_t(o_.context)) at.push_back(s);
        return windows(at);
    }

private:
    TextWindows windows(const std::vector<size_t>& starts) const {
        const int T = o_.context;
        TextWindows w{HostMatrix(int(starts.size()), T), HostMatrix(int(starts.size()), T)};
        for (size_t r = 0; r < starts.size(); ++r)
            for (int t = 0; t < T; ++t) {
                w.x(int(r), t) = float(bytes_[starts[r] + size_t(t)]);
                w.y(int(r), t) = float(bytes_[starts[r] + size_t(t) + 1]);
            }
        return w;
    }

    std::vector<uint8_t> bytes_;
    TextOptions o_;
    size_t split_ = 0;
};

}  // namespace gltrain
