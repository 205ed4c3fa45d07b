// Models of several inputs and outputs (issue 38): each row of x holds the
// inputs side by side and each target row the outputs' targets (a class
// label as one column), cut apart in the graph (graph/model_graph.hpp's
// ModelIO), so every engine trains them as one matrix of rows. One loss per
// output, weighted; accuracy is the first softmax output's. A two-input,
// two-output model trains as the same SGD steps composed in double on every
// engine; the wiring and data errors name the input or output.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace multi_io_model_test {

using namespace gltrain;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;
using MatD = HostMatrixT<double>;

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

// [a, b] side by side, row by row.
template <class T>
HostMatrixT<T> sideBySide(const HostMatrixT<T>& a, const HostMatrixT<T>& b) {
    HostMatrixT<T> out(a.rows, a.cols + b.cols);
    for (int r = 0; r < a.rows; ++r) {
        for (int c = 0; c < a.cols; ++c) out(r, c) = a(r, c);
        for (int c = 0; c < b.cols; ++c) out(r, a.cols + c) = b(r, c);
    }
    return out;
}
// Columns [c0, c0 + n) of m.
template <class T>
HostMatrixT<T> columns(const HostMatrixT<T>& m, int c0, int n) {
    HostMatrixT<T> out(m.rows, n);
    for (int r = 0; r < m.rows; ++r)
        for (int c = 0; c < n; ++c) out(r, c) = m(r, c0 + c);
    return out;
}

// Inputs a [5] and b [4]; h = tanh(a W1 + b1); class logits from [h, b]
// (softmax cross-entropy, weight 1) and two values from h (MSE, weight 0.5).
struct TwoByTwo {
    SymbolicTensor a = Input(5, "a"), b = Input(4, "b");
    SymbolicTensor h = Dense{6, Activation::Tanh}(a);
    SymbolicTensor classes = Dense{3}(Concatenate{}({h, b}));
    SymbolicTensor values = Dense{2}(h);
};
const HostMatrix kA = randomMatrix(16, 5, 41), kB = randomMatrix(16, 4, 42), kValues = randomMatrix(16, 2, 43);
std::vector<int> labels() {
    std::vector<int> y(16);
    for (int i = 0; i < 16; ++i) y[size_t(i)] = (i * 7) % 3;
    return y;
}

// 6 SGD steps of the whole batch; fp32 against double: the loss to 1e-4
// relative at every step, the weights to 1e-4 of their largest value, and
// both outputs' predictions.
void expectTwoByTwoMatchesTheReference(Context& ctx) {
    TwoByTwo t;
    Model m(ctx, {t.a, t.b}, {t.classes, t.values});
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.1f;
    c.losses = {LossKind::SoftmaxCrossEntropy, LossKind::MeanSquaredError};
    c.lossWeights = {1.0f, 0.5f};
    m.compile(c);
    ASSERT_EQ(m.layerCount(), 4u);
    EXPECT_EQ(m.inputSize(), 9);
    EXPECT_EQ(m.outputSize(), 5);
    EXPECT_EQ(m.outputLayers(), (std::vector<size_t>{2, 3}));
    EXPECT_EQ(m.summary()[0].inbound, (std::vector<std::string>{"a"}));
    EXPECT_EQ(m.summary()[1].inbound, (std::vector<std::string>{"dense_0", "b"}));
    // Layers in the order they are reached from the outputs: h, the concatenation, each head.
    MatD W[3], bias[3];
    const size_t dense[3] = {0, 2, 3};
    for (size_t l = 0; l < 3; ++l) {
        W[l] = m.weight(m.layerName(dense[l]), "kernel").cast<double>();
        bias[l] = m.weight(m.layerName(dense[l]), "bias").cast<double>();
    }
    std::vector<float> losses;
    FitOptions f;
    f.epochs = 6;
    f.batchSize = 16;
    f.shuffle = false;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    const std::vector<EpochInfo> h = m.fit({kA, kB}, {labels(), kValues}, f, cb);
    ASSERT_EQ(losses.size(), 6u);

    const MatD A = kA.cast<double>(), B = kB.cast<double>(), V = kValues.cast<double>();
    ref::SgdConfig sgd;
    sgd.lr = 0.1;
    auto forward = [&](MatD& z1, MatD& hv, MatD& cat, MatD& zc, MatD& zv) {
        z1 = ref::densePreactivation(A, W[0], bias[0]);
        hv = ref::activate(z1, Activation::Tanh);
        cat = sideBySide(hv, B);
        zc = ref::densePreactivation(cat, W[1], bias[1]);
        zv = ref::densePreactivation(hv, W[2], bias[2]);
    };
    double lastAccuracy = 0;
    for (int step = 1; step <= 6; ++step) {
        MatD z1, hv, cat, zc, zv;
        forward(z1, hv, cat, zc, zv);
        const auto ce = ref::softmaxCrossEntropy(zc, labels());
        auto se = ref::mse(zv, V);
        const double loss = ce.mean() + 0.5 * se.loss;
        EXPECT_NEAR(losses[size_t(step - 1)], loss, 1e-4 * std::max(1.0, loss)) << "step " << step;
        for (double& g : se.grad.data) g *= 0.5;
        const auto gc = ref::denseBackward(cat, W[1], zc, ce.grad, Activation::Linear);
        const auto gv = ref::denseBackward(hv, W[2], zv, se.grad, Activation::Linear);
        const auto g1 = ref::denseBackward(A, W[0], z1, ref::add(columns(gc.dX, 0, 6), gv.dX), Activation::Tanh);
        const ref::DenseGrads<double>* g[3] = {&g1, &gc, &gv};
        for (size_t l = 0; l < 3; ++l) {
            ref::sgdStep(W[l], g[l]->dW, sgd);
            ref::sgdStep(bias[l], g[l]->db, sgd);
        }
        if (step == 6) {
            int right = 0;
            for (int r = 0; r < 16; ++r) {
                int arg = 0;
                for (int k = 1; k < 3; ++k) arg = zc(r, k) > zc(r, arg) ? k : arg;
                right += arg == labels()[size_t(r)];
            }
            lastAccuracy = right / 16.0;
        }
    }
    // The epoch's accuracy is the classes output's, over the step it trained.
    ASSERT_EQ(h.size(), 6u);
    EXPECT_NEAR(h.back().accuracy, lastAccuracy, 1e-6);
    for (size_t l = 0; l < 3; ++l) {
        EXPECT_LE(maxRelDiff(m.weight(m.layerName(dense[l]), "kernel"), W[l]), 1e-4) << "layer " << dense[l];
        EXPECT_LE(maxRelDiff(m.weight(m.layerName(dense[l]), "bias"), bias[l]), 1e-4) << "layer " << dense[l];
    }
    // Each output's predictions, in batches too; the packed single-matrix forms agree.
    MatD z1, hv, cat, zc, zv;
    forward(z1, hv, cat, zc, zv);
    for (int batch : {256, 5}) {
        const std::vector<HostMatrix> out = m.predict({kA, kB}, batch);
        ASSERT_EQ(out.size(), 2u);
        EXPECT_LE(maxRelDiff(out[0], zc), 1e-4) << "batch " << batch;
        EXPECT_LE(maxRelDiff(out[1], zv), 1e-4) << "batch " << batch;
    }
    EXPECT_LE(maxRelDiff(m.predict(sideBySide(kA, kB)), sideBySide(zc, zv)), 1e-4);
    const Evaluation e = m.evaluate({kA, kB}, {labels(), kValues}, 7);
    const double loss = ref::softmaxCrossEntropy(zc, labels()).mean() + 0.5 * ref::mse(zv, V).loss;
    EXPECT_NEAR(e.loss, loss, 1e-4 * std::max(1.0, loss));
}

TEST(MultiIoModel, TwoInputsTwoOutputsTrainAsTheReferenceOnTheGpu) {
    expectTwoByTwoMatchesTheReference(test::context());
}
TEST(MultiIoModel, TwoInputsTwoOutputsTrainAsTheReferenceOnPagedTextures) {
    expectTwoByTwoMatchesTheReference(test::smallContext());
}
TEST(MultiIoModel, TwoInputsTwoOutputsTrainAsTheReferenceOnTheCpu) {
    expectTwoByTwoMatchesTheReference(test::cpuContext());
}

// An image input and a flat one, two classification heads with their own
// labels: the GPU and CPU engines give the same losses, accuracies and
// predictions; a checkpoint round-trips into a second model.
TEST(MultiIoModel, ImageAndFlatInputsTrainAlikeOnBothEngines) {
    const HostMatrix images = randomMatrix(40, 4 * 4 * 2, 51), extra = randomMatrix(40, 3, 52);
    std::vector<int> y0(40), y1(40);
    for (int i = 0; i < 40; ++i) y0[size_t(i)] = i % 4, y1[size_t(i)] = (i / 3) % 2;
    auto run = [&](Context& ctx, std::vector<float>& losses, std::vector<HostMatrix>& out,
                   std::vector<uint8_t>* bytes) {
        const SymbolicTensor img = Input(Shape3{4, 4, 2}), meta = Input(3);
        const SymbolicTensor conv = Flatten{}(Conv2D{3, 3, 1, Padding::Same, Activation::ReLU}(img));
        const SymbolicTensor joined = Concatenate{}({conv, Dense{4, Activation::ReLU}(meta)});
        Model m(ctx, {img, meta}, {Dense{4}(joined), Dense{2}(Dense{5, Activation::Tanh}(joined))});
        CompileOptions c;
        c.lossWeights = {1.0f, 2.0f};
        m.compile(c);
        FitOptions f;
        f.epochs = 3;
        f.batchSize = 16;  // a short last batch of 8
        for (const EpochInfo& e : m.fit({images, extra}, {y0, y1}, f))
            losses.push_back(e.loss), losses.push_back(e.accuracy);
        out = m.predict({images, extra});
        if (bytes) *bytes = m.saveCheckpoint();
        return m.evaluate({images, extra}, {y0, y1}).loss;
    };
    std::vector<float> gpu, cpu;
    std::vector<HostMatrix> gpuOut, cpuOut;
    std::vector<uint8_t> bytes;
    const float gpuLoss = run(test::context(), gpu, gpuOut, &bytes);
    const float cpuLoss = run(test::cpuContext(), cpu, cpuOut, nullptr);
    ASSERT_EQ(gpu.size(), cpu.size());
    for (size_t i = 0; i < gpu.size(); ++i) EXPECT_NEAR(gpu[i], cpu[i], 2e-4) << i;
    EXPECT_NEAR(gpuLoss, cpuLoss, 2e-4);
    ASSERT_EQ(gpuOut.size(), 2u);
    EXPECT_LE(maxRelDiff(gpuOut[0], cpuOut[0].cast<double>()), 2e-4);
    EXPECT_LE(maxRelDiff(gpuOut[1], cpuOut[1].cast<double>()), 2e-4);

    const SymbolicTensor img = Input(Shape3{4, 4, 2}), meta = Input(3);
    const SymbolicTensor conv = Flatten{}(Conv2D{3, 3, 1, Padding::Same, Activation::ReLU}(img));
    const SymbolicTensor joined = Concatenate{}({conv, Dense{4, Activation::ReLU}(meta)});
    Model again(test::cpuContext(), {img, meta}, {Dense{4}(joined), Dense{2}(Dense{5, Activation::Tanh}(joined))});
    again.compile({});
    again.loadCheckpoint(bytes);
    const std::vector<HostMatrix> loaded = again.predict({images, extra});
    EXPECT_LE(maxRelDiff(loaded[0], gpuOut[0].cast<double>()), 2e-4);
}

// A model file names its "inputs" and "outputs" and a loss per output; it
// builds the model TwoByTwo's values build (the same layers, names and seed:
// the same initial weights) and trains alike.
TEST(MultiIoModel, AModelFileNamesInputsOutputsAndLosses) {
    const std::string text = R"({
      "inputs": [{"name": "a", "shape": 5}, {"name": "b", "shape": 4}],
      "layers": [
        {"type": "dense", "units": 6, "activation": "tanh", "inputs": ["a"]},
        {"type": "concatenate", "inputs": ["dense_0", "b"]},
        {"type": "dense", "units": 3, "inputs": ["concatenate_1"]},
        {"type": "dense", "units": 2, "inputs": ["dense_0"]}
      ],
      "outputs": ["dense_2", "dense_3"],
      "compile": {"loss": ["softmax_cross_entropy", "mse"], "lossWeights": [1, 0.5],
                  "optimizer": {"type": "sgd", "lr": 0.1}}
    })";
    const ModelConfig config = parseModelConfig(text, "m.json");
    ASSERT_EQ(config.inputs.size(), 2u);
    EXPECT_EQ(config.outputs, (std::vector<int>{2, 3}));
    std::unique_ptr<Model> fromFile = buildModel(test::cpuContext(), config);
    TwoByTwo t;
    Model built(test::cpuContext(), {t.a, t.b}, {t.classes, t.values});
    built.compile(config.compile);
    EXPECT_EQ(fromFile->summary()[1].inbound, (std::vector<std::string>{"dense_0", "b"}));
    FitOptions f;
    f.epochs = 3;
    f.batchSize = 8;
    const std::vector<EpochInfo> a = fromFile->fit({kA, kB}, {labels(), kValues}, f);
    const std::vector<EpochInfo> b = built.fit({kA, kB}, {labels(), kValues}, f);
    for (size_t e = 0; e < 3; ++e) EXPECT_EQ(a[e].loss, b[e].loss) << "epoch " << e;

    auto error = [&](const std::string& from, const std::string& to) {
        std::string bad = text;
        bad.replace(bad.find(from), from.size(), to);
        return message([&] { buildModel(test::cpuContext(), parseModelConfig(bad, "m.json")); });
    };
    EXPECT_EQ(error(R"("outputs": ["dense_2", "dense_3"])", R"("outputs": ["dense_2", "b"])"),
              "m.json: outputs[1]: expected the name of a layer, got the string \"b\"");
    EXPECT_EQ(error(R"({"name": "b", "shape": 4})", R"({"name": "a", "shape": 4})"),
              "m.json: inputs[1].name: 'a' names two inputs");
    EXPECT_EQ(error(R"("lossWeights": [1, 0.5])", R"("lossWeights": [1, -0.5])"),
              "m.json: compile.lossWeights[1]: expected a finite number >= 0, got -0.5");
    EXPECT_EQ(error(R"(["softmax_cross_entropy", "mse"])", R"(["softmax_cross_entropy"])"),
              "m.json: compile: 1 losses for 2 outputs (give one per output, or none for `loss` on each)");
    EXPECT_EQ(error(R"("outputs": ["dense_2", "dense_3"])", R"("outputs": ["dense_2"])"),
              "m.json: compile: 2 losses for 1 outputs (give one per output, or none for `loss` on each)");
}

TEST(MultiIoModel, WiringAndDataErrorsNameTheInputOrOutput) {
    Context& ctx = test::cpuContext();
    TwoByTwo t;
    EXPECT_EQ(message([&] { Model(ctx, {t.a}, {t.classes}); }),
              "Model: a layer reads an Input of shape [1, 1, 4] that is not one of the model's inputs");
    EXPECT_EQ(message([&] { Model(ctx, {t.a, t.b}, {t.values}); }), "Model: input 1 leads to no output");
    EXPECT_EQ(message([&] { Model(ctx, {t.a, t.a}, {t.values}); }), "Model: input 1 is given twice");
    EXPECT_EQ(message([&] { Model(ctx, {t.a, t.b}, {t.classes, t.classes}); }), "Model: output 1 is given twice");
    EXPECT_EQ(message([&] { Model(ctx, {t.h}, {t.values}); }),
              "Model: input 0 must be made by gltrain::Input, not be a layer's output (dense)");

    // A layer that leads to no output; an output that is not a layer.
    using G = graph::LayerGeometry;
    const std::vector<LayerNode> nodes{{Dense{2}, {G::modelInput(0)}}, {Dense{3}, {G::modelInput(1)}}, {Dense{2}, {0}}};
    Model unused(ctx, {Shape3{1, 1, 5}, Shape3{1, 1, 4}}, nodes, {2});
    EXPECT_EQ(message([&] { unused.compile({}); }),
              "compile: layer dense_1's output is used by no layer and is not a model output (dense_2)");
    EXPECT_EQ(message([&] {
                  Model(ctx, {Shape3{1, 1, 5}}, nodes, {2});
              }),
              "Model: layer 1 reads input 1, which the model does not have");
    EXPECT_EQ(message([&] {
                  Model(ctx, {Shape3{1, 1, 5}, Shape3{1, 1, 4}}, nodes, {3});
              }),
              "Model: output 3 is not a layer (it has 3)");

    Model m(ctx, {t.a, t.b}, {t.classes, t.values});
    CompileOptions c;
    c.losses = {LossKind::SoftmaxCrossEntropy};
    EXPECT_EQ(message([&] { m.compile(c); }),
              "compile: 1 losses for 2 outputs (give one per output, or none for `loss` on each)");
    c.losses = {};
    c.lossWeights = {1.0f, -1.0f};
    EXPECT_EQ(message([&] { m.compile(c); }), "compile: lossWeights[1] must be finite and >= 0, got -1.000000");
    c.lossWeights = {};
    c.losses = {LossKind::SoftmaxCrossEntropy, LossKind::MeanSquaredError};
    m.compile(c);
    EXPECT_EQ(message([&] { m.fit({kA}, {labels(), kValues}); }), "fit: 1 inputs given, the model has 2");
    EXPECT_EQ(message([&] {
                  m.fit({kA, kA}, {labels(), kValues});
              }),
              "fit: inputs[1] has 5 columns, the model's input b has 4");
    const HostMatrix short15 = randomMatrix(15, 4, 1);
    EXPECT_EQ(message([&] {
                  m.fit({kA, short15}, {labels(), kValues});
              }),
              "fit: inputs[1] has 15 rows, inputs[0] has 16");
    EXPECT_EQ(message([&] { m.fit({kA, kB}, {labels()}); }), "fit: 1 targets given, the model has 2 outputs");
    std::vector<int> bad = labels();
    bad[3] = 3;
    EXPECT_EQ(message([&] {
                  m.fit({kA, kB}, {bad, kValues});
              }),
              "fit (targets[0], output dense_2): label 3 at row 3 is outside [0, 3)");
    EXPECT_EQ(message([&] {
                  m.fit({kA, kB}, {labels(), labels()});
              }),
              "fit (targets[1], output dense_3): this loss needs target values (a matrix), not labels");
    // The packed form is checked per output too.
    HostMatrix packed(16, 3);
    packed(2, 0) = 1.5f;
    EXPECT_EQ(message([&] { m.evaluate(sideBySide(kA, kB), packed); }),
              "evaluate: the label at row 2 is 1.500000, not a class index");
}

}  // namespace multi_io_model_test
}  // namespace
