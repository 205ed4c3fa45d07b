// Shared layers (issue 38): one layer applied to several values with one set
// of weights (gltrain::Shared, a model file's "shares"), as tfjs-layers' layer
// object called twice. A siamese model trains as the same SGD steps composed
// in double — the shared kernel's gradient the sum over its two uses — on
// both engines; its checkpoint holds the shared weights once and round-trips;
// freezing any call freezes the layer; what cannot be shared is refused,
// naming the layer.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/safetensors.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace shared_layers_test {

using namespace gltrain;
using gltrain::test::maxRelDiff;
using gltrain::test::message;
using gltrain::test::randomMatrix;
using MatD = HostMatrixT<double>;

// Columns [c0, c0 + n) of m.
MatD columns(const MatD& m, int c0, int n) {
    MatD out(m.rows, n);
    for (int r = 0; r < m.rows; ++r)
        for (int c = 0; c < n; ++c) out(r, c) = m(r, c0 + c);
    return out;
}
// [a, b] side by side, row by row.
MatD sideBySide(const MatD& a, const MatD& b) {
    MatD out(a.rows, a.cols + b.cols);
    for (int r = 0; r < a.rows; ++r) {
        for (int c = 0; c < a.cols; ++c) out(r, c) = a(r, c);
        for (int c = 0; c < b.cols; ++c) out(r, a.cols + c) = b(r, c);
    }
    return out;
}

// Siamese towers: one Dense (5 -> 4, tanh) applied to inputs a and b, their
// outputs side by side into a Dense of 3 classes.
struct Siamese {
    Shared<Dense> tower{Dense{4, Activation::Tanh}};
    SymbolicTensor a = Input(5, "a"), b = Input(5, "b");
    SymbolicTensor classes = Dense{3}(Concatenate{}({tower(a), tower(b)}));
    std::unique_ptr<Model> model(Context& ctx) const {
        return std::make_unique<Model>(ctx, std::vector{a, b}, std::vector{classes});
    }
};
const HostMatrix kA = randomMatrix(12, 5, 61), kB = randomMatrix(12, 5, 62);
std::vector<int> labels() {
    std::vector<int> y(12);
    for (int i = 0; i < 12; ++i) y[size_t(i)] = (i * 5) % 3;
    return y;
}

// 5 SGD steps of the whole batch; fp32 against double: the loss to 1e-4
// relative at every step, the weights to 1e-4 of their largest value.
void expectSiameseMatchesTheReference(Context& ctx) {
    const Siamese s;
    auto m = s.model(ctx);
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.2f;
    m->compile(c);
    // The tower's second call is a layer of its own, with no weights of its own.
    ASSERT_EQ(m->layerCount(), 4u);
    EXPECT_EQ(m->layerName(1), "dense_0@1");
    EXPECT_EQ(m->shares(1), 0);
    EXPECT_EQ(m->shares(0), -1);
    const std::vector<Model::LayerSummary> summary = m->summary();
    EXPECT_EQ(summary[0].parameters, 5 * 4 + 4);
    EXPECT_EQ(summary[1].parameters, 0);
    EXPECT_EQ(summary[1].shares, "dense_0");
    EXPECT_EQ(summary[1].inbound, (std::vector<std::string>{"b"}));
    EXPECT_NE(message([&] { m->weight("dense_0@1", "kernel"); }).find("has no weights"), std::string::npos);
    MatD W = m->weight("dense_0", "kernel").cast<double>(), bias = m->weight("dense_0", "bias").cast<double>();
    MatD Wc = m->weight("dense_3", "kernel").cast<double>(), bc = m->weight("dense_3", "bias").cast<double>();

    std::vector<float> losses;
    FitOptions f;
    f.epochs = 5;
    f.batchSize = 12;
    f.shuffle = false;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& i) { losses.push_back(i.loss); };
    m->fit({kA, kB}, {labels()}, f, cb);
    ASSERT_EQ(losses.size(), 5u);

    const MatD A = kA.cast<double>(), B = kB.cast<double>();
    for (int step = 1; step <= 5; ++step) {
        const MatD za = ref::densePreactivation(A, W, bias), zb = ref::densePreactivation(B, W, bias);
        const MatD cat = sideBySide(ref::activate(za, Activation::Tanh), ref::activate(zb, Activation::Tanh));
        const MatD zc = ref::densePreactivation(cat, Wc, bc);
        const auto ce = ref::softmaxCrossEntropy(zc, labels());
        EXPECT_NEAR(losses[size_t(step - 1)], ce.mean(), 1e-4 * std::max(1.0, ce.mean())) << "step " << step;
        const auto gc = ref::denseBackward(cat, Wc, zc, ce.grad, Activation::Linear);
        const auto ga = ref::denseBackward(A, W, za, columns(gc.dX, 0, 4), Activation::Tanh);
        const auto gb = ref::denseBackward(B, W, zb, columns(gc.dX, 4, 4), Activation::Tanh);
        // The shared kernel's gradient: the sum over its two uses.
        W = test::sgd(W, ref::add(ga.dW, gb.dW), 0.2);
        bias = test::sgd(bias, ref::add(ga.db, gb.db), 0.2);
        Wc = test::sgd(Wc, gc.dW, 0.2);
        bc = test::sgd(bc, gc.db, 0.2);
    }
    EXPECT_LE(maxRelDiff(m->weight("dense_0", "kernel"), W), 1e-4);
    EXPECT_LE(maxRelDiff(m->weight("dense_0", "bias"), bias), 1e-4);
    EXPECT_LE(maxRelDiff(m->weight("dense_3", "kernel"), Wc), 1e-4);
    EXPECT_LE(maxRelDiff(m->weight("dense_3", "bias"), bc), 1e-4);
}

TEST(SharedLayers, SiameseTowersTrainAsTheReferenceOnTheGpu) { expectSiameseMatchesTheReference(test::context()); }
TEST(SharedLayers, SiameseTowersTrainAsTheReferenceOnTheCpu) { expectSiameseMatchesTheReference(test::cpuContext()); }

// The checkpoint holds the shared weights once (with their optimizer slots)
// and loads into a fresh model: the same predictions, on both engines.
TEST(SharedLayers, ACheckpointHoldsTheSharedWeightsOnce) {
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        const Siamese s;
        auto a = s.model(*ctx), b = s.model(*ctx);
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::Adam;
        a->compile(c);
        c.seed = 9;
        b->compile(c);
        FitOptions f;
        f.epochs = 2;
        f.batchSize = 6;
        a->fit({kA, kB}, {labels()}, f);
        const std::vector<uint8_t> bytes = a->saveCheckpoint();
        const SafetensorsFile file = parseSafetensors(bytes, "siamese");
        std::vector<std::string> names = file.names;
        std::sort(names.begin(), names.end());
        EXPECT_EQ(names, (std::vector<std::string>{"dense_0/bias", "dense_0/bias/slot0", "dense_0/bias/slot1",
                                                   "dense_0/kernel", "dense_0/kernel/slot0", "dense_0/kernel/slot1",
                                                   "dense_3/bias", "dense_3/bias/slot0", "dense_3/bias/slot1",
                                                   "dense_3/kernel", "dense_3/kernel/slot0", "dense_3/kernel/slot1"}));
        b->loadCheckpoint(bytes);
        EXPECT_EQ(b->step(), 4);
        const std::vector<HostMatrix> pa = a->predict({kA, kB}), pb = b->predict({kA, kB});
        EXPECT_EQ(test::relativeError(pa[0], pb[0]), 0.0);
        EXPECT_EQ(test::relativeError(b->weight("dense_0", "kernel"), a->weight("dense_0", "kernel")), 0.0);
    }
}

// Freezing any call of a shared layer freezes the layer: its weights stay as
// they were in every use while the head trains on; a summary says so for each call.
TEST(SharedLayers, FreezingACallFreezesEveryUse) {
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        const Siamese s;
        auto m = s.model(*ctx);
        m->compile({});
        m->setTrainable("dense_0@1", false);
        EXPECT_FALSE(m->summary()[0].trainable);
        EXPECT_FALSE(m->summary()[1].trainable);
        const HostMatrix tower = m->weight("dense_0", "kernel"), head = m->weight("dense_3", "kernel");
        FitOptions f;
        f.epochs = 2;
        f.batchSize = 6;
        m->fit({kA, kB}, {labels()}, f);
        EXPECT_EQ(test::relativeError(m->weight("dense_0", "kernel"), tower), 0.0);
        EXPECT_GT(test::relativeError(m->weight("dense_3", "kernel"), head), 0.0);
        const SafetensorsFile file = parseSafetensors(m->saveCheckpoint(), "frozen");
        EXPECT_FALSE(file.contains("dense_0/kernel/slot0"));
        EXPECT_TRUE(file.contains("dense_3/kernel/slot0"));
    }
}

// A Shared applied once is a layer like any other; a merge layer can be shared.
TEST(SharedLayers, OneCallIsAPlainLayerAndMergesCanBeShared) {
    Shared<Dense> once{Dense{3}};
    const SymbolicTensor x = Input(4);
    Model plain(test::cpuContext(), x, once(x));
    plain.compile({});
    EXPECT_EQ(plain.shares(0), -1);
    EXPECT_TRUE(plain.isStack());

    Shared<Add> add{Add{}};
    const SymbolicTensor a = Input(4, "a"), b = Input(4, "b");
    const SymbolicTensor h = add({a, b});
    Model merged(test::cpuContext(), {a, b}, {Dense{2}(add({h, b}))});
    merged.compile({});
    EXPECT_EQ(merged.layerName(1), "add_0@1");
    EXPECT_FALSE(merged.isStack());
    const HostMatrix x1 = randomMatrix(3, 4, 1), x2 = randomMatrix(3, 4, 2);
    EXPECT_EQ(merged.predict({x1, x2})[0].cols, 2);
}

// A model file says a layer's later call with "shares"; errors name the layer and the key.
TEST(SharedLayers, AModelFileSharesALayerByName) {
    const std::string file = R"({
      "inputs": [{"name": "a", "shape": 5}, {"name": "b", "shape": 5}],
      "layers": [
        {"type": "dense", "units": 4, "activation": "tanh", "name": "tower", "inputs": ["a"]},
        {"shares": "tower", "inputs": ["b"]},
        {"type": "concatenate", "inputs": ["tower", "tower@1"]},
        {"type": "dense", "units": 3}
      ],
      "outputs": ["dense_3"]
    })";
    const ModelConfig config = parseModelConfig(file, "siamese.json");
    EXPECT_EQ(config.shares, (std::vector<int>{-1, 0, -1, -1}));
    auto m = buildModel(test::cpuContext(), config);
    EXPECT_EQ(m->layerName(1), "tower@1");
    EXPECT_EQ(m->summary()[1].shares, "tower");
    EXPECT_EQ(m->summary()[2].inbound, (std::vector<std::string>{"tower", "tower@1"}));

    auto error = [&](const std::string& from, const std::string& to) {
        std::string text = file;
        text.replace(text.find(from), from.size(), to);
        return message([&] { buildModel(test::cpuContext(), parseModelConfig(text, "siamese.json")); });
    };
    EXPECT_EQ(error(R"("shares": "tower")", R"("shares": "towr")"),
              "siamese.json: layers[1].shares: expected the name of a layer before this one, got the string \"towr\"");
    EXPECT_EQ(error(R"("shares": "tower")", R"("shares": "tower", "units": 5)"),
              "siamese.json: layers[1].units: a shared layer's call has only \"shares\" and \"inputs\" (its options "
              "are the layer's)");
    EXPECT_EQ(error(R"("inputs": ["tower", "tower@1"]})", R"("inputs": ["tower", "tower@1"]}, {"shares": "tower@1"})"),
              "siamese.json: layers[3].shares: 'tower@1' is a call of a shared layer: name the layer itself");
    // Its weights are made for what the first call reads.
    EXPECT_EQ(error(R"({"name": "b", "shape": 5})", R"({"name": "b", "shape": 6})"),
              "siamese.json: compile: layer tower@1 (a call of shared layer tower): receives [1, 1, 6] but its "
              "weights (kernel) were made for [1, 1, 5], what tower receives");
}

// BatchNormalization keeps moving statistics of what it reads: it is not shared.
TEST(SharedLayers, ALayerWithStatisticsIsNotShared) {
    Shared<BatchNormalization> norm{BatchNormalization{}};
    const SymbolicTensor a = Input(4, "a"), b = Input(4, "b");
    Model m(test::cpuContext(), {a, b}, {Dense{2}(Add{}({norm(a), norm(b)}))});
    EXPECT_EQ(message([&] { m.compile({}); }),
              "compile: layer batch_normalization_0@1 (a call of shared layer batch_normalization_0): a "
              "batchnormalization keeps statistics of what it reads (moving_mean), which a layer applied twice "
              "cannot share; give each call its own layer");
}

}  // namespace shared_layers_test
}  // namespace
