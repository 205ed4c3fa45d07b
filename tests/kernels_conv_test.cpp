// GPU convolution, pooling and batch normalization against the CPU
// reference (computed in double), on odd shapes that take the per-lane
// paths and on channel counts (multiples of 4) that take the vectorised
// ones, packed, packed_rows4 and paged (MAX_TEXTURE_SIZE forced to 64).
// Tolerance: max |gpu - ref| <= 1e-5 * max(1, max |ref|) — fp32 sums of at
// most a few thousand random-sign terms, as in kernels_matmul_test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "gltrain/ops/batchnorm.hpp"
#include "gltrain/ops/conv.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_conv_test {

using namespace gltrain;
using gltrain::test::randomMatrix;
using gltrain::test::relativeError;

namespace {

struct ConvCase {
    int batch;
    Shape3 in;
    int k, stride;
    Padding padding;
    int filters;
    Layout layout;
    bool small = false;
};
const ConvCase kCases[] = {
    {1, {7, 5, 3}, 3, 2, Padding::Same, 5, Layout::Packed},  // the example, per-lane paths
    {5, {7, 5, 3}, 3, 2, Padding::Same, 5, Layout::PackedRows4},
    {3, {6, 6, 1}, 5, 1, Padding::Valid, 8, Layout::PackedRows4},  // first CNN layer: C = 1, F = 8
    {4, {9, 7, 8}, 3, 1, Padding::Same, 12, Layout::PackedRows4},  // vectorised: C, F multiples of 4
    {2, {5, 5, 4}, 7, 2, Padding::Same, 4, Layout::Packed},
    {3, {4, 6, 4}, 1, 1, Padding::Valid, 3, Layout::Unpacked},
    {5, {9, 9, 4}, 3, 2, Padding::Valid, 8, Layout::PackedRows4, true},  // 81 texels a row: 2 pages of 64
    {9, {9, 7, 8}, 3, 1, Padding::Same, 12, Layout::PackedRows8},        // rows over 8 layers: the one-row kernels
};
std::string name(const ConvCase& c) {
    return "N=" + std::to_string(c.batch) + " " + c.in.str() + " k" + std::to_string(c.k) + " s" +
           std::to_string(c.stride) + " " + paddingName(c.padding) + " F=" + std::to_string(c.filters) + " " +
           layoutName(c.layout) + (c.small ? " paged" : "");
}
Context& ctxFor(const ConvCase& c) { return c.small ? gltrain::test::smallContext() : gltrain::test::context(); }
Layout weightLayout(const ConvCase& c, int rows) {
    return c.layout == Layout::Unpacked ? c.layout : rows >= 4 ? Layout::PackedRows4 : Layout::Packed;
}
double err(const HostMatrix& got, const HostMatrixT<double>& want) { return relativeError(got, want.cast<float>()); }
constexpr double kTol = 1e-5;

}  // namespace

TEST(KernelsConv, ForwardAndBackwardMatchReference) {
    for (const ConvCase& c : kCases) {
        Context& ctx = ctxFor(c);
        Window w = Window::make("test", c.in, c.k, c.k, c.stride, c.stride, c.padding, c.filters);
        const int wRows = c.k * c.k * c.in.channels;
        HostMatrix x = randomMatrix(c.batch, c.in.size(), 1), wt = randomMatrix(wRows, c.filters, 2);
        HostMatrix b = randomMatrix(1, c.filters, 3), dy = randomMatrix(c.batch, w.out.size(), 4);
        auto xd = x.cast<double>(), wd = wt.cast<double>(), dyd = dy.cast<double>();
        Tensor tx(ctx, x, c.layout), tw(ctx, wt, weightLayout(c, wRows)), tdy(ctx, dy, c.layout);
        Tensor tb(ctx, b, c.layout == Layout::Unpacked ? c.layout : Layout::Packed);
        Tensor ty(ctx, c.batch, w.out.size(), c.layout), tdx(ctx, c.batch, c.in.size(), c.layout);
        Tensor tdw(ctx, wRows, c.filters, weightLayout(c, wRows));
        Tensor tdb(ctx, 1, c.filters, c.layout == Layout::Unpacked ? c.layout : Layout::Packed);

        conv2d(tx, tw, &tb, w, Activation::Linear, ty);
        EXPECT_LE(err(ty.download(), ref::conv2d(xd, wd, b.cast<double>(), w)), kTol) << "forward " << name(c);
        conv2d(tx, tw, &tb, w, Activation::ReLU, ty);
        EXPECT_LE(err(ty.download(), ref::activate(ref::conv2d(xd, wd, b.cast<double>(), w), Activation::ReLU)), kTol)
            << "forward relu " << name(c);
        conv2dIm2col(tx, tw, &tb, w, Activation::ReLU, ty);
        EXPECT_LE(err(ty.download(), ref::activate(ref::conv2d(xd, wd, b.cast<double>(), w), Activation::ReLU)), kTol)
            << "forward relu via im2col " << name(c);
        conv2dBackwardInput(tdy, tw, w, tdx);
        EXPECT_LE(err(tdx.download(), ref::conv2dBackwardInput(dyd, wd, w)), kTol) << "dX " << name(c);
        // Slices: the renderer's default; one; one output row of one sample each
        // (more than kMaxSlicesPerSum: added in two passes); bands of 2 rows (the
        // last one short where OH is odd); one sample; two samples.
        for (int taps : {0, 1 << 20, 1, 2 * w.out.width + 1, w.out.pixels(), 2 * w.out.pixels()}) {
            conv2dBackwardFilter(tx, tdy, w, tdw, taps);
            EXPECT_LE(err(tdw.download(), ref::conv2dBackwardFilter(xd, dyd, w)), kTol)
                << "dW " << name(c) << " tapsPerSlice " << taps;
        }
        for (int taps : {0, 1 << 20, 1, 2 * w.out.pixels()}) {  // default, one slice, one sample each, two samples each
            channelSum(tdy, c.filters, tdb, taps);
            EXPECT_LE(err(tdb.download(), ref::channelSum(dyd, c.filters)), kTol)
                << "db " << name(c) << " tapsPerSlice " << taps;
        }
    }
}

TEST(KernelsConv, PoolingMatchesReference) {
    for (const ConvCase& c : kCases) {
        if (c.padding == Padding::Valid && (c.k > c.in.height || c.k > c.in.width)) continue;
        Context& ctx = ctxFor(c);
        // (size, stride): overlapping and disjoint windows (backward/pool2d's DISJOINT path), and
        // 2x2 windows 3 apart, which leave pixels in no window.
        const int windows[][2] = {{2, c.stride}, {3, c.stride}, {2, 3}};
        for (const auto& sw : windows) {
            const int size = sw[0], stride = sw[1];
            Window w = Window::make("test", c.in, size, size, stride, stride, c.padding, c.in.channels);
            HostMatrix x = randomMatrix(c.batch, c.in.size(), 5), dy = randomMatrix(c.batch, w.out.size(), 6);
            Tensor tx(ctx, x, c.layout), tdy(ctx, dy, c.layout);
            Tensor ty(ctx, c.batch, w.out.size(), c.layout), tdx(ctx, c.batch, c.in.size(), c.layout);
            for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
                const char* k = kind == PoolKind::Max ? "max" : "average";
                pool2d(tx, w, kind, ty);
                EXPECT_LE(err(ty.download(), ref::pool2d(x.cast<double>(), w, kind)), kTol)
                    << k << " " << size << " " << name(c);
                pool2dBackward(tx, tdy, w, kind, tdx);
                EXPECT_LE(err(tdx.download(), ref::pool2dBackward(x.cast<double>(), dy.cast<double>(), w, kind)), kTol)
                    << k << " backward " << size << " " << name(c);
            }
        }
    }
}

TEST(KernelsConv, MaxPoolTiesGoToTheFirstTap) {
    Context& ctx = gltrain::test::context();
    HostMatrix x(2, 4, {1, 3, 3, 3, 7, 7, 7, 7});
    Window w = Window::make("t", {2, 2, 1}, 2, 2, 1, 1, Padding::Valid, 1);
    Tensor tx(ctx, x), tdy(ctx, HostMatrix(2, 1, 1.0f)), tdx(ctx, 2, 4);
    pool2dBackward(tx, tdy, w, PoolKind::Max, tdx);
    EXPECT_EQ(tdx.download().data, (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0}));
}

TEST(KernelsConv, GlobalAveragePoolingIsAWindowOverTheImage) {
    Context& ctx = gltrain::test::context();
    Shape3 in{5, 3, 8};
    Window w = Window::make("gap", in, in.height, in.width, 1, 1, Padding::Valid, in.channels);
    HostMatrix x = randomMatrix(6, in.size(), 7);
    Tensor tx(ctx, x, Layout::PackedRows4), ty(ctx, 6, in.channels, Layout::PackedRows4);
    pool2d(tx, w, PoolKind::Average, ty);
    EXPECT_LE(err(ty.download(), ref::pool2d(x.cast<double>(), w, PoolKind::Average)), kTol);
}

TEST(KernelsConv, ShapeErrorsNameTheOperands) {
    Context& ctx = gltrain::test::context();
    Window w = Window::make("t", {4, 4, 2}, 3, 3, 1, 1, Padding::Same, 4);
    Tensor x(ctx, 2, 32), wt(ctx, 18, 4), y(ctx, 2, 64), bad(ctx, 2, 31);
    try {
        conv2d(bad, wt, nullptr, w, Activation::Linear, y);
        FAIL() << "no error";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("conv2d: X is 2x31, expected Nx32 (images [4, 4, 2])"), std::string::npos)
            << e.what();
    }
    Tensor wrongW(ctx, 9, 4);
    EXPECT_THROW(conv2d(x, wrongW, nullptr, w, Activation::Linear, y), ArgumentError);
    Window pool = Window::make("t", {4, 4, 2}, 2, 2, 2, 2, Padding::Valid, 3);
    EXPECT_THROW(pool2d(x, pool, PoolKind::Max, y), ArgumentError);
    Tensor dw(ctx, 18, 4), db(ctx, 1, 4);
    EXPECT_THROW(conv2dBackwardFilter(x, y, w, dw, -1), ArgumentError);  // 0 is the default
    EXPECT_THROW(channelSum(y, 4, db, -1), ArgumentError);
}

struct BnCase {
    int rows, pixels, channels;
    Layout layout;
};

TEST(KernelsBatchNorm, MatchesReference) {
    const float eps = 1e-3f;
    // Unpacked on two cases only: each layout compiles its own kernels.
    for (BnCase c : {BnCase{1, 1, 3, Layout::Unpacked}, BnCase{5, 9, 3, Layout::Unpacked},
                     BnCase{1, 1, 3, Layout::Packed}, BnCase{7, 1, 5, Layout::PackedRows4},
                     BnCase{5, 9, 3, Layout::PackedRows4}, BnCase{6, 10, 8, Layout::PackedRows4},
                     BnCase{3, 4, 4, Layout::Packed}, BnCase{9, 1, 12, Layout::PackedRows4}}) {
        {
            const Layout layout = c.layout;
            Context& ctx = gltrain::test::context();
            const int cols = c.pixels * c.channels;
            std::string where = std::to_string(c.rows) + "x" + std::to_string(c.pixels) + "x" +
                                std::to_string(c.channels) + " " + layoutName(layout);
            HostMatrix x = randomMatrix(c.rows, cols, 11, -2, 3), dy = randomMatrix(c.rows, cols, 12);
            HostMatrix g = randomMatrix(1, c.channels, 13, 0.5f, 1.5f), b = randomMatrix(1, c.channels, 14);
            auto xd = x.cast<double>();
            auto stats = ref::batchStats(xd, c.channels);
            Layout row = layout == Layout::Unpacked ? layout : Layout::Packed;
            Tensor tx(ctx, x, layout), tdy(ctx, dy, layout), tg(ctx, g, row), tb(ctx, b, row);
            auto grads = ref::batchNormBackward(xd, dy.cast<double>(), g.cast<double>(), double(eps));
            // The sums in one slice, one row a slice, and two rows a slice (the last one short for odd N).
            for (int taps : {1 << 20, 1, 2 * c.pixels}) {
                const std::string at = where + " tapsPerSlice " + std::to_string(taps);
                // Fresh outputs: nothing left from the last slicing can pass for this one's.
                Tensor mean(ctx, 1, c.channels, row), var(ctx, 1, c.channels, row), y(ctx, c.rows, cols, layout);
                Tensor dg(ctx, 1, c.channels, row), db(ctx, 1, c.channels, row), dx(ctx, c.rows, cols, layout);
                PassList l;
                recordBatchStats(l, tx, c.channels, mean, var, taps);
                recordBatchNormApply(l, tx, mean, var, tg, tb, eps, Activation::Linear, y);
                recordBatchNormParamGrads(l, tdy, tx, mean, var, eps, dg, db, taps);
                recordBatchNormInputGrad(l, tdy, tx, mean, var, tg, dg, db, eps, dx);
                l.run();
                EXPECT_LE(err(mean.download(), stats.mean), kTol) << at;
                EXPECT_LE(err(var.download(), stats.var), kTol) << at;
                EXPECT_LE(err(y.download(), ref::batchNormApply(xd, stats.mean, stats.var, g.cast<double>(),
                                                                b.cast<double>(), double(eps))),
                          1e-4)
                    << at;
                EXPECT_LE(err(dg.download(), grads.dGamma), kTol) << at;
                EXPECT_LE(err(db.download(), grads.dBeta), kTol) << at;
                // dX subtracts nearly equal terms (M dY - dbeta - xhat dgamma): fp32 cancellation allows 1e-4.
                EXPECT_LE(err(dx.download(), grads.dX), 1e-4) << at;
            }
        }
    }
}

// update/moving_average against the reference on odd widths and two layouts;
// with a loss guard, a finite loss lets the average move and a NaN or Inf one
// leaves it exactly as it was.
TEST(KernelsBatchNorm, MovingAverageMatchesReferenceAndHonoursTheLossGuard) {
    Context& ctx = gltrain::test::context();
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (int c : {1, 3, 5, 127, 1025})
        for (Layout layout : {Layout::Packed, Layout::Unpacked}) {
            const std::string where = "1x" + std::to_string(c) + " " + layoutName(layout);
            HostMatrix a = randomMatrix(1, c, 21, 0.0f, 2.0f), x = randomMatrix(1, c, 22, 0.0f, 2.0f);
            const auto want = ref::movingAverage(a.cast<double>(), x.cast<double>(), 0.9, 1.25);
            for (float loss : {0.0f /* no guard */, 2.5f, nan, inf, -inf}) {
                const bool guarded = loss != 0.0f;
                PingPong avg(ctx, a, layout);
                Tensor stat(ctx, x, layout), guard(ctx, HostMatrix(1, 1, std::vector<float>{loss}));
                PassList l;
                recordMovingAverage(l, avg, stat, 0.9f, 1.25f, guarded ? &guard : nullptr);
                l.run();
                avg.swap();
                const HostMatrix got = avg.front().download();
                if (guarded && !std::isfinite(loss)) EXPECT_EQ(got.data, a.data) << where << " loss " << loss;
                else EXPECT_LE(err(got, want), kTol) << where << " loss " << loss;
            }
        }
    PingPong avg(ctx, 1, 4);
    Tensor wrong(ctx, 1, 3);
    PassList l;
    try {
        recordMovingAverage(l, avg, wrong, 0.9f, 1.0f);
        ADD_FAILURE() << "a 1x3 statistic for a 1x4 average was accepted";
    } catch (const ArgumentError& e) {
        EXPECT_STREQ(e.what(), "movingAverage: the statistic is 1x3, expected 1x4");
    }
}

}  // namespace kernels_conv_test
}  // namespace
