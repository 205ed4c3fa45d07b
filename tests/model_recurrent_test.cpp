// Recurrent layers: an LSTM, a GRU and a Bidirectional of each trained one
// SGD step on the GPU and on the CPU backend against the same step composed
// from the reference formulas in double (the last step's output, every step's
// read backwards, both directions merged); shapes, errors, the orthogonal
// initializer, unitForgetBias, the model file and TF.js's Layers format out
// and back.
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

constexpr RecurrentKind kKinds[] = {RecurrentKind::Lstm, RecurrentKind::Gru};
const char* kindName(RecurrentKind k) { return k == RecurrentKind::Lstm ? "lstm" : "gru"; }
int gatesOf(RecurrentKind k) { return k == RecurrentKind::Lstm ? 4 : 3; }

// A layer of `kind` with its fields from `cell` (go_backwards: cell.reverse).
Layer recurrentLayer(RecurrentKind kind, const RecurrentCell& cell, bool returnSequences) {
    auto make = [&](auto l) -> Layer {
        l.units = cell.units;
        l.activation = cell.activation;
        l.recurrentActivation = cell.recurrentActivation;
        l.returnSequences = returnSequences;
        l.goBackwards = cell.reverse;
        return l;
    };
    return kind == RecurrentKind::Lstm ? make(LSTM{}) : make(GRU{});
}

// One recurrent layer's reference step: gate inputs, outputs, and the variables' gradients from dH [N, T*U].
struct CellReference {
    RecurrentKind kind;
    RecurrentCell cell;
    MatD X, W, R, b;         // x [N, T*F], kernel, recurrent kernel, bias
    std::vector<MatD> outs;  // the forward's outputs [N, T*U]: h and (LSTM) c or (GRU) rh

    int gates() const { return gatesOf(kind) * cell.units; }
    const MatD& h() const { return outs[0]; }
    MatD gateInputs() const {
        return asRows(asRows(ref::addBias(ref::matmul(asRows(X, W.rows), W), b), gates()), X.cols / W.rows * gates());
    }
    void forward() {
        outs = kind == RecurrentKind::Lstm ? ref::lstmSequence(cell, gateInputs(), R)
                                           : ref::gruSequence(cell, gateInputs(), R);
    }
    // SGD's new kernel, recurrent kernel and bias at `lr`.
    std::vector<MatD> stepped(const MatD& dH, double lr) const {
        const MatD xz = gateInputs();
        const bool lstm = kind == RecurrentKind::Lstm;
        const MatD dz = lstm ? ref::lstmSequenceGrad(cell, xz, R, outs[0], outs[1], dH)[0]
                             : ref::gruSequenceGrad(cell, xz, R, outs[0], outs[1], dH)[0];
        const MatD dR =
            lstm ? ref::lstmRecurrentGrad(cell, outs[0], dz) : ref::gruRecurrentGrad(cell, outs[0], outs[1], dz);
        const MatD dZ = asRows(dz, gates());
        return {sgd(W, ref::matmulTN(asRows(X, W.rows), dZ), lr), sgd(R, dR, lr),
                sgd(b, ref::channelSum(dZ, gates()), lr)};
    }
};

// Sets a recurrent layer's variables (a Bidirectional's direction: names after `prefix`) to random values from
// `seed` on, and returns its reference over x.
CellReference setRandomCell(Model& m, const std::string& layer, const std::string& prefix, RecurrentKind kind,
                            const RecurrentCell& cell, int features, const HostMatrix& x, uint32_t seed) {
    const int G = gatesOf(kind) * cell.units;
    const HostMatrix w = randomMatrix(features, G, seed, -0.5f, 0.5f),
                     r = randomMatrix(cell.units, G, seed + 1, -0.5f, 0.5f), b = randomMatrix(1, G, seed + 2);
    m.setWeight(layer, prefix + "kernel", w);
    m.setWeight(layer, prefix + "recurrent_kernel", r);
    m.setWeight(layer, prefix + "bias", b);
    CellReference s{kind, cell, x.cast<double>(), w.cast<double>(), r.cast<double>(), b.cast<double>(), {}};
    s.forward();
    return s;
}

// A recurrent layer's variables after a step against the reference's `want` (kernel, recurrent kernel, bias).
void expectStepped(Model& m, const std::string& layer, const std::string& prefix, const std::vector<MatD>& want) {
    EXPECT_LE(maxRelDiff(m.weight(layer, prefix + "kernel"), want[0]), 1e-4) << prefix;
    EXPECT_LE(maxRelDiff(m.weight(layer, prefix + "recurrent_kernel"), want[1]), 1e-4) << prefix;
    EXPECT_LE(maxRelDiff(m.weight(layer, prefix + "bias"), want[2]), 1e-4) << prefix;
}

// [5 steps, 7 features] -> LSTM or GRU 3 (sigmoid gates) -> Dense 3, softmax cross-entropy on a batch of 5.
TEST(ModelRecurrent, LastStepMatchesTheReference) {
    const int N = 5, T = 5, F = 7, U = 3;
    const double lr = 0.5;
    const RecurrentCell cell{U};  // sigmoid gates
    for (RecurrentKind kind : kKinds)
        for (Context* ctx : engines()) {
            SCOPED_TRACE(std::string(kindName(kind)) + " " + engineName(ctx));
            Sequential m(*ctx, Shape3{1, T, F});
            m.add(recurrentLayer(kind, cell, false)).add(Dense{3});
            test::compileSgd(m, float(lr));
            ASSERT_EQ(m.outputShape(0), (Shape3{1, 1, U}));
            const std::string name = std::string(kindName(kind)) + "_0";
            EXPECT_EQ(m.layerName(0), name);
            const HostMatrix x = randomMatrix(N, T * F, 11), w1 = randomMatrix(U, 3, 15), b1 = randomMatrix(1, 3, 16);
            const CellReference s = setRandomCell(m, name, "", kind, cell, F, x, 12);
            m.setWeight("dense_1", "kernel", w1);
            m.setWeight("dense_1", "bias", b1);
            test::fitOneBatch(m, x);

            MatD last(N, U);
            for (int n = 0; n < N; ++n)
                for (int u = 0; u < U; ++u) last(n, u) = s.h()(n, (T - 1) * U + u);
            const MatD W1 = w1.cast<double>();
            const MatD dL =
                ref::softmaxCrossEntropy(ref::addBias(ref::matmul(last, W1), b1.cast<double>()), test::kStepLabels)
                    .grad;
            const MatD dLast = ref::matmulNT(dL, W1);
            MatD dH(N, T * U);
            for (int n = 0; n < N; ++n)
                for (int u = 0; u < U; ++u) dH(n, (T - 1) * U + u) = dLast(n, u);
            EXPECT_LE(maxRelDiff(m.weight("dense_1", "kernel"), sgd(W1, ref::matmulTN(last, dL), lr)), 1e-4);
            expectStepped(m, name, "", s.stepped(dH, lr));
        }
}

// Every step's output, reading the sequence backwards with TF.js's hard sigmoid gates, mean squared error.
TEST(ModelRecurrent, SequenceGoingBackwardsMatchesTheReference) {
    const int N = 3, T = 4, F = 5, U = 2;
    const double lr = 0.5;
    const RecurrentCell cell{U, Activation::Tanh, Activation::HardSigmoid, true};
    for (RecurrentKind kind : kKinds)
        for (Context* ctx : engines()) {
            SCOPED_TRACE(std::string(kindName(kind)) + " " + engineName(ctx));
            Sequential m(*ctx, Shape3{1, T, F});
            m.add(recurrentLayer(kind, cell, true)).add(Flatten{});
            test::compileSgd(m, float(lr), LossKind::MeanSquaredError);
            ASSERT_EQ(m.outputShape(0), (Shape3{1, T, U}));
            const std::string name = std::string(kindName(kind)) + "_0";
            const HostMatrix x = randomMatrix(N, T * F, 21), y = randomMatrix(N, T * U, 25);
            const CellReference s = setRandomCell(m, name, "", kind, cell, F, x, 22);
            const HostMatrix before = m.predict(x);
            test::fitOneBatchToTargets(m, x, y);
            EXPECT_LE(maxRelDiff(before, s.h()), 1e-5);
            expectStepped(m, name, "", s.stepped(ref::mse(s.h(), y.cast<double>()).grad, lr));
        }
}

// Every step's output into a Dense per step, on a batch of 4: that Dense's input gradient (the layer's dh)
// comes in 4-row blocks (packed_rows4) on the GPU while the layer's own sequences are packed, as in a
// character model (Embedding -> LSTM -> Dense per step).
TEST(ModelRecurrent, SequenceIntoDensePerStepMatchesTheReference) {
    const int N = 4, T = 3, F = 2, U = 2, K = 3;
    const double lr = 0.5;
    const RecurrentCell cell{U, Activation::Tanh, Activation::HardSigmoid};
    for (RecurrentKind kind : kKinds)
        for (Context* ctx : engines()) {
            SCOPED_TRACE(std::string(kindName(kind)) + " " + engineName(ctx));
            Sequential m(*ctx, Shape3{1, T, F});
            m.add(recurrentLayer(kind, cell, true)).add(Dense{K}).add(Flatten{});
            test::compileSgd(m, float(lr), LossKind::MeanSquaredError);
            const std::string name = std::string(kindName(kind)) + "_0";
            const HostMatrix x = randomMatrix(N, T * F, 41), w1 = randomMatrix(U, K, 45), b1 = randomMatrix(1, K, 46),
                             y = randomMatrix(N, T * K, 47);
            const CellReference s = setRandomCell(m, name, "", kind, cell, F, x, 42);
            m.setWeight("dense_1", "kernel", w1);
            m.setWeight("dense_1", "bias", b1);
            test::fitOneBatchToTargets(m, x, y);

            const MatD W1 = w1.cast<double>(), hRows = asRows(s.h(), U);
            const MatD dY = asRows(
                ref::mse(asRows(ref::addBias(ref::matmul(hRows, W1), b1.cast<double>()), T * K), y.cast<double>()).grad,
                K);
            EXPECT_LE(maxRelDiff(m.weight("dense_1", "kernel"), sgd(W1, ref::matmulTN(hRows, dY), lr)), 1e-4);
            expectStepped(m, name, "", s.stepped(asRows(ref::matmulNT(dY, W1), T * U), lr));
        }
}

// Bidirectional over [4 steps, 3 features], mean squared error: every step's outputs concatenated, and each
// direction's last averaged; both directions' variables after one SGD step against the reference.
TEST(ModelRecurrent, BidirectionalMatchesTheReference) {
    const int N = 3, T = 4, F = 3, U = 2;
    const double lr = 0.5;
    for (RecurrentKind kind : kKinds)
        for (const bool sequences : {true, false})
            for (Context* ctx : engines()) {
                SCOPED_TRACE(std::string(kindName(kind)) + " " + engineName(ctx) + (sequences ? " concat" : " ave"));
                Sequential m(*ctx, Shape3{1, T, F});
                Bidirectional bi;
                bi.layer = kindName(kind);
                bi.units = U;
                bi.returnSequences = sequences;
                bi.mergeMode = sequences ? "concat" : "ave";
                m.add(bi).add(Flatten{});
                test::compileSgd(m, float(lr), LossKind::MeanSquaredError);
                ASSERT_EQ(m.outputShape(0), (sequences ? Shape3{1, T, 2 * U} : Shape3{1, 1, U}));
                const int outputs = sequences ? T * 2 * U : U;
                const HostMatrix x = randomMatrix(N, T * F, 41), y = randomMatrix(N, outputs, 42);
                const std::string prefixes[2] = {std::string("forward_") + kindName(kind) + "/",
                                                 std::string("backward_") + kindName(kind) + "/"};
                CellReference dir[2];
                for (int d = 0; d < 2; ++d)
                    dir[d] = setRandomCell(m, "bidirectional_0", prefixes[d], kind,
                                           {U, Activation::Tanh, Activation::HardSigmoid, d == 1}, F, x, 43 + 3 * d);
                const HostMatrix before = m.predict(x);
                test::fitOneBatchToTargets(m, x, y);

                // The merged output and its gradient, spread back to each direction's steps (in the order read).
                MatD out(N, outputs), dH[2] = {MatD(N, T * U), MatD(N, T * U)};
                for (int n = 0; n < N; ++n)
                    for (int u = 0; u < U; ++u) {
                        if (sequences) {
                            for (int t = 0; t < T; ++t) {
                                out(n, t * 2 * U + u) = dir[0].h()(n, t * U + u);
                                out(n, t * 2 * U + U + u) = dir[1].h()(n, (T - 1 - t) * U + u);
                            }
                        } else {
                            out(n, u) = 0.5 * (dir[0].h()(n, (T - 1) * U + u) + dir[1].h()(n, (T - 1) * U + u));
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
                for (int d = 0; d < 2; ++d) expectStepped(m, "bidirectional_0", prefixes[d], dir[d].stepped(dH[d], lr));
            }
}

TEST(ModelRecurrent, ShapesAndErrors) {
    Context& ctx = test::cpuContext();
    for (RecurrentKind kind : kKinds) {
        SCOPED_TRACE(kindName(kind));
        const int G = gatesOf(kind) * 6;
        const std::vector<LayerVariable> v = layerVariables(recurrentLayer(kind, {6}, false), Shape3{1, 7, 3});
        ASSERT_EQ(v.size(), 3u);
        EXPECT_EQ(v[0].shape, (std::vector<int64_t>{3, G}));
        EXPECT_EQ(v[1].shape, (std::vector<int64_t>{6, G}));
        EXPECT_EQ(v[2].shape, (std::vector<int64_t>{G}));
        EXPECT_EQ(v[1].init, Initializer{Initializer::Orthogonal});  // TF.js's default recurrent initializer

        const std::string name = std::string(kindName(kind)) + "_0";
        Sequential image(ctx, Shape3{4, 4, 2});
        image.add(recurrentLayer(kind, {6}, false));
        const std::string notSequence = message([&] { image.compile({}); });
        EXPECT_NE(notSequence.find("layer " + name +
                                   ": needs a sequence [steps, channels] (an image of height 1) but receives "
                                   "[batch, 4, 4, 2] from the model input"),
                  std::string::npos)
            << notSequence;
        Sequential flat(ctx, 4);
        flat.add(recurrentLayer(kind, {6}, false));
        EXPECT_NE(message([&] { flat.compile({}); }).find("layer " + name + ": needs a sequence"), std::string::npos);
        const std::string units = message([&] {
            parseModelConfig(
                std::string(R"({"input": [5, 3], "layers": [{"type": ")") + kindName(kind) + R"(", "units": 0}]})",
                "m.json");
        });
        EXPECT_NE(units.find("m.json: layers[0].units"), std::string::npos) << units;
        Sequential elu(ctx, Shape3{1, 5, 3});
        elu.add(recurrentLayer(kind, {2, Activation::ELU}, false));
        const std::string alpha = message([&] { elu.compile({}); });
        EXPECT_NE(alpha.find("layer " + name + ": activation elu is not supported (it takes an alpha)"),
                  std::string::npos)
            << alpha;
    }
    LSTM lstm;
    lstm.units = 6;
    lstm.useBias = false;
    EXPECT_EQ(layerVariables(lstm, Shape3{1, 7, 3}).size(), 2u);
    Sequential wraps(ctx, Shape3{1, 5, 3});
    Bidirectional rnn;
    rnn.units = 2;
    rnn.layer = "rnn";
    wraps.add(rnn);
    const std::string wrapped = message([&] { wraps.compile({}); });
    EXPECT_NE(wrapped.find("layer bidirectional_0: layer 'rnn' is not one of lstm, gru"), std::string::npos) << wrapped;

    // The model file: each field as written.
    const ModelConfig c = parseModelConfig(
        R"({"input": [5, 3], "layers": [{"type": "lstm", "units": 4, "returnSequences": true, "goBackwards": true,
            "recurrentActivation": "sigmoid", "useBias": false, "unitForgetBias": true},
            {"type": "gru", "units": 2, "recurrentInitializer": {"type": "orthogonal", "gain": 2}},
            {"type": "bidirectional", "layer": "gru", "units": 3}]})",
        "m.json");
    const LSTM& read = std::get<LSTM>(c.layers.at(0));
    EXPECT_EQ(read.units, 4);
    EXPECT_TRUE(read.returnSequences && read.goBackwards && !read.useBias && read.unitForgetBias);
    EXPECT_EQ(read.recurrentActivation, Activation::Sigmoid);
    EXPECT_EQ(read.activation, Activation::Tanh);
    const GRU& gru = std::get<GRU>(c.layers.at(1));
    EXPECT_EQ(gru.units, 2);
    EXPECT_EQ(gru.recurrentInit, Initializer::orthogonal(2.0f));
    EXPECT_EQ(gru.kernelInit, Initializer{Initializer::GlorotNormal});
    EXPECT_EQ(std::get<Bidirectional>(c.layers.at(2)).layer, "gru");
    const std::string printed = layerToJson(c.layers.at(1)).dump();
    EXPECT_NE(printed.find(R"({"gain":2.0,"type":"orthogonal"})"), std::string::npos) << printed;
    EXPECT_EQ(layerToJson(layerFromJson(nlohmann::json::parse(printed), "printed.json")).dump(), printed);
    const std::string gain = message([&] {
        parseModelConfig(
            R"({"input": [5, 3], "layers": [{"type": "gru", "units": 2, "kernelInitializer": {"type": "zeros", "gain": 2}}]})",
            "m.json");
    });
    EXPECT_NE(gain.find("gain is only for {\"type\": \"orthogonal\"}"), std::string::npos) << gain;
}

// TF.js's orthogonal: Q of a normal matrix's QR, transposed where wide, times the gain. QᵀQ (tall) or QQᵀ (wide)
// is gain² I to float rounding; the same seed and stream give the same bits, another stream other values.
TEST(ModelRecurrent, OrthogonalInitializerIsOrthogonalAndDeterministic) {
    for (const auto& [rows, cols, gain] :
         std::vector<std::tuple<int, int, float>>{{12, 5, 1.0f}, {5, 12, 1.0f}, {7, 7, 2.0f}}) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
        const Initializer init = Initializer::orthogonal(gain);
        const HostMatrix q = init.make(rows, cols, rows, cols, 3, 1);
        const bool tall = rows >= cols;
        const int n = tall ? cols : rows;
        double worst = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                double dot = 0;
                for (int k = 0; k < (tall ? rows : cols); ++k)
                    dot += tall ? double(q(k, i)) * q(k, j) : double(q(i, k)) * q(j, k);
                worst = std::max(worst, std::fabs(dot - (i == j ? double(gain) * gain : 0.0)));
            }
        EXPECT_LE(worst, 1e-6 * gain * gain);
        EXPECT_EQ(init.make(rows, cols, rows, cols, 3, 1).data, q.data);
        EXPECT_NE(init.make(rows, cols, rows, cols, 3, 2).data, q.data);
    }
    EXPECT_THROW(Initializer::orthogonal(NAN).make(2, 2, 2, 2, 1, 0), ArgumentError);
}

// unitForgetBias: an LSTM's forget gate's bias starts at 1, the other gates' as the bias initializer says; TF.js's
// config carries it both ways.
TEST(ModelRecurrent, UnitForgetBiasStartsTheForgetGateAtOne) {
    Context& ctx = test::cpuContext();
    Sequential m(ctx, Shape3{1, 4, 3});
    LSTM lstm;
    lstm.units = 3;
    lstm.unitForgetBias = true;
    lstm.biasInit = Initializer::constant(0.25f);
    m.add(lstm);
    m.compile({});
    const HostMatrix bias = m.weight("lstm_0", "bias");
    ASSERT_EQ(bias.cols, 12);
    for (int c = 0; c < 12; ++c) EXPECT_EQ(bias.data[size_t(c)], c >= 3 && c < 6 ? 1.0f : 0.25f) << c;
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    EXPECT_EQ(json["modelTopology"]["config"]["layers"][0]["config"]["unit_forget_bias"], true);
    EXPECT_TRUE(std::get<LSTM>(parseTfjs(a.modelJson, a.weightData).layers.at(0)).unitForgetBias);
}

// Embedding -> LSTM (every step) -> Bidirectional LSTM (summed) -> Bidirectional GRU (concatenated) -> GRU (the
// last, backwards) -> Dense out to TF.js's Layers format and back: Keras's config names and weight shapes, the same
// predictions.
TEST(ModelRecurrent, TfjsExportAndImport) {
    Context& ctx = test::cpuContext();
    Sequential m(ctx, 6);
    LSTM first;
    first.units = 5;
    first.returnSequences = true;
    GRU last;
    last.units = 3;
    last.goBackwards = true;
    last.recurrentActivation = Activation::Sigmoid;
    Bidirectional both, gru;
    both.units = 2;
    both.returnSequences = true;
    both.mergeMode = "sum";
    gru.layer = "gru";
    gru.units = 3;
    gru.returnSequences = true;
    m.add(Embedding{9, 4}).add(first).add(both).add(gru).add(last).add(Dense{2});
    m.compile({});
    m.setWeight("gru_4", "bias", randomMatrix(1, 9, 30));
    m.setWeight("bidirectional_2", "backward_lstm/bias", randomMatrix(1, 8, 32));
    m.setWeight("bidirectional_3", "forward_gru/bias", randomMatrix(1, 9, 33));
    const TfjsArtifacts a = exportTfjs(m);
    const auto json = nlohmann::json::parse(a.modelJson);
    const auto& layers = json["modelTopology"]["config"]["layers"];
    EXPECT_EQ(layers[1]["class_name"], "LSTM");
    EXPECT_EQ(layers[1]["config"]["return_sequences"], true);
    EXPECT_EQ(layers[1]["config"]["recurrent_activation"], "hard_sigmoid");
    EXPECT_EQ(layers[1]["config"]["recurrent_initializer"]["class_name"], "Orthogonal");
    EXPECT_EQ(layers[1]["config"]["unit_forget_bias"], false);
    EXPECT_EQ(layers[2]["class_name"], "Bidirectional");
    EXPECT_EQ(layers[2]["config"]["merge_mode"], "sum");
    EXPECT_EQ(layers[2]["config"]["layer"]["class_name"], "LSTM");
    EXPECT_EQ(layers[2]["config"]["layer"]["config"]["units"], 2);
    EXPECT_EQ(layers[3]["config"]["layer"]["class_name"], "GRU");
    EXPECT_EQ(layers[3]["config"]["layer"]["config"]["name"], "gru");
    EXPECT_EQ(layers[4]["class_name"], "GRU");
    EXPECT_EQ(layers[4]["config"]["go_backwards"], true);
    EXPECT_EQ(layers[4]["config"]["reset_after"], false);
    const auto& weights = json["weightsManifest"][0]["weights"];
    EXPECT_EQ(weights[2]["name"], "lstm_1/recurrent_kernel");
    EXPECT_EQ(weights[2]["shape"], (nlohmann::json{5, 20}));
    EXPECT_EQ(weights[7]["name"], "bidirectional_2/backward_lstm/kernel");
    EXPECT_EQ(weights[7]["shape"], (nlohmann::json{5, 8}));
    EXPECT_EQ(weights[11]["name"], "bidirectional_3/forward_gru/recurrent_kernel");
    EXPECT_EQ(weights[11]["shape"], (nlohmann::json{3, 9}));
    EXPECT_EQ(weights[16]["name"], "gru_4/kernel");
    EXPECT_EQ(weights[16]["shape"], (nlohmann::json{6, 9}));
    auto imported = importTfjs(ctx, a.modelJson, a.weightData);
    HostMatrix ids = randomMatrix(3, 6, 31, 0.0f, 9.0f);
    for (float& id : ids.data) id = std::min(std::floor(id), 8.0f);
    EXPECT_EQ(imported->predict(ids).data, m.predict(ids).data);

    // TF.js names a Bidirectional's weights after the layer it wraps.
    auto renamed = nlohmann::json::parse(a.modelJson);
    for (const auto& [layer, wrapped] : {std::pair<int, std::string>{2, "lstm"}, {3, "gru"}}) {
        const std::string prefix = "bidirectional_" + std::to_string(layer) + "/";
        renamed["modelTopology"]["config"]["layers"][layer]["config"]["layer"]["config"]["name"] = wrapped + "_1";
        for (auto& w : renamed["weightsManifest"][0]["weights"]) {
            std::string name = w["name"];
            const size_t at = name.find("_" + wrapped + "/");
            if (name.rfind(prefix, 0) == 0 && at != std::string::npos) name.insert(at + 1 + wrapped.size(), "_1");
            w["name"] = name;
        }
    }
    EXPECT_EQ(renamed["weightsManifest"][0]["weights"][7]["name"], "bidirectional_2/backward_lstm_1/kernel");
    EXPECT_EQ(renamed["weightsManifest"][0]["weights"][11]["name"], "bidirectional_3/forward_gru_1/recurrent_kernel");
    EXPECT_EQ(importTfjs(ctx, renamed.dump(), a.weightData)->predict(ids).data, m.predict(ids).data);

    auto stateful = nlohmann::json::parse(a.modelJson);
    stateful["modelTopology"]["config"]["layers"][1]["config"]["stateful"] = true;
    EXPECT_NE(message([&] { importTfjs(ctx, stateful.dump(), a.weightData); }).find("stateful: true is not supported"),
              std::string::npos);
    auto resetAfter = nlohmann::json::parse(a.modelJson);
    resetAfter["modelTopology"]["config"]["layers"][4]["config"]["reset_after"] = true;
    const std::string after = message([&] { importTfjs(ctx, resetAfter.dump(), a.weightData); });
    EXPECT_NE(after.find("reset_after: true is not supported"), std::string::npos) << after;
}

}  // namespace model_recurrent_test
}  // namespace
