// The side-by-side comparison's native column: the workloads of bench/compare
// (issue 7) run through the C++ API on EGL, measured the way the page
// measures them in Chromium. Prints one JSON object (the figures, keyed as
// bench/compare/report.mjs expects); with --profile, a markdown table per
// training workload of where a step's time goes instead (Sequential::profileStep).
//
//   W1  MLP 784-256-128-10 ReLU, softmax cross-entropy, Adam 1e-3, batch 128,
//       Fashion-MNIST: ms/step reading the loss every step, and every 10 steps
//       (blocks of 10 steps timed to the 10th step's read); one epoch's wall
//       time (fit) and the test accuracy after it.
//   W2  CNN conv 8@5x5 ReLU, max pool 2, conv 16@5x5 ReLU, max pool 2, dense 10,
//       Adam 1e-3, batch 64: ms/step, loss read every step.
//   W3  square fp32 matmul, N = 256, 512, 1024: GFLOP/s, each product read back.
//   W4  MLP 2-8-1 (tanh), MSE, SGD 0.1, batch 4 on 4096 XOR points: ms/step,
//       loss read every step and every 10 steps.
// Medians after warm-up; no pass/fail on time.
//
//   bench_compare_native [--quick] [--profile] [--steps] [--data DIR] [--sizes 256,512,...]
//                        [--fetch auto|sampled|texelFetch] [--feedback-min-work MACS] [--cpu-threads N]
// --quick: fewer steps, and the "epoch" is 60 steps (7,680 rows), so the
// accuracy is lower; --sizes replaces W3's sizes (the GPU script adds 2048, 4096).
// --steps: a quick look while working on kernels: the GPU backend (forced),
// synthetic rows of the workloads' shapes, the step-time and matmul rows only.
// --fetch: ContextOptions::fetch (how kernels read texels), to compare the two.
// --feedback-min-work: ContextOptions::feedbackMinWork (the smallest product,
// in multiply-adds, the transform-feedback matmul takes into a row-interleaved C).
// --cpu-threads: ContextOptions::cpuThreads (the CPU backend's threads; 0 = one per core).
#include <gltrain/backend_choice.hpp>
#include <gltrain/gltrain.hpp>
#include <gltrain/idx.hpp>
#include <gltrain/ops/matmul.hpp>
#include <gltrain/sequential.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace gltrain;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Protocol {
    int warmup = 5;
    int steps = 50;     // per-step figures: steps timed one by one
    int blocks = 10;    // every-10 figures: blocks of 10 steps
    int epochRows = 0;  // 0: the whole training set
    std::vector<int> sizes = {256, 512, 1024};
};

void addMlp(Sequential& m) { m.add(Dense{256, Activation::ReLU}).add(Dense{128, Activation::ReLU}).add(Dense{10}); }
void addCnn(Sequential& m) {
    m.add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2});
    m.add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2});
    m.add(Flatten{}).add(Dense{10});
}
void addTiny(Sequential& m) { m.add(Dense{8, Activation::Tanh}).add(Dense{1}); }

CompileOptions sgdMse() {
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = 0.1f;
    return c;
}

// A 32-bit LCG in [0, 1): the same numbers as bench/compare/compare.js's, so
// the page's contestants and this binary see identical data.
struct Lcg {
    uint32_t s;
    double operator()() {
        s = s * 1664525u + 1013904223u;
        return s / 4294967296.0;
    }
};

// W4's data: points in [-1, 1]^2, target 1 where the signs differ (XOR).
std::pair<HostMatrix, Targets> xorData(int n) {
    Lcg r{7};
    HostMatrix x(n, 2), y(n, 1);
    for (int i = 0; i < n; ++i) {
        x(i, 0) = float(r() * 2 - 1);
        x(i, 1) = float(r() * 2 - 1);
        y(i, 0) = (x(i, 0) > 0) != (x(i, 1) > 0) ? 1.0f : 0.0f;
    }
    return {x, Targets(y)};
}

// Median ms of one step with the loss read every `lossEvery` steps: steps timed
// one by one (lossEvery 1), or blocks of lossEvery steps ending with the read.
double stepMs(Sequential& m, const HostMatrix& x, const Targets& y, int batch, int lossEvery, const Protocol& p) {
    FitOptions f;
    f.batchSize = batch;
    f.lossEvery = lossEvery;
    const int timed = lossEvery == 1 ? p.steps : p.blocks * lossEvery;
    const long stepsPerEpoch = (x.rows + batch - 1) / batch;  // the last may be short
    f.epochs = int((m.step() + p.warmup + timed + lossEvery) / stepsPerEpoch + 2);
    m.beginFit(x, y, f);
    // Warm up to a read boundary, so every timed block ends with a read.
    for (int i = 0; i < p.warmup || m.step() % lossEvery; ++i) m.stepOnce();
    std::vector<double> t;
    for (int i = 0; i < timed; i += lossEvery) {
        auto t0 = Clock::now();
        for (int j = 0; j < lossEvery; ++j) m.stepOnce();
        t.push_back(msSince(t0) / lossEvery);
    }
    return median(t);
}

double matmulGflops(Context& ctx, int n, int reps) {
    Lcg ra{11}, rb{12};
    HostMatrix ha(n, n), hb(n, n);
    for (auto& v : ha.data) v = float(ra() * 2 - 1);
    for (auto& v : hb.data) v = float(rb() * 2 - 1);
    // The layout gltrain gives a tensor made to be multiplied (as the JavaScript Tensor).
    const Layout layout = matmulLayout(ctx, n);
    Tensor a(ctx, ha, layout), b(ctx, hb, layout), c(ctx, n, n, layout);
    PassList list;
    recordMatmul(list, a, b, c);
    list.run();
    c.download();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        auto t0 = Clock::now();
        list.run();
        c.download();
        t.push_back(msSince(t0));
    }
    return 2.0 * n * n * double(n) / (median(t) / 1e3) / 1e9;
}

// Where one step's time goes (profileStep: GPU timer queries where the context
// has them, else each pass waited for), summed by kernel, most expensive first.
void printProfile(const char* title, Sequential& m, const HostMatrix& x, const Targets& y, int batch) {
    auto passes = m.profileStep(x, y, batch, 5);
    std::map<std::string, std::pair<double, int>> byKernel;
    double total = 0;
    for (auto& p : passes) {
        byKernel[p.kernel].first += p.ms;
        byKernel[p.kernel].second++;
        total += p.ms;
    }
    std::vector<std::pair<double, std::string>> sorted;
    for (auto& kv : byKernel)
        sorted.push_back({kv.second.first, kv.first + " (" + std::to_string(kv.second.second) + ")"});
    std::sort(sorted.rbegin(), sorted.rend());
    const bool gpu = !passes.empty() && passes.front().gpuTimer;
    std::printf("\n### %s: %zu passes, %.2f ms (%s)\n\n", title, passes.size(), total, profileClock(gpu));
    std::printf("| kernel (passes) | ms | share |\n|---|---:|---:|\n");
    for (auto& s : sorted) std::printf("| %s | %.3f | %.0f%% |\n", s.second.c_str(), s.first, 100 * s.first / total);
}

std::vector<int> parseSizes(const std::string& s) {
    std::vector<int> out;
    std::stringstream in(s);
    for (std::string v; std::getline(in, v, ',');) {
        int n = std::stoi(v);
        if (n <= 0) throw ArgumentError("--sizes: " + v + " is not a positive size");
        out.push_back(n);
    }
    return out;
}

}  // namespace

FetchPreference parseFetch(const std::string& v) {
    if (auto f = fetchPreferenceFromName(v)) return *f;
    throw ArgumentError("--fetch: expected auto, sampled or texelFetch, got '" + v + "'");
}

double parseWork(const std::string& v) {
    char* end = nullptr;
    const double w = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end || !(w >= 0))
        throw ArgumentError("--feedback-min-work: expected a number >= 0, got '" + v + "'");
    return w;
}

int main(int argc, char** argv) {
    Protocol p;
    bool profile = false, stepsOnly = false;
    std::string dir = kFashionMnistDir;
    ContextOptions options;
    try {
        for (int i = 1; i < argc; ++i) {
            std::string a = argv[i];
            if (a == "--quick") p.steps = 20, p.blocks = 3, p.epochRows = 60 * 128, p.warmup = 3;
            else if (a == "--profile") profile = true;
            else if (a == "--steps") stepsOnly = true;
            else if (a == "--data" && i + 1 < argc) dir = argv[++i];
            else if (a == "--sizes" && i + 1 < argc) p.sizes = parseSizes(argv[++i]);
            else if (a == "--fetch" && i + 1 < argc) options.fetch = parseFetch(argv[++i]);
            else if (a == "--feedback-min-work" && i + 1 < argc) options.feedbackMinWork = parseWork(argv[++i]);
            else if (a == "--cpu-threads" && i + 1 < argc) options.cpuThreads = std::stoi(argv[++i]);
            else
                throw ArgumentError("bench_compare_native: unknown argument '" + a +
                                    "' (valid: --quick, --profile, --steps, --data DIR, --sizes N,N,..., "
                                    "--fetch auto|sampled|texelFetch, --feedback-min-work MACS, --cpu-threads N)");
        }
        if (profile || stepsOnly) options.backend = BackendPreference::Gpu;  // they time GPU passes
        Context ctx(options);
        chooseFasterBackend(ctx);
        const Capabilities& caps = ctx.caps();

        if (profile) {
            // Values do not change the time a pass takes: synthetic rows of the right shapes.
            std::printf("renderer: %s; texel reads: %s; pass times: %s\n", caps.renderer.c_str(),
                        caps.sampledFetch ? "texture()" : "texelFetch", profileClock(caps.timerQueries));
            std::mt19937 rng(3);
            std::uniform_real_distribution<float> d(0, 1);
            HostMatrix x(512, 784);
            for (auto& v : x.data) v = d(rng);
            std::vector<int> labels(512);
            for (int i = 0; i < 512; ++i) labels[size_t(i)] = i % 10;
            Sequential mlp(ctx, 784);
            addMlp(mlp);
            mlp.compile({});
            printProfile("W1 MLP 784-256-128-10, batch 128", mlp, x, labels, 128);
            Sequential cnn(ctx, Shape3{28, 28, 1});
            addCnn(cnn);
            cnn.compile({});
            printProfile("W2 CNN, batch 64", cnn, x, labels, 64);
            auto [tx, ty] = xorData(64);
            Sequential tiny(ctx, 2);
            addTiny(tiny);
            tiny.compile(sgdMse());
            printProfile("W4 MLP 2-8-1, batch 4", tiny, tx, ty, 4);
            return 0;
        }

        nlohmann::json out;
        out["backend"] = "gltrain-native";
        out["renderer"] = caps.renderer;
        out["fetch"] = caps.sampledFetch ? "texture()" : "texelFetch";
        out["engine"] =
            std::string(backendName(caps.backend)) + " backend (" + caps.backendReason + ")" +
            (caps.backend == Backend::Cpu ? ", " + std::to_string(ctx.cpuThreads().size()) + " threads" : "");
        out["version"] = caps.version;
        out["quick"] = p.epochRows > 0;
        auto& r = out["results"];

        // --steps: synthetic rows of the same shapes (values do not change a pass's time).
        Dataset train, test;
        if (stepsOnly) {
            Lcg rx{5};
            train.images = HostMatrix(2048, 784);
            for (auto& v : train.images.data) v = float(rx());
            for (int i = 0; i < 2048; ++i) train.labels.push_back(i % 10);
        } else {
            train = loadFashionMnist(dir, Split::Train);
            test = loadFashionMnist(dir, Split::Test);
        }
        {
            Sequential m(ctx, 784);
            addMlp(m);
            m.compile({});
            r["w1_step_ms_loss1"] = stepMs(m, train.images, train.labels, 128, 1, p);
            r["w1_step_ms_loss10"] = stepMs(m, train.images, train.labels, 128, 10, p);
        }
        if (!stepsOnly) {
            Sequential m(ctx, 784);
            addMlp(m);
            m.compile({});
            HostMatrix x = train.images;
            std::vector<int> y = train.labels;
            if (p.epochRows > 0) {
                x = HostMatrix(
                    p.epochRows, 784,
                    std::vector<float>(train.images.data.begin(), train.images.data.begin() + p.epochRows * 784));
                y.resize(size_t(p.epochRows));
            }
            FitOptions f;
            f.epochs = 1;
            f.batchSize = 128;
            auto t0 = Clock::now();
            m.fit(x, y, f);
            r["w1_epoch_s"] = msSince(t0) / 1e3;
            r["w1_epoch_steps"] = (x.rows + 127) / 128;
            r["w1_test_accuracy"] = m.evaluate(test.images, test.labels).accuracy;
        }
        {
            Sequential m(ctx, Shape3{28, 28, 1});
            addCnn(m);
            m.compile({});
            r["w2_step_ms_loss1"] = stepMs(m, train.images, train.labels, 64, 1, p);
        }
        for (int n : p.sizes) r["w3_gflops_" + std::to_string(n)] = matmulGflops(ctx, n, n <= 512 ? 9 : 5);
        {
            auto [x, y] = xorData(4096);
            Sequential m(ctx, 2);
            addTiny(m);
            m.compile(sgdMse());
            Protocol tiny = p;
            tiny.warmup = 20, tiny.steps = 4 * p.steps, tiny.blocks = 4 * p.blocks;
            r["w4_step_ms_loss1"] = stepMs(m, x, y, 4, 1, tiny);
            r["w4_step_ms_loss10"] = stepMs(m, x, y, 4, 10, tiny);
        }
        std::printf("%s\n", out.dump(2).c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_compare_native: %s\n", e.what());
        return 1;
    }
}
