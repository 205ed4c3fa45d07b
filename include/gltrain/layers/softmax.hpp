// Softmax: probabilities at the output. predict() applies softmax; training
// with the softmax cross-entropy loss consumes the logits before it. Last
// layer only.
#pragma once
#include <string>
#include <tuple>

#include "gltrain/layers/field.hpp"

namespace gltrain {

struct Softmax {
    std::string name;  // default "softmax_<i>"

    static constexpr const char* kType = "softmax";
    static constexpr const char* kDefaultName = "softmax";
    static constexpr const char* kTfjsClass = "Softmax";

    static constexpr auto fields() { return std::make_tuple(field("name", &Softmax::name, "Default softmax_<i>.")); }
};

}  // namespace gltrain
