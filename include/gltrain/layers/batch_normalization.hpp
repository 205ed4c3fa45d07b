// BatchNormalization: normalises each channel over the batch (and the pixels,
// for images) while training, and with moving averages of those statistics
// in evaluate/predict (reference/batchnorm.hpp has the formulas). Learns
// gamma (scale) and beta (shift).
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/layers/field.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

struct BatchNormalization {
    float momentum = 0.99f;
    float epsilon = 1e-3f;
    std::string name;  // default "batch_normalization_<i>"

    static constexpr const char* kType = "batchnormalization";
    static constexpr const char* kDefaultName = "batch_normalization";
    static constexpr const char* kTfjsClass = "BatchNormalization";

    static constexpr auto fields() {
        return std::make_tuple(
            // Not 1, which would keep the moving averages where they start.
            field("momentum", &BatchNormalization::momentum, "Of the moving averages (default 0.99).")
                .check(ranges::kUnitIntervalOpen)
                .tfjs("momentum"),
            field("epsilon", &BatchNormalization::epsilon, "Added to the variance (default 0.001).")
                .check(ranges::kPositive)
                .tfjs("epsilon"),
            field("name", &BatchNormalization::name, "Default batch_normalization_<i>."));
    }

    std::vector<LayerVariable> variables(Shape3 in) const {
        const int C = in.channels;
        return {{"gamma", {C}, true, Initializer::constant(1.0f), 1, C, C, C},
                {"beta", {C}, true, Initializer::constant(0.0f), 1, C, C, C},
                {"moving_mean", {C}, false, Initializer::constant(0.0f), 1, C, C, C},
                {"moving_variance", {C}, false, Initializer::constant(1.0f), 1, C, C, C}};
    }
};

}  // namespace gltrain
