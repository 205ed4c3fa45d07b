// Sequence models: Dense at each step of a sequence [steps, features] (a 1x1
// convolution), GlobalAveragePooling1D, Embedding and LayerNormalization, each
// trained one SGD step on the GPU and on the CPU backend against the same
// step composed from the reference formulas in double; an embedding table
// paged past MAX_TEXTURE_SIZE; the gradient's bits the same on every run;
// ids outside the table; shapes, errors and TF.js configs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gltrain/ops/embedding.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/reference/sequence.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/tfjs_layers.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_sequence_test {

using namespace gltrain;
using gltrain::test::asRows;
using gltrain::test::MatD;
using gltrain::test::asRows;
using gltrain::test::maxRelDiff;
using gltrain::test::message;
using gltrain::test::randomMatrix;
using gltrain::test::sgd;

using gltrain::test::engineName;
using gltrain::test::engines;

// Each example's mean over its `steps` rows: N*T rows of F -> N rows of F.
MatD meanOverSteps(const MatD& m, int steps) {
    MatD out(m.rows / steps, m.cols);
    for (int r = 0; r < m.rows; ++r)
        for (int c = 0; c < m.cols; ++c) out(r / steps, c) += m(r, c) / steps;
    return out;
}
// The gradient of meanOverSteps: each example's row over its steps, divided by them.
MatD spreadOverSteps(const MatD& d, int steps) {
    MatD out(d.rows * steps, d.cols);
    for (int r = 0; r < out.rows; ++r)
        for (int c = 0; c < d.cols; ++c) out(r, c) = d(r / steps, c) / steps;
    return out;
}
// Token ids: N rows of T integers in [0, vocab) as floats.
HostMatrix tokenIds(int rows, int steps, int vocab, unsigned seed) {
    HostMatrix ids = randomMatrix(rows, steps, seed, 0.0f, float(vocab));
    for (float& v : ids.data) v = std::min(std::floor(v), float(vocab - 1));
    return ids;
}

// [5 steps, 3 features] -> Dense 4 tanh at each step -> GlobalAveragePooling1D -> Dense 3,
// softmax cross-entropy: the per-step product is the reference's on N*T rows of F.
TEST(ModelSequence, DenseOnASequenceAndGlobalAveragePooling1DStepMatchesTheReference) {
    const int N = 5, T = 5, F = 3;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, Shape3{1, T, F});
        m.add(Dense{4, Activation::Tanh}).add(GlobalAveragePooling1D{}).add(Dense{3});
        test::compileSgd(m, 0.1f);
        ASSERT_EQ(m.outputShape(0), (Shape3{1, T, 4}));
        ASSERT_EQ(m.outputShape(1), (Shape3{1, 1, 4}));
        EXPECT_EQ(m.layerName(1), "global_average_pooling1d_1");
        HostMatrix x = randomMatrix(N, T * F, 91), w0 = randomMatrix(F, 4, 92), b0 = randomMatrix(1, 4, 93),
                   w1 = randomMatrix(4, 3, 94), b1 = randomMatrix(1, 3, 95);
        m.setWeight("dense_0", "kernel", w0);
        m.setWeight("dense_0", "bias", b0);
        m.setWeight("dense_2", "kernel", w1);
        m.setWeight("dense_2", "bias", b1);
        test::fitOneBatch(m, x);
        const MatD X = asRows(x.cast<double>(), F), W0 = w0.cast<double>(), W1 = w1.cast<double>();
        const MatD Z0 = ref::addBias(ref::matmul(X, W0), b0.cast<double>()), A0 = ref::activate(Z0, Activation::Tanh);
        const MatD P = meanOverSteps(A0, T);
        const MatD dL =
            ref::softmaxCrossEntropy(ref::addBias(ref::matmul(P, W1), b1.cast<double>()), test::kStepLabels).grad;
        const MatD dZ0 = ref::activationGrad(spreadOverSteps(ref::matmulNT(dL, W1), T), Z0, Activation::Tanh);
        EXPECT_LE(maxRelDiff(m.weight("dense_2", "kernel"), sgd(W1, ref::matmulTN(P, dL), 0.1)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("dense_0", "kernel"), sgd(W0, ref::matmulTN(X, dZ0), 0.1)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("dense_0", "bias"), sgd(b0.cast<double>(), ref::channelSum(dZ0, 4), 0.1)), 1e-4);
    }
}

// Embedding 11 x 6 on [4] token ids -> Dense 5 tanh -> LayerNormalization -> Dense 11 at each
// step -> Flatten, mean squared error: one SGD step of every variable against the reference.
TEST(ModelSequence, EmbeddingLayerNormalizationModelStepMatchesTheReference) {
    const int N = 3, T = 4, V = 11, D = 6, H = 5;
    const double lr = 0.1;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, T);
        LayerNormalization norm;
        norm.epsilon = 0.01f;
        m.add(Embedding{V, D}).add(Dense{H, Activation::Tanh}).add(norm).add(Dense{V}).add(Flatten{});
        CompileOptions c;
        c.loss = LossKind::MeanSquaredError;
        c.optimizer.kind = OptimizerKind::SGD;
        c.optimizer.lr = float(lr);
        m.compile(c);
        ASSERT_EQ(m.outputShape(0), (Shape3{1, T, D}));
        ASSERT_EQ(m.outputShape(3), (Shape3{1, T, V}));
        EXPECT_EQ(m.layerName(2), "layer_normalization_2");
        const HostMatrix ids = tokenIds(N, T, V, 100), y = randomMatrix(N, T * V, 101);
        const HostMatrix e = randomMatrix(V, D, 102), w1 = randomMatrix(D, H, 103), b1 = randomMatrix(1, H, 104),
                         g = randomMatrix(1, H, 105, 0.5f, 1.5f), be = randomMatrix(1, H, 106),
                         w2 = randomMatrix(H, V, 107), b2 = randomMatrix(1, V, 108);
        m.setWeight("embedding_0", "embeddings", e);
        m.setWeight("dense_1", "kernel", w1);
        m.setWeight("dense_1", "bias", b1);
        m.setWeight("layer_normalization_2", "gamma", g);
        m.setWeight("layer_normalization_2", "beta", be);
        m.setWeight("dense_3", "kernel", w2);
        m.setWeight("dense_3", "bias", b2);
        FitOptions f;
        f.batchSize = N;
        f.shuffle = false;
        m.fit(ids, Targets(y), f);

        const MatD Ids = ids.cast<double>(), E = e.cast<double>(), W1 = w1.cast<double>(), G = g.cast<double>(),
                   W2 = w2.cast<double>();
        const MatD A0 = asRows(ref::embeddingLookup(Ids, E), D);
        const MatD Z1 = ref::addBias(ref::matmul(A0, W1), b1.cast<double>()), A1 = ref::activate(Z1, Activation::Tanh);
        const MatD L = ref::layerNorm(A1, G, be.cast<double>(), 0.01);
        const MatD Y = ref::addBias(ref::matmul(L, W2), b2.cast<double>());
        const MatD dY = asRows(ref::mse(asRows(Y, T * V), y.cast<double>()).grad, V);
        const MatD dL = ref::matmulNT(dY, W2);
        const MatD dZ1 = ref::activationGrad(ref::layerNormGradInput(A1, G, dL, 0.01), Z1, Activation::Tanh);
        const MatD dA0 = asRows(ref::matmulNT(dZ1, W1), T * D);
        MatD dGamma(1, H);
        const MatD xhat = ref::standardize(A1, H, 0.01);
        for (size_t i = 0; i < dL.data.size(); ++i) dGamma.data[i % size_t(H)] += dL.data[i] * xhat.data[i];
        EXPECT_LE(maxRelDiff(m.weight("dense_3", "kernel"), sgd(W2, ref::matmulTN(L, dY), lr)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("layer_normalization_2", "gamma"), sgd(G, dGamma, lr)), 1e-4);
        EXPECT_LE(
            maxRelDiff(m.weight("layer_normalization_2", "beta"), sgd(be.cast<double>(), ref::channelSum(dL, H), lr)),
            1e-4);
        EXPECT_LE(maxRelDiff(m.weight("dense_1", "kernel"), sgd(W1, ref::matmulTN(A0, dZ1), lr)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("embedding_0", "embeddings"), sgd(E, ref::embeddingGrad(Ids, dA0, V), lr)), 1e-4);
    }
}

// The same model trained with the sequence loss (a class id per step; -1 masks a step): one SGD
// step against the reference, its loss the mean over the counted steps; bad class ids refused.
TEST(ModelSequence, SequenceCrossEntropyStepMatchesTheReference) {
    const int N = 3, T = 5, V = 7, D = 4, H = 6;
    const double lr = 0.2;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, T);
        m.add(Embedding{V, D}).add(Dense{H, Activation::Tanh}).add(LayerNormalization{}).add(Dense{V});
        CompileOptions c;
        c.loss = LossKind::SequenceCrossEntropy;
        c.optimizer.kind = OptimizerKind::SGD;
        c.optimizer.lr = float(lr);
        m.compile(c);
        const HostMatrix ids = tokenIds(N, T, V, 130), e = randomMatrix(V, D, 131), w1 = randomMatrix(D, H, 132),
                         w2 = randomMatrix(H, V, 133), b2 = randomMatrix(1, V, 134);
        HostMatrix y = tokenIds(N, T, V, 135);
        y(0, 1) = -1.0f, y(2, 4) = -1.0f;  // masked steps
        m.setWeight("embedding_0", "embeddings", e);
        m.setWeight("dense_1", "kernel", w1);
        m.setWeight("dense_3", "kernel", w2);
        m.setWeight("dense_3", "bias", b2);
        FitOptions f;
        f.batchSize = N;
        f.shuffle = false;
        const std::vector<EpochInfo> h = m.fit(ids, Targets(y), f);

        const MatD Ids = ids.cast<double>(), E = e.cast<double>(), W1 = w1.cast<double>(), W2 = w2.cast<double>();
        const MatD A0 = asRows(ref::embeddingLookup(Ids, E), D);
        const MatD Z1 = ref::matmul(A0, W1), A1 = ref::activate(Z1, Activation::Tanh);
        const MatD G(1, H, 1.0), B(1, H, 0.0);
        const MatD L = ref::layerNorm(A1, G, B, 1e-3);
        const MatD Y = ref::addBias(ref::matmul(L, W2), b2.cast<double>());
        const ref::SequenceLoss<double> loss = ref::sequenceCrossEntropy(asRows(Y, T * V), y.cast<double>());
        const MatD dY = asRows(loss.grad, V);
        const MatD dZ1 =
            ref::activationGrad(ref::layerNormGradInput(A1, G, ref::matmulNT(dY, W2), 1e-3), Z1, Activation::Tanh);
        EXPECT_NEAR(h.at(0).loss, loss.mean, 1e-5 * loss.mean);
        EXPECT_LE(maxRelDiff(m.weight("dense_3", "kernel"), sgd(W2, ref::matmulTN(L, dY), lr)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("dense_1", "kernel"), sgd(W1, ref::matmulTN(A0, dZ1), lr)), 1e-4);
        EXPECT_LE(maxRelDiff(m.weight("embedding_0", "embeddings"),
                             sgd(E, ref::embeddingGrad(Ids, asRows(ref::matmulNT(dZ1, W1), T * D), V), lr)),
                  1e-4);
        // A class id past the classes, or not an integer: refused before the step, naming where.
        y(1, 2) = float(V);
        EXPECT_NE(message([&] {
                      m.fit(ids, Targets(y), f);
                  }).find("the class id 7.000000 at row 1, step 2 is not an integer below 7"),
                  std::string::npos)
            << message([&] { m.fit(ids, Targets(y), f); });
        EXPECT_NE(message([&] {
                      m.fit(ids, Targets(HostMatrix(N, T * V)), f);
                  }).find("y has 35 columns, the model's output has 5 steps (a class id per step)"),
                  std::string::npos);
        CompileOptions withPrecision = c;  // a metric that reads values, not a class id per step
        withPrecision.metrics = {MetricSpec(MetricKind::Precision)};
        EXPECT_NE(message([&] { m.compile(withPrecision); })
                      .find("metric precision: an output trained with sequence_softmax_cross_entropy (a class id per "
                            "step) has accuracy per token"),
                  std::string::npos)
            << message([&] { m.compile(withPrecision); });
    }
}

// Accuracy per token (accuracy, sparse_categorical_accuracy) and the loss as a metric on a
// sequence output, by evaluate and by a fit's epoch, against a count in double from
// predict(): the steps whose largest logit is at their class id, and their mean loss, over
// the steps not masked.
TEST(ModelSequence, AccuracyPerTokenCountsTheUnmaskedSteps) {
    const int N = 6, T = 4, V = 5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, T);
        m.add(Embedding{V, 3}).add(Dense{V});
        CompileOptions c;
        c.loss = LossKind::SequenceCrossEntropy;
        c.optimizer.kind = OptimizerKind::SGD;
        c.metrics = {MetricSpec{}, MetricKind::SparseCategoricalAccuracy,
                     MetricSpec::ofLoss(LossKind::SequenceCrossEntropy, "xent")};
        m.compile(c);
        m.setWeight("dense_1", "kernel", randomMatrix(3, V, 141, -2.0f, 2.0f));
        const HostMatrix ids = tokenIds(N, T, V, 142);
        HostMatrix y = tokenIds(N, T, V, 143);
        y(0, 0) = y(1, 3) = y(4, 1) = y(4, 2) = -1.0f;  // masked steps
        const HostMatrix p = m.predict(ids);
        double right = 0, counted = 0, nats = 0;
        for (int r = 0; r < N; ++r)
            for (int t = 0; t < T; ++t) {
                if (y(r, t) < 0) continue;
                int best = 0;
                double sum = 0;
                for (int v = 1; v < V; ++v)
                    if (p(r, t * V + v) > p(r, t * V + best)) best = v;
                for (int v = 0; v < V; ++v) sum += std::exp(double(p(r, t * V + v)) - p(r, t * V + best));
                right += best == int(y(r, t));
                nats += std::log(sum) + p(r, t * V + best) - p(r, t * V + int(y(r, t)));
                counted += 1;
            }
        const double want = right / counted, wantLoss = nats / counted;
        ASSERT_GT(right, 0.0);
        ASSERT_LT(right, counted);
        const Evaluation e = m.evaluate(ids, Targets(y));
        EXPECT_FLOAT_EQ(e.accuracy, float(want));
        EXPECT_FLOAT_EQ(e.metrics.at("sparse_categorical_accuracy"), float(want));
        EXPECT_NEAR(e.metrics.at("xent"), wantLoss, 1e-5 * wantLoss);  // per token, not the rows' mean
        FitOptions f;  // one step on all the rows: the epoch's figures are the weights' before it
        f.batchSize = N;
        f.shuffle = false;
        const std::vector<EpochInfo> h = m.fit(ids, Targets(y), f);
        EXPECT_FLOAT_EQ(h.at(0).accuracy, float(want));
        EXPECT_FLOAT_EQ(h.at(0).metrics.at("sparse_categorical_accuracy"), float(want));
        EXPECT_NEAR(h.at(0).metrics.at("xent"), wantLoss, 1e-5 * wantLoss);
        EXPECT_NEAR(h.at(0).loss, wantLoss, 1e-5 * wantLoss);  // a batch's loss is per token too
    }
}

// A table of 70000 x 64, past a MAX_TEXTURE_SIZE of 4096 rows: paged on the GPU, where an SGD
// step and the predictions agree with the CPU engine's, and the step's bits are the same twice.
TEST(ModelSequence, EmbeddingTablePagedPastTheTextureLimitTrains) {
    static Context paged([] {
        ContextOptions o;
        o.backend = BackendPreference::Gpu;
        o.maxTextureSize = 4096;
        return o;
    }());
    const int V = 70000, D = 64, T = 3, N = 4;
    HostMatrix ids = tokenIds(N, T, V, 110);
    ids.data[0] = float(V - 1), ids.data[1] = 0.0f, ids.data[4] = float(V - 1);  // the last row, twice
    const std::vector<int> labels = {0, 1, 1, 0};
    const HostMatrix table = randomMatrix(V, D, 111);
    auto trained = [&](Context& ctx) {
        ctx.makeCurrent();
        Sequential m(ctx, T);
        m.add(Embedding{V, D}).add(GlobalAveragePooling1D{}).add(Dense{2});
        test::compileSgd(m, 0.5f);
        m.setWeight("embedding_0", "embeddings", table);
        m.setWeight("dense_2", "kernel", randomMatrix(D, 2, 112));
        test::fitOneBatch(m, ids, labels);
        return std::make_pair(m.weight("embedding_0", "embeddings"), m.predict(ids));
    };
    const auto gpu = trained(paged), again = trained(paged), cpu = trained(test::cpuContext());
    EXPECT_EQ(gpu.first.data, again.first.data);  // the scatter-add sums in one order
    EXPECT_LE(maxRelDiff(gpu.first, cpu.first.cast<double>()), 1e-5);
    EXPECT_LE(maxRelDiff(gpu.second, cpu.second.cast<double>()), 1e-4);
    EXPECT_NE(gpu.first.data, table.data);  // it trained
}

// The table's gradient by both GPU kernels (ops/embedding.hpp): the one-hot product a small
// vocabulary takes and the token scan past kEmbeddingOneHotLimit, on full-size and paged
// textures, against the sum in double; ids outside the table (negative, too large, not
// integers) add to no row.
TEST(ModelSequence, EmbeddingGradientKernelsAgreeWithTheSum) {
    const int N = 5, T = 3, V = 70, D = 6;
    HostMatrix ids = tokenIds(N, T, V, 120);
    ids.data[1] = -1.0f, ids.data[4] = float(V), ids.data[7] = 2.5f, ids.data[9] = ids.data[10];
    const HostMatrix dy = randomMatrix(N, T * D, 121);
    MatD want(V, D);
    for (int r = 0; r < N; ++r)
        for (int t = 0; t < T; ++t) {
            const float id = ids.data[size_t(r * T + t)];
            if (id < 0 || id >= float(V) || id != std::floor(id)) continue;
            for (int d = 0; d < D; ++d) want.data[size_t(id) * D + size_t(d)] += dy.data[size_t(r * T * D + t * D + d)];
        }
    for (Context* ctx : {&test::context(), &test::smallContext()}) {
        ctx->makeCurrent();
        for (int64_t limit : {kEmbeddingOneHotLimit, int64_t(0)}) {
            Tensor idsT(*ctx, ids), dyT(*ctx, dy), grad(*ctx, V, D);
            PassList list;
            recordEmbeddingGrad(list, idsT, dyT, grad, limit);
            list.run();
            EXPECT_LE(maxRelDiff(grad.download(), want), 1e-6)
                << (limit ? "one-hot" : "scan") << (ctx == &test::smallContext() ? ", paged" : "");
        }
    }
}

TEST(ModelSequence, ShapesErrorsAndOutOfRangeIds) {
    Context& ctx = test::cpuContext();
    EXPECT_EQ(layerVariables(Embedding{10, 4}, Shape3{1, 1, 7})[0].shape, (std::vector<int64_t>{10, 4}));
    EXPECT_EQ(layerVariables(Dense{6}, Shape3{1, 7, 3})[0].shape, (std::vector<int64_t>{3, 6}));  // per step
    EXPECT_EQ(layerVariables(LayerNormalization{}, Shape3{1, 7, 3})[1].shape, (std::vector<int64_t>{3}));
    Sequential image(ctx, Shape3{4, 4, 2});
    image.add(Dense{3});
    EXPECT_NE(message([&] { image.compile({}); })
                  .find("layer dense_0: needs a flat input or a sequence [steps, features] but receives "
                        "[batch, 4, 4, 2] from the model input; add a Flatten layer"),
              std::string::npos)
        << message([&] { image.compile({}); });
    Sequential seq(ctx, Shape3{1, 4, 2});
    seq.add(Embedding{5, 3}).add(Flatten{}).add(Dense{2});
    EXPECT_NE(message([&] {
                  seq.compile({});
              }).find("layer embedding_0: needs a row of token ids [steps] but receives [batch, 1, 4, 2]"),
              std::string::npos)
        << message([&] { seq.compile({}); });
    Sequential flat(ctx, 4);
    flat.add(GlobalAveragePooling1D{}).add(Dense{2});
    EXPECT_NE(message([&] { flat.compile({}); }).find("layer global_average_pooling1d_0: needs a sequence"),
              std::string::npos);

    // An id past the table, or not an integer, on the CPU engine: an error naming it and where it is.
    Sequential m(ctx, 3);
    m.add(Embedding{5, 2}).add(Flatten{}).add(Dense{2});
    test::compileSgd(m, 0.1f);
    HostMatrix ids(2, 3, 1.0f);
    ids.data[4] = 5.0f;
    const std::string bad = message([&] { test::fitOneBatch(m, ids, {0, 1}); });
    EXPECT_NE(bad.find("token id 5.000000 (example 1, step 1) is not an integer in [0, 5)"), std::string::npos) << bad;
    ids.data[4] = 1.5f;
    EXPECT_NE(message([&] { m.predict(ids); }).find("token id 1.500000"), std::string::npos);
}

// Embedding -> Dense at each step -> LayerNormalization -> GlobalAveragePooling1D -> Dense
// out to TF.js's Layers format and back: the same configs and predictions.
TEST(ModelSequence, TfjsExportAndImport) {
    Context& ctx = test::cpuContext();
    Sequential m(ctx, 6);
    m.add(Embedding{9, 4}).add(Dense{5, Activation::ReLU}).add(LayerNormalization{}).add(GlobalAveragePooling1D{});
    m.add(Dense{2});
    m.compile({});
    m.setWeight("layer_normalization_2", "gamma", randomMatrix(1, 5, 120, 0.5f, 1.5f));
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    const auto& layers = json["modelTopology"]["config"]["layers"];
    EXPECT_EQ(layers[0]["class_name"], "Embedding");
    EXPECT_EQ(layers[0]["config"]["batch_input_shape"], (nlohmann::json{nullptr, 6}));
    EXPECT_EQ(layers[0]["config"]["input_dim"], 9);
    EXPECT_EQ(layers[0]["config"]["output_dim"], 4);
    EXPECT_EQ(layers[2]["class_name"], "LayerNormalization");
    EXPECT_EQ(layers[2]["config"]["axis"], -1);
    EXPECT_EQ(layers[3]["class_name"], "GlobalAveragePooling1D");
    EXPECT_EQ(json["weightsManifest"][0]["weights"][0]["name"], "embedding_0/embeddings");
    EXPECT_EQ(json["weightsManifest"][0]["weights"][0]["shape"], (nlohmann::json{9, 4}));
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    const HostMatrix ids = tokenIds(3, 6, 9, 121);
    EXPECT_EQ(imported->predict(ids).data, m.predict(ids).data);
}

}  // namespace model_sequence_test
}  // namespace
