// BatchNormalization: normalises each channel over the batch (and the pixels,
// for images) while training, and with moving averages of those statistics
// in evaluate/predict (reference/batchnorm.hpp has the formulas). Learns
// gamma (scale) and beta (shift).
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// Batch normalization over the channels (the last dimension): batch statistics in training, moving averages in
// inference.
struct BatchNormalization {
    // How much of the moving averages each training step keeps.
    float momentum = 0.99f;
    // Added to the variance before its square root.
    float epsilon = 1e-3f;
    std::string name;       // default "batch_normalization_<i>"
    bool trainable = true;  // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "batchnormalization";
    // Layer i is named "batch_normalization_<i>".
    static constexpr const char* kDefaultName = "batch_normalization";
    // The TF.js / Keras class name.
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
            field("name", &BatchNormalization::name, "Default batch_normalization_<i>."),
            trainableField(&BatchNormalization::trainable));
    }

    // gamma and beta (trained), moving_mean and moving_variance (statistics), each [C].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int C = in.channels;
        return {{"gamma", {C}, true, Initializer::constant(1.0f), 1, C, C, C},
                {"beta", {C}, true, Initializer::constant(0.0f), 1, C, C, C},
                {"moving_mean", {C}, false, Initializer::constant(0.0f), 1, C, C, C},
                {"moving_variance", {C}, false, Initializer::constant(1.0f), 1, C, C, C}};
    }

    // Its output shape: the input's.
    LayerShape shape(const ShapeContext& c) const { return {c.in, {}}; }

    // Training normalizes with the batch's statistics, which the step then moves
    // the moving averages toward (after its updates); inference with the averages.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        if (!b.training || !trainable)  // frozen: the moving statistics, which training leaves as they are
            return b.add(graph::BatchNormInfer{epsilon}, {x, b.variable("moving_mean"), b.variable("moving_variance"),
                                                          b.variable("gamma"), b.variable("beta")});
        const auto out = b.addN(graph::BatchNormTrain{epsilon}, {x, b.variable("gamma"), b.variable("beta")});
        const int pixels = b.layer.out.pixels();
        b.statistics->push_back({b.layer.name + "/moving_mean", out[1], momentum, false, pixels});
        b.statistics->push_back({b.layer.name + "/moving_variance", out[2], momentum, true, pixels});
        return out[0];
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
