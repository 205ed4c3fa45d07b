// Convolution benchmark: GFLOP/s of Conv2D forward (in place, and through
// im2col + the blocked matmul), input and filter gradients for the layers of
// the CNNs; ms per training step of the small CNN (the TensorFlow.js
// MNIST example) and of the deeper CNN with batch normalization at batch 64,
// with the step's most expensive passes (PassList::profile). Medians of
// repeated runs, each forced to complete by a one-texel read; no pass/fail.
//   bench_conv [--quick]
#include <gltrain/gltrain.hpp>
#include <gltrain/ops/conv.hpp>
#include <gltrain/sequential.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace gltrain;

namespace {

HostMatrix random(int r, int c, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1, 1);
    HostMatrix m(r, c);
    for (auto& v : m.data) v = d(rng);
    return m;
}

double medianMs(const std::function<void()>& run, const Tensor& out, int reps) {
    run();
    waitFor(out);
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        run();
        waitFor(out);
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

Layout layoutFor(int rows) { return rows >= 4 ? Layout::PackedRows4 : Layout::Packed; }

void convRows(Context& ctx, const char* label, int batch, Shape3 in, int k, Padding pad, int filters, int reps) {
    Window w = Window::make(label, in, k, k, 1, 1, pad, filters);
    const int wr = k * k * in.channels;
    Tensor x(ctx, random(batch, in.size(), 1), layoutFor(batch)), wt(ctx, random(wr, filters, 2), layoutFor(wr));
    Tensor b(ctx, random(1, filters, 3)), dy(ctx, random(batch, w.out.size(), 4), layoutFor(batch));
    Tensor y(ctx, batch, w.out.size(), layoutFor(batch)), dx(ctx, batch, in.size(), layoutFor(batch));
    Tensor dw(ctx, wr, filters, layoutFor(wr));
    const double gflop = 2.0 * batch * w.out.pixels() * filters * wr / 1e9;
    PassList direct, im2col, dIn, dFilter;
    recordConv2D(direct, x, wt, &b, w, Activation::ReLU, y);
    recordConv2DIm2col(im2col, x, wt, &b, w, Activation::ReLU, y);
    recordConv2DBackwardInput(dIn, dy, wt, w, dx);
    recordConv2DBackwardFilter(dFilter, x, dy, w, dw);
    auto row = [&](const char* what, PassList& l, const Tensor& out) {
        double ms = medianMs([&] { l.run(); }, out, reps);
        std::printf("| %-30s | %-22s | %9.2f | %8.2f |\n", label, what, ms, gflop / (ms / 1e3));
    };
    row("forward, in place", direct, y);
    row("forward, im2col + matmul", im2col, y);
    row("input gradient", dIn, dx);
    row("filter gradient", dFilter, dw);
}

void addSmallCnn(Sequential& m) {
    m.add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2});
    m.add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU}).add(MaxPool2D{2});
    m.add(Flatten{}).add(Dense{10});
}
void addDeepCnn(Sequential& m) {
    m.add(Conv2D{32, 3, 1, Padding::Same}).add(BatchNormalization{}).add(ActivationLayer{Activation::ReLU});
    m.add(MaxPool2D{2});
    m.add(Conv2D{64, 3, 1, Padding::Same}).add(BatchNormalization{}).add(ActivationLayer{Activation::ReLU});
    m.add(MaxPool2D{2}).add(Flatten{}).add(Dense{10});
}

void stepRow(Context& ctx, const char* label, void (*build)(Sequential&), int steps) {
    const int batch = 64, n = batch * 8;
    HostMatrix x = random(n, 784, 5);
    for (auto& v : x.data) v = v * 0.5f + 0.5f;
    std::vector<int> y(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) y[size_t(i)] = i % 10;
    Sequential m(ctx, Shape3{28, 28, 1});
    build(m);
    m.compile({});
    FitOptions f;
    f.batchSize = batch;
    f.epochs = (steps + 7) / 8 + 1;
    f.lossEvery = 0;
    m.beginFit(x, y, f);
    for (int i = 0; i < 8; ++i) m.stepOnce();  // warm-up: every program compiled
    // A step is waited for by reading back a parameter it updates (the output
    // layer's bias, 1 x 10): the renderer runs the passes in order. glFinish
    // would not do: in a browser it returns before the renderer has drawn
    // (pass_list.hpp), which made the Chromium rows read 0.4 ms/step.
    const std::string last = m.layerName(m.layerCount() - 1);
    m.weight(last, "bias");
    std::vector<double> t;
    for (int i = 0; i < steps && m.fitting(); ++i) {
        auto t0 = std::chrono::steady_clock::now();
        m.stepOnce();
        m.weight(last, "bias");
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    std::printf("| %-44s | %8.1f | %8.0f |\n", label, t[t.size() / 2], batch / (t[t.size() / 2] / 1e3));
    // Where the time goes: the step's passes, summed by kernel.
    std::map<std::string, std::pair<double, int>> byKernel;
    double total = 0;
    const auto passes = m.profileStep(x, y, batch, 3);
    for (auto& p : passes) {
        byKernel[p.kernel].first += p.ms;
        byKernel[p.kernel].second++;
        total += p.ms;
    }
    std::vector<std::pair<double, std::string>> sorted;
    for (auto& kv : byKernel)
        sorted.push_back({kv.second.first, kv.first + " (" + std::to_string(kv.second.second) + ")"});
    std::sort(sorted.rbegin(), sorted.rend());
    std::printf("|   profile (%s: %.1f ms in all) |  |  |\n", profileClock(!passes.empty() && passes.front().gpuTimer),
                total);
    for (size_t i = 0; i < std::min<size_t>(6, sorted.size()); ++i)
        std::printf("|   %-42s | %8.1f | %7.0f%% |\n", sorted[i].second.c_str(), sorted[i].first,
                    100 * sorted[i].first / total);
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    try {
        ContextOptions gpu;
        gpu.backend = BackendPreference::Gpu;  // GPU figures (Auto may train on the CPU on a software renderer)
        Context ctx(gpu);
        std::printf("renderer: %s\n\n", ctx.caps().renderer.c_str());
        const int reps = quick ? 3 : 7;
        std::printf("| %-30s | %-22s | %9s | %8s |\n", "Conv2D layer (batch 64)", "pass", "ms", "GFLOP/s");
        std::printf("|%s|%s|%s|%s|\n", std::string(32, '-').c_str(), std::string(24, '-').c_str(),
                    std::string(11, '-').c_str(), std::string(10, '-').c_str());
        convRows(ctx, "3x3 32->64 28x28 same", 64, {28, 28, 32}, 3, Padding::Same, 64, reps);
        convRows(ctx, "5x5 1->8 28x28 valid (CNN 1)", 64, {28, 28, 1}, 5, Padding::Valid, 8, reps);
        convRows(ctx, "5x5 8->16 12x12 valid (CNN 2)", 64, {12, 12, 8}, 5, Padding::Valid, 16, reps);
        std::printf("\n| %-44s | %8s | %8s |\n", "training step, batch 64", "ms/step", "samples/s");
        std::printf("|%s|%s|%s|\n", std::string(46, '-').c_str(), std::string(10, '-').c_str(),
                    std::string(10, '-').c_str());
        stepRow(ctx, "small CNN (conv 8@5x5, pool, conv 16@5x5, pool)", addSmallCnn, quick ? 5 : 20);
        stepRow(ctx, "deeper CNN (2 x conv 3x3 + batch norm, 32/64)", addDeepCnn, quick ? 2 : 5);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_conv: %s\n", e.what());
        return 1;
    }
}
