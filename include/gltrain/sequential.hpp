// Sequential: a model (model/model.hpp) built as a stack of layers, each
// taking the previous one's output.
//
//   gltrain::Sequential model(ctx, 784);
//   model.add(gltrain::Dense{256, gltrain::Activation::ReLU})
//        .add(gltrain::Dense{128, gltrain::Activation::ReLU})
//        .add(gltrain::Dense{10});
//   model.compile({});                       // softmax cross-entropy, Adam 1e-3
//   model.fit(x, labels, {.epochs = 2, .batchSize = 128});
//
// compile() (Model::compile) names the layers, checks each one's fields
// (their tables) and infers each one's output from its input (their shape
// functions, layers/shape.hpp), every error naming the layer, what it
// received and from where — all before the engine allocates anything.
#pragma once
#include <string>
#include <vector>

#include "gltrain/layers.hpp"
#include "gltrain/model/model.hpp"

namespace gltrain {

// A model built as a stack of layers; see the comment at the top of this header.
class Sequential : public Model {
public:
    // A model of flat inputs (rows of inputSize values)...
    Sequential(Context& ctx, int inputSize) : Sequential(ctx, Shape3{1, 1, inputSize}) {}
    // ...or of images: rows of height*width*channels values in NHWC order.
    Sequential(Context& ctx, Shape3 inputShape) : Model(ctx, inputShape) {}

    // Appends a layer (Dense, Conv2D, ...) reading the one before; before compile().
    Sequential& add(Layer layer) {
        addNode({std::move(layer), {}});
        return *this;
    }
    // Freezes (false) or unfreezes a layer (Model::setTrainable).
    Sequential& setTrainable(const std::string& layer, bool trainable) {
        Model::setTrainable(layer, trainable);
        return *this;
    }
};

}  // namespace gltrain
