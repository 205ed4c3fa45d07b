// Fragment kernels built as compute dispatches (Pass, ShaderRegistry: TEXEL_COMPUTE)
// where compute kernels run: every pass of a convolution layer's step — the
// 4-row-block kernels (R0..R3 stored into one output's row layers), the
// per-lane ones, pooling, the sliced filter gradient and its sums — gives what
// the fragment build gives, against the CPU reference (double) within the conv
// tests' 1e-5 relative, on row-interleaved, packed, unpacked and paged outputs
// (MAX_TEXTURE_SIZE 64). The whole suite runs this way with
// GLTRAIN_TEST_COMPUTE=on (scripts/test.sh); these run in every native run.
#include <gtest/gtest.h>

#include <string>

#include "gltrain/ops/conv.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace texel_compute_test {

using namespace gltrain;
using gltrain::test::randomMatrix;
using gltrain::test::relativeError;

double err(const HostMatrix& got, const HostMatrixT<double>& want) { return relativeError(got, want.cast<float>()); }
constexpr double kTol = 1e-5;

// The compute-on context (llvmpipe included), or a skip where the build has no compute stage (WebGL2).
Context* computeOrSkip(bool paged) {
    Context& ctx = test::computeContext(paged);
    return ctx.caps().computeKernels ? &ctx : nullptr;
}

TEST(TexelCompute, AFragmentKernelIsAComputeDispatchWhereComputeKernelsRun) {
    Context* cc = computeOrSkip(false);
    if (!cc) GTEST_SKIP() << "no compute kernels here";
    Tensor out(*cc, 3, 10);
    Pass fill(*cc, "util/fill");
    EXPECT_TRUE(fill.isCompute());
    // A pass restricted to some columns stays a fragment pass: a dispatch writes whole outputs.
    fill.output(out).uniform("value", 2.0f).columns(4, 3);
    EXPECT_FALSE(fill.isCompute());
    // TEXEL_COMPUTE 0 keeps the fragment kernel; a fragment context never dispatches.
    EXPECT_FALSE(Pass(*cc, "util/fill", {{"TEXEL_COMPUTE", "0"}}).isCompute());
    EXPECT_FALSE(Pass(test::context(), "util/fill").isCompute() && !test::context().caps().computeKernels);
}

TEST(TexelCompute, ConvolutionPassesMatchTheReference) {
    struct Case {
        int batch;
        Shape3 in;
        int k, stride, filters;
        Layout layout;
        bool paged;
    };
    const Case cases[] = {
        {5, {9, 7, 8}, 3, 1, 12, Layout::PackedRows4, false},  // rows4 kernels: C, F multiples of 4
        {3, {6, 6, 1}, 5, 1, 8, Layout::PackedRows4, false},   // first CNN layer: C = 1, per-lane filter gradient
        {9, {9, 7, 8}, 3, 1, 12, Layout::PackedRows8, false},  // 8 row layers
        {2, {7, 5, 3}, 3, 2, 5, Layout::Unpacked, false},
        {5, {9, 9, 4}, 3, 2, 8, Layout::PackedRows4, true},  // 81 texels a row: pages of 64
    };
    for (const Case& c : cases) {
        Context* cc = computeOrSkip(c.paged);
        if (!cc) GTEST_SKIP() << "no compute kernels here";
        const std::string at = std::to_string(c.batch) + " " + c.in.str() + " k" + std::to_string(c.k) + " " +
                               layoutName(c.layout) + (c.paged ? " paged" : "");
        Window w = Window::make("test", c.in, c.k, c.k, c.stride, c.stride, Padding::Same, c.filters);
        const int wRows = c.k * c.k * c.in.channels;
        const Layout wl = c.layout == Layout::Unpacked ? c.layout : Layout::PackedRows4;
        HostMatrix x = randomMatrix(c.batch, c.in.size(), 1), wt = randomMatrix(wRows, c.filters, 2);
        HostMatrix dy = randomMatrix(c.batch, w.out.size(), 4);
        auto xd = x.cast<double>(), wd = wt.cast<double>(), dyd = dy.cast<double>();
        Tensor tx(*cc, x, c.layout), tw(*cc, wt, wl), tdy(*cc, dy, c.layout);
        Tensor ty(*cc, c.batch, w.out.size(), c.layout), tdx(*cc, c.batch, c.in.size(), c.layout);
        Tensor tdw(*cc, wRows, c.filters, wl);
        Tensor tdb(*cc, 1, c.filters, c.layout == Layout::Unpacked ? c.layout : Layout::Packed);
        PassList list;
        recordConv2D(list, tx, tw, nullptr, w, Activation::ReLU, ty);
        recordConv2DBackwardInput(list, tdy, tw, w, tdx);
        recordConv2DBackwardFilter(list, tx, tdy, w, tdw, 1);  // one slice per output row: two sum passes
        recordChannelSum(list, tdy, c.filters, tdb);
        for (Pass& p : list.passes()) EXPECT_TRUE(p.isCompute()) << p.kernel() << " " << at;
        list.run();
        EXPECT_LE(err(ty.download(),
                      ref::activate(ref::conv2d(xd, wd, HostMatrixT<double>(1, c.filters), w), Activation::ReLU)),
                  kTol)
            << "forward " << at;
        EXPECT_LE(err(tdx.download(), ref::conv2dBackwardInput(dyd, wd, w)), kTol) << "dX " << at;
        EXPECT_LE(err(tdw.download(), ref::conv2dBackwardFilter(xd, dyd, w)), kTol) << "dW " << at;
        EXPECT_LE(err(tdb.download(), ref::channelSum(dyd, c.filters)), kTol) << "db " << at;

        Window pw = Window::make("pool", w.out, 2, 2, 2, 2, Padding::Valid, c.filters);
        Tensor tp(*cc, c.batch, pw.out.size(), c.layout), tdp(*cc, c.batch, w.out.size(), c.layout);
        HostMatrix dp = randomMatrix(c.batch, pw.out.size(), 5);
        Tensor tdpy(*cc, dp, c.layout);
        PassList pool;
        recordPool2D(pool, ty, pw, PoolKind::Max, tp);
        recordPool2DBackward(pool, ty, tdpy, pw, PoolKind::Max, tdp);
        pool.run();
        const auto yd = ty.download().cast<double>();
        EXPECT_LE(err(tp.download(), ref::pool2d(yd, pw, PoolKind::Max)), kTol) << "pool " << at;
        EXPECT_LE(err(tdp.download(), ref::pool2dBackward(yd, dp.cast<double>(), pw, PoolKind::Max)), kTol)
            << "pool dX " << at;
    }
}

}  // namespace texel_compute_test
}  // namespace
