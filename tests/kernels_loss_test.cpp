// GPU softmax and losses against the CPU reference (ref::softmaxRows,
// ref::softmaxCrossEntropy[OneHot], ref::mse, ref::binaryCrossEntropyWithLogits)
// on packed, unpacked and paged tensors of odd shapes.
// Tolerances (the GPU's exp/log are not correctly rounded and it sums in a
// different order):
//   softmax probabilities: |gpu - ref| <= 1e-6 + 1e-5 |ref|
//   softmax cross-entropy gradients: |gpu - ref| <= 1e-6 / N + 1e-5 |ref|, i.e.
//     the probabilities' tolerance scaled by 1/N like the gradients;
//   MSE gradient: <= 1e-7 / count + 1e-6 |ref|; BCE gradient: <= 1e-6 / count + 1e-5 |ref|
//   per-row cross-entropy: |gpu - ref| <= 1e-5 max(1, |ref|); with ±1e4 logits
//     <= 4 ulp(1e4) = 4e-3 absolute (lse = m + log s is rounded at 1e4)
//   MSE / BCE: mean of the per-element and per-row losses within 1e-5 relative of
//     the reference loss; per-element losses within 1e-6 + 1e-5 |ref|.
//   mean loss on the GPU (meanLoss, a reduce tree): within 1e-5 max(1, |ref|).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gltrain/ops/loss.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_loss_test {

using namespace gltrain;
using gltrain::test::Case;
using gltrain::test::ctxFor;
using gltrain::test::name;
using gltrain::test::randomMatrix;

namespace {
const Case kCases[] = {
    {1, 1, Layout::Packed, false},       {1, 1, Layout::Unpacked, false},   {3, 5, Layout::Packed, false},
    {3, 5, Layout::Unpacked, false},     {127, 129, Layout::Packed, false}, {1000, 10, Layout::Packed, false},
    {1000, 10, Layout::Unpacked, false}, {1, 1025, Layout::Packed, false},  {1, 1025, Layout::Unpacked, false},
    {257, 63, Layout::Unpacked, false},  {257, 63, Layout::Packed, true},   {1, 1025, Layout::Packed, true},
    {70, 129, Layout::Unpacked, true}};

// max over elements of |a - b| / (atol + rtol |b|): <= 1 passes.
double scaledError(const HostMatrix& a, const HostMatrix& b, double atol, double rtol) {
    EXPECT_EQ(a.data.size(), b.data.size());
    double e = 0.0;
    for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) {
        const double d = std::fabs(double(a.data[i]) - double(b.data[i]));
        e = std::max(
            e, std::isnan(d) ? std::numeric_limits<double>::infinity() : d / (atol + rtol * std::fabs(b.data[i])));
    }
    return e;
}
std::vector<int> randomLabels(int n, int classes, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(0, classes - 1);
    std::vector<int> y(static_cast<size_t>(n));
    for (int& v : y) v = d(rng);
    return y;
}
HostMatrix labelMatrix(const std::vector<int>& y) {
    HostMatrix m(int(y.size()), 1);
    for (size_t i = 0; i < y.size(); ++i) m.data[i] = float(y[i]);
    return m;
}
HostMatrix oneHot(const std::vector<int>& y, int classes) {
    HostMatrix m(int(y.size()), classes);
    for (size_t i = 0; i < y.size(); ++i) m(int(i), y[i]) = 1.0f;
    return m;
}
double mean(const HostMatrix& m) {
    double s = 0.0;
    for (float v : m.data) s += v;
    return s / double(m.data.size());
}
bool allFinite(const HostMatrix& m) {
    for (float v : m.data)
        if (!std::isfinite(v)) return false;
    return true;
}
}  // namespace

TEST(KernelsLoss, SoftmaxMatchesReference) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 11, -8.0f, 8.0f);
        Tensor tx(ctx, x, c.layout), out(ctx, c.rows, c.cols, c.layout);
        softmax(tx, out);
        EXPECT_LE(scaledError(out.download(), ref::softmaxRows(x), 1e-6, 1e-5), 1.0) << name(c);
    }
}

TEST(KernelsLoss, SoftmaxMixedLayouts) {
    Context& ctx = test::smallContext();
    HostMatrix x = randomMatrix(65, 131, 12, -8.0f, 8.0f);
    Tensor tx(ctx, x, Layout::Unpacked), out(ctx, 65, 131, Layout::Packed);
    softmax(tx, out);
    EXPECT_LE(scaledError(out.download(), ref::softmaxRows(x), 1e-6, 1e-5), 1.0);
}

TEST(KernelsLoss, CrossEntropyWithLabelsMatchesReference) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 13, -6.0f, 6.0f);
        std::vector<int> y = randomLabels(c.rows, c.cols, 14);
        auto r = ref::softmaxCrossEntropy(x, y);
        Tensor tx(ctx, x, c.layout), labels(ctx, c.rows, 1, c.layout), grad(ctx, c.rows, c.cols, c.layout),
            loss(ctx, c.rows, 1, c.layout);
        uploadLabels(labels, y, c.cols);
        softmaxCrossEntropy(tx, labels, grad, &loss);
        const double invN = 1.0 / c.rows;
        EXPECT_LE(scaledError(grad.download(), r.grad, 1e-6 * invN, 1e-5), 1.0) << name(c);
        EXPECT_LE(scaledError(loss.download(), r.lossPerRow, 1e-5, 1e-5), 1.0) << name(c);
        EXPECT_NEAR(mean(loss.download()), r.mean(), 1e-5 * std::max(1.0, double(r.mean()))) << name(c);
        // The loss alone (an evaluation): no gradient pass, the same per-row losses.
        PassList lossOnly;
        Tensor loss2(ctx, c.rows, 1, c.layout);
        recordSoftmaxCrossEntropy(lossOnly, tx, labels, nullptr, &loss2);
        for (auto& pass : lossOnly.passes()) EXPECT_NE(pass.kernel(), "loss/softmax_xent_grad");
        lossOnly.run();
        EXPECT_EQ(loss2.download().data, loss.download().data) << name(c);
    }
    Context& ctx = test::context();
    Tensor x(ctx, 3, 4), labels(ctx, 3, 1);
    PassList nothing;
    EXPECT_THROW(recordSoftmaxCrossEntropy(nothing, x, labels, nullptr), ArgumentError);
    EXPECT_EQ(nothing.size(), 0u);
}

TEST(KernelsLoss, CrossEntropyOneHotMatchesReference) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 15, -6.0f, 6.0f);
        std::vector<int> y = randomLabels(c.rows, c.cols, 16);
        // One-hot, and label-smoothed targets (0.9 on the label, the rest spread).
        HostMatrix hot = oneHot(y, c.cols), smooth(c.rows, c.cols, c.cols > 1 ? 0.1f / float(c.cols - 1) : 0.0f);
        for (int i = 0; i < c.rows; ++i) smooth(i, y[size_t(i)]) = c.cols > 1 ? 0.9f : 1.0f;
        for (const HostMatrix* t : {&hot, &smooth}) {
            auto r = ref::softmaxCrossEntropyOneHot(x, *t);
            Tensor tx(ctx, x, c.layout), tt(ctx, *t, c.layout), grad(ctx, c.rows, c.cols, c.layout),
                loss(ctx, c.rows, 1, Layout::Unpacked);
            softmaxCrossEntropyOneHot(tx, tt, grad, &loss);
            const double invN = 1.0 / c.rows;
            const char* which = t == &hot ? " one-hot" : " smoothed";
            EXPECT_LE(scaledError(grad.download(), r.grad, 1e-6 * invN, 1e-5), 1.0) << name(c) << which;
            EXPECT_LE(scaledError(loss.download(), r.lossPerRow, 1e-5, 1e-5), 1.0) << name(c) << which;
        }
    }
}

TEST(KernelsLoss, HugeLogitsStayFinite) {
    // Logits of ±1e4: exp(x) overflows fp32 without the max subtraction.
    for (Layout layout : {Layout::Packed, Layout::Unpacked}) {
        Context& ctx = test::context();
        HostMatrix x = randomMatrix(37, 21, 17, -1e4f, 1e4f);
        for (int c = 0; c < 21; ++c) x(0, c) = c % 2 ? 1e4f : -1e4f;  // ties at the max
        x(1, 3) = 1e4f;
        std::vector<int> y = randomLabels(37, 21, 18);
        y[1] = 3;  // the label holds the max: loss ~ 0
        auto r = ref::softmaxCrossEntropy(x, y);
        auto rh = ref::softmaxCrossEntropyOneHot(x, oneHot(y, 21));
        Tensor tx(ctx, x, layout), labels(ctx, labelMatrix(y), layout), hot(ctx, oneHot(y, 21), layout),
            p(ctx, 37, 21, layout), grad(ctx, 37, 21, layout), loss(ctx, 37, 1, layout);
        softmax(tx, p);
        HostMatrix gp = p.download();
        EXPECT_TRUE(allFinite(gp)) << layoutName(layout);
        EXPECT_LE(scaledError(gp, ref::softmaxRows(x), 1e-6, 1e-5), 1.0) << layoutName(layout);
        softmaxCrossEntropy(tx, labels, grad, &loss);
        HostMatrix gl = loss.download(), gg = grad.download();
        EXPECT_TRUE(allFinite(gl) && allFinite(gg)) << layoutName(layout);
        // lse = m + log(s) is rounded to the fp32 grid at 1e4 (ulp 1e-3), in both.
        EXPECT_LE(scaledError(gl, r.lossPerRow, 4e-3, 1e-6), 1.0) << layoutName(layout);
        EXPECT_LE(scaledError(gg, r.grad, 1e-6 / 37, 1e-5), 1.0) << layoutName(layout);
        softmaxCrossEntropyOneHot(tx, hot, grad, &loss);
        gl = loss.download();
        EXPECT_TRUE(allFinite(gl)) << layoutName(layout);
        EXPECT_LE(scaledError(gl, rh.lossPerRow, 4e-3, 1e-6), 1.0) << layoutName(layout);
    }
}

TEST(KernelsLoss, NaNLogitPoisonsOnlyItsRow) {
    for (const Case& c :
         {Case{5, 7, Layout::Packed, false}, Case{5, 7, Layout::Unpacked, false}, Case{130, 9, Layout::Packed, true}}) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 19, -3.0f, 3.0f);
        x(2, 4) = std::numeric_limits<float>::quiet_NaN();
        x(3, 0) = std::numeric_limits<float>::infinity();   // +inf: NaN too (inf - inf), as in the reference
        x(4, 1) = -std::numeric_limits<float>::infinity();  // -inf in a finite row: probability 0
        std::vector<int> y = randomLabels(c.rows, c.cols, 20);
        y[4] = 2;
        Tensor tx(ctx, x, c.layout), labels(ctx, labelMatrix(y), c.layout), hot(ctx, oneHot(y, c.cols), c.layout),
            grad(ctx, c.rows, c.cols, c.layout), loss(ctx, c.rows, 1, c.layout), p(ctx, c.rows, c.cols, c.layout);
        for (int onehot = 0; onehot < 2; ++onehot) {
            if (onehot) softmaxCrossEntropyOneHot(tx, hot, grad, &loss);
            else softmaxCrossEntropy(tx, labels, grad, &loss);
            HostMatrix gl = loss.download(), gg = grad.download();
            for (int r = 0; r < c.rows; ++r) {
                const bool poisoned = r == 2 || r == 3;
                EXPECT_EQ(std::isnan(gl(r, 0)), poisoned) << name(c) << " row " << r << " onehot " << onehot;
                EXPECT_EQ(std::isfinite(gl(r, 0)), !poisoned) << name(c) << " row " << r;
                for (int k = 0; k < c.cols; ++k)
                    EXPECT_EQ(std::isnan(gg(r, k)), poisoned) << name(c) << " grad " << r << "," << k;
            }
            EXPECT_NEAR(gg(4, 1), 0.0f, 1e-30f);  // the -inf logit's probability is 0
        }
        softmax(tx, p);
        HostMatrix gp = p.download();
        for (int k = 0; k < c.cols; ++k) EXPECT_TRUE(std::isnan(gp(2, k)) && std::isnan(gp(3, k))) << name(c);
        EXPECT_TRUE(std::isfinite(gp(0, 0)));
    }
}

TEST(KernelsLoss, OutOfRangeLabels) {
    // The GPU cannot throw: a label that is not an integer in [0, C) gives its
    // row a NaN loss and NaN gradient; uploadLabels() checks on the host.
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(6, 5, 21);
    HostMatrix y = labelMatrix({0, 5, -1, 2, 0, 0});
    y(4, 0) = 1.5f;  // not an integer
    y(5, 0) = std::numeric_limits<float>::quiet_NaN();
    for (Layout layout : {Layout::Packed, Layout::Unpacked}) {
        Tensor tx(ctx, x, layout), labels(ctx, y, layout), grad(ctx, 6, 5, layout), loss(ctx, 6, 1, layout);
        softmaxCrossEntropy(tx, labels, grad, &loss);
        HostMatrix gl = loss.download(), gg = grad.download();
        const bool bad[6] = {false, true, true, false, true, true};
        for (int r = 0; r < 6; ++r) {
            EXPECT_EQ(std::isnan(gl(r, 0)), bad[r]) << layoutName(layout) << " row " << r;
            for (int k = 0; k < 5; ++k) EXPECT_EQ(std::isnan(gg(r, k)), bad[r]) << layoutName(layout) << " row " << r;
        }
        auto r = ref::softmaxCrossEntropy(x, std::vector<int>{0, 0, 0, 2, 0, 0});
        EXPECT_NEAR(gl(0, 0), r.lossPerRow(0, 0), 1e-5);
        EXPECT_NEAR(gl(3, 0), r.lossPerRow(3, 0), 1e-5);
    }
    Tensor labels(ctx, 3, 1);
    EXPECT_THROW(uploadLabels(labels, {0, 5, 1}, 5), ArgumentError);
    EXPECT_THROW(uploadLabels(labels, {0, -1, 1}, 5), ArgumentError);
    EXPECT_THROW(uploadLabels(labels, {0, 1}, 5), ArgumentError);
    EXPECT_NO_THROW(uploadLabels(labels, {0, 4, 1}, 5));
    EXPECT_THROW(ref::softmaxCrossEntropy(x, std::vector<int>{0, 5, 0, 0, 0, 0}),
                 ArgumentError);  // the reference agrees
}

TEST(KernelsLoss, MseAndBceMatchReference) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix p = randomMatrix(c.rows, c.cols, 23, -4.0f, 4.0f);
        HostMatrix t = randomMatrix(c.rows, c.cols, 24, 0.0f, 1.0f);
        for (int k = 0; k < c.cols; k += 3) t(0, k) = 1.0f, p(0, k) = 30.0f;  // confident and right: loss ~1e-13
        Tensor tp(ctx, p, c.layout), tt(ctx, t, c.layout), grad(ctx, c.rows, c.cols, c.layout),
            perElem(ctx, c.rows, c.cols, c.layout), perRow(ctx, c.rows, 1, Layout::Unpacked);
        const double invCount = 1.0 / (double(c.rows) * c.cols);
        {
            auto r = ref::mse(p, t);
            mse(tp, tt, &grad, &perElem);
            mse(tp, tt, nullptr, &perRow);
            EXPECT_LE(scaledError(grad.download(), r.grad, 1e-7 * invCount, 1e-6), 1.0) << "mse " << name(c);
            HostMatrix d(c.rows, c.cols);
            for (size_t i = 0; i < d.data.size(); ++i) d.data[i] = (p.data[i] - t.data[i]) * (p.data[i] - t.data[i]);
            EXPECT_LE(scaledError(perElem.download(), d, 1e-7, 1e-6), 1.0) << "mse " << name(c);
            EXPECT_NEAR(mean(perElem.download()), r.loss, 1e-5 * std::max(1.0f, r.loss)) << "mse " << name(c);
            EXPECT_NEAR(mean(perRow.download()), r.loss, 1e-5 * std::max(1.0f, r.loss)) << "mse " << name(c);
        }
        {
            auto r = ref::binaryCrossEntropyWithLogits(p, t);
            binaryCrossEntropyWithLogits(tp, tt, &grad, &perElem);
            binaryCrossEntropyWithLogits(tp, tt, nullptr, &perRow);
            EXPECT_LE(scaledError(grad.download(), r.grad, 1e-6 * invCount, 1e-5), 1.0) << "bce " << name(c);
            HostMatrix e(c.rows, c.cols);  // the per-element losses, by the reference's formula
            for (size_t i = 0; i < e.data.size(); ++i) {
                const float x = p.data[i], y = t.data[i];
                e.data[i] = (x < 0 ? 0 : x) - x * y + std::log1p(std::exp(-std::fabs(x)));
            }
            // 1e-6 absolute covers x t - x cancellation at |x| ~ 4; the 1e-13 losses of
            // row 0 are checked relatively below.
            HostMatrix ge = perElem.download();
            EXPECT_LE(scaledError(ge, e, 1e-6, 1e-5), 1.0) << "bce " << name(c);
            for (int k = 0; k < c.cols; k += 3) EXPECT_NEAR(ge(0, k), e(0, k), 1e-3 * e(0, k)) << "bce tiny loss";
            EXPECT_NEAR(mean(ge), r.loss, 1e-5 * std::max(1.0f, r.loss)) << "bce " << name(c);
            EXPECT_NEAR(mean(perRow.download()), r.loss, 1e-5 * std::max(1.0f, r.loss)) << "bce " << name(c);
        }
    }
}

// A small linear dense layer fused with a point-wise loss's gradient
// (recordDenseLossGrad: forward/dense_train with T): Z against the reference
// layer (1e-5 of its largest magnitude, as KernelsDense), the gradient against
// the reference loss's gradient at the GPU's Z with MseAndBceMatchReference's
// tolerances; odd shapes, K in three slices, pages, a gradient scale.
TEST(KernelsLoss, DenseLossGradMatchesReference) {
    struct Shape {
        int n, k, c;
        bool small;
    };
    for (Shape s : {Shape{1, 1, 1, false}, Shape{3, 5, 2, false}, Shape{4, 8, 1, false}, Shape{5, 127, 3, false},
                    Shape{7, 1025, 5, false}, Shape{129, 3, 70, true}}) {
        Context& ctx = s.small ? test::smallContext() : test::context();
        HostMatrix x = randomMatrix(s.n, s.k, 31), w = randomMatrix(s.k, s.c, 32, -0.5f, 0.5f),
                   b = randomMatrix(1, s.c, 33), t = randomMatrix(s.n, s.c, 34, 0.0f, 1.0f);
        Tensor tx(ctx, x), tw(ctx, w), tb(ctx, b), tt(ctx, t), z(ctx, s.n, s.c), g(ctx, s.n, s.c);
        Tensor tscale(ctx, HostMatrix(1, 1, std::vector<float>{256.0f}));
        if (s.small) ASSERT_TRUE(z.geometry().paged());
        const HostMatrix want =
            ref::densePreactivation(x.cast<double>(), w.cast<double>(), b.cast<double>()).cast<float>();
        double zmax = 0;
        for (float v : want.data) zmax = std::max(zmax, double(std::fabs(v)));
        const double invCount = 1.0 / (double(s.n) * s.c);
        const std::string shape = std::to_string(s.n) + "x" + std::to_string(s.k) + "x" + std::to_string(s.c);
        for (PointwiseLoss loss : {PointwiseLoss::MeanSquaredError, PointwiseLoss::BinaryCrossEntropyWithLogits}) {
            for (const Tensor* scale : {static_cast<const Tensor*>(nullptr), static_cast<const Tensor*>(&tscale)}) {
                const float k = scale ? 256.0f : 1.0f;
                z.clear();
                g.clear();
                PassList l;
                recordDenseLossGrad(l, tx, tw, tb, loss, tt, z, g, scale);
                l.run();
                const HostMatrix hz = z.download();
                EXPECT_LE(scaledError(hz, want, 1e-5 * zmax, 0.0), 1.0) << shape;
                const bool mseLoss = loss == PointwiseLoss::MeanSquaredError;
                HostMatrix wantG = mseLoss ? ref::mse(hz, t).grad : ref::binaryCrossEntropyWithLogits(hz, t).grad;
                for (float& v : wantG.data) v *= k;
                EXPECT_LE(
                    scaledError(g.download(), wantG, (mseLoss ? 1e-7 : 1e-6) * invCount * k, mseLoss ? 1e-6 : 1e-5),
                    1.0)
                    << shape << (mseLoss ? " mse" : " bce") << (scale ? " scaled" : "");
            }
        }
    }
    Context& ctx = test::context();
    Tensor x(ctx, 4, 3), w(ctx, 3, 2), b(ctx, 1, 2), t(ctx, 4, 2), z(ctx, 4, 2), g(ctx, 4, 2);
    Tensor t3(ctx, 4, 3), g4(ctx, 4, 2, Layout::Unpacked);
    PassList l;
    EXPECT_THROW(recordDenseLossGrad(l, x, w, b, PointwiseLoss::MeanSquaredError, t3, z, g), ArgumentError);
    EXPECT_THROW(recordDenseLossGrad(l, x, w, b, PointwiseLoss::MeanSquaredError, t, z, g4), ArgumentError);
    EXPECT_THROW(recordDenseLossGrad(l, x, t3, b, PointwiseLoss::MeanSquaredError, t, z, g), ArgumentError);
    EXPECT_EQ(l.size(), 0u) << "a refused call records nothing";
}

TEST(KernelsLoss, MeanLossOnGpu) {
    // meanLoss (1 x 1) through ops/reduce.hpp's meanAll: within 1e-5 relative of the reference mean.
    for (const Case& c : {Case{3, 5, Layout::Packed, false}, Case{1000, 10, Layout::Unpacked, false},
                          Case{257, 63, Layout::Packed, true}}) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 25, -4.0f, 4.0f), t = randomMatrix(c.rows, c.cols, 26, 0.0f, 1.0f);
        std::vector<int> y = randomLabels(c.rows, c.cols, 27);
        Tensor tx(ctx, x, c.layout), tt(ctx, t, c.layout), labels(ctx, labelMatrix(y), c.layout),
            hot(ctx, oneHot(y, c.cols), c.layout), grad(ctx, c.rows, c.cols, c.layout),
            perElem(ctx, c.rows, c.cols, c.layout), m(ctx, 1, 1);
        auto near = [](float gpu, float ref) { return std::fabs(gpu - ref) <= 1e-5f * std::max(1.0f, std::fabs(ref)); };
        softmaxCrossEntropy(tx, labels, grad, nullptr, &m);
        EXPECT_PRED2(near, m.download().data[0], ref::softmaxCrossEntropy(x, y).mean()) << name(c);
        softmaxCrossEntropyOneHot(tx, hot, grad, nullptr, &m);
        EXPECT_PRED2(near, m.download().data[0], ref::softmaxCrossEntropyOneHot(x, oneHot(y, c.cols)).mean())
            << name(c);
        mse(tx, tt, &grad, nullptr, &m);
        EXPECT_PRED2(near, m.download().data[0], ref::mse(x, t).loss) << name(c);
        binaryCrossEntropyWithLogits(tx, tt, nullptr, &perElem, &m);  // the per-element form, reduced
        EXPECT_PRED2(near, m.download().data[0], ref::binaryCrossEntropyWithLogits(x, t).loss) << name(c);
    }
}

// MSE and BCE asked for the mean alone, on at most 2 kReduceBlockFactor texels:
// one pass writes it (loss/pointwise_loss ROWS 2); past that, the per-row pass
// and a reduction. Both sides of the boundary, packed (padding lanes masked for
// BCE) and unpacked, against the reference within 1e-5 relative.
TEST(KernelsLoss, SmallBatchMeanInOnePass) {
    Context& ctx = test::context();
    const int f2 = 2 * kReduceBlockFactor;
    struct Shape {
        int rows, cols;
        Layout layout;
        size_t lossPasses;  // passes after the gradient's
    };
    for (const Shape& c :
         {Shape{4, 1, Layout::Unpacked, 1}, Shape{1, 1, Layout::Packed, 1}, Shape{3, 5, Layout::Packed, 1},
          Shape{f2 / 3, 9, Layout::Packed, 1}, Shape{f2, 1, Layout::Unpacked, 1}, Shape{f2 + 1, 1, Layout::Unpacked, 3},
          Shape{f2 / 2 + 1, 5, Layout::Packed, 2}}) {
        HostMatrix x = randomMatrix(c.rows, c.cols, 51, -4.0f, 4.0f), t = randomMatrix(c.rows, c.cols, 52, 0.0f, 1.0f);
        Tensor tx(ctx, x, c.layout), tt(ctx, t, c.layout), grad(ctx, c.rows, c.cols, c.layout), m(ctx, 1, 1);
        const std::string what = std::to_string(c.rows) + "x" + std::to_string(c.cols) + " " + layoutName(c.layout);
        for (int loss = 0; loss < 2; ++loss) {
            PassList list;
            if (loss == 0) recordMse(list, tx, tt, &grad, nullptr, &m);
            else recordBinaryCrossEntropyWithLogits(list, tx, tt, &grad, nullptr, &m);
            EXPECT_EQ(list.size(), 1 + c.lossPasses) << what;
            list.run();
            const float want = loss == 0 ? ref::mse(x, t).loss : ref::binaryCrossEntropyWithLogits(x, t).loss;
            EXPECT_NEAR(m.download()(0, 0), want, 1e-5f * std::max(1.0f, std::fabs(want)))
                << (loss == 0 ? "mse " : "bce ") << what;
        }
    }
}

TEST(KernelsLoss, RecordedOnceReplayedWithNewData) {
    Context& ctx = test::context();
    Tensor logits(ctx, 32, 10), labels(ctx, 32, 1), grad(ctx, 32, 10), loss(ctx, 32, 1, Layout::Unpacked);
    PassList list;
    recordSoftmaxCrossEntropy(list, logits, labels, grad, &loss);
    EXPECT_EQ(list.size(), 3u);  // stats, gradient, per-row loss
    for (unsigned s = 0; s < 3; ++s) {
        HostMatrix x = randomMatrix(32, 10, 30 + s);
        std::vector<int> y = randomLabels(32, 10, 40 + s);
        logits.upload(x);
        uploadLabels(labels, y, 10);
        list.run();
        auto r = ref::softmaxCrossEntropy(x, y);
        EXPECT_LE(scaledError(grad.download(), r.grad, 1e-6 / 32, 1e-5), 1.0);
        EXPECT_LE(scaledError(loss.download(), r.lossPerRow, 1e-5, 1e-5), 1.0);
    }
}

TEST(KernelsLoss, ShapeErrorsNameOpAndShapes) {
    Context& ctx = test::context();
    Tensor x(ctx, 4, 3), y1(ctx, 4, 1), y3(ctx, 4, 3), g(ctx, 4, 3), bad(ctx, 3, 3), l(ctx, 4, 1), empty;
    EXPECT_THROW(softmax(x, bad), ArgumentError);
    EXPECT_THROW(softmaxCrossEntropy(x, y3, g), ArgumentError);
    EXPECT_THROW(softmaxCrossEntropy(x, y1, bad), ArgumentError);
    EXPECT_THROW(softmaxCrossEntropy(x, y1, g, &bad), ArgumentError);
    EXPECT_THROW(softmaxCrossEntropyOneHot(x, y1, g), ArgumentError);
    EXPECT_THROW(softmaxCrossEntropy(empty, y1, g), ArgumentError);
    EXPECT_THROW(mse(x, bad, &g), ArgumentError);
    EXPECT_THROW(mse(x, y3, &g, &bad), ArgumentError);
    EXPECT_THROW(binaryCrossEntropyWithLogits(x, y3, &bad), ArgumentError);
    EXPECT_THROW(mse(x, y3, &g, nullptr, &l), ArgumentError);  // meanLoss must be 1x1
    try {
        softmaxCrossEntropy(x, y3, g, &l);
        FAIL();
    } catch (const ArgumentError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("softmaxCrossEntropy"), std::string::npos) << m;
        EXPECT_NE(m.find("4x3"), std::string::npos) << m;
        EXPECT_NE(m.find("4x1"), std::string::npos) << m;
    }
}

}  // namespace kernels_loss_test
}  // namespace
