// Model descriptions in JSON (gltrain/model_config.hpp): every key of the
// JavaScript vocabulary is read into the C++ options, a built model equals
// the same model built by hand, and each kind of bad input is an error naming
// the source and the JSON path. Parses strings only (this suite also runs in
// Chromium).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#ifndef __EMSCRIPTEN__
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#endif

#include "gltrain/model_config.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_config_test {

using namespace gltrain;

namespace {

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("(not a FormatError) ") + e.what();
    }
    return "(no exception)";
}

// A config around `layers`, `compile` and `fit` snippets.
std::string config(const std::string& layers, const std::string& compile = "", const std::string& fit = "") {
    return "{\"input\": 4, \"layers\": [" + layers + "]" + (compile.empty() ? "" : ", \"compile\": " + compile) +
           (fit.empty() ? "" : ", \"fit\": " + fit) + "}";
}

}  // namespace

TEST(ModelConfig, ReadsEveryLayerTypeAndOption) {
    const std::string text = R"({
      "description": "every layer",
      "input": [12, 10, 3],
      "layers": [
        {"type": "conv2d", "filters": 8, "kernelSize": 5, "stride": 2, "padding": "same", "activation": "leaky_relu",
         "alpha": 0.2, "kernelInitializer": "he_normal", "biasInitializer": {"type": "constant", "value": 0.1}, "name": "c1"},
        {"type": "batch_normalization", "momentum": 0.9, "epsilon": 0.01},
        {"type": "activation", "activation": "GELU"},
        {"type": "max_pool2d", "poolSize": 3, "stride": 1, "padding": "valid"},
        {"type": "AveragePool2D", "poolSize": 2},
        {"type": "global_average_pooling2d"},
        {"type": "flatten", "name": "flat"},
        {"type": "dense", "units": 7, "activation": "tanh", "kernelInitializer": {"type": "glorot_normal"},
         "biasInitializer": {"type": "random_normal", "stddev": 0.02, "mean": -1}, "inputDim": 8},
        {"type": "dropout", "rate": 0.25},
        {"type": "softmax"}
      ],
      "compile": {"loss": "softmax_cross_entropy", "optimizer": {"type": "rmsprop", "lr": 0.01, "weightDecay": 0.001,
                  "momentum": 0.5, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6, "rho": 0.95},
                  "schedule": {"type": "cosine", "stepSize": 7, "gamma": 0.5, "warmupSteps": 10, "totalSteps": 100, "minLr": 0.0001},
                  "clipNorm": 2.5, "seed": 4000000000, "onNaN": "skip"},
      "fit": {"epochs": 3, "batchSize": 16, "shuffle": false, "validationSplit": 0.2, "lossEvery": 5, "asyncLoss": true,
              "snapshotEvery": 25}
    })";
    ModelConfig c = parseModelConfig(text, "all.json");
    EXPECT_EQ(c.source, "all.json");
    EXPECT_EQ(c.description, "every layer");
    EXPECT_EQ(c.input, (Shape3{12, 10, 3}));
    ASSERT_EQ(c.layers.size(), 10u);

    const Conv2D& conv = std::get<Conv2D>(c.layers[0]);
    EXPECT_EQ(conv.filters, 8);
    EXPECT_EQ(conv.kernelSize, 5);
    EXPECT_EQ(conv.stride, 2);
    EXPECT_EQ(conv.padding, Padding::Same);
    EXPECT_EQ(conv.activation, Activation::LeakyReLU);
    EXPECT_FLOAT_EQ(conv.alpha, 0.2f);
    EXPECT_EQ(conv.kernelInit.kind, Initializer::HeNormal);
    EXPECT_EQ(conv.biasInit.kind, Initializer::Constant);
    EXPECT_FLOAT_EQ(conv.biasInit.value, 0.1f);
    EXPECT_EQ(conv.name, "c1");
    const BatchNormalization& bn = std::get<BatchNormalization>(c.layers[1]);
    EXPECT_FLOAT_EQ(bn.momentum, 0.9f);
    EXPECT_FLOAT_EQ(bn.epsilon, 0.01f);
    EXPECT_EQ(std::get<ActivationLayer>(c.layers[2]).activation, Activation::GELU);
    const MaxPool2D& mp = std::get<MaxPool2D>(c.layers[3]);
    EXPECT_EQ(mp.poolSize, 3);
    EXPECT_EQ(mp.stride, 1);
    EXPECT_EQ(mp.padding, Padding::Valid);
    EXPECT_EQ(std::get<AveragePool2D>(c.layers[4]).poolSize, 2);
    EXPECT_TRUE(std::holds_alternative<GlobalAveragePooling2D>(c.layers[5]));
    EXPECT_EQ(std::get<Flatten>(c.layers[6]).name, "flat");
    const Dense& d = std::get<Dense>(c.layers[7]);
    EXPECT_EQ(d.units, 7);
    EXPECT_EQ(d.activation, Activation::Tanh);
    EXPECT_EQ(d.kernelInit.kind, Initializer::GlorotNormal);
    EXPECT_EQ(d.biasInit, Initializer::randomNormal(0.02f, -1.0f));
    EXPECT_EQ(d.inputDim, 8);
    EXPECT_FLOAT_EQ(std::get<Dropout>(c.layers[8]).rate, 0.25f);
    EXPECT_TRUE(std::holds_alternative<Softmax>(c.layers[9]));

    EXPECT_EQ(c.compile.loss.kind, LossKind::SoftmaxCrossEntropy);
    EXPECT_EQ(c.compile.optimizer.kind, OptimizerKind::RMSProp);
    EXPECT_FLOAT_EQ(c.compile.optimizer.lr, 0.01f);
    EXPECT_FLOAT_EQ(c.compile.optimizer.weightDecay, 0.001f);
    EXPECT_FLOAT_EQ(c.compile.optimizer.momentum, 0.5f);
    EXPECT_FLOAT_EQ(c.compile.optimizer.beta1, 0.8f);
    EXPECT_FLOAT_EQ(c.compile.optimizer.beta2, 0.99f);
    EXPECT_FLOAT_EQ(c.compile.optimizer.eps, 1e-6f);
    EXPECT_FLOAT_EQ(c.compile.optimizer.rho, 0.95f);
    EXPECT_EQ(c.compile.schedule.kind, Schedule::Cosine);
    EXPECT_EQ(c.compile.schedule.stepSize, 7);
    EXPECT_FLOAT_EQ(c.compile.schedule.gamma, 0.5f);
    EXPECT_EQ(c.compile.schedule.warmupSteps, 10);
    EXPECT_EQ(c.compile.schedule.totalSteps, 100);
    EXPECT_FLOAT_EQ(c.compile.schedule.minLr, 0.0001f);
    EXPECT_FLOAT_EQ(c.compile.clipNorm, 2.5f);
    EXPECT_EQ(c.compile.seed, 4000000000u);
    EXPECT_EQ(c.compile.onNaN, NanPolicy::Skip);

    EXPECT_EQ(c.fit.epochs, 3);
    EXPECT_EQ(c.fit.batchSize, 16);
    EXPECT_FALSE(c.fit.shuffle);
    EXPECT_FLOAT_EQ(c.fit.validationSplit, 0.2f);
    EXPECT_EQ(c.fit.lossEvery, 5);
    EXPECT_TRUE(c.fit.asyncLoss);
    EXPECT_EQ(c.fit.snapshotEvery, 25);
}

TEST(ModelConfig, DefaultsAndShortForms) {
    ModelConfig c = parseModelConfig(
        config(R"({"type": "dense", "units": 2})",
               R"({"optimizer": "sgd", "learningRate": 0.5, "schedule": "exponential", "loss": "MSE"})"));
    EXPECT_EQ(c.input, (Shape3{1, 1, 4}));
    EXPECT_EQ(c.compile.optimizer.kind, OptimizerKind::SGD);
    EXPECT_FLOAT_EQ(c.compile.optimizer.lr, 0.5f);  // compile.learningRate overrides the optimizer's
    EXPECT_EQ(c.compile.schedule.kind, Schedule::Exponential);
    EXPECT_EQ(c.compile.loss.kind, LossKind::MeanSquaredError);
    const Dense& d = std::get<Dense>(c.layers[0]);
    EXPECT_EQ(d.activation, Activation::Linear);
    EXPECT_EQ(d.kernelInit.kind, Initializer::GlorotUniform);

    // Without compile and fit: the library's defaults (Adam 1e-3, one epoch of batches of 32, ...).
    ModelConfig bare = parseModelConfig(config(R"({"type": "dense", "units": 2})"));
    const CompileOptions defaults;
    const FitOptions fitDefaults;
    EXPECT_EQ(bare.compile.optimizer.kind, defaults.optimizer.kind);
    EXPECT_EQ(bare.compile.optimizer.lr, defaults.optimizer.lr);
    EXPECT_EQ(bare.compile.loss.kind, defaults.loss.kind);
    EXPECT_EQ(bare.compile.seed, defaults.seed);
    EXPECT_EQ(bare.fit.epochs, fitDefaults.epochs);
    EXPECT_EQ(bare.fit.batchSize, fitDefaults.batchSize);
    EXPECT_EQ(bare.fit.lossEvery, fitDefaults.lossEvery);
    // 3.0 is 3: JavaScript numbers do not tell them apart.
    EXPECT_EQ(std::get<Dense>(parseModelConfig(config(R"({"type": "dense", "units": 3.0})")).layers[0]).units, 3);
}

TEST(ModelConfig, ErrorsNameThePathAndWhatWasFound) {
    const std::string dense = R"({"type": "dense", "units": 2})";
    struct Row {
        std::string text, expected;
    };
    const Row rows[] = {
        {config(dense + "," + dense + R"(, {"type": "dense", "units": -3})"),
         "model.json: layers[2].units: expected a positive integer, got -3"},
        {config(R"({"type": "dense", "units": 2.5})"), "layers[0].units: expected a positive integer, got 2.5"},
        {config(R"({"type": "dense", "units": "3"})"),
         "layers[0].units: expected a positive integer, got the string \"3\""},
        {config(R"({"type": "dense", "units": 2, "unit": 3})"),
         "layers[0].unit: unknown key (valid: type, units, activation, alpha, eluAlpha, kernelInitializer, biasInitializer, inputDim, name, trainable)"},
        {config(R"({"type": "dense"})"), "layers[0].units: required for type 'dense'"},
        {config(R"({"type": "conv2d", "kernelSize": 3})"), "layers[0].filters: required for type 'conv2d'"},
        {config(R"({"type": "activation"})"), "layers[0].activation: required for type 'activation'"},
        {config(R"({"type": "dense2", "units": 2})"),
         "layers[0].type: unknown layer type 'dense2' (valid: dense, conv2d,"},
        {config(R"({"units": 2})"), "layers[0].type: expected a layer type (dense, conv2d"},
        {config(R"({"type": 5})"),
         "layers[0].type: expected a layer type (dense, conv2d, maxpool2d, averagepool2d, "
         "globalaveragepooling2d, flatten, batchnormalization, activation, dropout, softmax, "},
        {config("7"), "layers[0]: expected a layer object such as {\"type\": \"dense\", \"units\": 10}, got 7"},
        {config(R"({"type": "dense", "units": 2, "activation": "rellu"})"),
         "layers[0].activation: unknown activation 'rellu' (valid: linear, relu, leaky_relu, sigmoid, tanh, gelu, softplus, elu, selu, "
         "relu6, swish, mish, hard_sigmoid, softsign, gelu_exact, silu)"},
        {config(R"({"type": "dense", "units": 2, "kernelInitializer": "foo"})"),
         "layers[0].kernelInitializer: unknown initializer 'foo' (valid: glorot_uniform"},
        {config(R"({"type": "dense", "units": 2, "kernelInitializer": {"type": "constant"}})"),
         "layers[0].kernelInitializer.type: a constant initializer needs a value"},
        {config(R"({"type": "dense", "units": 2, "kernelInitializer": {"type": "zeros", "value": 1}})"),
         "layers[0].kernelInitializer.value: value is only for {\"type\": \"constant\"}"},
        {config(R"({"type": "dense", "units": 2, "kernelInitializer": "random_normal"})"),
         "layers[0].kernelInitializer: random_normal needs its stddev"},
        {config(R"({"type": "dense", "units": 2, "kernelInitializer": {"type": "random_normal", "stddev": -1}})"),
         "layers[0].kernelInitializer.stddev: expected a number >= 0"},
        {config(R"({"type": "dense", "units": 2, "kernelInitializer": {"type": "he_normal", "stddev": 1}})"),
         "layers[0].kernelInitializer.stddev: stddev is only for {\"type\": \"random_normal\"}"},
        {config(R"({"type": "conv2d", "filters": 2, "padding": "full"})"),
         "layers[0].padding: unknown value 'full' (valid: valid, same)"},
        {config(R"({"type": "maxpool2d", "stride": -1})"), "layers[0].stride: expected an integer >= 0, got -1"},
        {config(R"({"type": "dropout", "rate": 1})"), "layers[0].rate: expected a number in [0, 1), got 1"},
        {config(R"({"type": "batchnormalization", "epsilon": 0})"),
         "layers[0].epsilon: expected a positive number, got 0"},
        {config(R"({"type": "flatten", "units": 3})"), "layers[0].units: unknown key (valid: type, name, trainable)"},
        {config(dense, R"({"optimizer": "adamm"})"),
         "compile.optimizer: unknown optimizer 'adamm' (valid: sgd, momentum, nesterov, adam, adamw, rmsprop)"},
        {config(dense, R"({"optimizer": {"type": "adam", "lr": -1}})"),
         "compile.optimizer.lr: expected a positive number, got -1"},
        {config(dense, R"({"optimizer": {"type": "adam", "lr": 1e39}})"),
         "compile.optimizer.lr: expected a positive number, got 1e+39"},
        {config(dense, R"({"optimizer": {"lr": 1}})"), "compile.optimizer: needs a type ('adam', 'sgd', ...)"},
        {config(dense, R"({"optimizer": {"type": "adam", "lr": 1, "learningRate": 1}})"),
         "compile.optimizer: give lr or learningRate, not both"},
        {config(dense, R"({"optimizer": {"type": "sgd", "beta2": 1}})"),
         "compile.optimizer.beta2: expected a number in [0, 1), got 1"},
        {config(dense, R"({"loss": "hinge"})"),
         "compile.loss: unknown value 'hinge' (valid: softmax_cross_entropy, mse, mean_squared_error, binary_cross_entropy, "
         "sparse_categorical_crossentropy, categorical_crossentropy, binary_crossentropy, mae, mean_absolute_error, "
         "huber, huber_loss, kl_divergence, kld, kullback_leibler_divergence, categorical_hinge, "
         "sequence_softmax_cross_entropy, expression)"},
        {config(dense, R"({"schedule": {"type": "cosine", "totalSteps": 0}})"),
         "compile.schedule.totalSteps: expected a positive integer, got 0"},
        {config(dense, R"({"schedule": "linear"})"),
         "compile.schedule.type: unknown value 'linear' (valid: constant, step, exponential, cosine)"},
        {config(dense, R"({"seed": -1})"), "compile.seed: expected an integer in [0, 4294967295], got -1"},
        {config(dense, R"({"clipNorm": -1})"), "compile.clipNorm: expected a number >= 0 (0: no clipping), got -1"},
        {config(dense, R"({"onNaN": "panic"})"), "compile.onNaN: unknown value 'panic' (valid: stop, skip, ignore)"},
        {config(dense, R"({"epochs": 2})"), "compile.epochs: unknown key"},
        {config(dense, "[]"), "compile: expected an object, got an array"},
        {config(dense, "", R"({"epochs": 0})"), "fit.epochs: expected a positive integer, got 0"},
        {config(dense, "", R"({"batchsize": 8})"),
         "fit.batchsize: unknown key (valid: epochs, steps, batchSize, shuffle,"},
        {config(dense, "", R"({"validationSplit": 1.5})"), "fit.validationSplit: expected a number in [0, 1), got 1.5"},
        {config(dense, "", R"({"shuffle": 1})"), "fit.shuffle: expected true or false, got 1"},
        {R"({"layers": [{"type": "dense", "units": 2}]})", "model.json: input: required"},
        {R"({"input": [28, 28, 1, 1], "layers": [{"type": "flatten"}]})",
         "input: expected a positive integer, [steps], [steps, features] or [height, width, channels], got an array "
         "of 4 values"},
        {R"({"input": [], "layers": [{"type": "flatten"}]})",
         "input: expected a positive integer, [steps], [steps, features] or [height, width, channels], got an array "
         "of 0 values"},
        {R"({"input": [28, 0, 1], "layers": [{"type": "flatten"}]})", "input[1]: expected a positive integer, got 0"},
        {R"({"input": "784", "layers": [{"type": "flatten"}]})",
         "input: expected a positive integer, [steps], [steps, features] or [height, width, channels], got the "
         "string \"784\""},
        {R"({"input": 4})", "model.json: layers: required"},
        {R"({"input": 4, "layers": []})", "layers: expected a non-empty array of layer objects, got []"},
        {R"({"input": 4, "layers": {}})", "layers: expected a non-empty array of layer objects, got an object"},
        {R"({"input": 4, "layers": [], "layer": []})",
         "model.json: layer: unknown key (valid: description, input, inputs, layers, outputs, compile, fit)"},
        {R"({"input": 4, "description": 3, "layers": []})", "description: expected a string, got 3"},
        {R"([1, 2])", "model.json: expected a JSON object at the top level, got an array"},
        {"{\"input\": 4,\n \"layers\": [", "model.json: invalid JSON: parse error at line 2, column 13"},
        {"", "model.json: invalid JSON:"},
        {config(dense + R"(, {"type": "dense", "units": 2, "units": 3})"),
         "model.json: layers[1]: duplicate key 'units'"},
        {R"({"input": 4, "input": 5, "layers": []})", "model.json: duplicate key 'input'"},
        {config(dense, R"({"optimizer": {"type": "adam", "lr": 0.1, "lr": 0.2}})"),
         "model.json: compile.optimizer: duplicate key 'lr'"},
        {R"({"input": [1, [2, {"a": 1, "a": 2}], 3]})", "model.json: input[1][1]: duplicate key 'a'"},
    };
    for (const Row& r : rows) {
        const std::string got = errorOf([&] { parseModelConfig(r.text, "model.json"); });
        EXPECT_NE(got.find(r.expected), std::string::npos)
            << "input: " << r.text << "\nexpected: " << r.expected << "\ngot: " << got;
        EXPECT_EQ(got.rfind("model.json: ", 0), 0u) << got;
    }
}

// Numbers are checked as integers of int range where the parser reads them,
// and the layer arithmetic they feed (units x inputs, k*k*C, the kernel's
// values, a window's extent) in 64 bits before anything narrows it: the
// error names the layer and the field. (kernelSize 2000000000 overflowed a
// signed int in the initializer's fan-in, undefined behaviour.)
TEST(ModelConfig, LayerSizesAreRangeCheckedIn64Bits) {
    const std::string image = R"({"input": [28, 28, 1], "layers": [)";
    struct Row {
        std::string text, expected;
    };
    const Row rows[] = {
        {config(R"({"type": "dense", "units": 2.5})"), "layers[0].units: expected a positive integer, got 2.5"},
        {config(R"({"type": "dense", "units": 2147483648})"),
         "layers[0].units: expected a positive integer, got 2147483648"},
        {config(R"({"type": "dense", "units": 1e300})"), "layers[0].units: expected a positive integer, got 1e+300"},
        {config(R"({"type": "dense", "units": 1e400})"), "model.json: invalid JSON"},
        {image + R"({"type": "conv2d", "filters": 8, "kernelSize": 3.5}]})",
         "layers[0].kernelSize: expected a positive integer, got 3.5"},
        {image + R"({"type": "conv2d", "filters": 8, "kernelSize": 4294967296}]})",
         "layers[0].kernelSize: expected a positive integer, got 4294967296"},
        {image + R"({"type": "conv2d", "filters": 8, "stride": -2147483649}]})",
         "layers[0].stride: expected a positive integer, got -2147483649"},
        // The issue's case: with 'same' padding the window may exceed the image.
        {image + R"({"type": "conv2d", "filters": 8, "kernelSize": 2000000000, "padding": "same"}]})",
         "model.json: layers[0].kernelSize: the layer's sizes overflow: a 2000000000x2000000000 window is "
         "4000000000000000000 values (16000000000000000000 bytes as floats), more than the 2147483647 values a tensor "
         "can hold"},
        {image + R"({"type": "conv2d", "filters": 8, "kernelSize": 46341, "padding": "same"}]})",
         "layers[0].kernelSize: the layer's sizes overflow: a 46341x46341 window is 2147488281 values"},
        {R"({"input": [28, 28, 1000], "layers": [{"type": "conv2d", "filters": 8, "kernelSize": 2000, "padding": "same"}]})",
         "layers[0].kernelSize: the layer's sizes overflow: a fan-in of 2000x2000 x 1000 channels is 4000000000 values"},
        {image + R"({"type": "conv2d", "filters": 1000000, "kernelSize": 50, "padding": "same"}]})",
         "layers[0].kernelSize: the layer's sizes overflow: a fan-out of 50x50 x 1000000 filters is 2500000000 values"},
        {R"({"input": [28, 28, 1000], "layers": [{"type": "conv2d", "filters": 300000, "kernelSize": 3}]})",
         "layers[0].filters: the layer's sizes overflow: a kernel of 3x3 x 1000 channels x 300000 filters is "
         "2700000000 values (10800000000 bytes as floats)"},
        {image + R"({"type": "conv2d", "filters": 3000000, "kernelSize": 1}]})",
         "layers[0].filters: the layer's sizes overflow: an output of 28x28 x 3000000 filters per example is "
         "2352000000 values"},
        {image + R"({"type": "conv2d", "filters": 1, "stride": 2147483647, "padding": "same"}]})",
         "layers[0].stride: the layer's sizes overflow: a 3x3 window with stride 2147483647 and 'same' padding over a "
         "28x28 image spans more than 2147483647 pixels"},
        {image + R"({"type": "maxpool2d", "poolSize": 2147483647, "padding": "same"}]})",
         "layers[0].poolSize: the layer's sizes overflow: a 2147483647x2147483647 window is"},
        {image + R"({"type": "averagepool2d", "poolSize": 2, "stride": 2147483620, "padding": "same"}]})",
         "layers[0].stride: the layer's sizes overflow: a 2x2 window with stride 2147483620"},
        {R"({"input": 1000000, "layers": [{"type": "dense", "units": 3000}]})",
         "model.json: layers[0].units: the layer's sizes overflow: a kernel of 1000000 inputs x 3000 units is "
         "3000000000 values (12000000000 bytes as floats)"},
        {image + R"({"type": "flatten"}, {"type": "dense", "units": 10}, {"type": "dense", "units": 2147483647}]})",
         "layers[2].units: the layer's sizes overflow: a kernel of 10 inputs x 2147483647 units is 21474836470 values"},
        {R"({"input": [50000, 50000, 1], "layers": [{"type": "flatten"}]})",
         "input: the image shape has too many values"},
        // Every layer's own shape function counts its sizes (layers/shape.hpp): the parser has no copy of them.
        {R"({"input": [28, 28, 1000], "layers": [{"type": "depthwiseconv2d", "depthMultiplier": 3000000}]})",
         "layers[0].depthMultiplier: the layer's sizes overflow: an output of 1000 channels x 3000000 is 3000000000 "
         "values"},
        {image + R"({"type": "separableconv2d", "filters": 3000000, "kernelSize": 1}]})",
         "layers[0].filters: the layer's sizes overflow: an output of 28x28 x 3000000 filters per example is "
         "2352000000 values"},
        {image + R"({"type": "conv2dtranspose", "filters": 1, "stride": 100000000}]})",
         "layers[0].stride: the layer's sizes overflow: the upsampled image's side is 2900000000 values"},
        {R"({"input": [1, 100, 1000], "layers": [{"type": "conv1d", "filters": 3000000, "kernelSize": 1}]})",
         "layers[0].filters: the layer's sizes overflow: a kernel of 1x1 x 1000 channels x 3000000 filters is "
         "3000000000 values"},
        {image + R"({"type": "zeropadding2d", "padding": 100000}]})",
         "layers[0].padding: the layer's sizes overflow: an output of 200028x200028 x 1 channels is 40011200784 "
         "values"},
        {image + R"({"type": "upsampling2d", "size": [100000, 10000]}]})",
         "layers[0].size: the layer's sizes overflow: an output of 2800000x280000 x 1 channels is 784000000000 "
         "values"},
        {R"({"input": 2000000000, "layers": [{"type": "concatenate", "inputs": ["input", "input"]}]})",
         "layers[0].axis: the layer's sizes overflow: an output per example of 1 x 4000000000 along the axis is "
         "4000000000 values"},
    };
    for (const Row& r : rows) {
        const std::string got = errorOf([&] { parseModelConfig(r.text, "model.json"); });
        EXPECT_NE(got.find(r.expected), std::string::npos)
            << "input: " << r.text << "\nexpected: " << r.expected << "\ngot: " << got;
    }
    // Shapes that are wrong for other reasons are left to compile, which names the layer.
    EXPECT_NO_THROW(parseModelConfig(image + R"({"type": "dense", "units": 2147483647}]})", "model.json"));
    EXPECT_NO_THROW(parseModelConfig(image + R"({"type": "conv2d", "filters": 8, "kernelSize": 2000000000}]})", "m"));
    EXPECT_NO_THROW(parseModelConfig(config(R"({"type": "conv2d", "filters": 8, "kernelSize": 2000000000})"), "m"));
    // Large sizes that fit are accepted.
    for (const char* layers : {R"({"type": "conv2d", "filters": 1, "kernelSize": 46340, "padding": "same"})",
                               R"({"type": "averagepool2d", "poolSize": 2, "stride": 2147483619, "padding": "same"})",
                               R"({"type": "conv2d", "filters": 1000, "kernelSize": 3}, {"type": "flatten"})"}) {
        EXPECT_NO_THROW(parseModelConfig(image + layers + "]}", "m")) << layers;
    }
    EXPECT_NO_THROW(parseModelConfig(R"({"input": 1, "layers": [{"type": "dense", "units": 2147483647}]})", "m"));
}

#ifndef __EMSCRIPTEN__
TEST(ModelConfig, DevicesAndFifosAreRefusedUnread) {
    char tmpl[] = "/tmp/gltrain_model_config_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl, fifo = dir + "/model.json";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string& path : {std::string("/dev/zero"), fifo}) {
        try {
            loadModelConfig(path);
            ADD_FAILURE() << path << ": no error";
        } catch (const IoError& e) {
            EXPECT_NE(std::string(e.what()).find("model config " + path + ": is a "), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(", not a regular file"), std::string::npos) << e.what();
        }
    }
    unlink(fifo.c_str());
    rmdir(dir.c_str());
}
#endif

// The model a config builds equals the one built by hand with the same
// options: same parameters at initialisation (the seed and initializers were
// passed on) and the same predictions.
TEST(ModelConfig, BuildsTheSameModelAsCode) {
    Context& ctx = test::context();
    ModelConfig c = parseModelConfig(R"({
      "input": [6, 5, 2],
      "layers": [
        {"type": "conv2d", "filters": 3, "kernelSize": 3, "padding": "same", "activation": "relu", "kernelInitializer": "he_uniform"},
        {"type": "maxpool2d", "poolSize": 2},
        {"type": "flatten"},
        {"type": "dense", "units": 4, "activation": "tanh", "biasInitializer": {"type": "constant", "value": 0.05}}
      ],
      "compile": {"seed": 7, "optimizer": {"type": "sgd", "lr": 0.1}}
    })",
                                     "m.json");
    std::unique_ptr<Model> fromJson = buildModel(ctx, c);

    Sequential byHand(ctx, Shape3{6, 5, 2});
    byHand.add(Conv2D{3, 3, 1, Padding::Same, Activation::ReLU, 0.01f, Initializer{Initializer::HeUniform, 0}})
        .add(MaxPool2D{2})
        .add(Flatten{})
        .add(Dense{4, Activation::Tanh, 0.01f, Initializer{}, Initializer::constant(0.05f)});
    CompileOptions o;
    o.seed = 7;
    o.optimizer.kind = OptimizerKind::SGD;
    o.optimizer.lr = 0.1f;
    byHand.compile(o);

    ASSERT_EQ(fromJson->layerCount(), 4u);
    for (const char* layer : {"conv2d_0", "dense_3"})
        for (const char* which : {"kernel", "bias"})
            EXPECT_EQ(fromJson->weight(layer, which).data, byHand.weight(layer, which).data) << layer << "/" << which;
    HostMatrix x = test::randomMatrix(3, 60, 5);
    EXPECT_EQ(fromJson->predict(x).data, byHand.predict(x).data);
    EXPECT_EQ(fromJson->options().optimizer.kind, OptimizerKind::SGD);
}

TEST(ModelConfig, CompileErrorsNameTheSource) {
    Context& ctx = test::context();
    ModelConfig c = parseModelConfig(R"({"input": [4, 4, 1], "layers": [{"type": "dense", "units": 2}]})", "m.json");
    try {
        buildModel(ctx, c);
        FAIL() << "a dense layer on an image input compiled";
    } catch (const ArgumentError& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("m.json: compile: layer dense_0", 0), 0u) << m;
        EXPECT_NE(m.find("Flatten"), std::string::npos) << m;
    }
}

// The parts one at a time, as the JavaScript API reads add()'s, compile()'s and
// fit()'s arguments (src/bindings/): with no path, errors read "source: key: ...";
// NaN and Infinity (JavaScript numbers, not JSON) are named as such.
TEST(ModelConfig, PartsParseAloneAndNameTheirKeys) {
    const Layer l = layerFromJson(nlohmann::json::parse(R"({"type": "Max_Pool2D", "poolSize": 3})"), "add");
    ASSERT_TRUE(std::holds_alternative<MaxPool2D>(l));
    EXPECT_EQ(std::get<MaxPool2D>(l).poolSize, 3);
    EXPECT_EQ(compileOptionsFromJson(nlohmann::json::parse(R"({"optimizer": "sgd"})"), "compile").optimizer.kind,
              OptimizerKind::SGD);
    EXPECT_EQ(fitOptionsFromJson(nlohmann::json::parse(R"({"snapshotEvery": 0})"), "fit").snapshotEvery, 0);

    EXPECT_EQ(errorOf([] { layerFromJson(nlohmann::json::parse(R"({"type": "dense", "units": -3})"), "add"); }),
              "add: units: expected a positive integer, got -3");
    EXPECT_EQ(errorOf([] {
                  layerFromJson(nlohmann::json::parse(R"({"units": 3})"), "add");
              }).rfind("add: type: expected a layer type", 0),
              0u);
    EXPECT_EQ(errorOf([] { layerFromJson(nlohmann::json("dense"), "add"); }),
              "add: expected a layer object such as {\"type\": \"dense\", \"units\": 10}, got the string \"dense\"");
    nlohmann::json nan = {{"optimizer", {{"type", "adam"}, {"lr", std::nan("")}}}};
    EXPECT_EQ(errorOf([&] { compileOptionsFromJson(nan, "compile"); }),
              "compile: optimizer.lr: expected a positive number, got NaN");
    nlohmann::json inf = {{"clipNorm", -INFINITY}};
    EXPECT_EQ(errorOf([&] { compileOptionsFromJson(inf, "fromTfjs"); }),
              "fromTfjs: clipNorm: expected a number >= 0 (0: no clipping), got -Infinity");
    EXPECT_EQ(errorOf([] { fitOptionsFromJson(nlohmann::json::parse(R"({"snapshotEvery": -1})"), "fit"); }),
              "fit: snapshotEvery: expected an integer >= 0, got -1");
    EXPECT_EQ(errorOf([] { fitOptionsFromJson(nlohmann::json::parse("[1]"), "fit"); }),
              "fit: expected an object, got an array");
    const Shape3 image = inputShapeFromJson(nlohmann::json::parse("[28, 28, 1]"), "Sequential");
    EXPECT_EQ(image.height * 10000 + image.width * 10 + image.channels, 280281);
    EXPECT_EQ(inputShapeFromJson(nlohmann::json(784), "Sequential").channels, 784);
    EXPECT_EQ(errorOf([] { inputShapeFromJson(nlohmann::json::parse("[28, 0, 1]"), "Sequential"); }),
              "Sequential: input[1]: expected a positive integer, got 0");
    EXPECT_EQ(errorOf([] { inputShapeFromJson(nlohmann::json::parse(R"({"inputSize": 4})"), "Sequential"); }),
              "Sequential: input: expected a positive integer, [steps], [steps, features] or [height, width, "
              "channels], got an object");
    // [steps] is a flat row of token ids; [steps, features] a sequence, an image of height 1.
    EXPECT_EQ(inputShapeFromJson(nlohmann::json::parse("[12]"), "Sequential"), (Shape3{1, 1, 12}));
    EXPECT_EQ(inputShapeFromJson(nlohmann::json::parse("[12, 5]"), "Sequential"), (Shape3{1, 12, 5}));
}

}  // namespace model_config_test
}  // namespace
