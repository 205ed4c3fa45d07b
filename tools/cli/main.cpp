// gltrain: train, evaluate and run models described in JSON (the JavaScript
// API's vocabulary, gltrain/model_config.hpp) on IDX or CSV data, on whatever
// EGL device is present. `gltrain --help` lists the commands.
//
// Exit status: 0 done, 1 a runtime error (bad file, training stopped on NaN,
// no GPU context), 2 a usage error, 128 + signal when SIGINT/SIGTERM stopped
// training (after the last step finished and a checkpoint was written).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "args.hpp"
#include "data.hpp"
#include "gltrain/backend_choice.hpp"
#include "gltrain/gltrain.hpp"
#include "gltrain/model_config.hpp"
#include "gltrain/version.hpp"
#include "progress.hpp"

namespace gltrain::cli {
namespace {

const char* const kUsage =
    R"(gltrain )" GLTRAIN_VERSION R"( - train neural networks on the GPU through OpenGL ES 3 (EGL)

usage:
  gltrain train MODEL.json --data SOURCE [options]    train; write a safetensors checkpoint
  gltrain evaluate MODEL.json --checkpoint FILE --data SOURCE [options]
                                                      print the loss (and accuracy) on SOURCE
  gltrain predict MODEL.json --checkpoint FILE --data SOURCE [--output FILE]
                                                      write the model's outputs as CSV
  gltrain generate MODEL.json --checkpoint FILE --prompt TEXT [--length N]
                                                      continue TEXT with a byte-level language model
  gltrain inspect CHECKPOINT                          list a checkpoint's tensors and metadata
  gltrain --info                                      the GPU context's capabilities
  gltrain --version | --help | COMMAND --help

SOURCE is fashion-mnist (Debian's dataset-fashion-mnist), a directory of IDX
files named as MNIST's (train-images-idx3-ubyte[.gz], t10k-...), a CSV file
(*.csv), or --images FILE --labels FILE (IDX). MODEL.json describes the input,
the layers, compile and fit options in the JavaScript API's vocabulary:
  {"input": [28, 28, 1], "layers": [{"type": "flatten"}, {"type": "dense", "units": 10}],
   "compile": {"optimizer": {"type": "adam", "lr": 0.001}}, "fit": {"epochs": 2, "batchSize": 128}}
)";

const char* const kDataHelp = R"(data:
  --data SOURCE         fashion-mnist | DIR (IDX files as MNIST names them) | FILE.csv
  --images FILE         an IDX file of images (unsigned bytes), instead of --data
  --labels FILE         its IDX file of labels
  --split train|test    which files of fashion-mnist or DIR (default: %s)
  --label-column C      CSV: the label column, by header name or index (0-based, -1 the last;
                        default: %s); none: no label column
  --header, --no-header CSV: the first line is (not) a header (default: detected)
  --scale S             multiply every input value by S (default 1/255 for IDX, 1 for CSV)
  --limit N             only the first N rows
)";

const char* const kDeviceHelp = R"(device:
  --egl-platform LIST   EGL platforms to try, comma-separated (default device,surfaceless,default)
  --egl-device N        with the device platform: the device index (default: each in turn)
  --backend B           auto | gpu | cpu: the engine that trains (default auto: the GPU when it
                        renders float textures, else the CPU; on a software renderer the faster
                        of the two by a startup matmul; --info and the run say which and why)
  --compute C           auto | on | off: compute-shader kernels (OpenGL ES 3.1; default auto: on
                        a hardware GPU, not on a software renderer; --info says which and why)
)";

const char* const kTrainHelp = R"(usage: gltrain train MODEL.json --data SOURCE [options]

Trains the model of MODEL.json and writes a safetensors checkpoint (weights,
optimizer state, step) atomically. Ctrl-C (SIGINT) or SIGTERM stops after the
current step, writes the checkpoint and exits with 130 (143); --resume it later.
A run locks its checkpoint (FILE.lock): a second run writing the same file is
refused at start. A checkpoint holding NaN or Inf is never written: the file
keeps the last good one.

training:
  --epochs N            total epochs (overrides fit.epochs; a resumed run counts the epochs already done)
  --steps N             train until step N instead, however many epochs that takes (overrides fit.steps);
                        text data then draws N x batch fresh random windows, none trained twice
  --batch N             batch size (overrides fit.batchSize)
  --checkpoint FILE     where to write (default: the --resume file, else MODEL.safetensors here)
  --resume FILE         continue from a checkpoint: weights, optimizer state and step
  --reset-optimizer     with --resume: take the checkpoint's weights only, and start the optimizer
                        afresh at step 0 (a checkpoint of another optimizer, or a new learning rate)
  --every N             also write the checkpoint every N steps
  --progress MODE       auto (a bar on a terminal, lines otherwise), bar or lines
  --log-every N         lines: one every N steps (default: 10 per epoch)
  --early-stopping N    stop after N epochs without a better val_loss (loss without validation data),
                        ending in the best epoch's state (overrides fit.earlyStopping)
  --save-best FILE      also write the checkpoint of the best epoch so far (by val_loss, or loss
                        without validation data) to FILE, atomically, whenever an epoch improves it
)";

const char* const kEvaluateHelp = R"(usage: gltrain evaluate MODEL.json --checkpoint FILE --data SOURCE [options]

Prints loss=, accuracy= (softmax cross-entropy models) and rows= for the data.

  --checkpoint FILE     the weights to evaluate
  --batch N             rows per pass (default 256)
)";

const char* const kPredictHelp = R"(usage: gltrain predict MODEL.json --checkpoint FILE --data SOURCE [options]

Writes one CSV line per row: the predicted class (softmax cross-entropy models)
and the model's outputs y0, y1, ... (probabilities after a softmax layer).

  --checkpoint FILE     the weights to use
  --output FILE         write the CSV there instead of stdout
  --batch N             rows per pass (default 256)
)";

const char* const kGenerateHelp = R"(usage: gltrain generate MODEL.json --checkpoint FILE --prompt TEXT [options]

Continues TEXT (its bytes are the tokens) with a byte-level language model: one
input of [context] token ids, logits [context, vocab] at each step, trained with
sequence_softmax_cross_entropy. Each new byte reruns the model on the last
context bytes. Prints TEXT and its continuation.

  --checkpoint FILE     the weights to use
  --prompt TEXT         the bytes to continue
  --length N            bytes to add (default 100)
  --temperature T       divides the logits before sampling (default 1; 0: always the most likely byte)
  --top-k K             sample among the K most likely bytes only (default 0: all)
  --seed S              the draws' seed (default 1): the same seed gives the same bytes
)";

// ---- signals -----------------------------------------------------------------

// The signal that asked training to stop (0: none). A handler can only reach
// static storage, and only through a volatile sig_atomic_t, so this one flag
// is global; the loop in train() reads it between steps.
volatile std::sig_atomic_t g_stopSignal = 0;

extern "C" void onStopSignal(int signal) { g_stopSignal = signal; }

// SA_RESETHAND: a second Ctrl-C gets the default action and ends the process
// at once (should a step hang, say); the checkpoint file is never half-written.
void installStopHandlers() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

// ---- shared pieces -----------------------------------------------------------

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep)) out.push_back(cur);
    return out;
}

// The options every command that makes a context accepts (contextOptions reads them; not
// formatted, as GLTRAIN_CLI_DATA_OPTIONS).
// clang-format off
#define GLTRAIN_CLI_DEVICE_OPTIONS {"--egl-platform", true}, {"--egl-device", true}, {"--backend", true}, {"--compute", true}
// clang-format on

ContextOptions contextOptions(const Args& a) {
    ContextOptions o;
    if (a.has("--egl-platform")) o.eglPlatforms = split(a.value("--egl-platform"), ',');
    o.eglDevice = int(a.integer("--egl-device", -1, 0));  // (an int: integer()'s range)
    const std::string backend = a.choice("--backend", "auto", {"auto", "gpu", "cpu"});
    o.backend = backend == "cpu"   ? BackendPreference::Cpu
                : backend == "gpu" ? BackendPreference::Gpu
                                   : BackendPreference::Auto;
    const std::string compute = a.choice("--compute", "auto", {"auto", "on", "off"});
    o.compute = compute == "on"    ? ComputePreference::On
                : compute == "off" ? ComputePreference::Off
                                   : ComputePreference::Auto;
    return o;
}

std::string modelPath(const Args& a, const char* command) {
    if (a.positional().empty()) throw UsageError(std::string("no model file: gltrain ") + command + " MODEL.json ...");
    if (a.positional().size() > 1) throw UsageError("unexpected argument '" + a.positional()[1] + "'");
    return a.positional()[0];
}

std::string shapeText(Shape3 s) {
    return s.height == 1 && s.width == 1 ? "[" + std::to_string(s.channels) + "]" : s.str();
}

void printSummary(const ModelConfig& config, const Model& model) {
    const std::vector<Model::LayerSummary> layers = model.summary();
    // A stack of layers lists them; a functional model also says what each reads.
    const bool stack = model.isStack();
    long total = 0;
    for (const auto& l : layers) total += long(l.parameters);
    std::printf("model: %s%s%s, input %s, %zu layers, %ld parameters\n", config.source.c_str(),
                config.description.empty() ? "" : " - ", config.description.c_str(),
                shapeText(model.inputShape()).c_str(), model.layerCount(), total);
    for (const auto& l : layers) {
        std::string from;
        for (const std::string& n : l.inbound) from += (from.empty() ? "<- " : ", ") + n;
        std::printf("  %-26s %-16s %-*ld%s%s%s\n", l.name.c_str(), shapeText(l.output).c_str(), stack ? 0 : 9,
                    long(l.parameters), stack ? "" : from.c_str(), l.trainable ? "" : " (frozen)",
                    l.shares.empty() ? "" : (" (shares " + l.shares + "'s weights)").c_str());
    }
}

// Messages go to `log`: stdout, or stderr when stdout carries the results (predict).
Data readData(const DataOptions& o, const Model& model, const ModelConfig& config, bool needTargets, std::FILE* log) {
    Data d = loadData(o, model, needTargets);
    if (d.x.cols != model.inputSize())
        throw ArgumentError("data " + d.description + " has " + std::to_string(d.x.cols) +
                            " values per row, the model (" + config.source + ": input " + shapeText(config.input) +
                            ") takes " + std::to_string(model.inputSize()));
    std::fprintf(log, "data: %d rows of %d values from %s\n", d.x.rows, d.x.cols, d.description.c_str());
    return d;
}

// ---- the checkpoint file -----------------------------------------------------------

// Refuses, before any training, a --checkpoint that could only fail at the
// end: a directory or other non-file where the file goes, or a directory that
// is missing or not writable.
void checkCheckpointPath(const std::string& checkpoint) {
    struct stat st;
    if (::stat(checkpoint.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            throw IoError("--checkpoint " + checkpoint + ": is a directory (name a file in it, e.g. " + checkpoint +
                          (checkpoint.back() == '/' ? "" : "/") + "model.safetensors)");
        throw IoError("--checkpoint " + checkpoint + ": is not a regular file (the checkpoint is renamed over it)");
    }
    const std::string dir =
        checkpoint.find('/') == std::string::npos ? "." : checkpoint.substr(0, checkpoint.rfind('/') + 1);
    if (::access(dir.c_str(), W_OK) != 0)
        throw IoError("--checkpoint " + checkpoint + ": cannot write in " + dir + ": " + std::strerror(errno));
}

// An exclusive lock on a checkpoint for the length of a training run, so that
// two runs never write one file in turns: flock() on CHECKPOINT.lock, which
// holds the owner's pid for the message the second run gets. The kernel drops
// a flock when its process dies, so a lock file left by a killed run is taken
// over. Creating the file also proves the directory writable (access() says
// yes to root on any directory).
class CheckpointLock {
public:
    explicit CheckpointLock(const std::string& checkpoint) : path_(checkpoint + ".lock") {
        for (;;) {
            fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
            if (fd_ < 0)
                throw IoError("--checkpoint " + checkpoint + ": cannot create its lock file " + path_ + ": " +
                              std::strerror(errno));
            if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
                const int err = errno;
                char buf[24] = {};
                const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
                ::close(fd_);
                if (err != EWOULDBLOCK)
                    throw IoError("--checkpoint " + checkpoint + ": cannot lock " + path_ + ": " + std::strerror(err));
                const long pid = n > 0 ? std::strtol(buf, nullptr, 10) : 0;
                throw IoError("checkpoint " + checkpoint + " is in use by " +
                              (pid > 0 ? "process " + std::to_string(pid) : std::string("another process")) +
                              " (which holds " + path_ + "); give this run another --checkpoint");
            }
            // The owner removes the file as it ends: if it did so between our open()
            // and our flock(), the lock is on a removed file, and the next run would
            // create and lock a new one. Lock the file that is there.
            struct stat held, there;
            if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &there) == 0 && held.st_dev == there.st_dev &&
                held.st_ino == there.st_ino)
                break;
            ::close(fd_);
        }
        // Best effort: a full disk may refuse even these bytes, and the lock holds without them.
        const std::string pid = std::to_string(long(::getpid())) + "\n";
        if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
        }
    }
    ~CheckpointLock() {
        ::unlink(path_.c_str());  // while still locked, so no other run holds the name in between
        ::close(fd_);
    }
    CheckpointLock(const CheckpointLock&) = delete;
    CheckpointLock& operator=(const CheckpointLock&) = delete;

private:
    std::string path_;
    int fd_ = -1;
};

// A checkpoint that would hold NaN or Inf: not written.
struct CheckpointNotFinite : Error {
    using Error::Error;
};

// Writes the model's checkpoint to `path` atomically, after reading the bytes
// back as a resume will: they must parse, and every value must be finite. The
// library does not produce other checkpoints; this is the program's last line
// of defence for the user's file, which a NaN checkpoint would replace with
// one that cannot be resumed.
void writeCheckpoint(const Model& model, const std::string& path) {
    std::vector<uint8_t> bytes = model.saveCheckpoint();
    // Test hook (cli_test.sh): a NaN as the data section's first value, to show
    // that such a checkpoint is refused. It only ever makes a save fail.
    if (std::getenv("GLTRAIN_TEST_NAN_IN_CHECKPOINT") && bytes.size() >= 8) {
        const size_t at = 8 + size_t(st_detail::le(bytes.data(), 8));
        const uint8_t nan[4] = {0x00, 0x00, 0xc0, 0x7f};  // F32 quiet NaN, little-endian
        if (at <= bytes.size() - 4) std::memcpy(&bytes[at], nan, 4);
    }
    const SafetensorsFile file = parseSafetensors(bytes, path + " (as about to be written)");
    for (const std::string& name : file.names) {
        const TensorData& t = file.tensors.at(name);
        if (!isFloatDtype(t.dtype)) continue;
        const std::vector<float> values = t.floats();
        for (size_t i = 0; i < values.size(); ++i)
            if (!std::isfinite(values[i]))
                throw CheckpointNotFinite("checkpoint " + path + " not written at step " +
                                          std::to_string(model.step()) + ": tensor '" + name + "' holds " +
                                          (std::isnan(values[i]) ? "NaN" : "Inf") + " (element " + std::to_string(i) +
                                          ")");
    }
    writeFileAtomic(path, bytes, "checkpoint");
}

// What a failed save loses: "steps A..B are not saved; PATH still holds step S".
std::string unsavedSteps(const std::string& path, long lastSaved, long now) {
    std::string text = lastSaved + 1 == now
                           ? "step " + std::to_string(now) + " is not saved"
                           : "steps " + std::to_string(lastSaved + 1) + ".." + std::to_string(now) + " are not saved";
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return text + "; no checkpoint was written to " + path;
    try {
        const SafetensorsFile f = loadSafetensorsFile(path);
        auto step = f.metadata.find("step");
        if (step != f.metadata.end()) return text + "; " + path + " still holds step " + step->second;
    } catch (const std::exception&) {
    }
    return text + "; " + path + " is left as it was";
}

// ---- commands ----------------------------------------------------------------

int info(const std::vector<std::string>& argv) {
    Args a(argv, {GLTRAIN_CLI_DEVICE_OPTIONS});
    if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional()[0] + "'");
    Context ctx(contextOptions(a));
    chooseFasterBackend(ctx);
    std::cout << "gltrain " << GLTRAIN_VERSION << "\n" << ctx.caps();
    return 0;
}

int inspect(const std::vector<std::string>& argv) {
    Args a(argv, {{"--help", false}});
    if (a.has("--help")) {
        std::printf("usage: gltrain inspect CHECKPOINT\n\nLists a safetensors file's metadata and tensors.\n");
        return 0;
    }
    if (a.positional().size() != 1) throw UsageError("usage: gltrain inspect CHECKPOINT");
    const SafetensorsFile f = loadSafetensorsFile(a.positional()[0]);
    for (auto& [k, v] : f.metadata) std::printf("%s=%s\n", k.c_str(), v.c_str());
    for (auto& name : f.names) {
        const TensorData& t = f.at(name);
        std::string shape;
        for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(t.shape[i]);
        std::printf("tensor %s %s [%s]\n", name.c_str(), dtypeName(t.dtype), shape.c_str());
    }
    return 0;
}

// The data options read one matrix of rows and one of targets: a model file of
// several inputs or outputs trains from C++ or JavaScript (fit({x1, x2}, {y1, y2})).
void requireOneInputAndOutput(const ModelConfig& c) {
    const size_t outputs = std::max<size_t>(1, c.outputs.size());
    if (c.inputs.size() > 1 || outputs > 1)
        throw UsageError(c.source + ": the command line reads one input and one target per row; this model has " +
                         std::to_string(c.inputs.size()) + " inputs and " + std::to_string(outputs) +
                         " outputs (train it through the C++ or JavaScript API)");
}

int train(const std::vector<std::string>& argv) {
    Args a(argv, {GLTRAIN_CLI_DATA_OPTIONS,
                  {"--epochs", true},
                  {"--steps", true},
                  {"--batch", true},
                  {"--checkpoint", true},
                  {"--resume", true},
                  {"--reset-optimizer", false},
                  {"--every", true},
                  {"--progress", true},
                  {"--log-every", true},
                  {"--early-stopping", true},
                  {"--save-best", true},
                  GLTRAIN_CLI_DEVICE_OPTIONS,
                  {"--help", false}});
    if (a.has("--help")) {
        std::printf("%s\n", kTrainHelp);
        std::printf(kDataHelp, "train", "-1");
        std::printf("\n%s", kDeviceHelp);
        return 0;
    }
    // Every argument is checked before the first file is read or the GPU is touched.
    const std::string path = modelPath(a, "train");
    DataOptions dataOpts = dataOptions(a, "train");
    // fit's epochs and batch size are ints (integer()'s default range); steps are counted in 64 bits.
    const long epochs = long(a.integer("--epochs", 0, 1)), batch = long(a.integer("--batch", 0, 1));
    const long long maxSteps = std::numeric_limits<long>::max();
    const long steps = long(a.integer("--steps", 0, 1, maxSteps));
    const long every = long(a.integer("--every", 0, 1, maxSteps)),
               logEvery = long(a.integer("--log-every", 0, 1, maxSteps));
    const std::string progressMode = a.choice("--progress", "auto", {"auto", "bar", "lines"});
    const int earlyStopping = int(a.integer("--early-stopping", 0, 1, 1000000));
    const std::string saveBest = a.value("--save-best");
    if (a.has("--save-best") && saveBest.empty()) throw UsageError("--save-best: the path is empty");
    const std::string resume = a.value("--resume");
    if (a.has("--resume") && resume.empty()) throw UsageError("--resume: the path is empty");
    const bool resetOptimizer = a.has("--reset-optimizer");
    if (resetOptimizer && !a.has("--resume")) throw UsageError("--reset-optimizer is for --resume FILE");
    if (a.has("--checkpoint") && a.value("--checkpoint").empty()) throw UsageError("--checkpoint: the path is empty");
    const ContextOptions ctxOpts = contextOptions(a);
    std::string checkpoint = a.value("--checkpoint");
    if (checkpoint.empty()) {
        if (!resume.empty()) {
            checkpoint = resume;
        } else {
            std::string stem =
                path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
            if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
            checkpoint = stem + ".safetensors";
        }
    }

    // A checkpoint that cannot be written would be found out after training: look now.
    checkCheckpointPath(checkpoint);
    const CheckpointLock lock(checkpoint);

    ModelConfig config = loadModelConfig(path);
    requireOneInputAndOutput(config);
    if (epochs) config.fit.epochs = int(epochs);
    if (steps) config.fit.steps = steps;
    if (batch) config.fit.batchSize = int(batch);
    if (config.fit.steps > 0) dataOpts.windows = config.fit.steps * long(config.fit.batchSize);
    // The epoch callbacks watch the validation loss where there is one.
    const std::string watched = config.fit.validationSplit > 0.0f ? "val_loss" : "loss";
    if (earlyStopping) {
        config.fit.earlyStopping.patience = earlyStopping;
        config.fit.earlyStopping.monitor.name = watched;
        config.fit.earlyStopping.restoreBest = true;
    }
    if (!saveBest.empty()) {
        checkCheckpointPath(saveBest);
        config.fit.keepBest.enabled = true;
        config.fit.keepBest.monitor.name = watched;
    }
    Context ctx(ctxOpts);
    chooseFasterBackend(ctx);
    std::printf("device: %s (%s)%s\n", ctx.caps().renderer.c_str(), ctx.caps().platform.c_str(),
                ctx.caps().softwareRenderer ? ", a software renderer" : "");
    std::printf("backend: %s (%s)\n", backendName(ctx.backend()), ctx.caps().backendReason.c_str());
    std::unique_ptr<Model> model = buildModel(ctx, config);
    printSummary(config, *model);
    const Data data = readData(dataOpts, *model, config, true, stdout);
    if (data.validationX.rows > 0 && config.fit.validationSplit == 0.0f) {  // text: its held-out windows
        config.fit.validationX = &data.validationX;
        config.fit.validationY = &data.validationY;
        std::printf("validation: %d held-out windows, each epoch's end\n", data.validationX.rows);
    }

    if (!resume.empty()) {
        const std::vector<uint8_t> bytes = readFile(resume, "checkpoint");
        const SafetensorsFile file = parseSafetensors(bytes, resume);
        model->loadCheckpoint(bytes, resume, resetOptimizer);
        if (resetOptimizer)
            std::printf("resumed: %s's weights, the optimizer afresh at step 0 (--reset-optimizer)\n", resume.c_str());
        else std::printf("resumed: %s at step %ld\n", resume.c_str(), model->step());
        auto seed = file.metadata.find("seed");
        if (seed != file.metadata.end() && seed->second != std::to_string(config.compile.seed))
            std::fprintf(stderr,
                         "gltrain train: warning: %s was trained with seed %s, %s says %u: batches are drawn in "
                         "another order than an uninterrupted run's\n",
                         resume.c_str(), seed->second.c_str(), path.c_str(), config.compile.seed);
        if (!resetOptimizer && model->step() == 0 && file.metadata.count("step") && file.metadata.at("step") != "0")
            std::fprintf(stderr,
                         "gltrain train: warning: %s has no optimizer state: training restarts at step 0 from "
                         "its weights\n",
                         resume.c_str());
    }

    // The step count fit() will reach (as Sequential::beginFit counts it).
    const FitOptions& fit = config.fit;
    const long stepsPerEpoch = gltrain::stepsPerEpoch(gltrain::trainingRows(data.x.rows, fit), fit);
    const long endStep = fitEndStep(gltrain::trainingRows(data.x.rows, fit), fit);
    const int epochsToEnd = stepsPerEpoch > 0 ? int((endStep + stepsPerEpoch - 1) / stepsPerEpoch) : fit.epochs;
    if (stepsPerEpoch > 0 && model->step() >= endStep) {  // (none: fit says why)
        if (fit.steps > 0)
            std::printf("nothing to do: %s is at step %ld, and the run ends at step %ld (raise --steps)\n",
                        resume.c_str(), model->step(), endStep);
        else
            std::printf(
                "nothing to do: %s is at step %ld, and %d epochs of %ld steps end at step %ld (raise --epochs)\n",
                resume.c_str(), model->step(), fit.epochs, stepsPerEpoch, endStep);
        return 0;
    }
    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    const Progress::Style style =
        progressMode == "bar" || (progressMode == "auto" && tty) ? Progress::Style::Bar : Progress::Style::Lines;
    Progress progress(style, stdout, model->step(), endStep, epochsToEnd,
                      logEvery ? logEvery : std::max(1L, (stepsPerEpoch + 9) / 10));
    std::printf("training: %d epoch%s of %ld steps (batch %d), steps %ld to %ld; checkpoint %s\n", epochsToEnd,
                epochsToEnd == 1 ? "" : "s", stepsPerEpoch, fit.batchSize, model->step() + 1, endStep,
                checkpoint.c_str());
    std::fflush(stdout);

    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { progress.step(s); };
    cb.onEpoch = [&](const EpochInfo& e) {
        progress.epoch(e);
        if (!saveBest.empty() && model->bestEpoch() == e.epoch) {
            writeFileAtomic(saveBest, model->bestCheckpoint(), "the best checkpoint");
            progress.print("best=" + saveBest + " epoch=" + std::to_string(e.epoch) +
                           " step=" + std::to_string(e.step));
        }
    };
    installStopHandlers();
    const auto t0 = std::chrono::steady_clock::now();
    const long firstStep = model->step();
    long savedStep = firstStep;  // the last step saved (or resumed from): a failed save loses the steps since
    long writtenStep = -1;       // the step this run last wrote
    // Writes the checkpoint; a failure says which steps it loses.
    auto save = [&] {
        if (model->step() == writtenStep) return;  // --every wrote this step
        try {
            writeCheckpoint(*model, checkpoint);
        } catch (const CheckpointNotFinite& e) {
            throw CheckpointNotFinite(std::string(e.what()) + "; " +
                                      unsavedSteps(checkpoint, savedStep, model->step()));
        } catch (const IoError& e) {
            throw IoError(std::string(e.what()) + "; " + unsavedSteps(checkpoint, savedStep, model->step()));
        }
        savedStep = writtenStep = model->step();
        progress.print("checkpoint=" + checkpoint + " step=" + std::to_string(model->step()));
    };
    try {
        model->beginFit(data.x, data.y, fit, cb);
        while (model->stepOnce()) {
            if (g_stopSignal) break;
            if (every && model->step() % every == 0) {
                // A failed write (a full disk, say) need not end the run: the next save may succeed.
                try {
                    save();
                } catch (const IoError& e) {
                    std::fprintf(stderr, "gltrain train: warning: %s; training goes on, the next save is at step %ld\n",
                                 e.what(), std::min(model->step() + every, endStep));
                }
            }
        }
    } catch (const TrainingError& e) {
        // The updates of the bad step were skipped: what is on the GPU are the last good weights.
        std::fprintf(stderr, "gltrain train: %s\n", e.what());
        save();
        std::fprintf(stderr, "gltrain train: the last good weights are in %s\n", checkpoint.c_str());
        return 1;
    }
    save();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (g_stopSignal && model->step() < endStep) {
        const int sig = int(g_stopSignal);
        std::fprintf(stderr,
                     "gltrain train: interrupted (%s) after step %ld of %ld; checkpoint written to %s\n"
                     "gltrain train: continue with: gltrain train %s --resume %s ...\n",
                     sig == SIGINT ? "SIGINT" : "SIGTERM", model->step(), endStep, checkpoint.c_str(), path.c_str(),
                     checkpoint.c_str());
        return 128 + sig;
    }
    std::printf("done: %ld steps in %.1fs\n", model->step() - firstStep, secs);
    return 0;
}

// Builds the model, loads --checkpoint and reads the data: what evaluate and predict share.
struct Loaded {
    ModelConfig config;
    std::unique_ptr<Context> ctx;
    std::unique_ptr<Model> model;
    Data data;
};
// The model with --checkpoint's weights; `check` runs on the arguments before anything is read.
Loaded loadModel(const Args& a, const char* command, std::FILE* log, const std::function<void()>& check = {}) {
    const std::string path = modelPath(a, command);
    if (!a.has("--checkpoint") || a.value("--checkpoint").empty())
        throw UsageError(std::string("--checkpoint FILE is required (the weights to ") + command + ")");
    const std::string checkpoint = a.value("--checkpoint");
    const ContextOptions ctxOpts = contextOptions(a);
    if (check) check();
    Loaded l;
    l.config = loadModelConfig(path);
    requireOneInputAndOutput(l.config);
    l.ctx = makeContext(ctxOpts);
    l.model = buildModel(*l.ctx, l.config);
    l.model->load(checkpoint);
    std::fprintf(log, "checkpoint: %s (step %ld)\n", checkpoint.c_str(), l.model->step());
    return l;
}
Loaded loadForInference(const Args& a, const char* command, bool needTargets, std::FILE* log) {
    DataOptions dataOpts;
    Loaded l = loadModel(a, command, log, [&] { dataOpts = dataOptions(a, "test"); });
    l.data = readData(dataOpts, *l.model, l.config, needTargets, log);
    return l;
}

int evaluate(const std::vector<std::string>& argv) {
    Args a(argv, {GLTRAIN_CLI_DATA_OPTIONS,
                  {"--checkpoint", true},
                  {"--batch", true},
                  GLTRAIN_CLI_DEVICE_OPTIONS,
                  {"--help", false}});
    if (a.has("--help")) {
        std::printf("%s\n", kEvaluateHelp);
        std::printf(kDataHelp, "test", "-1");
        std::printf("\n%s", kDeviceHelp);
        return 0;
    }
    const int batch = int(a.integer("--batch", 256, 1));  // (an int: integer()'s range)
    Loaded l = loadForInference(a, "evaluate", true, stdout);
    const Evaluation e = l.model->evaluate(l.data.x, l.data.y, batch);
    std::printf("loss=%.4f", double(e.loss));
    if (!std::isnan(e.accuracy)) std::printf(" accuracy=%.4f", double(e.accuracy));
    for (const auto& [name, value] : e.metrics) std::printf(" %s=%.4f", name.c_str(), double(value));
    std::printf(" rows=%d\n", l.data.x.rows);
    return 0;
}

int predict(const std::vector<std::string>& argv) {
    Args a(argv, {GLTRAIN_CLI_DATA_OPTIONS,
                  {"--checkpoint", true},
                  {"--output", true},
                  {"--batch", true},
                  GLTRAIN_CLI_DEVICE_OPTIONS,
                  {"--help", false}});
    if (a.has("--help")) {
        std::printf("%s\n", kPredictHelp);
        std::printf(kDataHelp, "test", "none");
        std::printf("\n%s", kDeviceHelp);
        return 0;
    }
    const int batch = int(a.integer("--batch", 256, 1));  // (an int: integer()'s range)
    if (a.has("--output") && a.value("--output").empty()) throw UsageError("--output: the path is empty");
    Loaded l = loadForInference(a, "predict", false, a.has("--output") ? stdout : stderr);
    const HostMatrix y = l.model->predict(l.data.x, batch);
    const bool classes = l.model->options().loss.labels();
    std::string out = classes ? "class" : "";
    for (int c = 0; c < y.cols; ++c) out += (c || classes ? "," : "") + std::string("y") + std::to_string(c);
    out += "\n";
    char buf[32];
    for (int r = 0; r < y.rows; ++r) {
        if (classes) {
            int best = 0;
            for (int c = 1; c < y.cols; ++c)
                if (y(r, c) > y(r, best)) best = c;
            out += std::to_string(best);
        }
        for (int c = 0; c < y.cols; ++c) {
            std::snprintf(buf, sizeof buf, "%s%.7g", c || classes ? "," : "", double(y(r, c)));
            out += buf;
        }
        out += "\n";
    }
    if (!a.has("--output")) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        return 0;
    }
    const std::string file = a.value("--output");
    std::FILE* f = std::fopen(file.c_str(), "wb");
    if (!f) throw IoError("--output " + file + ": cannot create: " + std::strerror(errno));
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    if (std::fclose(f) != 0 || !ok) throw IoError("--output " + file + ": write failed: " + std::strerror(errno));
    std::printf("predictions: %d rows written to %s\n", y.rows, file.c_str());
    return 0;
}

int generate(const std::vector<std::string>& argv) {
    Args a(argv, {{"--checkpoint", true},
                  {"--prompt", true},
                  {"--length", true},
                  {"--temperature", true},
                  {"--top-k", true},
                  {"--seed", true},
                  GLTRAIN_CLI_DEVICE_OPTIONS,
                  {"--help", false}});
    if (a.has("--help")) {
        std::printf("%s\n%s", kGenerateHelp, kDeviceHelp);
        return 0;
    }
    GenerateOptions o;
    std::string prompt;
    // The prompt and its continuation go to stdout as bytes, what was loaded to stderr.
    Loaded l = loadModel(a, "generate", stderr, [&] {
        if (!a.has("--prompt") || a.value("--prompt").empty())
            throw UsageError("--prompt TEXT is required (the bytes to continue)");
        prompt = a.value("--prompt");
        o.length = int(a.integer("--length", o.length, 0, kMaxGenerateLength));
        o.temperature = float(a.number("--temperature", double(o.temperature)));
        o.topK = int(a.integer("--top-k", o.topK, 0));
        o.seed = uint32_t(a.integer("--seed", o.seed, 0, 0xFFFFFFFFll));
    });
    const std::vector<uint8_t> out = l.model->generate(std::vector<uint8_t>(prompt.begin(), prompt.end()), o);
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
}

int run(const std::vector<std::string>& args) {
    if (args.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    const std::string& first = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    const std::string command = first == "--info" ? "info" : first;
    const bool known = command == "info" || command == "train" || command == "evaluate" || command == "predict" ||
                       command == "generate" || command == "inspect";
    try {
        if (first == "--help" || first == "-h" || first == "help") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (first == "--version") {
            std::printf("gltrain %s\n", GLTRAIN_VERSION);
            return 0;
        }
        if (command == "info") return info(rest);
        if (command == "train") return train(rest);
        if (command == "evaluate") return evaluate(rest);
        if (command == "predict") return predict(rest);
        if (command == "generate") return generate(rest);
        if (command == "inspect") return inspect(rest);
        throw UsageError("unknown command '" + first +
                         "' (commands: train, evaluate, predict, generate, inspect, --info)");
    } catch (const UsageError& e) {
        std::fflush(stdout);
        if (known)
            std::fprintf(stderr, "gltrain %s: %s\n(see gltrain %s --help)\n", command.c_str(), e.what(),
                         command.c_str());
        else std::fprintf(stderr, "gltrain: %s\n(see gltrain --help)\n", e.what());
        return 2;
    } catch (const std::bad_alloc&) {
        std::fflush(stdout);
        std::fprintf(stderr, "gltrain %s: out of memory\n", command.c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "gltrain %s: %s\n", command.c_str(), e.what());
        return 1;
    }
}

}  // namespace
}  // namespace gltrain::cli

int main(int argc, char** argv) { return gltrain::cli::run(std::vector<std::string>(argv + 1, argv + argc)); }
