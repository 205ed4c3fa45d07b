// Functional models (issue 38): layers applied to values (model/symbolic.hpp)
// or model files whose layers name their "inputs" make a graph with branches
// and merges. A residual MLP trains as the same steps composed in double on
// every engine; each merge layer, on flat and image values, trains alike on
// the GPU and CPU engines; checkpoints round-trip; wiring and shape errors
// name the layer and where its inputs came from.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace functional_model_test {

using namespace gltrain;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;
using MatD = HostMatrixT<double>;

using gltrain::test::message;

// x -> h = tanh(x W1 + b1) -> s = h + (h W2 + b2) -> s W3 + b3: a residual
// block, so h feeds two layers and its gradient is the sum of two. Adam, 12
// steps of one batch of 24; fp32 against double: the loss to 1e-4 relative
// at every step, every weight to 1e-4 of its largest value at the end.
void expectResidualMlpMatchesTheReference(Context& ctx) {
    const HostMatrix x = randomMatrix(24, 5, 31);
    std::vector<int> y(24);
    for (int i = 0; i < 24; ++i) y[size_t(i)] = (i * 5) % 3;
    const SymbolicTensor in = Input(5);
    const SymbolicTensor h = Dense{7, Activation::Tanh}(in);
    const SymbolicTensor s = Add{}({h, Dense{7}(h)});
    Model m(ctx, in, Dense{3}(s));
    CompileOptions c;
    c.optimizer.lr = 0.01f;
    c.optimizer.eps = 1e-7f;
    m.compile(c);
    ASSERT_EQ(m.layerCount(), 4u);
    EXPECT_EQ(m.layerName(2), "add_2");
    EXPECT_EQ(m.inbound(2), (std::vector<int>{0, 1}));
    std::vector<MatD> W, b;
    for (size_t l : {0, 1, 3}) {
        W.push_back(m.weight(m.layerName(l), "kernel").cast<double>());
        b.push_back(m.weight(m.layerName(l), "bias").cast<double>());
    }
    std::vector<float> losses;
    FitOptions f;
    f.epochs = 12;
    f.batchSize = 24;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& st) { losses.push_back(st.loss); };
    m.fit(x, y, f, cb);
    ASSERT_EQ(losses.size(), 12u);

    std::vector<ref::AdamState<double>> sw, sb;
    for (size_t l = 0; l < 3; ++l) sw.emplace_back(W[l]), sb.emplace_back(b[l]);
    ref::AdamConfig ac;
    ac.lr = 0.01;
    ac.eps = c.optimizer.eps;
    const MatD X = x.cast<double>();
    for (int t = 1; t <= 12; ++t) {
        const MatD z1 = ref::densePreactivation(X, W[0], b[0]), hv = ref::activate(z1, Activation::Tanh);
        const MatD z2 = ref::densePreactivation(hv, W[1], b[1]), sv = ref::add(hv, z2);
        const MatD z3 = ref::densePreactivation(sv, W[2], b[2]);
        auto loss = ref::softmaxCrossEntropy(z3, y);
        EXPECT_NEAR(losses[size_t(t - 1)], loss.mean(), 1e-4 * std::max(1.0, loss.mean())) << "step " << t;
        const auto g3 = ref::denseBackward(sv, W[2], z3, loss.grad, Activation::Linear);
        const auto g2 = ref::denseBackward(hv, W[1], z2, g3.dX, Activation::Linear);
        const auto g1 = ref::denseBackward(X, W[0], z1, ref::add(g3.dX, g2.dX), Activation::Tanh);
        const ref::DenseGrads<double>* g[3] = {&g1, &g2, &g3};
        for (size_t l = 0; l < 3; ++l) {
            ref::adamStep(W[l], g[l]->dW, sw[l], t, ac);
            ref::adamStep(b[l], g[l]->db, sb[l], t, ac);
        }
    }
    const size_t layer[3] = {0, 1, 3};
    for (size_t l = 0; l < 3; ++l) {
        EXPECT_LE(maxRelDiff(m.weight(m.layerName(layer[l]), "kernel"), W[l]), 1e-4) << "layer " << layer[l];
        EXPECT_LE(maxRelDiff(m.weight(m.layerName(layer[l]), "bias"), b[l]), 1e-4) << "layer " << layer[l];
    }
    // Inference runs the same graph (h read by two layers) to the same logits.
    const MatD hv = ref::activate(ref::densePreactivation(X, W[0], b[0]), Activation::Tanh);
    const MatD logits = ref::densePreactivation(ref::add(hv, ref::densePreactivation(hv, W[1], b[1])), W[2], b[2]);
    EXPECT_LE(maxRelDiff(m.predict(x), logits), 1e-4);
    EXPECT_LE(maxRelDiff(m.predict(x, 7), logits), 1e-4) << "in batches of 7";
}

TEST(FunctionalModel, AResidualMlpTrainsAsTheReferenceOnTheGpu) {
    expectResidualMlpMatchesTheReference(test::context());
}
TEST(FunctionalModel, AResidualMlpTrainsAsTheReferenceOnPagedTextures) {
    expectResidualMlpMatchesTheReference(test::smallContext());
}
TEST(FunctionalModel, AResidualMlpTrainsAsTheReferenceOnTheCpu) {
    expectResidualMlpMatchesTheReference(test::cpuContext());
}

// 60 rows of [4, 3, 2] images (or 24 flat values) in 3 classes, each
// class marked by a brighter value.
struct Data : test::ClassData {
    Data() : ClassData(60, 24, 7, 5, 2.0f) {}
};

// `build` trained 2 epochs of batch 20 (SGD) on the GPU and the CPU engines:
// the same losses and predictions to 1e-4 (fp32 in other orders).
void expectBothEnginesAgree(const std::string& what, Shape3 input,
                            const std::function<SymbolicTensor(const SymbolicTensor&)>& build) {
    SCOPED_TRACE(what);
    const Data d;
    std::vector<HostMatrix> predictions;
    std::vector<std::vector<float>> losses;
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        const SymbolicTensor in = Input(input);
        Model m(*ctx, in, build(in));
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::SGD;
        c.optimizer.lr = 0.1f;
        c.seed = 4;
        m.compile(c);
        FitOptions f;
        f.epochs = 2;
        f.batchSize = 20;
        f.shuffle = false;
        losses.emplace_back();
        Callbacks cb;
        cb.onStep = [&](const StepInfo& s) { losses.back().push_back(s.loss); };
        m.fit(d.x, d.y, f, cb);
        predictions.push_back(m.predict(d.x));
    }
    ASSERT_EQ(losses[0].size(), 6u);
    for (size_t i = 0; i < losses[0].size(); ++i) EXPECT_NEAR(losses[0][i], losses[1][i], 1e-4) << "step " << i + 1;
    EXPECT_LE(test::relativeError(predictions[0], predictions[1]), 1e-4);
    // It learned: the loss fell.
    EXPECT_LT(losses[0].back(), losses[0].front());
}

TEST(FunctionalModel, EveryMergeLayerTrainsAlikeOnBothEngines) {
    auto twoBranches = [](const SymbolicTensor& in, auto merge) {
        const SymbolicTensor a = Dense{6, Activation::Tanh}(in), b = Dense{6, Activation::Sigmoid}(in);
        return Dense{3}(merge({a, b}));
    };
    expectBothEnginesAgree("add", {1, 1, 24}, [&](auto in) { return twoBranches(in, Add{}); });
    expectBothEnginesAgree("subtract", {1, 1, 24}, [&](auto in) { return twoBranches(in, Subtract{}); });
    expectBothEnginesAgree("multiply", {1, 1, 24}, [&](auto in) { return twoBranches(in, Multiply{}); });
    expectBothEnginesAgree("maximum", {1, 1, 24}, [&](auto in) { return twoBranches(in, Maximum{}); });
    expectBothEnginesAgree("concatenate", {1, 1, 24}, [&](auto in) { return twoBranches(in, Concatenate{}); });
    // Three inputs, one of them the model input itself.
    expectBothEnginesAgree("average of three", {1, 1, 24}, [](const SymbolicTensor& in) {
        const SymbolicTensor a = Dense{24, Activation::Tanh}(in), b = Dense{24}(a);
        return Dense{3}(Average{}({in, a, b}));
    });
}

TEST(FunctionalModel, ImageBranchesMergeAndConcatenateOnEveryAxis) {
    const Shape3 image{4, 3, 2};
    // A residual convolution block with batch normalization.
    expectBothEnginesAgree("residual conv block", image, [](const SymbolicTensor& in) {
        const SymbolicTensor h = Conv2D{4, 3, 1, Padding::Same, Activation::ReLU}(in);
        const SymbolicTensor r = BatchNormalization{}(Conv2D{4, 3, 1, Padding::Same}(h));
        return Dense{3}(Flatten{}(Add{}({h, r})));
    });
    for (int axis : {1, 2, 3, -1, -2}) {
        expectBothEnginesAgree("concatenate on axis " + std::to_string(axis), image, [&](const SymbolicTensor& in) {
            const SymbolicTensor a = Conv2D{2, 1, 1, Padding::Same, Activation::Tanh}(in);
            Concatenate cat;
            cat.axis = axis;
            return Dense{3}(Flatten{}(cat({a, in, a})));
        });
    }
}

TEST(FunctionalModel, ConcatenateAddsTheSizesAlongItsAxis) {
    const SymbolicTensor in = Input(Shape3{4, 3, 2});
    const SymbolicTensor a = Conv2D{5, 1}(in);
    Concatenate onWidth;
    onWidth.axis = 2;
    Model m(test::cpuContext(), in, GlobalAveragePooling2D{}(Concatenate{}({a, in})));
    m.compile({});
    EXPECT_EQ(m.outputShape(1), (Shape3{4, 3, 7}));
    Model w(test::cpuContext(), in, GlobalAveragePooling2D{}(onWidth({in, in, in})));
    w.compile({});
    EXPECT_EQ(w.outputShape(0), (Shape3{4, 9, 2}));
}

// Every layer type can be applied to a functional model's values (layers/call.hpp).
TEST(FunctionalModel, EveryLayerTypeCanBeCalled) {
    int n = 0;
    forEachType(LayerTypes{}, [&](auto* t) {
        using L = std::remove_pointer_t<decltype(t)>;
        static_assert(std::is_invocable_r_v<SymbolicTensor, const L&, const SymbolicTensor&>,
                      "a layer type without GLTRAIN_LAYER_CALLS");
        ++n;
    });
    EXPECT_EQ(n, int(std::variant_size_v<Layer>));
}

TEST(FunctionalModel, ASummaryListsEachLayersInputs) {
    const SymbolicTensor in = Input(6);
    const SymbolicTensor h = Dense{4, Activation::ReLU}(in);
    Dense out{3};
    out.name = "logits";
    Model m(test::cpuContext(), in, out(Concatenate{}({h, in})));
    m.compile({});
    const std::vector<Model::LayerSummary> s = m.summary();
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].name, "dense_0");
    EXPECT_EQ(s[0].inbound, (std::vector<std::string>{"input"}));
    EXPECT_EQ(s[0].parameters, 6 * 4 + 4);
    EXPECT_EQ(s[1].type, "concatenate");
    EXPECT_EQ(s[1].inbound, (std::vector<std::string>{"dense_0", "input"}));
    EXPECT_EQ(s[1].output, (Shape3{1, 1, 10}));
    EXPECT_EQ(s[2].name, "logits");
    EXPECT_EQ(s[2].parameters, 10 * 3 + 3);
}

// A chain of layers is a stack however it was built (summaries and TF.js
// export write it as a Sequential); one branch or merge makes it none.
TEST(FunctionalModel, OnlyAChainOfLayersIsAStack) {
    const SymbolicTensor in = Input(6);
    const SymbolicTensor h = Dense{4, Activation::ReLU}(in);
    Model chain(test::cpuContext(), in, Dense{3}(h));
    EXPECT_TRUE(chain.isStack());
    chain.compile({});
    EXPECT_TRUE(chain.isStack());
    Sequential seq(test::cpuContext(), 6);
    seq.add(Dense{4}).add(Dense{3});
    EXPECT_TRUE(seq.isStack());
    Model merged(test::cpuContext(), in, Dense{3}(Concatenate{}({h, in})));
    EXPECT_FALSE(merged.isStack());
    merged.compile({});
    EXPECT_FALSE(merged.isStack());
    // Two layers reading the input: the second does not read the one before it.
    Model branches(test::cpuContext(), in, Add{}({Dense{3}(in), Dense{3}(in)}));
    EXPECT_FALSE(branches.isStack());
    // A chain with a second output (its middle layer's) or a second input is no Sequential either.
    Model twoOutputs(test::cpuContext(), {in}, {h, Dense{3}(h)});
    EXPECT_FALSE(twoOutputs.isStack());
    const SymbolicTensor other = Input(2);
    Model twoInputs(test::cpuContext(), {in, other}, {Dense{3}(Concatenate{}({h, other}))});
    EXPECT_FALSE(twoInputs.isStack());
}

TEST(FunctionalModel, ACheckpointRoundTripsIntoAFreshModel) {
    const Data d;
    auto build = [](Context& ctx) {
        const SymbolicTensor in = Input(24);
        const SymbolicTensor h = Dense{8, Activation::ReLU}(in);
        return std::make_unique<Model>(ctx, in, Dense{3}(Add{}({h, Dense{8}(h)})));
    };
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        auto a = build(*ctx), b = build(*ctx);
        a->compile({});
        CompileOptions other;
        other.seed = 77;
        b->compile(other);
        FitOptions f;
        f.epochs = 1;
        f.batchSize = 20;
        a->fit(d.x, d.y, f);
        b->loadCheckpoint(a->saveCheckpoint());
        EXPECT_EQ(b->step(), 3);
        EXPECT_EQ(test::relativeError(a->predict(d.x), b->predict(d.x)), 0.0);
    }
}

TEST(FunctionalModel, WiringErrorsNameTheLayer) {
    const SymbolicTensor in = Input(6), other = Input(6);
    const SymbolicTensor a = Dense{8}(in), b = Dense{4}(in);
    EXPECT_EQ(message([&] {
                  Dense{3}({a, b});
              }),
              "dense: takes one value, applied to 2 (merge them first, e.g. with Concatenate)");
    EXPECT_EQ(message([&] { Add{}({a}); }), "add: merges two or more values, applied to 1");
    EXPECT_EQ(message([&] { Model(test::cpuContext(), in, Dense{3}(other)); }),
              "Model: a layer reads an Input of shape [1, 1, 6] that is not one of the model's inputs");
    EXPECT_EQ(message([&] { Model(test::cpuContext(), a, Dense{3}(a)); }),
              "Model: input 0 must be made by gltrain::Input, not be a layer's output (dense)");
    EXPECT_EQ(message([&] {
                  Model m(test::cpuContext(), in, Add{}({a, b}));
                  m.compile({});
              }),
              "compile: layer add_2: needs inputs of one shape but receives [batch, 8] from dense_0 and [batch, 4] "
              "from dense_1");
    EXPECT_EQ(message([&] {
                  Model m(test::cpuContext(), in, Subtract{}({a, a, a}));
                  m.compile({});
              }),
              "compile: layer subtract_1: subtracts two inputs but receives [batch, 8] from dense_0, [batch, 8] from "
              "dense_0 and [batch, 8] from dense_0");
    EXPECT_EQ(message([&] {
                  const SymbolicTensor img = Input(Shape3{2, 2, 3});
                  Concatenate cat;
                  cat.axis = 2;
                  Model m(test::cpuContext(), img, cat({Flatten{}(img), img}));
                  m.compile({});
              }),
              "compile: layer concatenate_1: needs all inputs flat or all images but receives [batch, 12] from "
              "flatten_0 and [batch, 2, 2, 3] from the model input");
}

// The same residual MLP as a model file: layers name their "inputs".
const char* kResidualJson = R"({
  "input": 5,
  "layers": [
    {"type": "dense", "units": 7, "activation": "tanh", "name": "h"},
    {"type": "dense", "units": 7, "name": "r"},
    {"type": "add", "inputs": ["h", "r"]},
    {"type": "dense", "units": 3}
  ]
})";

TEST(FunctionalModel, AModelFileNamesEachLayersInputs) {
    const ModelConfig c = parseModelConfig(kResidualJson, "model.json");
    ASSERT_EQ(c.inbound.size(), 4u);
    EXPECT_EQ(c.inbound[2], (std::vector<int>{0, 1}));
    const std::unique_ptr<Model> m = buildModel(test::cpuContext(), c);
    EXPECT_EQ(m->layerName(2), "add_2");
    EXPECT_EQ(m->inbound(3), (std::vector<int>{2}));
    EXPECT_EQ(m->inbound(1), (std::vector<int>{0}));
    EXPECT_EQ(m->outputShape(2), (Shape3{1, 1, 7}));

    auto config = [](const std::string& layers) { return R"({"input": 4, "layers": [)" + layers + "]}"; };
    EXPECT_EQ(message([&] { parseModelConfig(config(R"({"type": "dense", "units": 2, "inputs": ["d"]})"), "m.json"); }),
              "m.json: layers[0].inputs[0]: no layer named 'd' before this one (a layer reads the model's inputs or "
              "earlier layers: input)");
    EXPECT_EQ(message([&] {
                  parseModelConfig(config(R"({"type": "dense", "units": 2}, {"type": "add", "inputs": ["input", 3]})"),
                                   "m.json");
              }),
              "m.json: layers[1].inputs[1]: expected a layer name, got 3");
    EXPECT_EQ(message([&] { parseModelConfig(config(R"({"type": "dense", "units": 2, "inputs": []})"), "m.json"); }),
              "m.json: layers[0].inputs: expected a non-empty array of layer names (\"input\": the model's input), "
              "got []");
    // A layer that leads nowhere is an error, not a silently dropped branch.
    EXPECT_EQ(message([&] {
                  buildModel(test::cpuContext(), parseModelConfig(config(R"({"type": "dense", "units": 2},
                                                        {"type": "dense", "units": 3, "inputs": ["input"]})"),
                                                                  "m.json"));
              }),
              "m.json: compile: layer dense_0's output is used by no layer and is not a model output (dense_1)");
}

}  // namespace functional_model_test
}  // namespace
