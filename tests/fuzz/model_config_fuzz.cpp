// libFuzzer entry point for the model JSON parser: arbitrary text must either
// parse or throw gltrain::Error (never a JSON library exception, a crash, a
// leak or undefined behaviour). What parses must be safe for the library's int
// arithmetic: the shapes are walked here as Sequential::compile walks them
// (Window::make, Shape3::size) and the parameter sizes computed in int as
// initialVariables does, so UndefinedBehaviorSanitizer aborts on any overflow
// the parser's range checks let through.
// Build:
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//     tests/fuzz/model_config_fuzz.cpp -o model_config_fuzz && ./model_config_fuzz tests/fuzz/corpus/model_config
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "gltrain/model_config.hpp"

namespace {

volatile int64_t sink = 0;

// Layer i's output shape from its input, as Sequential::inferLayer computes
// it; false where compile would refuse the shape.
bool walk(size_t i, const gltrain::Layer& l, const gltrain::Shape3& input, gltrain::Shape3& s) {
    using namespace gltrain;
    const bool flatFirst = i == 0 && input.height == 1 && input.width == 1;
    try {
        if (auto* d = std::get_if<Dense>(&l)) {
            if (s.height != 1 || s.width != 1) return false;
            sink = sink + s.size() * d->units;  // the kernel's values
            s = {1, 1, d->units};
        } else if (auto* c = std::get_if<Conv2D>(&l)) {
            if (flatFirst) return false;
            // The shape first, as compile infers it before making the parameters.
            const int kh = c->kernelSize.h, kw = c->kernelSize.w, C = s.channels, F = c->filters;
            s = Window::make("fuzz", s, kh, kw, c->stride.h, c->stride.w, c->padding, F, c->dilationRate.h,
                             c->dilationRate.w)
                    .out;
            sink = sink + kh * kw * C + kh * kw * F + kh * kw * C * F;  // fan-in, fan-out, kernel
        } else if (auto* m = std::get_if<MaxPool2D>(&l)) {
            if (flatFirst) return false;
            const int stride = m->stride ? m->stride : m->poolSize;
            s = Window::make("fuzz", s, m->poolSize, m->poolSize, stride, stride, m->padding, s.channels).out;
            sink = sink + m->poolSize * m->poolSize;
        } else if (auto* a = std::get_if<AveragePool2D>(&l)) {
            if (flatFirst) return false;
            const int stride = a->stride ? a->stride : a->poolSize;
            s = Window::make("fuzz", s, a->poolSize, a->poolSize, stride, stride, a->padding, s.channels).out;
            sink = sink + a->poolSize * a->poolSize;
        } else if (std::holds_alternative<GlobalAveragePooling2D>(l)) {
            if (flatFirst) return false;
            s = Window::make("fuzz", s, s.height, s.width, 1, 1, Padding::Valid, s.channels).out;
        } else if (std::holds_alternative<Flatten>(l)) {
            s = {1, 1, s.size()};
        } else if (!std::holds_alternative<BatchNormalization>(l) && !std::holds_alternative<ActivationLayer>(l) &&
                   !std::holds_alternative<Dropout>(l)) {
            // Not modelled here (merges, Softmax's axis, the other windowed layers): the
            // parser's walk runs the layer's own shape() and may stop at it, as compile does.
            return false;
        }
    } catch (const ArgumentError&) {
        return false;  // compile's shape error
    }
    sink = sink + s.size();
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    gltrain::ModelConfig c;
    try {
        c = gltrain::parseModelConfig(text, "fuzz");
    } catch (const gltrain::Error&) {
        return 0;
    }
    if (c.layers.empty() || c.input.height < 1 || c.input.width < 1 || c.input.channels < 1) std::abort();
    gltrain::Shape3 s = c.input;
    sink = sink + s.size();
    for (size_t i = 0; i < c.layers.size() && walk(i, c.layers[i], c.input, s); ++i) {
    }
    return 0;
}
