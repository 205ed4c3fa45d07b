// Embedding: token ids to vectors, a table lookup. Its input is a row of
// `steps` token ids (a model input [steps]: floats holding integers), its
// output a sequence [steps, outputDim] (an image of height 1, as Conv1D's),
// which Dense, LayerNormalization and the 1-D layers read. The table is an
// ordinary variable, paged past MAX_TEXTURE_SIZE like any tensor, so a
// vocabulary of 70000 rows trains on the GPU; its gradient is a scatter-add
// summed in a fixed order (graph/ops/embedding.hpp).
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "gltrain/graph/layer_build.hpp"
#include "gltrain/graph/ops/embedding.hpp"
#include "gltrain/layers/call.hpp"
#include "gltrain/layers/field.hpp"
#include "gltrain/layers/shape.hpp"
#include "gltrain/layers/variable.hpp"

namespace gltrain {

// A table of inputDim vectors of outputDim values: token t becomes row t. Ids outside [0, inputDim) are an error
// on the CPU engine and a zero vector on the GPU.
struct Embedding {
    // The vocabulary: the table's rows, one per token id.
    int inputDim = 0;
    // Each token's vector length: the table's columns.
    int outputDim = 0;
    Initializer embeddingsInit{};  // Glorot uniform over (inputDim, outputDim)
    std::string name;              // default "embedding_<i>"
    bool trainable = true;         // false: frozen (fields(): "trainable")

    // Model config / JavaScript "type".
    static constexpr const char* kType = "embedding";
    // Layer i is named "embedding_<i>".
    static constexpr const char* kDefaultName = "embedding";
    // The TF.js / Keras class name.
    static constexpr const char* kTfjsClass = "Embedding";

    // The field table (layers/field.hpp) every reader and writer of layers uses.
    static constexpr auto fields() {
        return std::make_tuple(
            field("inputDim", &Embedding::inputDim, "The vocabulary: token ids are 0 .. inputDim - 1.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("input_dim"),
            field("outputDim", &Embedding::outputDim, "Each token's vector length.")
                .check(ranges::kPositiveInt)
                .mustGive()
                .tfjs("output_dim"),
            field("embeddingsInitializer", &Embedding::embeddingsInit, "Default glorot_uniform.")
                .tfjs("embeddings_initializer"),
            field("name", &Embedding::name, "Default embedding_<i>."), trainableField(&Embedding::trainable));
    }

    // The table, embeddings [inputDim, outputDim].
    std::vector<LayerVariable> variables(Shape3) const {
        return {{"embeddings", {inputDim, outputDim}, true, embeddingsInit, inputDim, outputDim, inputDim, outputDim}};
    }

    // [steps] token ids -> [steps, outputDim].
    LayerShape shape(const ShapeContext& c) const {
        if (c.in.height != 1 || c.in.width != 1) c.fail("needs a row of token ids [steps] but " + c.received());
        c.fits("inputDim", {inputDim, outputDim},
               "a table of " + std::to_string(inputDim) + " x " + std::to_string(outputDim) + " values");
        c.fits("outputDim", {c.in.channels, outputDim},
               "an output of " + std::to_string(c.in.channels) + " steps x " + std::to_string(outputDim) + " values");
        return {{1, c.in.channels, outputDim}, {}};
    }

    // The lookup: ids [B, steps] and the table -> [B, 1, steps, outputDim].
    graph::ValueId addNodes(graph::LayerBuild& b, graph::ValueId x) const {
        return b.add(graph::EmbeddingLookup{}, {graph::asFlat(b, x), b.variable("embeddings")});
    }

    GLTRAIN_LAYER_CALLS
};

}  // namespace gltrain
