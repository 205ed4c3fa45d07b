// The shape layers Reshape, Permute, ZeroPadding2D, Cropping2D and
// UpSampling2D in models: one SGD step of Conv2D -> the layer(s) -> Flatten ->
// Dense on each engine (the GPU's kernels and the CPU backend) against the
// same step composed in double from the reference (gltrain/reference/spatial.hpp),
// and their errors on bad fields, naming the layer and the field.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/tfjs_layers.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/reference/spatial.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace model_spatial_layers_test {

using namespace gltrain;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;
using gltrain::test::randomMatrix;

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

MatD sgd(MatD w, const MatD& g, double lr) {
    for (size_t i = 0; i < w.data.size(); ++i) w.data[i] -= lr * g.data[i];
    return w;
}

// What the layers under test do to the conv's output, and the adjoint of it, in double.
struct Reference {
    std::function<MatD(const MatD&)> forward, backward;
};

// Conv2D 3x3 'same' (linear, F = 2 filters) on `in` -> `layers` -> Flatten -> Dense 3: one SGD step
// against the reference. fp32 against double: every weight to 1e-4 of its largest value.
void expectStep(Context& ctx, Shape3 in, const std::vector<Layer>& layers, const Reference& r) {
    const int N = 3, F = 2;
    SCOPED_TRACE(std::string(ctx.caps().backend == Backend::Cpu ? "CPU" : "GPU") + " engine, " +
                 layerType(layers.at(0)));
    Sequential m(ctx, in);
    m.add(Conv2D{F, 3, 1, Padding::Same});
    for (const Layer& l : layers) std::visit([&](const auto& layer) { m.add(layer); }, l);
    m.add(Flatten{}).add(Dense{3});
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.5f;
    m.compile(c);
    const std::string dense = "dense_" + std::to_string(layers.size() + 2);
    const int features = m.outputShape(layers.size() + 1).size();
    const HostMatrix x = randomMatrix(N, in.size(), 51), w1 = randomMatrix(9 * in.channels, F, 52);
    const HostMatrix b1 = randomMatrix(1, F, 53), w2 = randomMatrix(features, 3, 54), b2 = randomMatrix(1, 3, 55);
    m.setWeight("conv2d_0", "kernel", w1);
    m.setWeight("conv2d_0", "bias", b1);
    m.setWeight(dense, "kernel", w2);
    m.setWeight(dense, "bias", b2);
    const std::vector<int> labels = {2, 0, 1};
    FitOptions f;
    f.batchSize = N;
    f.shuffle = false;
    m.fit(x, labels, f);

    const double lr = 0.5;
    const Window conv = Window::make("conv", in, 3, 3, 1, 1, Padding::Same, F);
    const MatD X = x.cast<double>(), W1 = w1.cast<double>(), B1 = b1.cast<double>();
    const MatD W2 = w2.cast<double>(), B2 = b2.cast<double>();
    const MatD Z = ref::conv2d(X, W1, B1, conv), S = r.forward(Z);
    ASSERT_EQ(S.cols, features);
    const MatD dL = ref::softmaxCrossEntropy(ref::addBias(ref::matmul(S, W2), B2), labels).grad;
    const MatD dZ = r.backward(ref::matmulNT(dL, W2));
    EXPECT_LE(maxRelDiff(m.weight(dense, "kernel"), sgd(W2, ref::matmulTN(S, dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight(dense, "bias"), sgd(B2, ref::biasGrad(dL), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), sgd(W1, ref::conv2dBackwardFilter(X, dZ, conv), lr)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "bias"), sgd(B1, ref::channelSum(dZ, F), lr)), 1e-4);
}
void expectStepOnBothEngines(Shape3 in, const std::vector<Layer>& layers, const Reference& r) {
    expectStep(test::context(), in, layers, r);
    expectStep(test::cpuContext(), in, layers, r);
}

TEST(ModelSpatialLayers, ZeroPaddingStepMatchesTheReference) {
    const Shape3 z{4, 3, 2};  // the conv's output
    const Margins pad{1, 2, 0, 3};
    const Shape3 padded{z.height + 3, z.width + 3, 2};
    expectStepOnBothEngines({4, 3, 1}, {ZeroPadding2D{pad}},
                            {[&](const MatD& v) { return ref::padImages(v, z, pad); },
                             [&](const MatD& g) { return ref::cropImages(g, padded, pad); }});
}

TEST(ModelSpatialLayers, CroppingStepMatchesTheReference) {
    const Shape3 z{5, 6, 2};
    const Margins crop{1, 0, 2, 1};
    const Shape3 cropped{4, 3, 2};
    expectStepOnBothEngines({5, 6, 2}, {Cropping2D{crop}},
                            {[&](const MatD& v) { return ref::cropImages(v, z, crop); },
                             [&](const MatD& g) { return ref::padImages(g, cropped, crop); }});
}

TEST(ModelSpatialLayers, UpSamplingStepsMatchTheReference) {
    const Shape3 z{3, 4, 2};
    for (Interpolation how : kAllInterpolations) {
        SCOPED_TRACE(interpolationName(how));
        const Size2 size{2, 3};
        expectStepOnBothEngines({3, 4, 1}, {UpSampling2D{size, how}},
                                {[&](const MatD& v) { return ref::upsampleImages(v, z, size, how); },
                                 [&](const MatD& g) { return ref::upsampleImagesBackward(g, z, size, how); }});
    }
}

TEST(ModelSpatialLayers, PermuteStepsMatchTheReference) {
    // An image's channels first: [3, 4, 2] -> [2, 3, 4].
    expectStepOnBothEngines({3, 4, 1}, {Permute{{3, 1, 2}}},
                            {[](const MatD& v) {
                                 return ref::permuteAxes(v, {3, 4, 2}, {2, 0, 1});
                             },
                             [](const MatD& g) {
                                 return ref::permuteAxes(g, {2, 3, 4}, {1, 2, 0});
                             }});
    // A sequence's steps and features swapped after a Reshape: [3, 5, 2] -> [15, 2] -> [2, 15].
    Permute swap{{2, 1}};
    expectStepOnBothEngines({3, 5, 2}, {Reshape{{-1, 2}}, swap},
                            {[](const MatD& v) {
                                 return ref::permuteAxes(v, {15, 2}, {1, 0});
                             },
                             [](const MatD& g) {
                                 return ref::permuteAxes(g, {2, 15}, {1, 0});
                             }});
}

TEST(ModelSpatialLayers, ReshapeMovesNoDataAndResolvesMinusOne) {
    Sequential m(test::context(), Shape3{4, 6, 1});
    m.add(Conv2D{2, 3, 1, Padding::Same}).add(Reshape{{8, -1, 3}}).add(Flatten{}).add(Dense{3});
    m.compile({});
    EXPECT_EQ(m.outputShape(1), (Shape3{8, 2, 3}));
    // Its step is the model without it: the same values, in the same order.
    expectStepOnBothEngines({4, 6, 1}, {Reshape{{8, -1, 3}}},
                            {[](const MatD& v) { return v; }, [](const MatD& g) { return g; }});
}

TEST(ModelSpatialLayers, BadFieldsAreRefusedNamingTheLayerAndField) {
    auto compileError = [](Shape3 in, std::vector<Layer> layers) {
        return message([&] {
            Sequential m(test::context(), in);
            for (Layer& l : layers) std::visit([&](auto& layer) { m.add(layer); }, l);
            m.add(Flatten{}).add(Dense{2});
            m.compile({});
        });
    };
    auto has = [](const std::string& what, const std::string& part) {
        EXPECT_NE(what.find(part), std::string::npos) << what;
    };
    has(compileError({4, 4, 2}, {ZeroPadding2D{Margins{1, -1, 0, 0}}}),
        "compile: layer zero_padding2d_0: padding must be >= 0, got [[1, -1], [0, 0]]");
    has(compileError({4, 4, 2}, {Cropping2D{Margins{2, 2, 0, 0}}}),
        "compile: layer cropping2d_0: cropping [2, 0] leaves nothing of the image: it receives [batch, 4, "
        "4, 2] from the model input");
    has(compileError({4, 4, 2}, {Cropping2D{-1}}), "compile: layer cropping2d_0: cropping must be >= 0, got -1");
    has(compileError({4, 4, 2}, {Permute{{1, 1, 2}}}),
        "compile: layer permute_0: dims [1, 1, 2] is not a permutation of 1..3");
    has(compileError({4, 4, 2}, {Permute{{2, 1}}}), "compile: layer permute_0: dims [2, 1] permutes 2 axes");
    has(compileError({4, 4, 2}, {Permute{{0, 1}}}),
        "compile: layer permute_0: dims values must be in [1, 3], got [0, 1]");
    has(compileError({4, 4, 2}, {Reshape{{5, -1}}}),
        "compile: layer reshape_0: targetShape [5, -1] does not hold 32 values per example");
    has(compileError({4, 4, 2}, {Reshape{{4, 4, 3}}}),
        "compile: layer reshape_0: targetShape [4, 4, 3] does not hold 32 values per example");
    has(compileError({4, 4, 2}, {Reshape{{-1, -1}}}), "compile: layer reshape_0: targetShape may have one -1, got 2");
    has(compileError({4, 4, 2}, {UpSampling2D{Size2{0, 2}}}), "compile: layer up_sampling2d_0: size must be positive");
    has(compileError({1, 1, 6}, {UpSampling2D{}}), "compile: layer up_sampling2d_0: needs image input");
    // Model files: the field, where it is.
    auto parseError = [](const char* layer) {
        return message([&] { layerFromJson(nlohmann::json::parse(layer), "model.json", "layers[1]"); });
    };
    has(parseError(R"({"type": "zeropadding2d", "padding": [[1, -2], [0, 0]]})"),
        "model.json: layers[1].padding[0][1]: expected an integer >= 0, got -2");
    has(parseError(R"({"type": "cropping2d", "cropping": [1, 2, 3]})"),
        "model.json: layers[1].cropping: expected n, [h, w] or [[top, bottom], [left, right]], got an array");
    has(parseError(R"({"type": "permute", "dims": [4, 1]})"),
        "model.json: layers[1].dims[0]: expected an integer in [1, 3], got 4");
    has(parseError(R"({"type": "upsampling2d", "interpolation": "bicubic"})"),
        "model.json: layers[1].interpolation: unknown value 'bicubic' (valid: nearest, bilinear)");
    has(parseError(R"({"type": "reshape"})"), "targetShape");
}

TEST(ModelSpatialLayers, KerasFormsOfPaddingReadAndPrint) {
    const auto read = [](const char* j) {
        return std::get<ZeroPadding2D>(layerFromJson(nlohmann::json::parse(j), "model.json", "layers[0]")).padding;
    };
    EXPECT_EQ(read(R"({"type": "zeropadding2d", "padding": 2})"), Margins(2));
    EXPECT_EQ(read(R"({"type": "zeropadding2d", "padding": [1, 3]})"), (Margins{1, 1, 3, 3}));
    EXPECT_EQ(read(R"({"type": "zeropadding2d", "padding": [[1, 0], [2, 3]]})"), (Margins{1, 0, 2, 3}));
    EXPECT_EQ(layerToJson(ZeroPadding2D{Margins{1, 3}})["padding"].dump(), "[1,3]");
    EXPECT_EQ(layerToJson(ZeroPadding2D{Margins{2}})["padding"].dump(), "2");
}

TEST(ModelSpatialLayers, TfjsRoundTripKeepsEveryField) {
    Sequential m(test::cpuContext(), Shape3{6, 5, 1});
    m.add(Conv2D{2, 3, 1, Padding::Same})
        .add(ZeroPadding2D{Margins{1, 0, 2, 1}})
        .add(Cropping2D{Margins{0, 1}})
        .add(UpSampling2D{Size2{2, 1}, Interpolation::Bilinear})
        .add(Reshape{{-1, 2}})
        .add(Permute{{2, 1}})
        .add(Flatten{})
        .add(Dense{3});
    m.compile({});
    const TfjsArtifacts t = exportTfjs(m);
    const nlohmann::json j = nlohmann::json::parse(t.modelJson);
    const nlohmann::json& layers = j["modelTopology"]["config"]["layers"];
    EXPECT_EQ(layers[1]["config"]["padding"], nlohmann::json::parse("[[1, 0], [2, 1]]"));
    EXPECT_EQ(layers[2]["config"]["cropping"], nlohmann::json::parse("[[0, 0], [1, 1]]"));
    EXPECT_EQ(layers[3]["config"]["size"], nlohmann::json::parse("[2, 1]"));
    EXPECT_EQ(layers[3]["config"]["interpolation"], "bilinear");
    EXPECT_EQ(layers[4]["config"]["target_shape"], nlohmann::json::parse("[-1, 2]"));
    EXPECT_EQ(layers[5]["config"]["dims"], nlohmann::json::parse("[2, 1]"));
    const TfjsModel back = parseTfjs(t.modelJson, t.weightData);
    ASSERT_EQ(back.layers.size(), 8u);
    EXPECT_EQ(std::get<ZeroPadding2D>(back.layers[1]).padding, (Margins{1, 0, 2, 1}));
    EXPECT_EQ(std::get<Cropping2D>(back.layers[2]).cropping, (Margins{0, 1}));
    EXPECT_EQ(std::get<UpSampling2D>(back.layers[3]).size, (Size2{2, 1}));
    EXPECT_EQ(std::get<UpSampling2D>(back.layers[3]).interpolation, Interpolation::Bilinear);
    EXPECT_EQ(std::get<Reshape>(back.layers[4]).targetShape, (std::vector<int>{-1, 2}));
    EXPECT_EQ(std::get<Permute>(back.layers[5]).dims, (std::vector<int>{2, 1}));
}

}  // namespace model_spatial_layers_test
}  // namespace
