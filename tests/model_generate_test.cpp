// Model::generate (model/generate.hpp): the sampler on its own (temperature,
// topK, ties, NaN), then on a byte-level model of both engines — temperature
// 0 is the argmax of predict() at the last real step of a window built as
// documented (the last `context` tokens, left-aligned, zero padding), topK 1 is
// that too at any temperature, a seed gives the same bytes twice and other
// seeds others, a model trained on a repeated string writes its continuation —
// and the errors, each before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gltrain/sequential.hpp"
#include "gltrain/text_data.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_generate_test {

using namespace gltrain;
using gltrain::test::message;
using gltrain::test::randomMatrix;

using gltrain::test::engineName;
using gltrain::test::engines;

std::vector<uint8_t> bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string text(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

// A byte-level bigram model: Embedding 256 x 8 -> Dense 256 at each of `context` steps.
std::unique_ptr<Sequential> byteModel(Context& ctx, int context, float lr = 0.05f) {
    auto m = std::make_unique<Sequential>(ctx, context);
    m->add(Embedding{256, 8}).add(Dense{256});
    CompileOptions c;
    c.loss = LossKind::SequenceCrossEntropy;
    c.optimizer.lr = lr;
    c.seed = 5;
    m->compile(c);
    return m;
}

TEST(Generate, SamplerFollowsTemperatureTopKAndTies) {
    const float l[4] = {0.0f, std::log(3.0f), std::log(3.0f), -1.0f};
    EXPECT_EQ(sampleToken(l, 4, 0.0f, 0, 0.99f), 1);  // the first of two largest
    EXPECT_EQ(sampleToken(l, 4, 2.0f, 1, 0.99f), 1);  // topK 1: the same, whatever the draw
    // topK 3 at temperature 1: weights 1 (id 0), 3, 3 in the order 1, 2, 0 -> cut points 3/7, 6/7.
    EXPECT_EQ(sampleToken(l, 4, 1.0f, 3, 0.42f), 1);
    EXPECT_EQ(sampleToken(l, 4, 1.0f, 3, 0.43f), 2);
    EXPECT_EQ(sampleToken(l, 4, 1.0f, 3, 0.85f), 2);
    EXPECT_EQ(sampleToken(l, 4, 1.0f, 3, 0.86f), 0);
    EXPECT_EQ(sampleToken(l, 4, 1.0f, 3, 0.999f), 0);  // id 3 is outside the top 3
    // Temperature 0.5 squares the weights: 9, 9, 1, e^-2 (ids 1, 2, 0, 3), over all four.
    const double total = 19.0 + std::exp(-2.0);
    EXPECT_EQ(sampleToken(l, 4, 0.5f, 0, float(17.9 / total)), 2);
    EXPECT_EQ(sampleToken(l, 4, 0.5f, 0, float(18.1 / total)), 0);
    EXPECT_EQ(sampleToken(l, 4, 0.5f, 0, float(19.0 / total) + 1e-4f), 3);
    const float nan[3] = {std::numeric_limits<float>::quiet_NaN(), 1.0f, 2.0f};
    EXPECT_EQ(sampleToken(nan, 3, 0.0f, 0, 0.5f), 2);
    EXPECT_EQ(sampleToken(nan, 3, 1.0f, 3, 0.999f), 1);  // NaN is last and weighs nothing
}

// Temperature 0 against predict(): the argmax at the step of the window's last token; topK 1
// is the same at any temperature; a seed gives the same bytes again, another seed others.
TEST(Generate, GreedyIsTheArgmaxOfPredictAndSeedsRepeat) {
    const int context = 5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        auto m = byteModel(*ctx, context);
        m->setWeight("embedding_0", "embeddings", randomMatrix(256, 8, 61));
        m->setWeight("dense_1", "kernel", randomMatrix(8, 256, 62, -2.0f, 2.0f));
        const std::vector<uint8_t> prompt = bytes("ab");
        GenerateOptions greedy;
        greedy.length = 9;  // the window fills up, then slides
        greedy.temperature = 0.0f;
        const std::vector<uint8_t> got = m->generate(prompt, greedy);
        ASSERT_EQ(got.size(), 9u);
        std::vector<uint8_t> all = prompt;
        for (int i = 0; i < greedy.length; ++i) {
            const size_t n = std::min(all.size(), size_t(context));
            HostMatrix window(1, context);
            for (size_t t = 0; t < n; ++t) window.data[t] = float(all[all.size() - n + t]);
            const HostMatrix p = m->predict(window);
            int best = 0;
            for (int v = 1; v < 256; ++v)
                if (p(0, int(n - 1) * 256 + v) > p(0, int(n - 1) * 256 + best)) best = v;
            EXPECT_EQ(got[size_t(i)], best) << "token " << i;
            all.push_back(uint8_t(best));
        }
        GenerateOptions top1;
        top1.length = 9;
        top1.temperature = 3.0f;
        top1.topK = 1;
        EXPECT_EQ(m->generate(prompt, top1), got);
        GenerateOptions sampled;
        sampled.length = 24;
        sampled.temperature = 1.5f;
        sampled.seed = 7;
        const std::vector<uint8_t> a = m->generate(prompt, sampled), b = m->generate(prompt, sampled);
        EXPECT_EQ(a, b);
        sampled.seed = 8;
        EXPECT_NE(m->generate(prompt, sampled), a);
        EXPECT_TRUE(m->generate(prompt, GenerateOptions{0}).empty());
    }
}

// Trained on a repeated string whose every byte has one successor, greedy generation writes it on.
TEST(Generate, ATrainedModelContinuesTheTextItLearnt) {
    std::string repeated;
    for (int i = 0; i < 40; ++i) repeated += "gltrain ";
    TextOptions t;
    t.context = 8;
    t.heldOut = 0.0;
    const TextWindows w = TextData(bytes(repeated), t).trainWindows(0);
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        auto m = byteModel(*ctx, t.context, 0.1f);
        FitOptions f;
        f.epochs = 30;
        f.batchSize = 10;
        f.lossEvery = 0;
        m->fit(w.x, Targets(w.y), f);
        GenerateOptions o;
        o.length = 14;
        o.temperature = 0.0f;
        EXPECT_EQ(text(m->generate(bytes("gl"), o)), "train gltrain ");
        o.temperature = 0.5f;  // sharp enough to write the same
        EXPECT_EQ(text(m->generate(bytes("in"), o)), " gltrain gltra");
    }
}

// Weights from exact formulas (tests/web/api_tests.js makes the same model): the bytes a seed
// samples here are the bytes it samples in the browser, on either engine.
TEST(Generate, TheBrowserSamplesTheSameBytes) {
    auto formula = [](int n, int a, int b, int c) {
        HostMatrix m(1, n);
        for (int i = 0; i < n; ++i) m.data[size_t(i)] = float(double((i * a) % b - c) / 25.0);
        return m;
    };
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, 5);
        m.add(Embedding{256, 4}).add(Dense{256});
        CompileOptions c;
        c.loss = LossKind::SequenceCrossEntropy;
        m.compile(c);
        m.setWeight("embedding_0", "embeddings", HostMatrix(256, 4, formula(1024, 37, 101, 50).data));
        m.setWeight("dense_1", "kernel", HostMatrix(4, 256, formula(1024, 53, 97, 48).data));
        GenerateOptions o;
        o.length = 16;
        o.seed = 9;
        const std::vector<uint8_t> got = m.generate(bytes("ab"), o);
        std::string joined;
        for (uint8_t b : got) joined += (joined.empty() ? "" : ",") + std::to_string(b);
        EXPECT_EQ(joined, "42,65,240,222,178,94,70,106,17,224,24,156,172,216,18,65");
    }
}

TEST(Generate, BadOptionsPromptsAndModelsAreRefused) {
    Context& ctx = test::cpuContext();
    auto m = byteModel(ctx, 4);
    auto refused = [&](const std::vector<uint8_t>& prompt, GenerateOptions o) {
        return message([&] { m->generate(prompt, o); });
    };
    const std::vector<uint8_t> ok = bytes("ab");
    GenerateOptions o;
    o.length = -1;
    EXPECT_NE(refused(ok, o).find("generate: length must be in [0, 1048576], got -1"), std::string::npos);
    o = {};
    o.temperature = -0.5f;
    EXPECT_NE(refused(ok, o).find("temperature must be finite and >= 0"), std::string::npos);
    o.temperature = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(refused(ok, o).find("temperature must be finite and >= 0"), std::string::npos);
    o = {};
    o.topK = -1;
    EXPECT_NE(refused(ok, o).find("topK must be in [0, 256]"), std::string::npos);
    o.topK = 257;
    EXPECT_NE(refused(ok, o).find("got 257"), std::string::npos);
    EXPECT_NE(refused({}, {}).find("the prompt is empty"), std::string::npos);

    // Token ids outside a smaller vocabulary, and bytes for a vocabulary past 256.
    Sequential small(ctx, 4);
    small.add(Embedding{300, 4}).add(Dense{16});
    CompileOptions c;
    c.loss = LossKind::SequenceCrossEntropy;
    small.compile(c);
    EXPECT_NE(message([&] {
                  small.generate(bytes("a"), {});
              }).find("prompt token 0 is 97, outside the model's vocabulary of 16 ids"),
              std::string::npos)
        << message([&] { small.generate(bytes("a"), {}); });
    EXPECT_EQ(small.generate(std::vector<int>{3, 15}, GenerateOptions{2}).size(), 2u);
    Sequential wide(ctx, 4);
    wide.add(Embedding{300, 4}).add(Dense{300});
    wide.compile(c);
    EXPECT_NE(message([&] { wide.generate(bytes("a"), {}); }).find("a vocabulary of at most 256, the model's has 300"),
              std::string::npos);

    // Not a language model: a classifier, and a sequence model with another loss.
    Sequential classifier(ctx, 4);
    classifier.add(Dense{3});
    classifier.compile({});
    EXPECT_NE(message([&] { classifier.generate(ok, {}); })
                  .find("generate: the model must read [context] token ids and give logits [context, vocab] at each "
                        "step, trained with sequence_softmax_cross_entropy; it is compiled with softmax_cross_entropy"),
              std::string::npos)
        << message([&] { classifier.generate(ok, {}); });
    Sequential mse(ctx, 4);
    mse.add(Embedding{256, 4}).add(Dense{256});
    CompileOptions c2;
    c2.loss = LossKind::MeanSquaredError;
    mse.compile(c2);
    EXPECT_NE(message([&] { mse.generate(ok, {}); }).find("it is compiled with mse"), std::string::npos)
        << message([&] { mse.generate(ok, {}); });
    Sequential uncompiled(ctx, 4);
    uncompiled.add(Dense{3});
    EXPECT_NE(message([&] { uncompiled.generate(ok, {}); }).find("not compiled"), std::string::npos);
}

}  // namespace model_generate_test
}  // namespace
