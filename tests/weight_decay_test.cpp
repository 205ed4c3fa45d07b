// Which parameters weight decay applies to (OptimizerConfig::decays): by
// default the kernels only, not biases, normalizations' gamma and beta, or
// embedding tables; decayInclude / decayExclude change that per layer or
// parameter. On both engines: with every target masked the sequence loss's
// gradient is zero, so after AdamW steps a parameter left out keeps its value
// bit for bit while a kernel decays by exactly lr * wd * w a step; a small
// dense chain (the GPU's one-pass-per-parameter step) and SGD's L2 decay, one
// step against the same step without decay. Also the model file's keys, their
// errors, and issue 39's reference optimizer and schedule in a model file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace weight_decay_test {

using namespace gltrain;
using gltrain::test::message;
using gltrain::test::randomMatrix;

using gltrain::test::engineName;
using gltrain::test::engines;

// The parameters of Embedding 7x4 -> Dense 5 tanh -> LayerNormalization -> Dense 7 per step, by layer.
struct Param {
    const char* layer;
    const char* name;
};
const std::vector<Param> kParams = {
    {"embedding_0", "embeddings"},     {"dense_1", "kernel"}, {"dense_1", "bias"}, {"layer_normalization_2", "gamma"},
    {"layer_normalization_2", "beta"}, {"dense_3", "kernel"}, {"dense_3", "bias"}};

// `steps` AdamW steps with every target masked (a zero gradient): each parameter
// either stays as it was or is multiplied by 1 - lr * wd a step, in float, as it says.
void expectOnlyTheDecaySetDecays(const OptimizerConfig& optimizer, const std::vector<std::string>& decaying) {
    const int T = 3, V = 7, N = 4, steps = 3;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, T);
        m.add(Embedding{V, 4}).add(Dense{5, Activation::Tanh}).add(LayerNormalization{}).add(Dense{V});
        CompileOptions c;
        c.loss = LossKind::SequenceCrossEntropy;
        c.optimizer = optimizer;
        m.compile(c);
        std::vector<HostMatrix> before;
        for (size_t i = 0; i < kParams.size(); ++i) {  // no parameter 0, and gamma and beta away from 1 and 0
            const Param& p = kParams[i];
            HostMatrix v = m.weight(p.layer, p.name);
            v = randomMatrix(v.rows, v.cols, 70 + unsigned(i), 0.5f, 1.5f);
            m.setWeight(p.layer, p.name, v);
            before.push_back(v);
        }
        HostMatrix ids(N, T, 2.0f);
        FitOptions f;
        f.batchSize = N;
        f.epochs = steps;
        m.fit(ids, Targets(HostMatrix(N, T, -1.0f)), f);
        ASSERT_EQ(m.step(), steps);
        for (size_t i = 0; i < kParams.size(); ++i) {
            const Param& p = kParams[i];
            const std::string key = std::string(p.layer) + "/" + p.name;
            SCOPED_TRACE(key);
            const HostMatrix after = m.weight(p.layer, p.name);
            const bool decays = std::find(decaying.begin(), decaying.end(), key) != decaying.end();
            HostMatrix want = before[i];
            if (decays)
                for (int s = 0; s < steps; ++s)
                    for (float& w : want.data) w = w - optimizer.lr * optimizer.weightDecay * w;
            if (!decays) {
                EXPECT_EQ(after.data, before[i].data);
                continue;
            }
            for (size_t k = 0; k < want.data.size(); ++k)
                ASSERT_NEAR(after.data[k], want.data[k], 1e-6f * std::fabs(want.data[k])) << "element " << k;
        }
    }
}

OptimizerConfig adamW() {
    OptimizerConfig o;
    o.kind = OptimizerKind::AdamW;
    o.lr = 0.1f;
    o.weightDecay = 0.25f;
    return o;
}

TEST(WeightDecay, KernelsOnlyByDefault) { expectOnlyTheDecaySetDecays(adamW(), {"dense_1/kernel", "dense_3/kernel"}); }

TEST(WeightDecay, LayersAndParametersOptInAndOut) {
    OptimizerConfig o = adamW();
    o.decayInclude = {"embedding_0", "layer_normalization_*/gamma"};
    o.decayExclude = {"dense_3"};
    expectOnlyTheDecaySetDecays(o, {"embedding_0/embeddings", "dense_1/kernel", "layer_normalization_2/gamma"});
    o.decayInclude = {"*"};  // everything but what is excluded
    o.decayExclude = {"*/bias"};
    expectOnlyTheDecaySetDecays(o, {"embedding_0/embeddings", "dense_1/kernel", "layer_normalization_2/gamma",
                                    "layer_normalization_2/beta", "dense_3/kernel"});
}

// A small dense chain (on the GPU one pass per parameter, ops/mlp.hpp) and SGD's L2 decay: one
// step with decay against the same step without: the biases agree bit for bit, the kernels
// differ by lr * wd * w (the first step's gradients are the same).
TEST(WeightDecay, SmallDenseChainAndSgdDecayTheKernelsOnly) {
    const HostMatrix x = randomMatrix(6, 3, 80), y = randomMatrix(6, 2, 81);
    for (OptimizerKind kind : {OptimizerKind::SGD, OptimizerKind::AdamW, OptimizerKind::Momentum}) {
        for (Context* ctx : engines()) {
            SCOPED_TRACE(std::string(optimizerName(kind)) + " on " + engineName(ctx));
            auto stepped = [&](float wd) {
                Sequential m(*ctx, 3);
                m.add(Dense{4, Activation::Tanh}).add(Dense{2});
                CompileOptions c;
                c.loss = LossKind::MeanSquaredError;
                c.optimizer.kind = kind;
                c.optimizer.lr = 0.1f;
                c.optimizer.weightDecay = wd;
                m.compile(c);
                FitOptions f;
                f.batchSize = 6;
                m.fit(x, Targets(y), f);
                return std::vector<HostMatrix>{m.weight("dense_0", "kernel"), m.weight("dense_0", "bias"),
                                               m.weight("dense_1", "kernel"), m.weight("dense_1", "bias")};
            };
            Sequential initial(*ctx, 3);
            initial.add(Dense{4, Activation::Tanh}).add(Dense{2});
            initial.compile({});
            const std::vector<HostMatrix> plain = stepped(0.0f), decayed = stepped(0.5f);
            EXPECT_EQ(decayed[1].data, plain[1].data);
            EXPECT_EQ(decayed[3].data, plain[3].data);
            for (int k : {0, 2}) {
                const HostMatrix w0 = initial.weight(k ? "dense_1" : "dense_0", "kernel");
                for (size_t i = 0; i < w0.data.size(); ++i)
                    EXPECT_NEAR(plain[size_t(k)].data[i] - decayed[size_t(k)].data[i], 0.1f * 0.5f * w0.data[i], 1e-6f)
                        << "kernel " << k << " element " << i;
            }
        }
    }
}

TEST(WeightDecay, ModelFilesAndErrors) {
    const ModelConfig config = parseModelConfig(R"({
      "input": [6], "layers": [{"type": "embedding", "inputDim": 9, "outputDim": 4}, {"type": "dense", "units": 9}],
      "compile": {"loss": "sequence_softmax_cross_entropy",
                  "optimizer": {"type": "adamw", "lr": 3e-3, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8,
                                "weightDecay": 0.1, "decayInclude": ["embedding_0"], "decayExclude": ["dense_1/kernel"]},
                  "schedule": {"type": "cosine", "warmupSteps": 100, "totalSteps": 2000, "minLr": 3e-4},
                  "clipNorm": 1.0},
      "fit": {"batchSize": 32, "steps": 2000}})",
                                                "reference.json");
    const CompileOptions& c = config.compile;
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::AdamW);
    EXPECT_FLOAT_EQ(c.optimizer.beta2, 0.95f);
    EXPECT_FLOAT_EQ(c.optimizer.eps, 1e-8f);
    EXPECT_FLOAT_EQ(c.optimizer.weightDecay, 0.1f);
    EXPECT_EQ(c.optimizer.decayInclude, std::vector<std::string>{"embedding_0"});
    EXPECT_EQ(c.optimizer.decayExclude, std::vector<std::string>{"dense_1/kernel"});
    EXPECT_FLOAT_EQ(c.clipNorm, 1.0f);
    EXPECT_EQ(config.fit.steps, 2000);
    EXPECT_EQ(config.fit.batchSize, 32);
    // 100 warm-up steps to 3e-3, then a cosine to 3e-4 at step 2000.
    EXPECT_FLOAT_EQ(c.schedule.at(c.optimizer.lr, 0), 3e-5f);
    EXPECT_FLOAT_EQ(c.schedule.at(c.optimizer.lr, 99), 3e-3f);
    EXPECT_NEAR(c.schedule.at(c.optimizer.lr, 1050), 1.65e-3f, 1e-7f);
    EXPECT_FLOAT_EQ(c.schedule.at(c.optimizer.lr, 2000), 3e-4f);
    EXPECT_TRUE(c.optimizer.decays("embedding_0", "embeddings"));
    EXPECT_FALSE(c.optimizer.decays("dense_1", "kernel"));
    EXPECT_FALSE(c.optimizer.decays("dense_1", "bias"));

    EXPECT_NE(
        message([] {
            parseModelConfig(R"({"input": 2, "layers": [{"type": "dense", "units": 1}],
                    "compile": {"optimizer": {"type": "adamw", "decayInclude": "dense_0"}}})",
                             "m.json");
        }).find("m.json: compile.optimizer.decayInclude: expected an array of strings, got the string \"dense_0\""),
        std::string::npos);
    EXPECT_NE(message([] {
                  parseModelConfig(R"({"input": 2, "layers": [{"type": "dense", "units": 1}],
                    "compile": {"optimizer": {"type": "adamw", "decayExclude": ["dense_0", ""]}}})",
                                   "m.json");
              }).find("compile.optimizer.decayExclude[1]: expected a non-empty string"),
              std::string::npos);
    Sequential m(test::cpuContext(), 3);
    m.add(Dense{2});
    CompileOptions bad;
    bad.optimizer.decayExclude = {"dense_9"};
    EXPECT_NE(message([&] { m.compile(bad); })
                  .find("compile: optimizer.decayExclude 'dense_9' names no parameter of the model (a layer's name, "
                        "or a parameter's: dense_0/kernel"),
              std::string::npos)
        << message([&] { m.compile(bad); });
    bad.optimizer.decayExclude = {"dense_0"};
    bad.optimizer.decayInclude = {"dense_0"};
    EXPECT_NE(message([&] { m.compile(bad); }).find("'dense_0' is in both decayInclude and decayExclude"),
              std::string::npos)
        << message([&] { m.compile(bad); });
}

}  // namespace weight_decay_test
}  // namespace
