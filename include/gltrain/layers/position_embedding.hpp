// PositionEmbedding: learned position embeddings, a table of one vector per
// step of a sequence [steps, features] that is *added* to it (row t to step
// t), so that a Sequential can follow an Embedding with it. keras_nlp's
// PositionEmbedding returns the position vectors alone (the caller adds
// them); the table, `embeddings` [sequenceLength, features], is the same. A
// sequence shorter than sequenceLength uses the table's first rows; a longer
// one is an error.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/ops/position_embedding.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// x + embeddings[:steps]: a learned vector per position, added to a sequence.
struct PositionEmbedding {
    // The most steps a sequence may have: the table's rows.
    int sequenceLength = 0;
    Initializer embeddingsInit{};  // Glorot uniform over (sequenceLength, features)
    std::string name;              // default "position_embedding_<i>"
    bool trainable = true;         // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "positionembedding";
    // Layer i is named "position_embedding_<i>".
    static constexpr const char* kDefaultName = "position_embedding";
    // The keras_nlp class name.
    static constexpr const char* kTfjsClass = "PositionEmbedding";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("sequenceLength", &PositionEmbedding::sequenceLength,
                  "The most steps a sequence may have: the table's rows.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("sequence_length"),
            field("embeddingsInitializer", &PositionEmbedding::embeddingsInit, "Default glorot_uniform.")
                .tfjs("initializer"),
            field("name", &PositionEmbedding::name, "Default position_embedding_<i>."),
            trainableField(&PositionEmbedding::trainable));
    }

    // The table, embeddings [sequenceLength, features].
    std::vector<LayerVariable> variables(Shape3 in) const {
        const int F = in.channels;
        return {{"embeddings", {sequenceLength, F}, true, embeddingsInit, sequenceLength, F, sequenceLength, F}};
    }

    // [steps, features] -> the same, steps <= sequenceLength.
    LayerShape shape(const ShapeContext& c) const {
        if (c.in.height != 1 || c.flatModelInput) c.fail("needs a sequence [steps, features] but " + c.received());
        if (c.in.width > sequenceLength)
            c.fail("has positions for " + std::to_string(sequenceLength) + " steps (sequenceLength) but " +
                   c.received() + ", " + std::to_string(c.in.width) + " steps");
        c.fits("sequenceLength", {sequenceLength, c.in.channels},
               "a table of " + std::to_string(sequenceLength) + " x " + std::to_string(c.in.channels) + " values");
        return {c.in, {}};
    }

    // One node: the sequence plus the table's first rows.
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::PositionAdd{}, {graph::asImage(b, x, b.layer.in), b.variable("embeddings")});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
