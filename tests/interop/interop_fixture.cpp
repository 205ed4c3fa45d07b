// gltrain's side of the interop tests (tests/interop/CMakeLists.txt runs them
// in order; tfjs_check.mjs, torch_check.py and cli_check.sh are the other sides):
//
//   interop_fixture export <dir>
//     trains the MLP and the CNN described below for a few steps on 256 real
//     Fashion-MNIST rows, then writes, for each model M in {mlp, cnn}:
//     <dir>/M.safetensors (the checkpoint), <dir>/M.model.json (its description, for
//     `gltrain predict`), <dir>/M_tfjs/ (the TF.js Layers export) and, in
//     <dir>/expected.safetensors, "x" (the first 16 rows of the test split, 16 x 784;
//     trained on rows 16..271) and "M" (gltrain's predictions for them).
//     It also writes transformer_{init,data}.safetensors (writeTransformerSteps) and
//     {residual,attention}_{init,steps,data}.safetensors: a residual
//     block's and a causal attention block's initial weights, their first SGD steps'
//     batches and losses, and their weights after them, which torch_check.py repeats in PyTorch.
//   interop_fixture check-checkpoint <dir>
//     builds the same models from scratch, loads <dir>/M.safetensors and checks that
//     they predict "M" for "x" to 1e-5. Natively and, built with em++, in Chromium on
//     the very files the native run wrote (scripts/test.sh).
//   interop_fixture check-cli <dir>
//     checks <dir>/M_cli.csv, written by `gltrain predict` from the same checkpoints
//     and rows (cli_check.sh), against "M" to 1e-5.
//   interop_fixture import <dir>
//     loads the models TensorFlow.js built and saved (<dir>/tfjs_M/model.json for M in
//     {cnn, gap, act, shp, res, rnn}), checks their predictions against TF.js's own in
//     <dir>/tfjs_expected.safetensors to 1e-4, then fine-tunes each for a few steps
//     on real rows and checks that the loss went down; res (its base frozen), shp and rnn
//     go back to <dir>/{res,shp,rnn}_back_tfjs/ with gltrain's predictions; tfjs_siam (two
//     inputs, a shared Dense, two outputs) predicts TF.js's "match" and "value" of
//     <dir>/siam_expected.safetensors and goes back to <dir>/siam_back_tfjs/.
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

#include "gltrain/backend_choice.hpp"
#include "gltrain/gltrain.hpp"
#include "gltrain/model_config.hpp"
#include "gltrain/safetensors.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/tfjs_layers.hpp"
#ifndef __EMSCRIPTEN__
#include <filesystem>

#include "gltrain/file_io.hpp"
#include "gltrain/idx.hpp"
#include "gltrain/text_data.hpp"
#endif

using namespace gltrain;

namespace {

constexpr int kHeldOut = 16;     // rows 0..15 of the Fashion-MNIST test split (`gltrain predict --limit 16`)
constexpr int kTrainRows = 256;  // rows 16..271

// The two models every world rebuilds, as model descriptions (gltrain/model_config.hpp):
// this program and `gltrain predict` read them; torch_check.py spells them in torch.nn.
// Batch-norm momentum 0.5 so that a few steps move the moving averages well away
// from their initial 0 and 1.
const char* const kMlpJson = R"({
  "description": "interop MLP",
  "input": 784,
  "layers": [
    {"type": "dense", "units": 64, "activation": "relu"},
    {"type": "dropout", "rate": 0.2},
    {"type": "dense", "units": 32, "activation": "tanh"},
    {"type": "batchnormalization", "momentum": 0.5, "epsilon": 0.001},
    {"type": "dense", "units": 16, "activation": "leaky_relu", "alpha": 0.1},
    {"type": "dense", "units": 10},
    {"type": "softmax"}
  ],
  "compile": {"optimizer": {"type": "adam", "lr": 0.001}},
  "fit": {"epochs": 1, "batchSize": 32}
}
)";
const char* const kCnnJson = R"({
  "description": "interop CNN: odd 'same' paddings (the extra pixel after), batch norm, NHWC flatten",
  "input": [28, 28, 1],
  "layers": [
    {"type": "conv2d", "filters": 8, "kernelSize": 3, "padding": "same", "activation": "relu"},
    {"type": "batchnormalization", "momentum": 0.5, "epsilon": 0.001},
    {"type": "maxpool2d", "poolSize": 3, "stride": 2, "padding": "same"},
    {"type": "conv2d", "filters": 12, "kernelSize": 3, "stride": 2, "padding": "same", "activation": "tanh"},
    {"type": "averagepool2d", "poolSize": 2, "stride": 2, "padding": "same"},
    {"type": "batchnormalization", "momentum": 0.5, "epsilon": 0.001},
    {"type": "conv2d", "filters": 8, "kernelSize": 3, "padding": "valid", "activation": "softplus"},
    {"type": "flatten"},
    {"type": "dense", "units": 16, "activation": "sigmoid"},
    {"type": "dense", "units": 10}
  ],
  "compile": {"optimizer": {"type": "adam", "lr": 0.001}},
  "fit": {"epochs": 1, "batchSize": 32}
}
)";
// Shapes of the CNN: 28x28x8, 14x14x8 (max pool padding 0 before, 1 after), 7x7x12 (0 / 1),
// 4x4x12 (0 / 1, not counted in the average), 2x2x8, 32 in NHWC order, 16, 10.

struct Described {
    const char* name;
    const char* json;
};
const Described kModels[] = {{"mlp", kMlpJson}, {"cnn", kCnnJson}};

std::unique_ptr<Model> build(Context& ctx, const Described& m) {
    return buildModel(ctx, parseModelConfig(m.json, std::string(m.name) + ".model.json"));
}

double relativeError(const HostMatrix& got, const HostMatrix& want) {
    if (got.rows != want.rows || got.cols != want.cols) return INFINITY;
    double scale = 1.0, err = 0.0;
    for (float v : want.data) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < want.data.size(); ++i) err = std::max(err, double(std::fabs(got.data[i] - want.data[i])));
    return err / scale;
}

// One line per check; false when it fails.
bool report(const std::string& what, double error, double limit) {
    const bool ok = error <= limit;
    std::printf("%s %s: error %.3g (limit %.0e)\n", ok ? "ok  " : "FAIL", what.c_str(), error, limit);
    return ok;
}

bool checkCheckpoints(Context& ctx, const std::string& dir) {
    const SafetensorsFile expected = loadSafetensorsFile(dir + "/expected.safetensors");
    const HostMatrix x = expected.at("x").toMatrix();
    bool ok = true;
    for (const Described& m : kModels) {
        auto model = build(ctx, m);
        model->load(dir + "/" + m.name + ".safetensors");
        ok &= report(std::string(m.name) + ".safetensors loaded into a fresh model predicts what the writer predicted",
                     relativeError(model->predict(x), expected.at(m.name).toMatrix()), 1e-5);
    }
    return ok;
}

#ifndef __EMSCRIPTEN__
HostMatrix rows(const HostMatrix& m, int from, int count) {
    return HostMatrix(count, m.cols,
                      std::vector<float>(m.data.begin() + std::ptrdiff_t(size_t(from) * size_t(m.cols)),
                                         m.data.begin() + std::ptrdiff_t(size_t(from + count) * size_t(m.cols))));
}

TensorData tensorOf(const HostMatrix& m) { return TensorData::fromMatrix(m); }
// Columns [from, from + count) of every row.
HostMatrix columns(const HostMatrix& m, int from, int count) {
    HostMatrix out(m.rows, count);
    for (int r = 0; r < m.rows; ++r)
        for (int c = 0; c < count; ++c) out(r, c) = m(r, from + c);
    return out;
}

void writeText(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw IoError("cannot create " + path);
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) throw IoError("cannot write " + path);
}

// `gltrain predict --output` CSV: a header, then per row the class and the outputs y0, y1, ...
HostMatrix readPredictionsCsv(const std::string& path, int cols) {
    const std::vector<uint8_t> bytes = readFile(path, "predictions CSV");
    const std::string text(bytes.begin(), bytes.end());
    std::vector<float> values;
    size_t line = 0, rowsRead = 0;
    for (size_t at = 0; at < text.size(); ++line) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string l = text.substr(at, end - at);
        at = end + 1;
        if (line == 0 || l.empty()) continue;  // the header
        const char* p = l.c_str();
        char* next = nullptr;
        std::strtol(p, &next, 10);  // the class
        for (int c = 0; c < cols; ++c) {
            if (*next != ',')
                throw FormatError(path + ":" + std::to_string(line + 1) + ": expected " + std::to_string(cols) +
                                  " outputs");
            values.push_back(std::strtof(next + 1, &next));
        }
        ++rowsRead;
    }
    return HostMatrix(int(rowsRead), cols, std::move(values));
}

// The predictions `gltrain predict` wrote (tests/interop/cli_check.sh) for the same rows and checkpoints.
bool checkCli(const std::string& dir) {
    const SafetensorsFile expected = loadSafetensorsFile(dir + "/expected.safetensors");
    bool ok = true;
    for (const Described& m : kModels) {
        const HostMatrix want = expected.at(m.name).toMatrix();
        ok &= report(std::string("gltrain predict ") + m.name + ".model.json --checkpoint " + m.name +
                         ".safetensors predicts what the writer predicted",
                     relativeError(readPredictionsCsv(dir + "/" + m.name + "_cli.csv", want.cols), want), 1e-5);
    }
    return ok;
}

// A residual block whose first SGD steps torch_check.py repeats in PyTorch from the same
// initial weights and batches (Keras's "inputs" name what a layer reads; by default the one before).
const char* const kResidualJson = R"({
  "description": "interop residual block",
  "input": 784,
  "layers": [
    {"type": "dense", "units": 32, "activation": "tanh", "name": "d0"},
    {"type": "dense", "units": 32, "activation": "relu", "name": "d1"},
    {"type": "add", "inputs": ["d0", "d1"], "name": "add"},
    {"type": "dense", "units": 10, "name": "head"}
  ],
  "compile": {"optimizer": {"type": "sgd", "lr": 0.05}},
  "fit": {"epochs": 1, "batchSize": 16, "shuffle": false}
}
)";
constexpr int kResidualSteps = 3;

// A causal attention block (token and position embeddings, MultiHeadAttention of 2 heads
// of 8, a residual add, logits at each step) whose SGD steps torch_check.py repeats with
// attention written out in torch from the same weights and batches.
const char* const kAttentionJson = R"({
  "description": "interop attention block",
  "input": 7,
  "layers": [
    {"type": "embedding", "inputDim": 19, "outputDim": 12, "name": "tok"},
    {"type": "positionembedding", "sequenceLength": 9, "name": "pos"},
    {"type": "multiheadattention", "numHeads": 2, "keyDim": 8, "valueDim": 5, "causal": true, "name": "att"},
    {"type": "add", "inputs": ["pos", "att"], "name": "add"},
    {"type": "dense", "units": 19, "name": "head"}
  ],
  "compile": {"optimizer": {"type": "sgd", "lr": 0.5}, "loss": "sequence_softmax_cross_entropy"},
  "fit": {"epochs": 1, "batchSize": 6, "shuffle": false}
}
)";

// A model's first steps for torch_check.py to repeat, from `steps` batches of x and targets
// in order: <dir>/<name>_init.safetensors (its initial weights), <name>_steps (its weights
// after them) and <name>_data ("x", "labels": the targets, "losses": each step's).
void writeSteps(Context& ctx, const std::string& dir, const std::string& name, const char* json, const HostMatrix& x,
                const Targets& y, const HostMatrix& labels) {
    const ModelConfig config = parseModelConfig(json, name + ".model.json");
    auto model = buildModel(ctx, config);
    model->save(dir + "/" + name + "_init.safetensors");
    std::vector<float> losses;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    model->fit(x, y, config.fit, cb);
    model->save(dir + "/" + name + "_steps.safetensors");
    saveSafetensorsFile(dir + "/" + name + "_data.safetensors",
                        {{"x", tensorOf(x)},
                         {"labels", tensorOf(labels)},
                         {"losses", tensorOf(HostMatrix(1, int(losses.size()), losses))}});
    std::printf("wrote %s/%s_{init,steps,data}.safetensors: %zu SGD steps, losses %.4f .. %.4f\n", dir.c_str(),
                name.c_str(), losses.size(), double(losses.front()), double(losses.back()));
}

// Issue 39's reference character transformer (examples/models/char-transformer.json) for
// torch_check.py's transformer_steps: its initial weights, kTransformerSteps batches of
// kTransformerBatch windows of the fortunes corpus (web/data/fortunes.txt, which setup.sh
// builds) and each step's loss on the GPU and the CPU engine:
// transformer_{init,data}.safetensors. The model file's batch of 32 is cut to 4 windows:
// PyTorch with Debian's reference BLAS takes 5.6 s a step of 32.
constexpr int kTransformerSteps = 20, kTransformerBatch = 4;
void writeTransformerSteps(const std::string& dir) {
    ModelConfig config = loadModelConfig(GLTRAIN_SOURCE_DIR "/examples/models/char-transformer.json");
    config.fit.batchSize = kTransformerBatch;
    config.fit.steps = 0;
    config.fit.epochs = 1;
    config.fit.shuffle = false;
    config.fit.lossEvery = 1;
    const std::string corpus = GLTRAIN_SOURCE_DIR "/web/data/fortunes.txt";
    const TextData text(readFile(corpus, "the fortunes corpus (bash scripts/setup.sh builds it)"), TextOptions{});
    const TextWindows w = text.trainWindows(0, kTransformerSteps * kTransformerBatch);
    std::vector<std::pair<std::string, TensorData>> data = {{"x", tensorOf(w.x)}, {"y", tensorOf(w.y)}};
    for (BackendPreference engine : {BackendPreference::Gpu, BackendPreference::Cpu}) {
        ContextOptions o;
        o.backend = engine;
        Context ctx(o);
        auto model = buildModel(ctx, config);
        if (engine == BackendPreference::Gpu) model->save(dir + "/transformer_init.safetensors");
        std::vector<float> losses;
        Callbacks cb;
        cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
        model->fit(w.x, Targets(w.y), config.fit, cb);
        const char* name = engine == BackendPreference::Gpu ? "gpu" : "cpu";
        std::printf("char transformer on the %s engine: %zu AdamW steps of %d windows, losses %.4f .. %.4f\n", name,
                    losses.size(), kTransformerBatch, double(losses.front()), double(losses.back()));
        data.emplace_back(std::string("losses_") + name, tensorOf(HostMatrix(1, int(losses.size()), losses)));
    }
    saveSafetensorsFile(dir + "/transformer_data.safetensors", data);
}

bool exportModels(Context& ctx, const std::string& dir) {
    std::filesystem::create_directories(dir);
    const Dataset data = loadFashionMnist(Split::Test);
    const HostMatrix x = rows(data.images, 0, kHeldOut);
    const HostMatrix train = rows(data.images, kHeldOut, kTrainRows);
    const std::vector<int> labels(data.labels.begin() + kHeldOut, data.labels.begin() + kHeldOut + kTrainRows);
    std::vector<std::pair<std::string, TensorData>> expected = {{"x", tensorOf(x)}};
    for (const Described& m : kModels) {
        auto model = build(ctx, m);
        const ModelConfig config = parseModelConfig(m.json);
        const auto history = model->fit(train, labels, config.fit);
        std::printf("%s: trained %ld steps, loss %.4f\n", m.name, model->step(), double(history.back().loss));
        const std::string base = dir + "/" + m.name;
        model->save(base + ".safetensors");
        saveTfjs(*model, base + "_tfjs");
        writeText(base + ".model.json", m.json);
        expected.emplace_back(m.name, tensorOf(model->predict(x)));
    }
    saveSafetensorsFile(dir + "/expected.safetensors", expected);
    std::printf("wrote %s/{mlp,cnn}.safetensors, {mlp,cnn}.model.json, {mlp,cnn}_tfjs/, expected.safetensors\n",
                dir.c_str());

    // The residual block's first steps on real rows, and the attention block's on random
    // tokens (each step's targets: the tokens after its own).
    const int n = kResidualSteps * 16;
    const std::vector<int> stepLabels(labels.begin(), labels.begin() + n);
    HostMatrix labelColumn(n, 1);
    for (int r = 0; r < n; ++r) labelColumn.data[size_t(r)] = float(stepLabels[size_t(r)]);
    writeSteps(ctx, dir, "residual", kResidualJson, rows(train, 0, n), stepLabels, labelColumn);
    HostMatrix tokens(3 * 6, 8);
    for (size_t i = 0; i < tokens.data.size(); ++i) tokens.data[i] = float((i * 7 + i / 5) % 19);
    writeSteps(ctx, dir, "attention", kAttentionJson, columns(tokens, 0, 7), columns(tokens, 1, 7),
               columns(tokens, 1, 7));
    writeTransformerSteps(dir);
    return true;
}

bool importModels(Context& ctx, const std::string& dir) {
    const SafetensorsFile expected = loadSafetensorsFile(dir + "/tfjs_expected.safetensors");
    const HostMatrix x = expected.at("x").toMatrix();
    const Dataset data = loadFashionMnist(Split::Test);
    const HostMatrix train = rows(data.images, kHeldOut, kTrainRows);
    const std::vector<int> labels(data.labels.begin() + kHeldOut, data.labels.begin() + kHeldOut + kTrainRows);
    bool ok = true;
    for (const std::string name : {"cnn", "gap", "act", "shp", "res", "rnn"}) {
        const std::string path = dir + "/tfjs_" + name + "/model.json";
        auto model = loadTfjs(ctx, path);
        ok &= report(path + " predicts what TensorFlow.js predicted",
                     relativeError(model->predict(x), expected.at(name).toMatrix()), 1e-4);
        // The functional model fine-tunes with its base frozen: only its head trains.
        const bool functional = name == "res";
        const std::string base = model->layerName(0);
        const HostMatrix baseKernel = model->weight(base, "kernel");
        // (Its head is the Dense 'head', the Softmax split off it after it.)
        if (functional)
            for (size_t i = 0; model->layerName(i) != "head"; ++i) model->setTrainable(model->layerName(i), false);
        const float before = model->evaluate(train, labels).loss;
        FitOptions f;
        f.epochs = 1;
        f.batchSize = 32;
        model->fit(train, labels, f);
        const float after = model->evaluate(train, labels).loss;
        const bool down = after < before;
        std::printf("%s fine-tuning %s: loss on the %d training rows %.4f -> %.4f after %ld steps\n",
                    down ? "ok  " : "FAIL", path.c_str(), kTrainRows, double(before), double(after), model->step());
        ok &= down;
        if (functional)
            ok &= report(path + ": the frozen base kept its weights",
                         relativeError(model->weight(base, "kernel"), baseKernel), 0.0);
        // The functional model, the shape layers' and the recurrent ones go back for TF.js to load (tfjs_check.mjs
        // check-roundtrip).
        if (!functional && name != "shp" && name != "rnn") continue;
        saveTfjs(*model, dir + "/" + name + "_back_tfjs");
        saveSafetensorsFile(dir + "/" + name + "_back_expected.safetensors",
                            {{"x", tensorOf(x)}, {name, tensorOf(model->predict(x))}});
    }
    // Siamese towers built by TF.js: two inputs through a shared Dense, two heads; and back.
    {
        const std::string path = dir + "/tfjs_siam/model.json";
        const SafetensorsFile siam = loadSafetensorsFile(dir + "/siam_expected.safetensors");
        auto model = loadTfjs(ctx, path);
        const HostMatrix left = siam.at("left").toMatrix(), right = siam.at("right").toMatrix();
        const std::vector<HostMatrix> out = model->predict({left, right});
        ok &= report(path + " (the shared 'tower' as " + model->layerName(0) + ", " + model->layerName(1) +
                         ") predicts TensorFlow.js's match head",
                     relativeError(out.at(0), siam.at("match").toMatrix()), 1e-4);
        ok &= report(path + " predicts TensorFlow.js's value head",
                     relativeError(out.at(1), siam.at("value").toMatrix()), 1e-4);
        saveTfjs(*model, dir + "/siam_back_tfjs");
        saveSafetensorsFile(dir + "/siam_back_expected.safetensors", {{"left", tensorOf(left)},
                                                                      {"right", tensorOf(right)},
                                                                      {"match", tensorOf(out[0])},
                                                                      {"value", tensorOf(out[1])}});
    }
    // A model of two inputs and two outputs, exported for TF.js to load (check-roundtrip):
    // an image and a flat input, a Concatenate of the two, a classification and a value head.
    const HostMatrix image = rows(data.images, kHeldOut, 6);
    HostMatrix meta(6, 3);
    for (size_t i = 0; i < meta.data.size(); ++i) meta.data[i] = float(std::sin(0.7 * double(i)));
    const SymbolicTensor img = Input(Shape3{28, 28, 1}, "image"), extra = Input(3, "extra");
    const SymbolicTensor features = Flatten{}(MaxPool2D{4}(Conv2D{4, 3, 1, Padding::Same, Activation::ReLU}(img)));
    const SymbolicTensor joined = Concatenate{}({features, Dense{5, Activation::Tanh}(extra)});
    Model multi(ctx, {img, extra}, {Dense{10}(joined), Dense{2}(extra)});
    CompileOptions c;
    c.losses = {LossKind::SoftmaxCrossEntropy, LossKind::MeanSquaredError};
    multi.compile(c);
    const std::vector<HostMatrix> out = multi.predict({image, meta});
    saveTfjs(multi, dir + "/multi_tfjs");
    saveSafetensorsFile(dir + "/multi_expected.safetensors", {{"image", tensorOf(image)},
                                                              {"extra", tensorOf(meta)},
                                                              {"classes", tensorOf(out[0])},
                                                              {"values", tensorOf(out[1])}});
    return ok;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    const std::string usage = "usage: interop_fixture export|check-checkpoint|import|check-cli <dir>";
    if (argc != 3) {
        std::fprintf(stderr, "%s\n", usage.c_str());
        return 2;
    }
    const std::string mode = argv[1], dir = argv[2];
    try {
        Context ctx;
        chooseFasterBackend(ctx);
        bool ok = false;
        if (mode == "check-checkpoint") ok = checkCheckpoints(ctx, dir);
#ifndef __EMSCRIPTEN__
        else if (mode == "export") ok = exportModels(ctx, dir);
        else if (mode == "import") ok = importModels(ctx, dir);
        else if (mode == "check-cli") ok = checkCli(dir);
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
