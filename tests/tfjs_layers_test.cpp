// The TF.js Layers format (gltrain/tfjs_layers.hpp): export -> import round
// trips predict the same (MLP and CNN, every layer kind, fused LeakyReLU split
// into a layer); model.json's content; a hand-written Keras-style model.json
// predicts what the formula says; every malformed or unsupported input is a
// FormatError naming what is wrong; an imported model fine-tunes. Directory
// writes and reads run natively only (tests/interop/ runs the real TF.js and
// PyTorch checks).
//
// Tolerances: a round trip runs the same kernels on the same weights, so the
// predictions agree to 1e-6 relative (the only change: a fused LeakyReLU runs
// as its own pass); the hand-written model agrees with the formula to 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gltrain/tfjs_layers.hpp"
#include "test_context.hpp"

#ifndef __EMSCRIPTEN__
#include <filesystem>
#include <fstream>
#endif

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace tfjs_layers_test {

using namespace gltrain;
using Json = nlohmann::json;

namespace {

std::string formatError(const std::function<void()>& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("(not a FormatError) ") + e.what();
    }
    return "(no exception)";
}

// Trains a few steps so that weights and batch-norm statistics are not their initial values.
void trainALittle(Sequential& m, int rows, unsigned seed) {
    HostMatrix x = test::randomMatrix(rows, m.inputSize(), seed, 0.0f, 1.0f);
    std::vector<int> labels(size_t(rows), 0);
    for (int i = 0; i < rows; ++i) labels[size_t(i)] = i % m.outputSize();
    FitOptions f;
    f.epochs = 1;
    f.batchSize = 8;
    m.fit(x, labels, f);
}

std::unique_ptr<Sequential> mlp(Context& ctx) {
    auto m = std::make_unique<Sequential>(ctx, 12);
    m->add(Dense{16, Activation::ReLU})
        .add(BatchNormalization{0.5f, 1e-3f})
        .add(Dense{12, Activation::LeakyReLU, 0.2f})
        .add(Dropout{0.25f})
        .add(Dense{10, Activation::Tanh})
        .add(ActivationLayer{Activation::ReLU})
        .add(Dense{8, Activation::Softplus})
        .add(ActivationLayer{Activation::LeakyReLU, 0.1f})
        .add(Dense{5, Activation::Sigmoid})
        .add(Dense{4})
        .add(Softmax{});
    CompileOptions c;
    c.optimizer.lr = 0.01f;
    m->compile(c);
    return m;
}

std::unique_ptr<Sequential> cnn(Context& ctx) {
    auto m = std::make_unique<Sequential>(ctx, Shape3{9, 9, 3});
    m->add(Conv2D{5, 3, 1, Padding::Same, Activation::ReLU})
        .add(BatchNormalization{0.6f, 1e-2f})
        .add(MaxPool2D{2, 2, Padding::Same})                                // 9 -> 5, padded after
        .add(Conv2D{4, 2, 1, Padding::Valid, Activation::LeakyReLU, 0.3f})  // 5 -> 4
        .add(AveragePool2D{3, 2, Padding::Same})                            // 4 -> 2, asymmetric padding
        .add(Flatten{})
        .add(Dense{6, Activation::Tanh})
        .add(Dense{3});
    m->compile({});
    return m;
}

std::unique_ptr<Sequential> gapCnn(Context& ctx) {
    auto m = std::make_unique<Sequential>(ctx, Shape3{7, 6, 2});
    m->add(Conv2D{8, 3, 2, Padding::Valid, Activation::Sigmoid}).add(GlobalAveragePooling2D{}).add(Dense{3});
    m->compile({});
    return m;
}

void expectRoundTrip(Model& a, unsigned seed) {
    const TfjsArtifacts art = exportTfjs(a);
    auto b = importTfjs(test::context(), art.modelJson, art.weightData);
    const HostMatrix x = test::randomMatrix(7, a.inputSize(), seed + 1, 0.0f, 1.0f);
    const HostMatrix pa = a.predict(x), pb = b->predict(x);
    ASSERT_EQ(pb.cols, pa.cols);
    EXPECT_LE(test::relativeError(pb, pa), 1e-6);
    // Exported again, the import gives the same model.json and weights (a fixed point).
    const TfjsArtifacts again = exportTfjs(*b);
    EXPECT_EQ(again.modelJson, exportTfjs(*importTfjs(test::context(), again.modelJson, again.weightData)).modelJson);
    EXPECT_EQ(again.weightData, art.weightData);
}

// A hand-written Keras-style model.json around a layer list (InputLayer first).
std::string keras(const Json& layers, const Json& weights) {
    Json j = {
        {"format", "layers-model"},
        {"modelTopology",
         {{"class_name", "Sequential"}, {"config", {{"name", "s"}, {"layers", layers}}}, {"keras_version", "2.15"}}},
        {"weightsManifest", Json::array({{{"paths", {"w.bin"}}, {"weights", weights}}})}};
    return j.dump();
}

std::vector<uint8_t> floatBytes(const std::vector<float>& v) { return TensorData::f32({int64_t(v.size())}, v).bytes; }

}  // namespace

TEST(TfjsLayers, MlpRoundTripPredictsTheSame) {
    auto m = mlp(test::context());
    trainALittle(*m, 32, 3);
    expectRoundTrip(*m, 3);
}

TEST(TfjsLayers, CnnRoundTripPredictsTheSame) {
    auto m = cnn(test::context());
    trainALittle(*m, 24, 5);
    expectRoundTrip(*m, 5);
    auto g = gapCnn(test::context());
    trainALittle(*g, 16, 6);
    expectRoundTrip(*g, 6);
    Sequential gmp(test::context(), Shape3{7, 6, 2});
    gmp.add(Conv2D{8, 3, 2, Padding::Valid, Activation::Mish}).add(GlobalMaxPooling2D{}).add(Dense{3});
    gmp.compile({});
    trainALittle(gmp, 16, 7);
    expectRoundTrip(gmp, 7);
    EXPECT_EQ(Json::parse(exportTfjs(gmp).modelJson)["modelTopology"]["config"]["layers"][1]["class_name"],
              "GlobalMaxPooling2D");
}

// A functional model: a residual block, a concatenation with the input and a
// Dense with a fused LeakyReLU (split off as a layer of its own, which the
// layers after it then read) export as a TF.js Model and import back.
TEST(TfjsLayers, FunctionalModelRoundTripPredictsTheSame) {
    const SymbolicTensor in = Input(Shape3{5, 4, 2});
    const SymbolicTensor h = Conv2D{3, 3, 1, Padding::Same, Activation::ReLU}(in);
    const SymbolicTensor r = Add{}({h, BatchNormalization{}(Conv2D{3, 3, 1, Padding::Same}(h))});
    Dense leaky{6, Activation::LeakyReLU, 0.2f};
    const SymbolicTensor f = leaky(Flatten{}(Concatenate{}({r, in})));
    Model m(test::context(), in, Dense{3}(Add{}({f, Dense{6}(f)})));
    m.compile({});
    const TfjsArtifacts art = exportTfjs(m);
    const auto topology = nlohmann::json::parse(art.modelJson)["modelTopology"];
    EXPECT_EQ(topology["class_name"], "Model");
    const auto& layers = topology["config"]["layers"];
    EXPECT_EQ(layers[0]["class_name"], "InputLayer");
    EXPECT_EQ(layers[0]["config"]["batch_input_shape"], nlohmann::json::parse("[null, 5, 4, 2]"));
    // The first Add reads the first Conv2D and the batch normalization.
    EXPECT_EQ(layers[4]["inbound_nodes"],
              nlohmann::json::parse(R"([[["conv2d_0", 0, 0, {}], ["batch_normalization_2", 0, 0, {}]]])"));
    // The layers after the split LeakyReLU read it.
    EXPECT_EQ(layers[8]["class_name"], "LeakyReLU");
    EXPECT_EQ(layers[9]["inbound_nodes"], nlohmann::json::parse(R"([[["dense_6_leaky_relu", 0, 0, {}]]])"));
    EXPECT_EQ(layers[10]["inbound_nodes"],
              nlohmann::json::parse(R"([[["dense_6_leaky_relu", 0, 0, {}], ["dense_7", 0, 0, {}]]])"));
    EXPECT_EQ(topology["config"]["output_layers"], nlohmann::json::parse(R"([["dense_9", 0, 0]])"));
    expectRoundTrip(m, 9);
    // What gltrain cannot represent is a FormatError naming the layer.
    auto edited = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
        auto j = nlohmann::ordered_json::parse(art.modelJson);
        edit(j["modelTopology"]["config"]);
        return formatError([&] { importTfjs(test::context(), j.dump(), art.weightData); });
    };
    const std::string tensor = edited([](auto& c) { c["layers"][4]["inbound_nodes"][0][0][2] = 1; });
    EXPECT_NE(tensor.find("layer 4 'add_3' (Add): reads tensor 1 of 'conv2d_0' (only each layer's one output"),
              std::string::npos)
        << tensor;
    const std::string unknown = edited([](auto& c) { c["layers"][4]["inbound_nodes"][0][1][0] = "bn"; });
    EXPECT_NE(unknown.find("'add_3' (Add): reads 'bn', which is not a layer or input before it"), std::string::npos)
        << unknown;
    const std::string node = edited([](auto& c) { c["layers"][4]["inbound_nodes"][0][1][1] = 1; });
    EXPECT_NE(node.find("'add_3' (Add): reads 'batch_normalization_2' (its inbound node 1), which is not"),
              std::string::npos)
        << node;
    const std::string outputs = edited([](auto& c) { c["output_layers"][0][0] = "nope"; });
    EXPECT_NE(outputs.find("output_layers: [\"nope\",0,0] is not [name, node, 0] of a layer's output"),
              std::string::npos)
        << outputs;
}

// Two inputs, a shared Dense (one layer entry with two inbound nodes, read as
// node 0 and node 1) and two outputs export as TF.js writes them and import back.
TEST(TfjsLayers, SharedLayersAndSeveralInputsAndOutputsRoundTrip) {
    Shared<Dense> tower{Dense{4, Activation::LeakyReLU, 0.1f}};
    const SymbolicTensor a = Input(5, "left"), b = Input(5, "right");
    const SymbolicTensor ha = tower(a), hb = tower(b);
    Model m(test::context(), {a, b}, {Dense{3}(Subtract{}({ha, hb})), Dense{2}(hb)});
    CompileOptions c;
    c.losses = {LossKind::SoftmaxCrossEntropy, LossKind::MeanSquaredError};
    m.compile(c);
    const TfjsArtifacts art = exportTfjs(m);
    const auto config = nlohmann::json::parse(art.modelJson)["modelTopology"]["config"];
    EXPECT_EQ(config["input_layers"], nlohmann::json::parse(R"([["left", 0, 0], ["right", 0, 0]])"));
    // The tower and its split LeakyReLU: one entry each, two inbound nodes each.
    const auto& layers = config["layers"];
    EXPECT_EQ(layers[2]["name"], "dense_0");
    EXPECT_EQ(layers[2]["inbound_nodes"], nlohmann::json::parse(R"([[["left", 0, 0, {}]], [["right", 0, 0, {}]]])"));
    EXPECT_EQ(layers[3]["inbound_nodes"],
              nlohmann::json::parse(R"([[["dense_0", 0, 0, {}]], [["dense_0", 1, 0, {}]]])"));
    EXPECT_EQ(layers[4]["inbound_nodes"],
              nlohmann::json::parse(R"([[["dense_0_leaky_relu", 0, 0, {}], ["dense_0_leaky_relu", 1, 0, {}]]])"));
    EXPECT_EQ(config["output_layers"], nlohmann::json::parse(R"([["dense_3", 0, 0], ["dense_4", 0, 0]])"));
    EXPECT_EQ(nlohmann::json::parse(art.modelJson)["weightsManifest"][0]["weights"].size(), 6u);
    expectRoundTrip(m, 10);
    auto back = importTfjs(test::context(), art.modelJson, art.weightData);
    EXPECT_EQ(back->inputShapes().size(), 2u);
    EXPECT_EQ(back->inboundName(graph::LayerGeometry::modelInput(1)), "right");
    EXPECT_EQ(back->outputLayers().size(), 2u);
    // Each entry's later node is a call placed as soon as what it reads is there.
    EXPECT_EQ(back->layerName(1), "dense_0@1");
    EXPECT_EQ(back->summary()[1].shares, "dense_0");
    EXPECT_EQ(back->summary()[3].shares, "dense_0_leaky_relu");
}

// Every activation TF.js can run round-trips under its TF.js name, fused and as a layer.
TEST(TfjsLayers, EveryTfjsActivationRoundTrips) {
    auto m = std::make_unique<Sequential>(test::context(), 6);
    m->add(Dense{7, Activation::ELU})
        .add(Dense{7, Activation::SELU})
        .add(Dense{7, Activation::ReLU6})
        .add(Dense{7, Activation::Swish})
        .add(Dense{7, Activation::Mish})
        .add(Dense{7, Activation::HardSigmoid})
        .add(Dense{7, Activation::Softsign})
        .add(Dense{7, Activation::GELUExact})
        .add(ActivationLayer{Activation::ELU})
        .add(ActivationLayer{Activation::ReLU6})
        .add(Dense{3});
    m->compile({});
    trainALittle(*m, 16, 8);
    expectRoundTrip(*m, 8);
    const Json topology = Json::parse(exportTfjs(*m).modelJson)["modelTopology"]["config"]["layers"];
    std::vector<std::string> names;
    for (const Json& l : topology) names.push_back(l["config"].value("activation", ""));
    EXPECT_EQ(names, (std::vector<std::string>{"elu", "selu", "relu6", "swish", "mish", "hard_sigmoid", "softsign",
                                               "gelu", "elu", "relu6", "linear"}));
    // TF.js runs ELU with alpha 1 only: another alpha is refused, naming the layer.
    Sequential elu(test::context(), 4);
    Dense d{3, Activation::ELU};
    d.eluAlpha = 0.5f;
    elu.add(d).add(Dense{2});
    elu.compile({});
    try {
        exportTfjs(elu);
        ADD_FAILURE() << "exported ELU with alpha 0.5";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("layer 'dense_0' uses ELU with eluAlpha 0.5"), std::string::npos)
            << e.what();
    }
}

TEST(TfjsLayers, ModelJsonHasKerasNamesShapesAndOneShard) {
    auto m = cnn(test::context());
    const TfjsArtifacts art = exportTfjs(*m);
    const Json j = Json::parse(art.modelJson);
    EXPECT_EQ(j["format"], "layers-model");
    const Json& layers = j["modelTopology"]["config"]["layers"];
    ASSERT_EQ(layers.size(), 9u);  // the LeakyReLU of conv2d_3 is a layer of its own
    EXPECT_EQ(layers[0]["class_name"], "Conv2D");
    EXPECT_EQ(layers[0]["config"]["batch_input_shape"], Json::parse("[null, 9, 9, 3]"));
    EXPECT_EQ(layers[0]["config"]["kernel_size"], Json::parse("[3, 3]"));
    EXPECT_EQ(layers[0]["config"]["padding"], "same");
    EXPECT_EQ(layers[0]["config"]["activation"], "relu");
    EXPECT_EQ(layers[1]["class_name"], "BatchNormalization");
    EXPECT_EQ(layers[1]["config"]["momentum"], 0.6);
    EXPECT_EQ(layers[1]["config"]["epsilon"], 0.01);
    EXPECT_EQ(layers[1]["config"]["axis"], -1);
    EXPECT_EQ(layers[2]["class_name"], "MaxPooling2D");
    EXPECT_EQ(layers[2]["config"]["strides"], Json::parse("[2, 2]"));
    EXPECT_EQ(layers[3]["config"]["activation"], "linear");
    EXPECT_EQ(layers[4]["class_name"], "LeakyReLU");
    EXPECT_EQ(layers[4]["config"]["name"], "conv2d_3_leaky_relu");
    EXPECT_EQ(layers[4]["config"]["alpha"], 0.3);
    EXPECT_EQ(layers[5]["class_name"], "AveragePooling2D");
    EXPECT_EQ(layers[6]["class_name"], "Flatten");
    EXPECT_EQ(layers[8]["config"]["name"], "dense_7");
    const Json& manifest = j["weightsManifest"];
    ASSERT_EQ(manifest.size(), 1u);
    EXPECT_EQ(manifest[0]["paths"], Json::parse("[\"group1-shard1of1.bin\"]"));
    const Json& w = manifest[0]["weights"];
    ASSERT_EQ(w.size(), 12u);
    EXPECT_EQ(w[0]["name"], "conv2d_0/kernel");
    EXPECT_EQ(w[0]["shape"], Json::parse("[3, 3, 3, 5]"));
    EXPECT_EQ(w[0]["dtype"], "float32");
    EXPECT_EQ(w[5]["name"], "batch_normalization_1/moving_variance");
    EXPECT_EQ(w[6]["shape"], Json::parse("[2, 2, 5, 4]"));
    EXPECT_EQ(w[8]["name"], "dense_6/kernel");
    EXPECT_EQ(w[8]["shape"], Json::parse("[16, 6]"));
    size_t bytes = 0;
    for (const Json& t : w) {
        size_t n = 4;
        for (const Json& d : t["shape"]) n *= d.get<size_t>();
        bytes += n;
    }
    EXPECT_EQ(art.weightData.size(), bytes);
    // The shard holds the kernel exactly as weight() returns it: row-major [kh, kw, C, F].
    const HostMatrix k = m->weight("conv2d_0", "kernel");
    EXPECT_EQ(std::vector<uint8_t>(art.weightData.begin(), art.weightData.begin() + std::ptrdiff_t(k.data.size() * 4)),
              TensorData::f32({int64_t(k.data.size())}, k.data).bytes);
    // A random_normal initializer is Keras's RandomNormal, there and back.
    Sequential normal(test::context(), 4);
    normal.add(Dense{2, Activation::Linear, 0.01f, Initializer::randomNormal(0.02f, 0.5f)});
    normal.compile({});
    const TfjsArtifacts normalArt = exportTfjs(normal);
    const Json init =
        Json::parse(normalArt.modelJson)["modelTopology"]["config"]["layers"][0]["config"]["kernel_initializer"];
    EXPECT_EQ(init["class_name"], "RandomNormal");
    EXPECT_EQ(init["config"]["stddev"], 0.02);
    EXPECT_EQ(init["config"]["mean"], 0.5);
    EXPECT_EQ(exportTfjs(*importTfjs(test::context(), normalArt.modelJson, normalArt.weightData)).modelJson,
              normalArt.modelJson);
    // GELU has no name TF.js can load (see tfjs_layers.hpp): refused, naming the layer.
    Sequential gelu(test::context(), 4);
    gelu.add(Dense{3, Activation::GELU}).add(Dense{2});
    gelu.compile({});
    try {
        exportTfjs(gelu);
        ADD_FAILURE() << "exported GELU";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("exportTfjs: layer 'dense_0' uses GELU, which TF.js cannot load"),
                  std::string::npos)
            << e.what();
    }
    Sequential uncompiled(test::context(), 4);
    uncompiled.add(Dense{2});
    try {
        exportTfjs(uncompiled);
        ADD_FAILURE() << "exported an uncompiled model";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("exportTfjs: the model is not compiled"), std::string::npos) << e.what();
    }
}

// InputLayer first, use_bias false, a Dense with a softmax activation (a Dense
// and a Softmax here): y = softmax(x K), checked against the formula.
TEST(TfjsLayers, HandWrittenKerasModelPredictsTheFormula) {
    const Json layers = Json::parse(R"([
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 3], "dtype": "float32", "sparse": false,
                                              "name": "input_1"}},
      {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax", "use_bias": false,
                                         "trainable": true, "dtype": "float32"}}])");
    const Json weights = Json::parse(R"([{"name": "dense/kernel", "shape": [3, 2], "dtype": "float32"}])");
    const std::vector<float> K = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};
    auto m = importTfjs(test::context(), keras(layers, weights), floatBytes(K));
    ASSERT_EQ(m->layerCount(), 2u);
    EXPECT_EQ(m->layerName(1), "dense_softmax");
    const HostMatrix x(2, 3, std::vector<float>{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f});
    const HostMatrix p = m->predict(x);
    for (int r = 0; r < 2; ++r) {
        double z[2];
        for (int c = 0; c < 2; ++c)
            z[c] = x(r, 0) * K[size_t(c)] + x(r, 1) * K[size_t(2 + c)] + x(r, 2) * K[size_t(4 + c)];
        const double e0 = std::exp(z[0] - std::max(z[0], z[1])), e1 = std::exp(z[1] - std::max(z[0], z[1]));
        EXPECT_NEAR(p(r, 0), e0 / (e0 + e1), 1e-5);
        EXPECT_NEAR(p(r, 1), e1 / (e0 + e1), 1e-5);
    }
    EXPECT_EQ(m->weight("dense", "bias").data, std::vector<float>(2, 0.0f));  // use_bias: false -> zero bias
}

TEST(TfjsLayers, ImportedModelFineTunes) {
    auto a = mlp(test::context());
    const TfjsArtifacts art = exportTfjs(*a);
    CompileOptions c;
    c.optimizer.lr = 0.01f;
    auto b = importTfjs(test::context(), art.modelJson, art.weightData, c);
    const HostMatrix x = test::randomMatrix(64, 12, 9, 0.0f, 1.0f);
    std::vector<int> labels(64);
    for (int i = 0; i < 64; ++i) labels[size_t(i)] = (x(i, 0) > 0.5f) + 2 * (x(i, 1) > 0.5f);
    const float before = b->evaluate(x, labels).loss;
    FitOptions f;
    f.epochs = 10;
    f.batchSize = 16;
    b->fit(x, labels, f);
    EXPECT_LT(b->evaluate(x, labels).loss, before * 0.9f);
}

// Transfer learning as TF.js users do it: layers frozen in the file import
// frozen (and export so), and fine-tuning trains only the others.
TEST(TfjsLayers, FrozenLayersImportFrozenAndFineTuneTheRest) {
    auto a = mlp(test::context());
    a->setTrainable("dense_0", false).setTrainable("batch_normalization_1", false);
    const TfjsArtifacts art = exportTfjs(*a);
    const Json layers = Json::parse(art.modelJson)["modelTopology"]["config"]["layers"];
    EXPECT_EQ(layers[0]["config"]["trainable"], false);
    EXPECT_EQ(layers[1]["config"]["trainable"], false);
    EXPECT_EQ(layers[2]["config"]["trainable"], true);
    auto b = importTfjs(test::context(), art.modelJson, art.weightData);
    EXPECT_FALSE(layerTrainable(b->layer(0)));
    EXPECT_FALSE(layerTrainable(b->layer(1)));
    EXPECT_TRUE(layerTrainable(b->layer(2)));
    const HostMatrix k0 = b->weight("dense_0", "kernel"), mean = b->weight("batch_normalization_1", "moving_mean");
    const HostMatrix k2 = b->weight("dense_2", "kernel");
    const HostMatrix x = test::randomMatrix(64, 12, 9, 0.0f, 1.0f);
    std::vector<int> labels(64);
    for (int i = 0; i < 64; ++i) labels[size_t(i)] = i % 4;
    FitOptions f;
    f.epochs = 2;
    f.batchSize = 16;
    b->fit(x, labels, f);
    EXPECT_EQ(b->weight("dense_0", "kernel").data, k0.data);
    EXPECT_EQ(b->weight("batch_normalization_1", "moving_mean").data, mean.data);
    EXPECT_NE(b->weight("dense_2", "kernel").data, k2.data);
}

TEST(TfjsLayers, MalformedAndUnsupportedModelsAreRejectedByName) {
    const Json input =
        Json::parse(R"({"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4, 4, 2], "name": "in"}})");
    const Json conv =
        Json::parse(R"({"class_name": "Conv2D", "config": {"name": "c", "filters": 2, "kernel_size": [3, 3],
                                     "padding": "same", "activation": "relu"}})");
    const Json convW = Json::parse(R"([{"name": "c/kernel", "shape": [3, 3, 2, 2], "dtype": "float32"},
                                       {"name": "c/bias", "shape": [2], "dtype": "float32"}])");
    const std::vector<uint8_t> convBytes = floatBytes(std::vector<float>(38, 0.1f));
    auto with = [](Json layer, const char* key, Json value) {
        layer["config"][key] = std::move(value);
        return layer;
    };
    auto importOf = [&](const std::string& json, const std::vector<uint8_t>& bytes) {
        return formatError([&] { importTfjs(test::context(), json, bytes); });
    };
    auto convModel = [&](const Json& c) { return importOf(keras({input, c}, convW), convBytes); };
    // The valid base case imports, and so does TF.js's name for gltrain's GELU.
    EXPECT_EQ(convModel(conv), "(no exception)");
    EXPECT_EQ(convModel(with(conv, "activation", "gelu_new")), "(no exception)");
    // Every activation name TF.js writes imports as the gltrain activation of that function.
    const std::pair<const char*, Activation> names[] = {{"elu", Activation::ELU},
                                                        {"selu", Activation::SELU},
                                                        {"relu6", Activation::ReLU6},
                                                        {"swish", Activation::Swish},
                                                        {"silu", Activation::Swish},
                                                        {"mish", Activation::Mish},
                                                        {"hard_sigmoid", Activation::HardSigmoid},
                                                        {"hardSigmoid", Activation::HardSigmoid},
                                                        {"softsign", Activation::Softsign},
                                                        {"gelu", Activation::GELUExact},
                                                        {"gelu_new", Activation::GELU}};
    for (const auto& [name, act] : names) {
        auto m = importTfjs(test::context(), keras({input, with(conv, "activation", name)}, convW), convBytes);
        EXPECT_EQ(std::get<Conv2D>(m->layer(0)).activation, act) << name;
    }
    // An ELU layer keeps its alpha; a ReLU capped at 6 is ReLU6.
    const Json elu = Json::parse(R"({"class_name": "ELU", "config": {"name": "e", "alpha": 0.5}})");
    const Json relu6 = Json::parse(R"({"class_name": "ReLU", "config": {"name": "r", "max_value": 6}})");
    auto m = importTfjs(test::context(), keras({input, conv, elu, relu6}, convW), convBytes);
    EXPECT_EQ(std::get<ActivationLayer>(m->layer(1)).activation, Activation::ELU);
    EXPECT_EQ(std::get<ActivationLayer>(m->layer(1)).eluAlpha, 0.5f);
    EXPECT_EQ(std::get<ActivationLayer>(m->layer(2)).activation, Activation::ReLU6);

    struct Row {
        std::string got, expected;
    };
    const Row rows[] = {
        {importOf("{not json", {}), "model.json: not valid JSON"},
        {importOf("[1, 2]", {}), "model.json must be a JSON object"},
        {importOf(R"({"format": "graph-model", "modelTopology": {}})", {}),
         "format 'graph-model' is not a TF.js Layers model"},
        {importOf(R"({"modelTopology": {"class_name": "Graph", "config": {}}})", {}),
         "the model is a Graph model; only Sequential and functional (Model) models can be imported"},
        {importOf(R"({"modelTopology": {"class_name": "Sequential", "config": {"layers": []}}})", {}),
         "layers must be a non-empty array"},
        {convModel(with(conv, "data_format", "channels_first")),
         "layer 1 'c' (Conv2D): data_format 'channels_first' is not supported (gltrain images are channels_last"},
        {convModel(with(conv, "kernel_size", Json::parse("[3, 1, 2]"))),
         "kernel_size must be n or [h, w], got [3,1,2]"},
        {convModel(with(conv, "kernel_size", Json::parse("[3, 1]"))),
         "weight 'c/kernel' has shape [3,3,2,2], which does not fit layer 'c'"},
        {convModel(with(conv, "groups", 2)), "groups 2 is not supported (grouped convolutions)"},
        {convModel(with(conv, "padding", "causal")), "padding 'causal' is not supported"},
        {convModel(with(conv, "activation", "exponential")),
         "layer 1 'c' (Conv2D): activation 'exponential' is not supported"},
        {convModel(with(conv, "activation", "softmax")),
         "as the last layer, a Softmax is the softmax cross-entropy's, over the last axis of a flat output"},
        {convModel(with(conv, "trainable", "no")), "trainable must be true or false"},
        {importOf(
             keras({input, conv, Json::parse(R"({"class_name": "ReLU", "config": {"name": "r", "max_value": 3}})")},
                   convW),
             convBytes),
         "layer 2 'r' (ReLU): max_value 3 is not supported"},
        {convModel(with(conv, "kernel_regularizer", Json::parse(R"({"class_name": "L2"})"))),
         "kernel_regularizer {\"class_name\":\"L2\"} is not supported"},
        {convModel(with(conv, "dtype", "float16")), "dtype \"float16\" is not supported"},
        {convModel(with(conv, "filters", 3)),
         "weight 'c/kernel' has shape [3,3,2,2], which does not fit layer 'c' (rank 4: [kh, kw, in, filters])"},
        {convModel(with(conv, "name", "a/b")), "the name contains '/'"},
        {importOf(keras({input, Json::parse(R"({"class_name": "Conv3D", "config": {"name": "x"}})")}, Json::array()),
                  {}),
         "layer 1 'x' (Conv3D): layer type Conv3D is not supported (supported: Dense, Conv2D"},
        {importOf(keras({input, Json::parse(R"({"class_name": "Dense", "config": {"name": "d", "units": 2}})")},
                        Json::array()),
                  {}),
         // Dense reads a flat input or a sequence: compile, not the import, refuses it after an image.
         "layer 'd' needs weight 'd/kernel', which the manifest lacks"},
        {importOf(keras(Json::array({Json::parse(R"({"class_name": "Dense", "config": {"name": "d", "units": 2}})")}),
                        Json::array()),
                  {}),
         "the first layer has no batch_input_shape"},
        {importOf(keras({with(input, "batch_input_shape", Json::parse("[null, null, 4, 2]")), conv}, convW), convBytes),
         "has an unknown size"},
        {importOf(keras({input, conv, with(conv, "name", "c")}, convW), convBytes), "another layer has the same name"},
        {importOf(keras({input, conv, Json::parse(R"({"class_name": "Softmax", "config": {"name": "s"}})")}, convW),
                  convBytes),
         "layer s: as the last layer, a Softmax is the softmax cross-entropy's"},
        {importOf(keras({input, conv,
                         Json::parse(R"({"class_name": "BatchNormalization", "config": {"name": "b", "axis": 1}})")},
                        convW),
                  convBytes),
         "layer 2 'b' (BatchNormalization): axis 1 is not supported"},
        // The manifest and the bytes.
        {importOf(keras({input, conv}, convW), floatBytes(std::vector<float>(37, 0.1f))),
         "the weights hold 148 bytes, but weight 'c/bias' (shape [2]) needs bytes 144..152 (are shards missing?)"},
        {importOf(keras({input, conv}, convW), floatBytes(std::vector<float>(39, 0.1f))),
         "the weights hold 156 bytes, but the manifest describes 152"},
        {importOf(keras({input, conv}, Json::array({convW[0]})), floatBytes(std::vector<float>(36, 0.1f))),
         "layer 'c' needs weight 'c/bias', which the manifest lacks"},
        {importOf(keras({input, conv}, Json::array({convW[0], convW[1], convW[1]})),
                  floatBytes(std::vector<float>(40, 0.1f))),
         "weight 'c/bias' appears twice"},
        {importOf(keras({input, conv},
                        Json::array({convW[0], convW[1], Json::parse(R"({"name": "z/kernel", "shape": [1]})")})),
                  floatBytes(std::vector<float>(39, 0.1f))),
         "weight 'z/kernel' in the manifest belongs to no layer"},
        {importOf(keras({input, conv},
                        Json::array({convW[0], Json::parse(R"({"name": "c/bias", "shape": [2], "dtype": "int32"})")})),
                  convBytes),
         "weight 'c/bias' has dtype int32"},
        {importOf(keras({input, conv}, Json::array({convW[0], Json::parse(R"({"name": "c/bias", "shape": [2],
                                                    "quantization": {"dtype": "uint8"}})")})),
                  convBytes),
         "weight 'c/bias' is quantized"},
        {importOf(keras({input, conv},
                        Json::array({Json::parse(R"({"name": "c/kernel", "shape": [3, 3, 4, 2]})"), convW[1]})),
                  floatBytes(std::vector<float>(74, 0.1f))),
         "model.json: weight 'c/kernel' has shape [3,3,4,2], the model needs [3,3,2,2]"},
        {importOf(keras({input, conv}, convW),
                  [] {
                      std::vector<float> v(38, 0.1f);
                      v[5] = std::nanf("");
                      return floatBytes(v);
                  }()),
         "tensor 'c/kernel' holds NaN or Inf"},
    };
    for (const Row& r : rows)
        EXPECT_NE(r.got.find(r.expected), std::string::npos) << "got: " << r.got << "\nexpected: " << r.expected;
}

#ifndef __EMSCRIPTEN__
TEST(TfjsLayers, SavesAndLoadsADirectory) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(::testing::TempDir()) / "gltrain_tfjs_test";
    fs::remove_all(dir);
    auto a = cnn(test::context());
    saveTfjs(*a, dir.string());
    EXPECT_TRUE(fs::exists(dir / "model.json"));
    EXPECT_TRUE(fs::exists(dir / kTfjsShardName));
    EXPECT_FALSE(fs::exists(dir.string() + ".tmp"));
    trainALittle(*a, 24, 11);
    saveTfjs(*a, dir.string());  // replaces the earlier export
    EXPECT_FALSE(fs::exists(dir.string() + ".old"));
    auto b = loadTfjs(test::context(), (dir / "model.json").string());
    const HostMatrix x = test::randomMatrix(5, a->inputSize(), 12, 0.0f, 1.0f);
    EXPECT_LE(test::relativeError(b->predict(x), a->predict(x)), 1e-6);

    // A directory holding anything else is refused and left alone.
    std::ofstream(dir / "notes.txt") << "keep me";
    try {
        saveTfjs(*a, dir.string());
        ADD_FAILURE() << "overwrote a directory with other files";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("holds notes.txt, which is not part of a TF.js export"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(fs::exists(dir / "notes.txt"));
    // Weights paths stay next to model.json; a missing shard names its path.
    const std::string text = [&] {
        std::ifstream in(dir / "model.json");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    for (const auto& [from, to, expected] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {kTfjsShardName, "../x.bin", "weights path '../x.bin' is not a file name next to model.json"},
             {kTfjsShardName, "gone.bin", "gone.bin: cannot open"}}) {
        std::string t = text;
        t.replace(t.find(from), from.size(), to);
        std::ofstream(dir / "edited.json") << t;
        try {
            loadTfjs(test::context(), (dir / "edited.json").string());
            ADD_FAILURE() << "loaded " << to;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    }
    fs::remove_all(dir);
}
#endif

}  // namespace tfjs_layers_test
}  // namespace
