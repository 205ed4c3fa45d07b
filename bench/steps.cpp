// Step times of a fit, one by one (issue 41): how far the mean step is from
// the median (a step that stalls — a snapshot read back at once — shows as a
// mean well above the median and a slowest step far above both), and what a
// fit's start costs (the Context, compile, the first step, the first epoch),
// for comparing --backend auto with --backend gpu.
//
//   bench_steps [--layers 784,2048,2048,10] [--batch 512] [--steps 1000] [--rows 60000]
//               [--backend auto|gpu|cpu] [--loss-every N] [--async-loss] [--snapshot-every N]
//               [--label TEXT] [--profile]
//
// Synthetic data (x uniform in [0, 1), label i % classes), Adam 1e-3, ReLU
// hidden layers; a step's time is the wall time between onStep calls (the
// first from the fit's call). Prints one line of key=value figures:
//   label backend ctx_ms compile_ms first_step_ms epoch1_s steps median_ms mean_ms
//   mean_over_median p99_ms max_ms max_step slow_steps (over 2x the median)
// and the ten slowest steps; with --profile then each pass of one step in order
// (Sequential::profileStep: GPU timer queries where the context has them, the
// median of 5) — where the step's time goes. No pass or fail on time.
#include <gltrain/backend_choice.hpp>
#include <gltrain/gltrain.hpp>
#include <gltrain/sequential.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

using namespace gltrain;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Options {
    std::vector<int> layers = {784, 2048, 2048, 10};
    int batch = 512, rows = 60000;
    long steps = 1000;
    std::string backend = "auto", label = "-";
    int lossEvery = 10, snapshotEvery = 100;
    bool asyncLoss = false, profile = false;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "bench_steps: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--layers") {
            o.layers.clear();
            std::stringstream ss(value());
            for (std::string part; std::getline(ss, part, ',');) o.layers.push_back(std::stoi(part));
        } else if (a == "--batch") o.batch = std::stoi(value());
        else if (a == "--steps") o.steps = std::stol(value());
        else if (a == "--rows") o.rows = std::stoi(value());
        else if (a == "--backend") o.backend = value();
        else if (a == "--loss-every") o.lossEvery = std::stoi(value());
        else if (a == "--async-loss") o.asyncLoss = true;
        else if (a == "--snapshot-every") o.snapshotEvery = std::stoi(value());
        else if (a == "--label") o.label = value();
        else if (a == "--profile") o.profile = true;
        else {
            std::cerr << "bench_steps: unknown argument '" << a
                      << "' (--layers L, --batch B, --steps N, --rows N, --backend auto|gpu|cpu, --loss-every N, "
                         "--async-loss, --snapshot-every N, --label TEXT, --profile)\n";
            std::exit(2);
        }
    }
    if (o.layers.size() < 2 || o.batch < 1 || o.steps < 1 || o.rows < o.batch) {
        std::cerr << "bench_steps: need at least 2 layer sizes, batch >= 1, steps >= 1 and rows >= batch\n";
        std::exit(2);
    }
    if (o.backend != "auto" && o.backend != "gpu" && o.backend != "cpu") {
        std::cerr << "bench_steps: unknown backend '" << o.backend << "' (auto, gpu, cpu)\n";
        std::exit(2);
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        const auto t0 = Clock::now();
        ContextOptions co;
        co.backend = o.backend == "cpu"   ? BackendPreference::Cpu
                     : o.backend == "gpu" ? BackendPreference::Gpu
                                          : BackendPreference::Auto;
        Context ctx(co);
        chooseFasterBackend(ctx);
        const double ctxMs = msSince(t0);

        const int in = o.layers.front(), classes = o.layers.back();
        HostMatrix x(o.rows, in);
        for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float((i * 2654435761u) % 1000u) / 1000.0f;
        std::vector<int> y(size_t(o.rows));
        for (int r = 0; r < o.rows; ++r) y[size_t(r)] = r % classes;

        const auto t1 = Clock::now();
        Sequential net(ctx, Shape3{1, 1, in});
        for (size_t l = 1; l + 1 < o.layers.size(); ++l) net.add(Dense{o.layers[l], Activation::ReLU});
        net.add(Dense{classes});
        CompileOptions c;
        c.optimizer.kind = OptimizerKind::Adam;
        c.optimizer.lr = 1e-3f;
        net.compile(c);
        const double compileMs = msSince(t1);

        FitOptions f;
        f.batchSize = o.batch;
        f.lossEvery = o.lossEvery;
        f.asyncLoss = o.asyncLoss;
        f.snapshotEvery = o.snapshotEvery;
        const long perEpoch = stepsPerEpoch(o.rows, f);
        f.epochs = int((o.steps + perEpoch - 1) / perEpoch);
        std::vector<double> ms;
        ms.reserve(size_t(f.epochs * perEpoch));
        double epoch1 = 0;
        Callbacks cb;
        Clock::time_point last = Clock::now();
        cb.onStep = [&](const StepInfo&) {
            const auto now = Clock::now();
            ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
            last = now;
        };
        cb.onEpoch = [&](const EpochInfo& e) {
            if (e.epoch == 0) epoch1 = e.seconds;
            last = Clock::now();  // the epoch end's reads and validation are not a step's
        };
        last = Clock::now();
        net.fit(x, Targets(y), f, cb);
        ms.resize(size_t(std::min<long>(o.steps, long(ms.size()))));

        // The steady state: every step after the first.
        std::vector<double> steady(ms.begin() + 1, ms.end());
        std::vector<double> sorted = steady;
        std::sort(sorted.begin(), sorted.end());
        auto pct = [&](double p) {
            return sorted.empty() ? 0.0 : sorted[std::min(sorted.size() - 1, size_t(p * double(sorted.size())))];
        };
        const double median = pct(0.5);
        const double mean =
            steady.empty() ? 0 : std::accumulate(steady.begin(), steady.end(), 0.0) / double(steady.size());
        const size_t maxAt = size_t(std::max_element(ms.begin(), ms.end()) - ms.begin());
        long slow = 0;
        for (double v : steady) slow += v > 2 * median;
        std::printf(
            "label=%s backend=%s layers=%zu batch=%d ctx_ms=%.1f compile_ms=%.1f first_step_ms=%.2f epoch1_s=%.3f "
            "steps=%zu median_ms=%.3f mean_ms=%.3f mean_over_median=%.3f p99_ms=%.3f max_ms=%.2f max_step=%zu "
            "slow_steps=%ld\n",
            o.label.c_str(), backendName(ctx.backend()), o.layers.size(), o.batch, ctxMs, compileMs, ms.front(), epoch1,
            steady.size(), median, mean, median > 0 ? mean / median : 0.0, pct(0.99), ms[maxAt], maxAt + 1, slow);
        std::vector<size_t> order(ms.size());
        std::iota(order.begin(), order.end(), size_t(0));
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ms[a] > ms[b]; });
        std::printf("  slowest steps:");
        for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i)
            std::printf(" %zu:%.2f", order[i] + 1, ms[order[i]]);
        std::printf("\n");
        if (o.profile) {
            double total = 0;
            const std::vector<PassTiming> passes = net.profileStep(x, Targets(y), o.batch, 5);
            for (const PassTiming& p : passes) {
                std::printf("  %8.4f ms  %s%s\n", p.ms, p.kernel.c_str(), p.gpuTimer ? "" : " (host clock)");
                total += p.ms;
            }
            std::printf("  %8.4f ms  the step's %zu passes\n", total, passes.size());
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_steps: %s\n", e.what());
        return 1;
    }
}
