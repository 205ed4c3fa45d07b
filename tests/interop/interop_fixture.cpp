// gltrain's side of the interop tests (tests/interop/CMakeLists.txt runs them
// in order; tfjs_check.mjs and torch_check.py are the other sides):
//
//   interop_fixture export <dir>
//     trains the MLP and the CNN below for a few steps on 256 real Fashion-MNIST
//     rows, then writes, for each model M in {mlp, cnn}: <dir>/M.safetensors (the
//     checkpoint), <dir>/M_tfjs/ (the TF.js Layers export) and, in
//     <dir>/expected.safetensors, "x" (16 held-out rows, 16 x 784) and "M" (gltrain's
//     predictions for them).
//   interop_fixture check-checkpoint <dir>
//     builds the same models from scratch, loads <dir>/M.safetensors and checks that
//     they predict "M" for "x" to 1e-5. Natively and, built with em++, in Chromium on
//     the very files the native run wrote (scripts/test.sh).
//   interop_fixture import <dir>
//     loads the models TensorFlow.js built and saved (<dir>/tfjs_M/model.json for M in
//     {cnn, gap}), checks their predictions against TF.js's own in
//     <dir>/tfjs_expected.safetensors to 1e-4, then fine-tunes each for a few steps
//     on real rows and checks that the loss went down.
//
// Errors are max |gltrain - expected| / max(1, max |expected|) over all values.
// Exit status 0 when every check passes; each check prints one line either way.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "gltrain/gltrain.hpp"
#include "gltrain/safetensors.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/tfjs_layers.hpp"
#ifndef __EMSCRIPTEN__
#include <filesystem>

#include "gltrain/idx.hpp"
#endif

using namespace gltrain;

namespace {

constexpr int kTrainRows = 256;  // rows 0..255 of the Fashion-MNIST test split
constexpr int kHeldOut = 16;     // rows 9000..9015
constexpr int kHeldOutFrom = 9000;

// The two models every world rebuilds (torch_check.py spells them in torch.nn).
// Batch-norm momentum 0.5 so that a few steps move the moving averages well
// away from their initial 0 and 1.
std::unique_ptr<Sequential> buildMlp(Context& ctx) {
    auto m = std::make_unique<Sequential>(ctx, 784);
    m->add(Dense{64, Activation::ReLU})
        .add(Dropout{0.2f})
        .add(Dense{32, Activation::Tanh})
        .add(BatchNormalization{0.5f, 1e-3f})
        .add(Dense{16, Activation::LeakyReLU, 0.1f})
        .add(Dense{10})
        .add(Softmax{});
    m->compile({});
    return m;
}

std::unique_ptr<Sequential> buildCnn(Context& ctx) {
    auto m = std::make_unique<Sequential>(ctx, Shape3{28, 28, 1});
    m->add(Conv2D{8, 3, 1, Padding::Same, Activation::ReLU})      // 28x28x8
        .add(BatchNormalization{0.5f, 1e-3f})
        .add(MaxPool2D{3, 2, Padding::Same})                      // 14x14x8, padding 0 before, 1 after
        .add(Conv2D{12, 3, 2, Padding::Same, Activation::Tanh})   // 7x7x12, padding 0 / 1
        .add(AveragePool2D{2, 2, Padding::Same})                  // 4x4x12, padding 0 / 1 (not counted)
        .add(BatchNormalization{0.5f, 1e-3f})
        .add(Conv2D{8, 3, 1, Padding::Valid, Activation::Softplus})  // 2x2x8
        .add(Flatten{})                                           // 32, NHWC order
        .add(Dense{16, Activation::Sigmoid})
        .add(Dense{10});
    m->compile({});
    return m;
}

double relativeError(const HostMatrix& got, const HostMatrix& want) {
    double scale = 1.0, err = 0.0;
    for (float v : want.data) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < want.data.size(); ++i) err = std::max(err, double(std::fabs(got.data[i] - want.data[i])));
    return got.data.size() == want.data.size() ? err / scale : INFINITY;
}

// One line per check; false when it fails.
bool report(const std::string& what, double error, double limit) {
    const bool ok = error <= limit;
    std::printf("%s %s: error %.3g (limit %.0e)\n", ok ? "ok  " : "FAIL", what.c_str(), error, limit);
    return ok;
}

HostMatrix rows(const HostMatrix& m, int from, int count) {
    return HostMatrix(count, m.cols,
                      std::vector<float>(m.data.begin() + std::ptrdiff_t(size_t(from) * size_t(m.cols)),
                                         m.data.begin() + std::ptrdiff_t(size_t(from + count) * size_t(m.cols))));
}

TensorData tensorOf(const HostMatrix& m) { return TensorData::fromMatrix(m); }

bool checkCheckpoints(Context& ctx, const std::string& dir) {
    const SafetensorsFile expected = loadSafetensorsFile(dir + "/expected.safetensors");
    const HostMatrix x = expected.at("x").toMatrix();
    bool ok = true;
    for (const char* name : {"mlp", "cnn"}) {
        auto model = std::string(name) == "mlp" ? buildMlp(ctx) : buildCnn(ctx);
        model->load(dir + "/" + name + ".safetensors");
        ok &= report(std::string(name) + ".safetensors loaded into a fresh model predicts what the writer predicted",
                     relativeError(model->predict(x), expected.at(name).toMatrix()), 1e-5);
    }
    return ok;
}

#ifndef __EMSCRIPTEN__
bool exportModels(Context& ctx, const std::string& dir) {
    std::filesystem::create_directories(dir);
    const Dataset data = loadFashionMnist(Split::Test);
    const HostMatrix train = rows(data.images, 0, kTrainRows);
    const std::vector<int> labels(data.labels.begin(), data.labels.begin() + kTrainRows);
    const HostMatrix x = rows(data.images, kHeldOutFrom, kHeldOut);
    std::vector<std::pair<std::string, TensorData>> expected = {{"x", tensorOf(x)}};
    for (const char* name : {"mlp", "cnn"}) {
        auto model = std::string(name) == "mlp" ? buildMlp(ctx) : buildCnn(ctx);
        FitOptions f;
        f.epochs = 1;
        f.batchSize = 32;
        const auto history = model->fit(train, labels, f);
        std::printf("%s: trained %ld steps, loss %.4f\n", name, model->step(), double(history.back().loss));
        model->save(dir + "/" + name + ".safetensors");
        saveTfjs(*model, dir + "/" + name + "_tfjs");
        expected.emplace_back(name, tensorOf(model->predict(x)));
    }
    saveSafetensorsFile(dir + "/expected.safetensors", expected);
    std::printf("wrote %s/{mlp,cnn}.safetensors, {mlp,cnn}_tfjs/, expected.safetensors\n", dir.c_str());
    return true;
}

bool importModels(Context& ctx, const std::string& dir) {
    const SafetensorsFile expected = loadSafetensorsFile(dir + "/tfjs_expected.safetensors");
    const HostMatrix x = expected.at("x").toMatrix();
    const Dataset data = loadFashionMnist(Split::Test);
    const HostMatrix train = rows(data.images, 0, kTrainRows);
    const std::vector<int> labels(data.labels.begin(), data.labels.begin() + kTrainRows);
    bool ok = true;
    for (const char* name : {"cnn", "gap"}) {
        const std::string path = dir + "/tfjs_" + name + "/model.json";
        auto model = loadTfjs(ctx, path);
        ok &= report(path + " predicts what TensorFlow.js predicted", relativeError(model->predict(x), expected.at(name).toMatrix()),
                     1e-4);
        const float before = model->evaluate(train, labels).loss;
        FitOptions f;
        f.epochs = 1;
        f.batchSize = 32;
        model->fit(train, labels, f);
        const float after = model->evaluate(train, labels).loss;
        const bool down = after < before;
        std::printf("%s fine-tuning %s: loss on the %d training rows %.4f -> %.4f after %ld steps\n", down ? "ok  " : "FAIL",
                    path.c_str(), kTrainRows, double(before), double(after), model->step());
        ok &= down;
    }
    return ok;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    const std::string usage = "usage: interop_fixture export|check-checkpoint|import <dir>";
    if (argc != 3) {
        std::fprintf(stderr, "%s\n", usage.c_str());
        return 2;
    }
    const std::string mode = argv[1], dir = argv[2];
    try {
        Context ctx;
        bool ok = false;
        if (mode == "check-checkpoint") ok = checkCheckpoints(ctx, dir);
#ifndef __EMSCRIPTEN__
        else if (mode == "export") ok = exportModels(ctx, dir);
        else if (mode == "import") ok = importModels(ctx, dir);
#endif
        else {
            std::fprintf(stderr, "interop_fixture: unknown mode '%s' here\n%s\n", mode.c_str(), usage.c_str());
            return 2;
        }
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "interop_fixture %s: %s\n", mode.c_str(), e.what());
        return 1;
    }
}
