// A small dense network's step recomputed per fragment (ops/mlp.hpp, lib/mlp):
// the loss pass and every parameter's update against the reference network
// (reference dense layers, activations and losses in double). The updates are
// SGD with lr 1 and no decay, so p - p' is the gradient the kernel computed:
// within 2e-5 of the largest reference gradient (fp32 sums and the p - p'
// cancellation). The loss within 1e-5 relative. Odd widths 1 to 9, one to four
// layers, every activation, all three losses (MSE, BCE, softmax cross-entropy
// with class labels, whose correct count is checked too), windows and pages. The other
// optimizers are checked against their own pass fed the reference gradient,
// and the gradient against finite differences of the loss pass itself.
#include <gtest/gtest.h>

#include <cmath>

#include "gltrain/ops/mlp.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_mlp_test {

using namespace gltrain;
using gltrain::test::randomMatrix;

namespace {

using MatD = HostMatrixT<double>;

struct Net {
    std::vector<int> widths;  // N0 .. NL
    std::vector<Activation> acts;
    int batch;
    PointwiseLoss loss;
    Layout layout = Layout::Packed;  // of the parameters
    bool small = false;              // pagedContext(), x and t windows past its first page
    bool softmax = false;            // softmax cross-entropy against class labels (loss unused)
};

std::string name(const Net& n) {
    std::string s;
    for (int w : n.widths) s += (s.empty() ? "" : "-") + std::to_string(w);
    s += " batch " + std::to_string(n.batch) +
         (n.softmax                                   ? " softmax"
          : n.loss == PointwiseLoss::MeanSquaredError ? " mse"
                                                      : " bce");
    return s + " " + layoutName(n.layout) + (n.small ? " paged" : "");
}

// MAX_TEXTURE_SIZE forced down to 16: the paged nets' 18-wide hidden layer
// splits its kernel into pages with few multiply-adds. lib/mlp writes every
// multiply-add out, so a hidden layer wide enough to page at 64 (70) made
// shaders that took ~20 s per net to compile on llvmpipe and in SwiftShader.
Context& pagedContext() {
    static Context ctx([] {
        ContextOptions o;
        o.backend = BackendPreference::Gpu;
        o.maxTextureSize = 16;
        return o;
    }());
    ctx.makeCurrent();
    return ctx;
}

// The network's values on the host and as tensors; x and t are row windows
// (from row 20 of 40-row bases in the paged case: the second page).
struct Fixture {
    Context* ctx;
    HostMatrix x, t;
    std::vector<int> labels;  // t's rows as class labels (softmax)
    std::vector<HostMatrix> w, b;
    Tensor xBase, tBase, xb, tb;
    std::vector<std::unique_ptr<PingPong>> W, B;
    SmallMlp mlp;
    float alpha = 0.2f;

    Fixture(const Net& n, unsigned seed) : ctx(n.small ? &pagedContext() : &test::context()) {
        const int L = int(n.acts.size()), first = n.small ? 20 : 1, rows = n.small ? 40 : n.batch + 2;
        const int classes = n.widths[size_t(L)], tcols = n.softmax ? 1 : classes;
        HostMatrix xs = randomMatrix(rows, n.widths[0], seed), ts = randomMatrix(rows, tcols, seed + 1, 0.0f, 1.0f);
        if (n.softmax)
            for (float& v : ts.data) v = std::min(std::floor(v * float(classes)), float(classes - 1));
        xBase = Tensor(*ctx, xs);
        tBase = Tensor(*ctx, ts);
        xb = Tensor::rowWindow(xBase, first, n.batch);
        tb = Tensor::rowWindow(tBase, first, n.batch);
        x = HostMatrix(n.batch, n.widths[0]);
        t = HostMatrix(n.batch, tcols);
        std::copy_n(xs.data.begin() + first * n.widths[0], x.data.size(), x.data.begin());
        std::copy_n(ts.data.begin() + first * tcols, t.data.size(), t.data.begin());
        if (n.softmax)
            for (float v : t.data) labels.push_back(int(v));
        mlp.x = &xb;
        mlp.t = &tb;
        mlp.loss = n.loss;
        mlp.softmaxLabels = n.softmax;
        for (int l = 0; l < L; ++l) {
            const float s = 1.5f / std::sqrt(float(n.widths[size_t(l)]));
            w.push_back(randomMatrix(n.widths[size_t(l)], n.widths[size_t(l) + 1], seed + 10 + unsigned(l), -s, s));
            b.push_back(randomMatrix(1, n.widths[size_t(l) + 1], seed + 20 + unsigned(l), -0.5f, 0.5f));
            W.push_back(std::make_unique<PingPong>(*ctx, w.back(), n.layout));
            B.push_back(std::make_unique<PingPong>(*ctx, b.back(), n.layout));
        }
        for (int l = 0; l < L; ++l)
            mlp.layers.push_back({&W[size_t(l)]->front(), &B[size_t(l)]->front(), n.acts[size_t(l)], alpha});
    }
};

struct Reference {
    double loss;
    std::vector<MatD> dW, db;
    int correct = 0;  // softmax: rows whose argmax is the label
};
Reference reference(const Net& n, const Fixture& f) {
    const size_t L = n.acts.size();
    std::vector<MatD> in{f.x.cast<double>()}, z;
    for (size_t l = 0; l < L; ++l) {
        z.push_back(ref::densePreactivation(in.back(), f.w[l].cast<double>(), f.b[l].cast<double>()));
        in.push_back(ref::activate(z.back(), n.acts[l], double(f.alpha)));
    }
    const MatD t = f.t.cast<double>();
    Reference r{0.0, std::vector<MatD>(L), std::vector<MatD>(L)};
    MatD dy;
    if (n.softmax) {
        auto lossAndGrad = ref::softmaxCrossEntropy(in.back(), f.labels);
        r.loss = lossAndGrad.mean();
        r.correct = ref::correctCount(in.back(), f.labels);
        dy = lossAndGrad.grad;
    } else {
        auto lossAndGrad = n.loss == PointwiseLoss::MeanSquaredError ? ref::mse(in.back(), t)
                                                                     : ref::binaryCrossEntropyWithLogits(in.back(), t);
        r.loss = lossAndGrad.loss;
        dy = lossAndGrad.grad;
    }
    for (size_t l = L; l-- > 0;) {
        auto g = ref::denseBackward(in[l], f.w[l].cast<double>(), z[l], dy, n.acts[l], double(f.alpha));
        r.dW[l] = g.dW;
        r.db[l] = g.db;
        dy = g.dX;
    }
    return r;
}

// max |got - want| / max |want| (want's scale at least 1e-6).
double scaledDiff(const HostMatrix& got, const MatD& want) {
    double scale = 1e-6, err = 0;
    for (double v : want.data) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < got.data.size(); ++i) err = std::max(err, std::fabs(double(got.data[i]) - want.data[i]));
    return got.data.size() == want.data.size() ? err / scale : INFINITY;
}

HostMatrix minus(const HostMatrix& a, const HostMatrix& b) {
    HostMatrix d = a;
    for (size_t i = 0; i < d.data.size(); ++i) d.data[i] -= b.data[i];
    return d;
}

const std::vector<Net>& nets() {
    using A = Activation;
    static const std::vector<Net> v = {
        {{2, 8, 1}, {A::Tanh, A::Linear}, 4, PointwiseLoss::MeanSquaredError},
        {{1, 1}, {A::Linear}, 1, PointwiseLoss::BinaryCrossEntropyWithLogits},
        {{3, 5, 3}, {A::ReLU, A::Sigmoid}, 5, PointwiseLoss::BinaryCrossEntropyWithLogits, Layout::Unpacked},
        {{5, 7, 6, 3}, {A::LeakyReLU, A::GELU, A::Softplus}, 3, PointwiseLoss::MeanSquaredError},
        {{4, 9, 1, 5, 2},
         {A::Tanh, A::ReLU, A::Linear, A::Sigmoid},
         7,
         PointwiseLoss::MeanSquaredError,
         Layout::PackedRows4},
        {{3, 18, 2}, {A::Tanh, A::Linear}, 9, PointwiseLoss::BinaryCrossEntropyWithLogits, Layout::Packed, true},
        // Softmax cross-entropy: 2 to 7 classes, a hidden activation on the output, pages.
        {{4, 6, 3}, {A::Tanh, A::Linear}, 11, {}, Layout::Packed, false, true},
        {{1, 2}, {A::Linear}, 1, {}, Layout::Unpacked, false, true},
        {{5, 9, 4, 7}, {A::ReLU, A::LeakyReLU, A::Sigmoid}, 5, {}, Layout::PackedRows4, false, true},
        {{3, 18, 3}, {A::GELU, A::Linear}, 9, {}, Layout::Packed, true, true},
    };
    return v;
}

}  // namespace

TEST(KernelsMlp, LossAndGradientsMatchTheReference) {
    OptimizerConfig sgd;
    sgd.kind = OptimizerKind::SGD;
    sgd.lr = 1.0f;
    for (const Net& n : nets()) {
        Fixture f(n, 7);
        if (n.small) ASSERT_TRUE(f.xBase.geometry().paged() && f.W[1]->front().geometry().paged()) << name(n);
        const Reference want = reference(n, f);
        Tensor mean(*f.ctx, 1, 1), count(*f.ctx, 1, 1), running(*f.ctx, HostMatrix(1, 1, std::vector<float>{3.0f}));
        PassList list;
        recordSmallMlpLoss(list, f.mlp, mean);
        if (n.softmax) recordSmallMlpCorrectCount(list, f.mlp, count, &running);
        for (size_t l = 0; l < n.acts.size(); ++l) {
            recordSmallMlpUpdate(list, sgd, f.mlp, int(l), false, *f.W[l], {});
            recordSmallMlpUpdate(list, sgd, f.mlp, int(l), true, *f.B[l], {});
        }
        EXPECT_EQ(list.size(), (n.softmax ? 2 : 1) + 2 * n.acts.size());
        list.run();
        const float loss = mean.download().data[0];
        EXPECT_NEAR(loss, want.loss, 1e-5 * std::max(1.0, std::fabs(want.loss))) << name(n);
        if (n.softmax) EXPECT_EQ(count.download().data[0], 3.0f + float(want.correct)) << name(n);
        for (size_t l = 0; l < n.acts.size(); ++l) {
            EXPECT_LE(scaledDiff(minus(f.w[l], f.W[l]->back().download()), want.dW[l]), 2e-5) << name(n) << " dW" << l;
            EXPECT_LE(scaledDiff(minus(f.b[l], f.B[l]->back().download()), want.db[l]), 2e-5) << name(n) << " db" << l;
        }
    }
}

// Central differences of the loss pass (h = 1e-2 on a few entries of every
// parameter) against the gradient the updates computed: within 2e-3 of the
// largest gradient (fp32 losses divided by 2h).
TEST(KernelsMlp, GradientsMatchFiniteDifferencesOfTheLoss) {
    for (const Net* np : {&nets()[3], &nets()[8]}) {  // MSE; softmax cross-entropy
        const Net& n = *np;
        SCOPED_TRACE(name(n));
        Fixture f(n, 11);
        OptimizerConfig sgd;
        sgd.kind = OptimizerKind::SGD;
        sgd.lr = 1.0f;
        Tensor mean(*f.ctx, 1, 1);
        PassList loss, updates;
        recordSmallMlpLoss(loss, f.mlp, mean);
        for (size_t l = 0; l < n.acts.size(); ++l) {
            recordSmallMlpUpdate(updates, sgd, f.mlp, int(l), false, *f.W[l], {});
            recordSmallMlpUpdate(updates, sgd, f.mlp, int(l), true, *f.B[l], {});
        }
        updates.run();
        for (size_t l = 0; l < n.acts.size(); ++l) {
            for (bool bias : {false, true}) {
                PingPong& p = bias ? *f.B[l] : *f.W[l];
                const HostMatrix p0 = bias ? f.b[l] : f.w[l];
                const HostMatrix g = minus(p0, p.back().download());
                double gmax = 1e-6;
                for (float v : g.data) gmax = std::max(gmax, double(std::fabs(v)));
                for (size_t i = 0; i < p0.data.size(); i += 3) {
                    const float h = 1e-2f;
                    double at[2];
                    for (int side = 0; side < 2; ++side) {
                        HostMatrix q = p0;
                        q.data[i] += side ? h : -h;
                        p.front().upload(q);
                        loss.run();
                        at[side] = mean.download().data[0];
                    }
                    p.front().upload(p0);
                    EXPECT_NEAR((at[1] - at[0]) / (2 * h), g.data[i], 2e-3 * gmax)
                        << "layer " << l << (bias ? " bias " : " kernel ") << i;
                }
            }
        }
    }
}

// Momentum, Nesterov, Adam, AdamW and RMSProp (with and without momentum) through
// the recomputed gradient match the same optimizer's pass fed the reference gradient.
TEST(KernelsMlp, EveryOptimizerMatchesItsUpdateWithTheGradientGiven) {
    const Net& n = nets()[2];
    for (OptimizerKind kind : {OptimizerKind::Momentum, OptimizerKind::Nesterov, OptimizerKind::Adam,
                               OptimizerKind::AdamW, OptimizerKind::RMSProp}) {
        for (float momentum : {0.0f, 0.9f}) {
            if (momentum == 0.0f && kind != OptimizerKind::RMSProp) continue;
            OptimizerConfig c;
            c.kind = kind;
            c.lr = 0.05f;
            c.weightDecay = 0.01f;
            c.momentum = kind == OptimizerKind::RMSProp ? momentum : 0.9f;
            Fixture f(n, 13);
            const Reference want = reference(n, f);
            for (size_t l = 0; l < n.acts.size(); ++l) {
                for (bool bias : {false, true}) {
                    PingPong& p = bias ? *f.B[l] : *f.W[l];
                    HostMatrix slot0 = randomMatrix(p.front().rows(), p.front().cols(), 40, 0.0f, 0.1f);
                    std::vector<std::unique_ptr<PingPong>> s1, s2;
                    std::vector<PingPong*> p1, p2;
                    for (int s = 0; s < c.stateSlots(); ++s) {
                        s1.push_back(std::make_unique<PingPong>(*f.ctx, slot0, n.layout));
                        s2.push_back(std::make_unique<PingPong>(*f.ctx, slot0, n.layout));
                        p1.push_back(s1.back().get());
                        p2.push_back(s2.back().get());
                    }
                    PingPong given(*f.ctx, bias ? f.b[l] : f.w[l], n.layout);
                    Tensor grad(*f.ctx, (bias ? want.db[l] : want.dW[l]).cast<float>(), n.layout);
                    PassList list;
                    recordSmallMlpUpdate(list, c, f.mlp, int(l), bias, p, p1);
                    recordOptimizerUpdate(list, c, given, grad, p2);
                    list.run();
                    const std::string what = std::string(optimizerName(kind)) + " mu " + std::to_string(momentum) +
                                             " layer " + std::to_string(l) + (bias ? " bias" : " kernel");
                    EXPECT_LE(test::relativeError(p.back().download(), given.back().download()), 1e-5) << what;
                    for (size_t s = 0; s < s1.size(); ++s)
                        EXPECT_LE(test::relativeError(s1[s]->back().download(), s2[s]->back().download()), 1e-4)
                            << what << " slot " << s;
                }
            }
        }
    }
}

// A NaN loss guard keeps every parameter; bad networks are refused before
// anything is recorded, saying what was wrong.
TEST(KernelsMlp, GuardAndRefusals) {
    const Net& n = nets()[0];
    Fixture f(n, 17);
    OptimizerConfig sgd;
    sgd.kind = OptimizerKind::SGD;
    Tensor nan(*f.ctx, HostMatrix(1, 1, std::vector<float>{NAN}));
    PassList guarded;
    recordSmallMlpUpdate(guarded, sgd, f.mlp, 0, false, *f.W[0], {}, &nan);
    guarded.run();
    EXPECT_EQ(f.W[0]->back().download().data, f.w[0].data);

    Context& ctx = *f.ctx;
    Tensor mean(ctx, 1, 1), wide(ctx, 1, 2), w3(ctx, 3, 8), b9(ctx, 1, 9), x3(ctx, 4, 3), t2(ctx, 4, 2);
    auto refused = [&](SmallMlp m, const std::string& says) {
        PassList l;
        try {
            recordSmallMlpLoss(l, m, mean);
            ADD_FAILURE() << "accepted; expected: " << says;
        } catch (const ArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
        EXPECT_THROW(recordSmallMlpUpdate(l, sgd, m, 0, false, *f.W[0], {}), ArgumentError);
        EXPECT_EQ(l.size(), 0u);
    };
    SmallMlp m = f.mlp;
    m.layers[0].kernel = &w3;
    refused(m, "layer 0's kernel is 3x8");
    m = f.mlp;
    m.layers[1].bias = &b9;
    refused(m, "layer 1's bias is 1x9");
    m = f.mlp;
    m.x = &x3;
    refused(m, "layer 0's kernel is 2x8 but its input has 3 columns");
    m = f.mlp;
    m.t = &t2;
    refused(m, "the targets are 4x2");
    m = f.mlp;
    m.layers.clear();
    refused(m, "0 layers");
    m = f.mlp;
    const SmallMlp::Layer last = m.layers.back();
    for (int i = 0; i < 4; ++i) m.layers.push_back(last);
    refused(m, "6 layers");
    m = f.mlp;
    m.layers[0].act = Activation::LeakyReLU;
    m.layers[0].alpha = NAN;
    refused(m, "non-finite alpha");
    // Softmax cross-entropy wants B x 1 labels and at least two classes; only it counts.
    m = f.mlp;  // 2-8-1, t 4x1
    m.softmaxLabels = true;
    refused(m, "softmax cross-entropy over 1 output (needs at least 2 classes)");
    const Net& sn = nets()[6];  // 4-6-3, softmax
    Fixture sf(sn, 18);
    m = sf.mlp;
    Tensor t3(*sf.ctx, sn.batch, 3);
    m.t = &t3;
    try {
        PassList none;
        recordSmallMlpLoss(none, m, mean);
        ADD_FAILURE() << "3 target columns accepted for class labels";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("the targets are 11x3, expected 11x1 (class labels)"), std::string::npos)
            << e.what();
    }
    PassList l;
    EXPECT_THROW(recordSmallMlpCorrectCount(l, f.mlp, mean), ArgumentError);   // no labels
    EXPECT_THROW(recordSmallMlpCorrectCount(l, sf.mlp, wide), ArgumentError);  // not 1x1
    EXPECT_THROW(recordSmallMlpLoss(l, f.mlp, wide), ArgumentError);
    EXPECT_THROW(recordSmallMlpUpdate(l, sgd, f.mlp, 0, true, *f.W[0], {}), ArgumentError);  // not layer 0's bias
    EXPECT_THROW(recordSmallMlpUpdate(l, sgd, f.mlp, 2, false, *f.W[0], {}), ArgumentError);
    EXPECT_EQ(l.size(), 0u);
    // The size limits: 129 values a row, 551 weights, and a fragment's multiply-adds.
    HostMatrix big = randomMatrix(1, 127, 3);
    Tensor xw(ctx, big), wb(ctx, 127, 1), bb(ctx, 1, 1), tb(ctx, 1, 1);
    SmallMlp wideNet;
    wideNet.x = &xw;
    wideNet.t = &tb;
    wideNet.layers.push_back({&wb, &bb, Activation::Linear, 0.0f});
    EXPECT_EQ(smallMlpProblem(wideNet), "");
    Tensor wb2(ctx, 127, 2), bb2(ctx, 1, 2), tb2(ctx, 1, 2);
    wideNet.layers[0] = {&wb2, &bb2, Activation::Linear, 0.0f};
    wideNet.t = &tb2;
    EXPECT_NE(smallMlpProblem(wideNet).find("129 values per row"), std::string::npos) << smallMlpProblem(wideNet);
    Tensor xp(ctx, 4, 20), wp(ctx, 20, 25), bp(ctx, 1, 25), wp2(ctx, 25, 1), bp2(ctx, 1, 1), tp(ctx, 4, 1);
    SmallMlp manyWeights;
    manyWeights.x = &xp;
    manyWeights.t = &tp;
    manyWeights.layers = {{&wp, &bp, Activation::ReLU, 0.0f}, {&wp2, &bp2, Activation::Linear, 0.0f}};
    EXPECT_NE(smallMlpProblem(manyWeights).find("551 weights and biases"), std::string::npos)
        << smallMlpProblem(manyWeights);
    Tensor xl(ctx, 200, 10), wl(ctx, 10, 5), bl(ctx, 1, 5), tl(ctx, 200, 5);
    SmallMlp longNet;
    longNet.x = &xl;
    longNet.t = &tl;
    longNet.layers.push_back({&wl, &bl, Activation::Linear, 0.0f});
    EXPECT_NE(smallMlpProblem(longNet).find("20000 multiply-adds per fragment"), std::string::npos)
        << smallMlpProblem(longNet);
}

}  // namespace kernels_mlp_test
}  // namespace
