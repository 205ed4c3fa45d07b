// Recurrent layers: an LSTM and a Bidirectional LSTM trained one SGD step on
// the GPU and on the CPU backend against the same step composed from the
// reference formulas in double (the last step's output, every step's read
// backwards, both directions merged); shapes, errors, the model file and
// TF.js's Layers format out and back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/reference/recurrent.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/tfjs_layers.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_recurrent_test {

using namespace gltrain;
using gltrain::test::asRows;
using gltrain::test::engineName;
using gltrain::test::engines;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;
using gltrain::test::message;
using gltrain::test::randomMatrix;
using gltrain::test::sgd;

// An LSTM's kernel, recurrent kernel and bias (a Bidirectional's direction: names after `prefix`).
void setLstm(Model& m, const std::string& layer, const std::string& prefix, const HostMatrix& w, const HostMatrix& r,
             const HostMatrix& b) {
    m.setWeight(layer, prefix + "kernel", w);
    m.setWeight(layer, prefix + "recurrent_kernel", r);
    m.setWeight(layer, prefix + "bias", b);
}

// An LSTM of `units` returning every step's output, read backwards if `backwards`.
LSTM everyStepLstm(int units, bool backwards = false) {
    LSTM lstm;
    lstm.units = units;
    lstm.returnSequences = true;
    lstm.goBackwards = backwards;
    return lstm;
}

// An LSTM's variables after a step against the reference's `want` (kernel, recurrent kernel, bias).
void expectStepped(Model& m, const std::string& layer, const std::string& prefix, const std::vector<MatD>& want) {
    EXPECT_LE(maxRelDiff(m.weight(layer, prefix + "kernel"), want[0]), 1e-4) << prefix;
    EXPECT_LE(maxRelDiff(m.weight(layer, prefix + "recurrent_kernel"), want[1]), 1e-4) << prefix;
    EXPECT_LE(maxRelDiff(m.weight(layer, prefix + "bias"), want[2]), 1e-4) << prefix;
}

// One LSTM step's reference: gate inputs, outputs, and the variables' gradients from dH [N, T*U].
struct LstmReference {
    LstmCell cell;
    MatD X, W, R, b;  // x [N, T*F], kernel, recurrent kernel, bias
    MatD h, c;        // the forward's outputs [N, T*U]

    // The reference of an LSTM of `cell` with these variables on input x, its forward run.
    static LstmReference of(const LstmCell& cell, const HostMatrix& x, const HostMatrix& w, const HostMatrix& r,
                            const HostMatrix& b) {
        LstmReference s{cell, x.cast<double>(), w.cast<double>(), r.cast<double>(), b.cast<double>(), {}, {}};
        s.forward();
        return s;
    }
    MatD gateInputs() const { return asRows(ref::addBias(ref::matmul(asRows(X, W.rows), W), b), 4 * cell.units); }
    void forward() {
        const auto hc = ref::lstmSequence(cell, asRows(gateInputs(), X.cols / W.rows * 4 * cell.units), R);
        h = hc[0], c = hc[1];
    }
    // SGD's new kernel, recurrent kernel and bias at `lr`.
    std::vector<MatD> stepped(const MatD& dH, double lr) const {
        const MatD xz = asRows(gateInputs(), X.cols / W.rows * 4 * cell.units);
        const MatD dz = ref::lstmSequenceGrad(cell, xz, R, h, c, dH)[0];
        const MatD dZ = asRows(dz, 4 * cell.units);
        return {sgd(W, ref::matmulTN(asRows(X, W.rows), dZ), lr), sgd(R, ref::lstmRecurrentGrad(cell, h, dz), lr),
                sgd(b, ref::channelSum(dZ, 4 * cell.units), lr)};
    }
};

// [5 steps, 7 features] -> LSTM 3 (sigmoid gates) -> Dense 3, softmax cross-entropy on a batch of 5.
TEST(ModelRecurrent, LstmLastStepMatchesTheReference) {
    const int N = 5, T = 5, F = 7, U = 3;
    const double lr = 0.5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, Shape3{1, T, F});
        LSTM lstm;
        lstm.units = U;
        lstm.recurrentActivation = Activation::Sigmoid;
        m.add(lstm).add(Dense{3});
        test::compileSgd(m, float(lr));
        ASSERT_EQ(m.outputShape(0), (Shape3{1, 1, U}));
        EXPECT_EQ(m.layerName(0), "lstm_0");
        const HostMatrix x = randomMatrix(N, T * F, 11), w = randomMatrix(F, 4 * U, 12, -0.5f, 0.5f),
                         r = randomMatrix(U, 4 * U, 13, -0.5f, 0.5f), b = randomMatrix(1, 4 * U, 14),
                         w1 = randomMatrix(U, 3, 15), b1 = randomMatrix(1, 3, 16);
        setLstm(m, "lstm_0", "", w, r, b);
        m.setWeight("dense_1", "kernel", w1);
        m.setWeight("dense_1", "bias", b1);
        test::fitOneBatch(m, x);

        const LstmReference s = LstmReference::of(LstmCell{U}, x, w, r, b);  // sigmoid gates
        MatD last(N, U);
        for (int n = 0; n < N; ++n)
            for (int u = 0; u < U; ++u) last(n, u) = s.h(n, (T - 1) * U + u);
        const MatD W1 = w1.cast<double>();
        const MatD dL =
            ref::softmaxCrossEntropy(ref::addBias(ref::matmul(last, W1), b1.cast<double>()), test::kStepLabels).grad;
        const MatD dLast = ref::matmulNT(dL, W1);
        MatD dH(N, T * U);
        for (int n = 0; n < N; ++n)
            for (int u = 0; u < U; ++u) dH(n, (T - 1) * U + u) = dLast(n, u);
        const std::vector<MatD> want = s.stepped(dH, lr);
        EXPECT_LE(maxRelDiff(m.weight("dense_1", "kernel"), sgd(W1, ref::matmulTN(last, dL), lr)), 1e-4);
        expectStepped(m, "lstm_0", "", want);
    }
}

// Every step's output, reading the sequence backwards with TF.js's hard sigmoid gates, mean squared error.
TEST(ModelRecurrent, LstmSequenceGoingBackwardsMatchesTheReference) {
    const int N = 3, T = 4, F = 5, U = 2;
    const double lr = 0.5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, Shape3{1, T, F});
        m.add(everyStepLstm(U, true)).add(Flatten{});
        test::compileSgd(m, float(lr), LossKind::MeanSquaredError);
        ASSERT_EQ(m.outputShape(0), (Shape3{1, T, U}));
        const HostMatrix x = randomMatrix(N, T * F, 21), w = randomMatrix(F, 4 * U, 22), r = randomMatrix(U, 4 * U, 23),
                         b = randomMatrix(1, 4 * U, 24), y = randomMatrix(N, T * U, 25);
        setLstm(m, "lstm_0", "", w, r, b);
        const HostMatrix before = m.predict(x);
        test::fitOneBatchToTargets(m, x, y);

        const LstmReference s = LstmReference::of({U, Activation::Tanh, Activation::HardSigmoid, true}, x, w, r, b);
        EXPECT_LE(maxRelDiff(before, s.h), 1e-5);
        const std::vector<MatD> want = s.stepped(ref::mse(s.h, y.cast<double>()).grad, lr);
        expectStepped(m, "lstm_0", "", want);
    }
}

// Every step's output into a Dense per step, on a batch of 4: that Dense's input gradient (the LSTM's dh)
// comes in 4-row blocks (packed_rows4) on the GPU while the LSTM's own sequences are packed, as in a
// character model (Embedding -> LSTM -> Dense per step).
TEST(ModelRecurrent, LstmSequenceIntoDensePerStepMatchesTheReference) {
    const int N = 4, T = 3, F = 2, U = 2, K = 3;
    const double lr = 0.5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        Sequential m(*ctx, Shape3{1, T, F});
        m.add(everyStepLstm(U)).add(Dense{K}).add(Flatten{});
        test::compileSgd(m, float(lr), LossKind::MeanSquaredError);
        const HostMatrix x = randomMatrix(N, T * F, 41), w = randomMatrix(F, 4 * U, 42), r = randomMatrix(U, 4 * U, 43),
                         b = randomMatrix(1, 4 * U, 44), w1 = randomMatrix(U, K, 45), b1 = randomMatrix(1, K, 46),
                         y = randomMatrix(N, T * K, 47);
        setLstm(m, "lstm_0", "", w, r, b);
        m.setWeight("dense_1", "kernel", w1);
        m.setWeight("dense_1", "bias", b1);
        test::fitOneBatchToTargets(m, x, y);

        const LstmReference s = LstmReference::of({U, Activation::Tanh, Activation::HardSigmoid}, x, w, r, b);
        const MatD W1 = w1.cast<double>(), hRows = asRows(s.h, U);
        const MatD dY = asRows(
            ref::mse(asRows(ref::addBias(ref::matmul(hRows, W1), b1.cast<double>()), T * K), y.cast<double>()).grad, K);
        EXPECT_LE(maxRelDiff(m.weight("dense_1", "kernel"), sgd(W1, ref::matmulTN(hRows, dY), lr)), 1e-4);
        expectStepped(m, "lstm_0", "", s.stepped(asRows(ref::matmulNT(dY, W1), T * U), lr));
    }
}

// Bidirectional over [4 steps, 3 features], mean squared error: every step's outputs concatenated, and each
// direction's last averaged; both directions' variables after one SGD step against the reference.
TEST(ModelRecurrent, BidirectionalMatchesTheReference) {
    const int N = 3, T = 4, F = 3, U = 2;
    const double lr = 0.5;
    for (const bool sequences : {true, false})
        for (Context* ctx : engines()) {
            SCOPED_TRACE(std::string(engineName(ctx)) + (sequences ? " concat" : " ave"));
            Sequential m(*ctx, Shape3{1, T, F});
            Bidirectional bi;
            bi.units = U;
            bi.returnSequences = sequences;
            bi.mergeMode = sequences ? "concat" : "ave";
            m.add(bi).add(Flatten{});
            test::compileSgd(m, float(lr), LossKind::MeanSquaredError);
            ASSERT_EQ(m.outputShape(0), (sequences ? Shape3{1, T, 2 * U} : Shape3{1, 1, U}));
            const int outputs = sequences ? T * 2 * U : U;
            const HostMatrix x = randomMatrix(N, T * F, 41), y = randomMatrix(N, outputs, 42);
            LstmReference dir[2];
            for (int d = 0; d < 2; ++d) {
                const std::string prefix = d ? "backward_lstm/" : "forward_lstm/";
                const HostMatrix w = randomMatrix(F, 4 * U, 43 + 3 * d), r = randomMatrix(U, 4 * U, 44 + 3 * d),
                                 b = randomMatrix(1, 4 * U, 45 + 3 * d);
                setLstm(m, "bidirectional_0", prefix, w, r, b);
                dir[d] = LstmReference::of({U, Activation::Tanh, Activation::HardSigmoid, d == 1}, x, w, r, b);
            }
            const HostMatrix before = m.predict(x);
            test::fitOneBatchToTargets(m, x, y);

            // The merged output and its gradient, spread back to each direction's steps (in the order read).
            MatD out(N, outputs), dH[2] = {MatD(N, T * U), MatD(N, T * U)};
            for (int n = 0; n < N; ++n)
                for (int u = 0; u < U; ++u) {
                    if (sequences) {
                        for (int t = 0; t < T; ++t) {
                            out(n, t * 2 * U + u) = dir[0].h(n, t * U + u);
                            out(n, t * 2 * U + U + u) = dir[1].h(n, (T - 1 - t) * U + u);
                        }
                    } else {
                        out(n, u) = 0.5 * (dir[0].h(n, (T - 1) * U + u) + dir[1].h(n, (T - 1) * U + u));
                    }
                }
            EXPECT_LE(maxRelDiff(before, out), 1e-5);
            const MatD dOut = ref::mse(out, y.cast<double>()).grad;
            for (int n = 0; n < N; ++n)
                for (int u = 0; u < U; ++u) {
                    if (sequences) {
                        for (int t = 0; t < T; ++t) {
                            dH[0](n, t * U + u) = dOut(n, t * 2 * U + u);
                            dH[1](n, (T - 1 - t) * U + u) = dOut(n, t * 2 * U + U + u);
                        }
                    } else {
                        dH[0](n, (T - 1) * U + u) = dH[1](n, (T - 1) * U + u) = 0.5 * dOut(n, u);
                    }
                }
            for (int d = 0; d < 2; ++d) {
                const std::string prefix = d ? "backward_lstm/" : "forward_lstm/";
                expectStepped(m, "bidirectional_0", prefix, dir[d].stepped(dH[d], lr));
            }
        }
}

TEST(ModelRecurrent, LstmShapesAndErrors) {
    Context& ctx = test::cpuContext();
    LSTM lstm;
    lstm.units = 6;
    const std::vector<LayerVariable> v = layerVariables(lstm, Shape3{1, 7, 3});
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].shape, (std::vector<int64_t>{3, 24}));
    EXPECT_EQ(v[1].shape, (std::vector<int64_t>{6, 24}));
    EXPECT_EQ(v[2].shape, (std::vector<int64_t>{24}));
    lstm.useBias = false;
    EXPECT_EQ(layerVariables(lstm, Shape3{1, 7, 3}).size(), 2u);

    Sequential image(ctx, Shape3{4, 4, 2});
    image.add(lstm);
    EXPECT_NE(message([&] { image.compile({}); })
                  .find("layer lstm_0: needs a sequence [steps, channels] (an image of height 1) but receives "
                        "[batch, 4, 4, 2] from the model input"),
              std::string::npos)
        << message([&] { image.compile({}); });
    Sequential flat(ctx, 4);
    flat.add(lstm);
    EXPECT_NE(message([&] { flat.compile({}); }).find("layer lstm_0: needs a sequence"), std::string::npos);
    const std::string units =
        message([&] { parseModelConfig(R"({"input": [5, 3], "layers": [{"type": "lstm", "units": 0}]})", "m.json"); });
    EXPECT_NE(units.find("m.json: layers[0].units"), std::string::npos) << units;
    Sequential elu(ctx, Shape3{1, 5, 3});
    LSTM withAlpha;
    withAlpha.units = 2;
    withAlpha.activation = Activation::ELU;
    elu.add(withAlpha);
    const std::string alpha = message([&] { elu.compile({}); });
    EXPECT_NE(alpha.find("layer lstm_0: activation elu is not supported (it takes an alpha)"), std::string::npos)
        << alpha;

    // The model file: each field as written.
    const ModelConfig c = parseModelConfig(
        R"({"input": [5, 3], "layers": [{"type": "lstm", "units": 4, "returnSequences": true, "goBackwards": true,
            "recurrentActivation": "sigmoid", "useBias": false}]})",
        "m.json");
    const LSTM& read = std::get<LSTM>(c.layers.at(0));
    EXPECT_EQ(read.units, 4);
    EXPECT_TRUE(read.returnSequences && read.goBackwards && !read.useBias);
    EXPECT_EQ(read.recurrentActivation, Activation::Sigmoid);
    EXPECT_EQ(read.activation, Activation::Tanh);
}

// Embedding -> LSTM (every step) -> Bidirectional (summed) -> LSTM (the last, backwards) -> Dense out to
// TF.js's Layers format and back:
// Keras's config names and weight shapes, the same predictions.
TEST(ModelRecurrent, LstmTfjsExportAndImport) {
    Context& ctx = test::cpuContext();
    Sequential m(ctx, 6);
    LSTM first, second;
    first.units = 5;
    first.returnSequences = true;
    second.units = 3;
    second.goBackwards = true;
    second.recurrentActivation = Activation::Sigmoid;
    Bidirectional both;
    both.units = 2;
    both.returnSequences = true;
    both.mergeMode = "sum";
    m.add(Embedding{9, 4}).add(first).add(both).add(second).add(Dense{2});
    m.compile({});
    m.setWeight("lstm_3", "bias", randomMatrix(1, 12, 30));
    m.setWeight("bidirectional_2", "backward_lstm/bias", randomMatrix(1, 8, 32));
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    const auto& layers = json["modelTopology"]["config"]["layers"];
    EXPECT_EQ(layers[1]["class_name"], "LSTM");
    EXPECT_EQ(layers[1]["config"]["return_sequences"], true);
    EXPECT_EQ(layers[1]["config"]["recurrent_activation"], "hard_sigmoid");
    EXPECT_EQ(layers[2]["class_name"], "Bidirectional");
    EXPECT_EQ(layers[2]["config"]["merge_mode"], "sum");
    EXPECT_EQ(layers[2]["config"]["layer"]["class_name"], "LSTM");
    EXPECT_EQ(layers[2]["config"]["layer"]["config"]["units"], 2);
    EXPECT_EQ(layers[3]["config"]["go_backwards"], true);
    const auto& weights = json["weightsManifest"][0]["weights"];
    EXPECT_EQ(weights[2]["name"], "lstm_1/recurrent_kernel");
    EXPECT_EQ(weights[2]["shape"], (nlohmann::json{5, 20}));
    EXPECT_EQ(weights[7]["name"], "bidirectional_2/backward_lstm/kernel");
    EXPECT_EQ(weights[7]["shape"], (nlohmann::json{5, 8}));
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    HostMatrix ids = randomMatrix(3, 6, 31, 0.0f, 9.0f);
    for (float& id : ids.data) id = std::min(std::floor(id), 8.0f);
    EXPECT_EQ(imported->predict(ids).data, m.predict(ids).data);

    // TF.js names a Bidirectional's weights after the layer it wraps.
    auto renamed = nlohmann::json::parse(a.modelJson);
    renamed["modelTopology"]["config"]["layers"][2]["config"]["layer"]["config"]["name"] = "lstm_LSTM1";
    for (auto& w : renamed["weightsManifest"][0]["weights"]) {
        std::string name = w["name"];
        const size_t at = name.find("_lstm/");
        if (name.rfind("bidirectional_2/", 0) == 0 && at != std::string::npos) name.insert(at + 5, "_LSTM1");
        w["name"] = name;
    }
    EXPECT_EQ(renamed["weightsManifest"][0]["weights"][7]["name"], "bidirectional_2/backward_lstm_LSTM1/kernel");
    EXPECT_EQ(importTfjs(ctx, renamed.dump(), a.weightData)->predict(ids).data, m.predict(ids).data);

    auto stateful = nlohmann::json::parse(a.modelJson);
    stateful["modelTopology"]["config"]["layers"][1]["config"]["stateful"] = true;
    EXPECT_NE(message([&] { importTfjs(ctx, stateful.dump(), a.weightData); }).find("stateful: true is not supported"),
              std::string::npos);
}

}  // namespace model_recurrent_test
}  // namespace
