// Frozen layers (issue 38): `trainable = false` on a layer — in C++, the
// model config and TF.js files through its field table — gives its
// parameters no gradient, no optimizer state and no update, on both engines;
// a frozen BatchNormalization normalizes with its moving statistics and leaves
// them as they are; setTrainable() after compile recompiles keeping the state;
// a checkpoint saved while a layer trained loads into the model with it frozen.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace frozen_layers_test {

using namespace gltrain;
using gltrain::test::randomMatrix;

// 96 rows of 6 features in 3 classes.
struct Data : test::ClassData {
    Data() : ClassData(96, 6, 5) {}
};

// 6-16-8-3, the first layer frozen or not.
void build(Sequential& m, bool freezeFirst, OptimizerKind opt = OptimizerKind::Adam) {
    Dense first{16, Activation::Tanh};
    first.trainable = !freezeFirst;
    m.add(first).add(Dense{8, Activation::ReLU}).add(Dense{3});
    CompileOptions c;
    c.optimizer.kind = opt;
    c.optimizer.lr = 0.05f;
    c.seed = 9;
    m.compile(c);
}

FitOptions twoEpochs() {
    FitOptions f;
    f.epochs = 2;
    f.batchSize = 16;
    return f;
}

TEST(FrozenLayers, AFrozenLayerKeepsItsWeightsAndOptimizerStateOnBothEngines) {
    const Data d;
    ContextOptions gpuOptions;
    gpuOptions.backend = BackendPreference::Gpu;
    Context gpu(gpuOptions);
    // 6-8-3 in batches of 4: trained whole, the GPU engine runs it as the small
    // dense step (one pass per parameter, every parameter updated); frozen, the
    // general step must take it.
    auto small = [&](Context& ctx, bool freeze) {
        auto m = std::make_unique<Sequential>(ctx, 6);
        Dense first{8, Activation::Tanh};
        first.trainable = !freeze;
        m->add(first).add(Dense{3});
        CompileOptions c;
        c.optimizer.lr = 0.05f;
        c.seed = 9;
        m->compile(c);
        return m;
    };
    bool recomputed = false;
    for (auto& p : small(gpu, false)->profileStep(d.x, Targets(d.y), 4, 1)) recomputed |= p.kernel == "loss/mlp_loss";
    ASSERT_TRUE(recomputed) << "the unfrozen model is the small dense step's";
    FitOptions f;
    f.epochs = 2;
    f.batchSize = 4;
    std::vector<std::vector<float>> trained;  // dense_1's kernel per engine
    for (Context* ctx : {&gpu, &test::cpuContext()}) {
        SCOPED_TRACE(backendName(ctx->backend()));
        auto m = small(*ctx, true);
        const HostMatrix k0 = m->weight("dense_0", "kernel"), b0 = m->weight("dense_0", "bias");
        const HostMatrix k1 = m->weight("dense_1", "kernel");
        m->fit(d.x, d.y, f);
        EXPECT_EQ(m->step(), 48);
        EXPECT_EQ(m->weight("dense_0", "kernel").data, k0.data) << "frozen: not updated";
        EXPECT_EQ(m->weight("dense_0", "bias").data, b0.data);
        EXPECT_NE(m->weight("dense_1", "kernel").data, k1.data) << "the layer after it trains";
        EXPECT_LT(m->history().back().loss, m->history().front().loss);
        // No optimizer state for it: the checkpoint holds its weights only.
        const SafetensorsFile file = parseSafetensors(m->saveCheckpoint(), "checkpoint");
        EXPECT_TRUE(file.contains("dense_0/kernel"));
        EXPECT_FALSE(file.contains("dense_0/kernel/slot0"));
        EXPECT_FALSE(file.contains("dense_0/bias/slot1"));
        EXPECT_TRUE(file.contains("dense_1/kernel/slot1"));
        trained.push_back(m->weight("dense_1", "kernel").data);
    }
    // The engines agree on what the trainable layer learnt (the same gradients behind the frozen one).
    ASSERT_EQ(trained.size(), 2u);
    for (size_t i = 0; i < trained[0].size(); ++i)
        ASSERT_NEAR(trained[0][i], trained[1][i], 2e-4) << "dense_1/kernel[" << i << "]";
}

TEST(FrozenLayers, AFrozenLayerCostsNoGradientOrUpdatePasses) {
    const Data d;
    ContextOptions gpuOptions;
    gpuOptions.backend = BackendPreference::Gpu;
    Context gpu(gpuOptions);
    CompileOptions c;
    c.smallDenseStepMacs = 0;  // the general step, where each parameter's passes show
    auto passes = [&](bool freeze) {
        Sequential m(gpu, 6);
        Dense first{16, Activation::Tanh};
        first.trainable = !freeze;
        m.add(first).add(Dense{8, Activation::ReLU}).add(Dense{3});
        m.compile(c);
        return m.profileStep(d.x, Targets(d.y), 16, 1).size();
    };
    const size_t frozen = passes(true), trained = passes(false);
    // Not its kernel's gradient (dx of the first layer is never computed), nor its two updates.
    EXPECT_LE(frozen + 3, trained) << frozen << " passes frozen, " << trained << " trained";
}

// Frozen, a BatchNormalization normalizes with its moving statistics in training
// too — the training loss of a step is the evaluation loss before it — and
// leaves them, gamma and beta as they are.
TEST(FrozenLayers, AFrozenBatchNormalizationUsesItsMovingStatistics) {
    const Data d;
    for (bool frozen : {true, false}) {
        SCOPED_TRACE(frozen ? "frozen" : "trained");
        Sequential m(test::context(), 6);
        BatchNormalization bn;
        bn.trainable = !frozen;
        m.add(Dense{8, Activation::ReLU}).add(bn).add(Dense{3});
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::SGD;
        c.optimizer.lr = 0.1f;
        m.compile(c);
        // Moving statistics that differ from the batch's, so the two forms differ.
        m.setWeight("batch_normalization_1", "moving_mean", HostMatrix(1, 8, std::vector<float>(8, 0.3f)));
        m.setWeight("batch_normalization_1", "moving_variance", HostMatrix(1, 8, std::vector<float>(8, 2.0f)));
        const float before = m.evaluate(d.x, d.y, 96).loss;
        FitOptions f;
        f.epochs = 1;
        f.batchSize = 96;  // one step of every row
        f.shuffle = false;
        m.fit(d.x, d.y, f);
        const float trainingLoss = m.history().back().loss;
        if (frozen) {
            EXPECT_NEAR(trainingLoss, before, 1e-5f);
            EXPECT_EQ(m.weight("batch_normalization_1", "moving_mean").data, std::vector<float>(8, 0.3f));
            EXPECT_EQ(m.weight("batch_normalization_1", "gamma").data, std::vector<float>(8, 1.0f));
        } else {
            EXPECT_GT(std::abs(trainingLoss - before), 1e-3f) << "batch statistics in training";
            EXPECT_NE(m.weight("batch_normalization_1", "moving_mean").data, std::vector<float>(8, 0.3f));
        }
    }
}

// setTrainable after compile recompiles at once, keeping the weights, the step
// and the optimizer state of what still trains; training then goes on with the
// layer frozen. Unfrozen again, its optimizer state starts at zero.
TEST(FrozenLayers, SetTrainableAfterCompileKeepsTheState) {
    const Data d;
    Sequential m(test::context(), 6);
    build(m, false);
    FitOptions f = twoEpochs();
    f.epochs = 1;
    m.fit(d.x, d.y, f);
    const HostMatrix k0 = m.weight("dense_0", "kernel");
    const std::vector<uint8_t> before = m.saveCheckpoint();
    m.setTrainable("dense_0", false);
    EXPECT_EQ(m.step(), 6);
    EXPECT_EQ(m.weight("dense_0", "kernel").data, k0.data);
    const SafetensorsFile kept = parseSafetensors(m.saveCheckpoint(), "after");
    const SafetensorsFile was = parseSafetensors(before, "before");
    EXPECT_FALSE(kept.contains("dense_0/kernel/slot0"));
    EXPECT_EQ(kept.at("dense_1/kernel/slot1").floats(), was.at("dense_1/kernel/slot1").floats());
    f.epochs = 2;
    m.fit(d.x, d.y, f);
    EXPECT_EQ(m.step(), 12);
    EXPECT_EQ(m.weight("dense_0", "kernel").data, k0.data);
    m.setTrainable("dense_0", true);
    EXPECT_EQ(parseSafetensors(m.saveCheckpoint(), "unfrozen").at("dense_0/kernel/slot0").floats(),
              std::vector<float>(16 * 6, 0.0f));
    EXPECT_EQ(m.layer(0).index(), LayerTypes::Variant(Dense{}).index());
    EXPECT_TRUE(layerTrainable(m.layer(0)));
    EXPECT_THROW(m.setTrainable("dense_9", false), ArgumentError);
    try {
        m.setTrainable("nope", false);
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("no layer named 'nope' (the layers: dense_0, dense_1, dense_2)"),
                  std::string::npos)
            << e.what();
    }
}

// Fine-tuning: a checkpoint saved while every layer trained loads into the same
// model with its base frozen (the frozen layer's optimizer state is left
// behind); the reverse needs resetOptimizer, and says so.
TEST(FrozenLayers, ACheckpointOfTheTrainedModelLoadsWithItsBaseFrozen) {
    const Data d;
    Sequential a(test::context(), 6);
    build(a, false);
    a.fit(d.x, d.y, twoEpochs());
    const std::vector<uint8_t> full = a.saveCheckpoint();
    Sequential b(test::context(), 6);
    build(b, true);
    b.loadCheckpoint(full, "full.safetensors");
    EXPECT_EQ(b.step(), 12);
    EXPECT_EQ(b.weight("dense_0", "kernel").data, a.weight("dense_0", "kernel").data);
    const std::vector<uint8_t> frozen = b.saveCheckpoint();
    Sequential c(test::context(), 6);
    build(c, false);
    try {
        c.loadCheckpoint(frozen, "frozen.safetensors");
        ADD_FAILURE() << "loaded optimizer state for some parameters only";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("some layers frozen? load it with resetOptimizer"), std::string::npos)
            << e.what();
    }
    c.loadCheckpoint(frozen, "frozen.safetensors", true);
    EXPECT_EQ(c.weight("dense_0", "kernel").data, a.weight("dense_0", "kernel").data);
}

// The model config reads and writes the field (and the TF.js files, through the
// same table: tests/layer_descriptors_test.cpp round-trips every field).
TEST(FrozenLayers, TheModelConfigCarriesTrainable) {
    const ModelConfig c = modelConfigFromJson(nlohmann::json::parse(R"({"input": 6, "layers": [
        {"type": "dense", "units": 4, "trainable": false}, {"type": "dense", "units": 3}]})"),
                                              "frozen.json");
    ASSERT_EQ(c.layers.size(), 2u);
    EXPECT_FALSE(layerTrainable(c.layers[0]));
    EXPECT_TRUE(layerTrainable(c.layers[1]));
    EXPECT_EQ(layerToJson(c.layers[0]).at("trainable"), false);
    EXPECT_FALSE(layerToJson(c.layers[1]).contains("trainable")) << "the default is not written";
    try {
        modelConfigFromJson(nlohmann::json::parse(R"({"input": 6, "layers": [{"type": "dense", "units": 4,
            "trainable": "no"}]})"),
                            "bad.json");
        ADD_FAILURE() << "accepted a string";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("expected true or false"), std::string::npos) << e.what();
    }
}

}  // namespace frozen_layers_test
}  // namespace
