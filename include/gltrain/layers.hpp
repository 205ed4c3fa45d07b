// The layers of a Sequential model: plain data that the model turns into
// tensors and passes when it is compiled (shapes are inferred and checked
// there, naming the layer). Images flow between layers as NHWC rows
// (gltrain/window.hpp); a Dense layer needs a flat input, so a Flatten (which
// costs nothing: the rows are already flat) goes between them.
#pragma once
#include <string>
#include <variant>

#include "gltrain/activation.hpp"
#include "gltrain/initializer.hpp"
#include "gltrain/window.hpp"

namespace gltrain {

struct Dense {
    int units = 0;
    Activation activation = Activation::Linear;  // fused into the matmul pass
    float alpha = 0.01f;                         // LeakyReLU slope
    Initializer kernelInit{};                    // Glorot uniform
    Initializer biasInit{Initializer::Zeros, 0.0f};
    int inputDim = 0;  // optional: checked against the previous layer when the model is built
    std::string name;  // default "dense_<i>"
};

// A 2-D convolution: kernel (kh, kw, C, filters) saved as TensorFlow's HWIO,
// stored as a (kh*kw*C) x filters matrix; bias and activation fused.
struct Conv2D {
    int filters = 0;
    int kernelSize = 3;  // square kernel
    int stride = 1;
    Padding padding = Padding::Valid;
    Activation activation = Activation::Linear;
    float alpha = 0.01f;
    Initializer kernelInit{};  // Glorot uniform over fan-in kh*kw*C, fan-out kh*kw*filters
    Initializer biasInit{Initializer::Zeros, 0.0f};
    std::string name;  // default "conv2d_<i>"
};

struct MaxPool2D {
    int poolSize = 2;
    int stride = 0;  // 0: poolSize
    Padding padding = Padding::Valid;
    std::string name;  // default "max_pool2d_<i>"
};
struct AveragePool2D {
    int poolSize = 2;
    int stride = 0;  // 0: poolSize
    Padding padding = Padding::Valid;
    std::string name;  // default "average_pool2d_<i>"
};
// The mean of each channel over the image: [H, W, C] -> [C].
struct GlobalAveragePooling2D {
    std::string name;
};
// [H, W, C] -> [H*W*C]; no pass (image rows are stored flat).
struct Flatten {
    std::string name;
};

// Normalises each channel over the batch (and the pixels, for images) while
// training, and with moving averages of those statistics in evaluate/predict
// (reference/batchnorm.hpp has the formulas). Learns gamma (scale) and beta (shift).
struct BatchNormalization {
    float momentum = 0.99f;
    float epsilon = 1e-3f;
    std::string name;  // default "batch_normalization_<i>"
};

struct ActivationLayer {
    Activation activation = Activation::ReLU;
    float alpha = 0.01f;
    std::string name;
};
struct Dropout {
    float rate = 0.5f;  // fraction dropped while training; identity in evaluate/predict
    std::string name;
};
// Probabilities at the output: predict() applies softmax; training with the
// softmax cross-entropy loss consumes the logits before it. Last layer only.
struct Softmax {
    std::string name;
};

using Layer = std::variant<Dense, Conv2D, MaxPool2D, AveragePool2D, GlobalAveragePooling2D, Flatten,
                           BatchNormalization, ActivationLayer, Dropout, Softmax>;

}  // namespace gltrain
