// Kernel benchmark: matmul GFLOP/s (square N and the shapes of a
// 784-256-128-10 MLP at batch 128, forward and both backward forms; square N
// also by the kernels the context did not choose: fragment or compute, and
// transform feedback), ms per
// call for the other kernels, the fixed cost of one pass (1x1 output), and
// small dense models' training steps with one pass per parameter (ops/mlp.hpp)
// against the general step.
// Each figure is the median of repeated timed runs; every run is forced to
// complete by reading one texel back (glReadPixels waits for the GPU, in
// browsers too). Prints a table; there is no pass/fail on time.
//   bench_kernels [--quick] [--sizes N,N,...] [--max-k K] [--small-dense] [--compute-only]
//                 [--kernel NAME=FILE ...]
// --sizes replaces the square matmul sizes (default 256, 512, 1024, and 2048,
// 4096 on a hardware renderer); --max-k sets their K-split threshold
// (MatmulOptions::maxKPerPass; default: the renderer's); --small-dense runs only
// the small dense models' table; --compute-only stops after the compute
// kernels' tables (the matmul tiles, each forced, at square N and the
// 784-2048-2048-10 MLP's products at batch 512; optimizer updates as compute
// and as fragment passes); --kernel replaces the embedded kernel NAME (e.g.
// forward/matmul_tiled_large) with FILE's source, to try a kernel on a device
// without rebuilding.
#include <gltrain/gltrain.hpp>
#include <gltrain/ops/elementwise.hpp>
#include <gltrain/ops/loss.hpp>
#include <gltrain/ops/matmul.hpp>
#include <gltrain/ops/optimizer.hpp>
#include <gltrain/sequential.hpp>
#include <gltrain/ops/random.hpp>
#include <gltrain/ops/reduce.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
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

// Waits for the GPU by reading one texel of `t`.
void sync(const Tensor& t) {
    float px[4];
    glBindFramebuffer(GL_FRAMEBUFFER, t.context().framebuffer());
    t.attachPage(0);
    glReadPixels(0, 0, 1, 1, GL_RGBA, GL_FLOAT, px);
}

// Median seconds of one call of `run` (after warm-up), each run synced on `out`.
double medianSeconds(const std::function<void()>& run, const Tensor& out, int reps, int inner = 1) {
    run();
    sync(out);
    std::vector<double> times;
    for (int i = 0; i < reps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        for (int j = 0; j < inner; ++j) run();
        sync(out);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / inner);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// C in `layout`; A and B in `operands` (default: the same).
void matmulRow(Context& ctx, const char* label, int m, int k, int n, bool ta, bool tb, Layout layout, int reps,
               int maxK = MatmulOptions{}.maxKPerPass, Layout operands = Layout(-1),
               ComputeTile tile = ComputeTile::Auto) {
    if (int(operands) < 0) operands = layout;
    Tensor a(ctx, ta ? random(k, m, 1) : random(m, k, 1), operands);
    Tensor b(ctx, tb ? random(n, k, 2) : random(k, n, 2), operands);
    Tensor c(ctx, m, n, layout);
    MatmulOptions o;
    o.transA = ta;
    o.transB = tb;
    o.maxKPerPass = maxK;
    o.computeTile = tile;
    PassList list;
    recordMatmul(list, a, b, c, o);
    double s = medianSeconds([&] { list.run(); }, c, reps);
    const std::string lay =
        operands == layout ? layoutName(layout) : std::string(layoutName(operands)) + " -> " + layoutName(layout);
    std::string kernel = list.passes().back().kernel();  // the last pass: the one with the epilogue
    kernel = kernel.substr(kernel.find('/') + 1);
    // K/pass: the compute and transform-feedback kernels run all of K in one pass.
    const bool onePass = kernel.rfind("matmul_tiled", 0) == 0 || kernel == "matmul_epilogue";
    std::printf("| %-26s | %5d x %5d x %5d | %-24s | %-12s | %5d | %9.3f | %9.2f |\n", label, m, k, n, lay.c_str(),
                kernel.c_str(), onePass ? k : maxK, s * 1e3, 2.0 * m * k * n / s / 1e9);
}

// Small dense models (MSE or softmax cross-entropy, SGD) trained on the GPU with the recomputed step
// (one pass per parameter) and with the general one: median ms/step over
// blocks of 10 steps whose last reads the loss, and with the loss read every
// step; the recomputed step's multiply-adds (what CompileOptions::smallDenseStepMacs
// bounds). The models fit ops/mlp.hpp's per-fragment limits.
void smallDenseTable(int reps) {
    ContextOptions o;
    o.backend = BackendPreference::Gpu;
    Context ctx(o);
    struct Shape {
        std::vector<int> widths;
        int batch;
        bool softmax = false;  // softmax cross-entropy on class labels (else MSE)
    };
    const std::vector<Shape> shapes = {{{2, 8, 1}, 4},
                                       {{2, 8, 1}, 16},
                                       {{2, 8, 1}, 64},
                                       {{2, 8, 8, 1}, 16},
                                       {{4, 16, 1}, 32},
                                       {{4, 32, 1}, 16},
                                       {{2, 16, 16, 1}, 8},
                                       {{2, 16, 16, 1}, 32},
                                       {{2, 64, 1}, 32},
                                       {{8, 32, 32, 1}, 4},
                                       {{2, 8, 3}, 16, true},
                                       {{4, 16, 3}, 32, true},
                                       {{4, 16, 16, 3}, 16, true}};
    std::printf(
        "\n| small dense model (SGD), loss | batch | recomputed step, multiply-adds | loss every 10: recomputed / general, ms/step | loss every step: recomputed / general |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    for (const Shape& sh : shapes) {
        const int rows = 4096, classes = sh.widths.back();
        HostMatrix x = random(rows, sh.widths.front(), 11), y = random(rows, sh.softmax ? 1 : classes, 12);
        std::vector<int> labels(static_cast<size_t>(rows));
        for (int r = 0; r < rows; ++r)
            labels[size_t(r)] = (r * 7 + int(x.data[size_t(r) * size_t(x.cols)] > 0)) % classes;
        const Targets targets = sh.softmax ? Targets(labels) : Targets(y);
        int64_t macs = 0, texels = 0;
        for (size_t l = 0; l + 1 < sh.widths.size(); ++l) {
            macs += int64_t(sh.widths[l]) * sh.widths[l + 1];
            texels += int64_t(sh.widths[l] + 1) * ((sh.widths[l + 1] + 3) / 4);
        }
        const int64_t stepMacs = texels * 2 * macs * sh.batch;
        double ms[2][2];  // [general, recomputed][every 10, every step]
        for (int recomputed = 0; recomputed < 2; ++recomputed) {
            Sequential m(ctx, sh.widths.front());
            for (size_t l = 1; l + 1 < sh.widths.size(); ++l) m.add(Dense{sh.widths[l], Activation::Tanh});
            m.add(Dense{sh.widths.back()});
            CompileOptions c;
            c.loss = sh.softmax ? LossKind::SoftmaxCrossEntropy : LossKind::MeanSquaredError;
            c.optimizer.kind = OptimizerKind::SGD;
            c.optimizer.lr = 0.01f;
            c.smallDenseStepMacs = recomputed ? std::numeric_limits<int64_t>::max() : 0;
            m.compile(c);
            for (int every : {10, 1}) {
                FitOptions f;
                f.epochs = 1000;
                f.batchSize = sh.batch;
                f.lossEvery = every;
                m.beginFit(x, targets, f);
                for (int i = 0; i < 20 || m.step() % every; ++i) m.stepOnce();
                std::vector<double> t;
                for (int b = 0; b < reps * (every == 1 ? 10 : 2); ++b) {
                    auto t0 = std::chrono::steady_clock::now();
                    for (int i = 0; i < every; ++i) m.stepOnce();
                    t.push_back(
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                        every);
                }
                m.endFit();
                std::sort(t.begin(), t.end());
                ms[recomputed][every == 1] = t[t.size() / 2];
            }
        }
        std::string name;
        for (int w : sh.widths) name += (name.empty() ? "" : "-") + std::to_string(w);
        name += sh.softmax ? ", softmax" : ", mse";
        std::printf("| %s | %d | %lld | %.3f / %.3f | %.3f / %.3f |\n", name.c_str(), sh.batch, (long long)stepMacs,
                    ms[1][0], ms[0][0], ms[1][1], ms[0][1]);
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, smallDenseOnly = false, computeOnly = false;
    std::vector<std::pair<std::string, std::string>> kernelFiles;  // (name, file)
    std::vector<int> sizes;
    int squareMaxK = MatmulOptions{}.maxKPerPass;
    try {
        for (int i = 1; i < argc; ++i) {
            if (std::strcmp(argv[i], "--quick") == 0) {
                quick = true;
            } else if (std::strcmp(argv[i], "--small-dense") == 0) {
                smallDenseOnly = true;
            } else if (std::strcmp(argv[i], "--compute-only") == 0) {
                computeOnly = true;
            } else if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
                const std::string v = argv[++i];
                const size_t eq = v.find('=');
                if (eq == std::string::npos) throw ArgumentError("--kernel takes NAME=FILE, got '" + v + "'");
                kernelFiles.emplace_back(v.substr(0, eq), v.substr(eq + 1));
            } else if (std::strcmp(argv[i], "--max-k") == 0 && i + 1 < argc) {
                squareMaxK = std::stoi(argv[++i]);
            } else if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
                std::stringstream in(argv[++i]);
                for (std::string v; std::getline(in, v, ',');) sizes.push_back(std::stoi(v));
            } else {
                throw ArgumentError(std::string("unknown argument '") + argv[i] +
                                    "' (valid: --quick, --sizes N,N,..., --max-k K, --small-dense, --compute-only, "
                                    "--kernel NAME=FILE)");
            }
        }
        Context ctx;
        for (auto& [name, file] : kernelFiles) {
            std::ifstream in(file);
            if (!in) throw ArgumentError("--kernel: cannot read '" + file + "'");
            std::stringstream src;
            src << in.rdbuf();
            ctx.shaders().add(name, src.str());
        }
        const Capabilities& caps = ctx.caps();
        std::printf("gltrain kernel benchmark\nrenderer: %s\nversion:  %s\n\n", caps.renderer.c_str(),
                    caps.version.c_str());
        int reps = quick ? 3 : 7;
        if (smallDenseOnly) {
            smallDenseTable(reps);
            return 0;
        }

        std::printf("compute kernels: %s (%s)\n\n", caps.computeKernels ? "on" : "off", caps.computeReason.c_str());
        std::printf(
            "| matmul                     |      M x     K x     N | layout (A, B -> C)       | kernel       | K/pass |   ms/call |   GFLOP/s |\n");
        std::printf(
            "|----------------------------|-------------------------|--------------------------|--------------|-------|-----------|-----------|\n");
        if (sizes.empty()) {
            sizes = {256, 512, 1024};
            if (!quick && !caps.softwareRenderer) sizes.insert(sizes.end(), {2048, 4096});
        }
        if (caps.computeKernels) {
            // The compute kernels' two tiles, each forced (detail::largeComputeTile
            // chooses between them): square products and the 784-2048-2048-10 MLP's at batch 512.
            std::printf("| compute tiles, forced: small (64 x 64) and large (128 x 128) | | | | | | |\n");
            for (ComputeTile tile : {ComputeTile::Small, ComputeTile::Large}) {
                for (int n : sizes)
                    matmulRow(ctx, "square C = A·B", n, n, n, false, false, Layout::Packed, reps, squareMaxK,
                              Layout::Packed, tile);
                struct {
                    const char* label;
                    int m, k, n;
                    bool ta, tb;
                } big[] = {{"MLP fwd 784->2048 b512", 512, 784, 2048, false, false},
                           {"MLP fwd 2048->2048 b512", 512, 2048, 2048, false, false},
                           {"  dW = Xᵀ·dZ 2048x2048", 2048, 512, 2048, true, false},
                           {"  dW = Xᵀ·dZ 784x2048", 784, 512, 2048, true, false},
                           {"  dX = dZ·Wᵀ 512x2048", 512, 2048, 2048, false, true}};
                for (auto& b : big)
                    matmulRow(ctx, b.label, b.m, b.k, b.n, b.ta, b.tb, Layout::Packed, reps, squareMaxK, Layout::Packed,
                              tile);
            }
            // The optimizer updates as compute dispatches (ctx) and as fragment passes
            // (compute off): the 784-2048-2048-10 MLP's parameter shapes.
            std::printf(
                "\n| update (one pass per parameter) | shape | compute ms | fragment ms |\n|---|---|---:|---:|\n");
            {
                ContextOptions fo;
                fo.backend = BackendPreference::Gpu;
                fo.compute = ComputePreference::Off;
                Context fragment(fo);
                for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::SGD, OptimizerKind::Momentum})
                    for (auto [r, c] : {std::pair{2048, 2048}, std::pair{784, 2048}, std::pair{1, 2048}}) {
                        double ms[2];
                        for (int f = 0; f < 2; ++f) {
                            Context& on = f ? fragment : ctx;
                            on.makeCurrent();
                            OptimizerConfig oc;
                            oc.kind = kind;
                            PingPong w(on, random(r, c, 7)), m(on, HostMatrix(r, c)), v(on, HostMatrix(r, c));
                            Tensor g(on, random(r, c, 8));
                            std::vector<PingPong*> slots = {&m, &v};
                            slots.resize(size_t(oc.stateSlots()));
                            PassList up;
                            recordOptimizerUpdate(up, oc, w, g, slots);
                            ms[f] = medianSeconds([&] { up.run(); }, w.back(), reps) * 1e3;
                        }
                        std::printf("| %s | %d x %d | %.3f | %.3f |\n", optimizerName(kind), r, c, ms[0], ms[1]);
                    }
            }
            ctx.makeCurrent();  // after fragment is gone: destroying a context leaves none current
            if (computeOnly) return 0;
        }
        // PackedRows4 / PackedRows8 outputs: the 4x4 / 8x4 register-blocked kernel (8 render targets).
        std::vector<Layout> layouts = {Layout::Packed, Layout::PackedRows4};
        if (caps.maxDrawBuffers >= 8) layouts.push_back(Layout::PackedRows8);
        for (int n : sizes)
            for (Layout l : layouts) {
                matmulRow(ctx, "square C = A·B", n, n, n, false, false, l, reps, squareMaxK);
                // Operands packed (rows contiguous in one layer), the blocked output row-interleaved.
                if (rowPhases(l) > 1)
                    matmulRow(ctx, "square C = A·B", n, n, n, false, false, l, reps, squareMaxK, Layout::Packed);
            }
        // Square products on a second context with other kernel choices, up to
        // maxN (n > 512 on a software renderer would take long), packed and
        // row-interleaved.
        auto otherKernels = [&](ContextOptions o, const char* label, int maxN) {
            o.backend = BackendPreference::Gpu;
            {
                Context alt(o);
                for (int n : sizes) {
                    if (n > maxN || (caps.softwareRenderer && n > 512)) continue;
                    for (Layout l : {Layout::Packed, Layout::PackedRows8})
                        if (rowPhases(l) == 1 || caps.maxDrawBuffers >= 8)
                            matmulRow(alt, label, n, n, n, false, false, l, reps, squareMaxK);
                }
            }
            ctx.makeCurrent();  // after alt is gone: destroying a context leaves none current
        };
        if (caps.computeShaders) {
            // The other kind of kernel on the same device: the fragment kernels where
            // compute runs (Auto on a GPU), the compute kernel where it does not (a
            // software renderer, where it is slow).
            ContextOptions o;
            o.compute = caps.computeKernels ? ComputePreference::Off : ComputePreference::On;
            otherKernels(o, "square C = A·B", std::numeric_limits<int>::max());
        }
        if (!caps.feedbackKernels) {
            // The transform-feedback kernel where Auto does not choose it (WebGL2's other
            // way to run matmul besides fragments: compute off), for K within its one pass.
            ContextOptions o;
            o.compute = ComputePreference::Off;
            o.feedback = FeedbackPreference::On;
            o.feedbackMinWork = 0;
            otherKernels(o, "square C = A·B (feedback)", detail::kFeedbackMaxK);
        }
        matmulRow(ctx, "square C = A·B", 512, 512, 512, false, false, Layout::Unpacked, reps);
        // The K-split threshold: the same product in 1, 2, 4 and 8 passes.
        for (int maxK : {4096, 2048, 1024, 512})
            matmulRow(ctx, "K-split C = A·B", 256, 4096, 256, false, false, Layout::PackedRows4, reps, maxK);
        struct {
            const char* label;
            int m, k, n;
        } mlp[] = {{"MLP fwd 784->256", 128, 784, 256},
                   {"MLP fwd 256->128", 128, 256, 128},
                   {"MLP fwd 128->10", 128, 128, 10}};
        for (auto& s : mlp)
            for (Layout l : layouts) {
                matmulRow(ctx, s.label, s.m, s.k, s.n, false, false, l, reps);
                matmulRow(ctx, "  dW = Xᵀ·dZ", s.k, s.m, s.n, true, false, l, reps);
                matmulRow(ctx, "  dX = dZ·Wᵀ", s.m, s.n, s.k, false, true, l, reps);
            }

        std::printf("\n| kernel                     | shape        | layout   |   ms/call |\n");
        std::printf("|----------------------------|--------------|----------|-----------|\n");
        auto row = [&](const char* name, int r, int c, Layout l,
                       const std::function<void(PassList&, Tensor&, Tensor&, Tensor&)>& rec) {
            Tensor x(ctx, random(r, c, 3), l), y(ctx, random(r, c, 4), l), out(ctx, r, c, l);
            PassList list;
            rec(list, x, y, out);
            double s = medianSeconds([&] { list.run(); }, out, reps);
            std::printf("| %-26s | %5d x %-5d | %-8s | %9.3f |\n", name, r, c, layoutName(l), s * 1e3);
        };
        for (Layout l : {Layout::Packed, Layout::Unpacked}) {
            row("add", 128, 256, l, [](PassList& p, Tensor& x, Tensor& y, Tensor& o) { recordAdd(p, x, y, o); });
            row("axpy", 784, 256, l,
                [](PassList& p, Tensor& x, Tensor& y, Tensor& o) { recordAxpy(p, 0.5f, x, y, o); });
            row("relu", 128, 256, l,
                [](PassList& p, Tensor& x, Tensor&, Tensor& o) { recordActivation(p, x, Activation::ReLU, o); });
            row("gelu backward", 128, 256, l, [](PassList& p, Tensor& x, Tensor& y, Tensor& o) {
                recordActivationGrad(p, y, x, Activation::GELU, o);
            });
        }

        // The other kernels of a training step, at the MLP's shapes (batch 128).
        auto timed = [&](const char* name, const char* shape, PassList& list, const Tensor& out) {
            double s = medianSeconds([&] { list.run(); }, out, reps);
            std::printf("| %-26s | %-12s | %-8s | %9.3f |\n", name, shape, "packed", s * 1e3);
        };
        {
            Tensor logits(ctx, random(128, 10, 5)), grad(ctx, 128, 10), rows(ctx, 128, 1, Layout::Unpacked),
                mean(ctx, 1, 1), correct(ctx, 1, 1);
            std::vector<float> lv(128);
            for (int i = 0; i < 128; ++i) lv[size_t(i)] = float(i % 10);
            Tensor labels(ctx, HostMatrix(128, 1, lv), Layout::Unpacked);
            PassList xent, count;
            recordSoftmaxCrossEntropy(xent, logits, labels, grad, &rows, &mean);
            timed("softmax CE + grad + mean", "128 x 10", xent, mean);
            recordCorrectCount(count, logits, labels, correct);
            timed("argmax + correct count", "128 x 10", count, correct);
        }
        {
            Tensor dz(ctx, random(128, 256, 6)), db(ctx, 1, 256), all(ctx, 1, 1);
            PassList bias, sum;
            recordBiasGrad(bias, dz, db);
            timed("bias gradient (col sum)", "128 x 256", bias, db);
            recordReduce(sum, dz, ReduceOp::Sum, ReduceAxis::All, all);
            timed("sum all", "128 x 256", sum, all);
        }
        {
            OptimizerConfig adam;
            PingPong w(ctx, random(784, 256, 7)), m(ctx, HostMatrix(784, 256)), v(ctx, HostMatrix(784, 256));
            Tensor g(ctx, random(784, 256, 8));
            PassList up;
            recordOptimizerUpdate(up, adam, w, g, {&m, &v});
            timed("Adam update (3 targets)", "784 x 256", up, w.back());
            // With the NaN guard training binds: every fragment also reads the 1x1 loss.
            Tensor loss(ctx, HostMatrix(1, 1, 0.5f));
            PassList guarded;
            recordOptimizerUpdate(guarded, adam, w, g, {&m, &v}, nullptr, &loss);
            timed("Adam update + NaN guard", "784 x 256", guarded, w.back());
            timed("Adam update (3 targets)", "784 x 256", up, w.back());  // again: the machine drifts
            Tensor mask(ctx, 128, 256);
            PassList drop;
            recordDropoutMask(drop, mask, 1, 2, 0.5f);
            timed("dropout mask", "128 x 256", drop, mask);
        }

        // The fixed cost of a pass: a 1x1 output, many passes per sync.
        Tensor one(ctx, HostMatrix(1, 1, 1.0f)), two(ctx, HostMatrix(1, 1, 2.0f)), out(ctx, 1, 1);
        PassList tiny;
        recordAdd(tiny, one, two, out);
        double s = medianSeconds([&] { tiny.run(); }, out, reps, 200);
        std::printf("\nper-pass fixed overhead (1x1 add, 200 passes per sync): %.4f ms\n", s * 1e3);
        smallDenseTable(reps);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_kernels: %s\n", e.what());
        return 1;
    }
}
