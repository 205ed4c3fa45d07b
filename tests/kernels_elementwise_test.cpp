// GPU element-wise kernels against the CPU reference: add, sub, mul, scale,
// axpy, fill, bias, every activation forward and backward; packed, unpacked
// and paged tensors; odd shapes. Tolerances: arithmetic ops are exact
// (bit-equal to the float reference); transcendental activations within
// 2e-6 relative to max(1, |result|) — GLSL exp/log vs libm.
#include <gtest/gtest.h>

#include <limits>

#include "gltrain/ops/elementwise.hpp"
#include "gltrain/ops/recurrent.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_elementwise_test {

using namespace gltrain;
using gltrain::test::Case;
using gltrain::test::ctxFor;
using gltrain::test::name;
using gltrain::test::randomMatrix;
using gltrain::test::relativeError;

namespace {
const Case kCases[] = {
    {1, 1, Layout::Packed, false},         {1, 1, Layout::Unpacked, false},     {3, 5, Layout::Packed, false},
    {3, 5, Layout::Unpacked, false},       {127, 129, Layout::Packed, false},   {257, 63, Layout::Unpacked, false},
    {1000, 10, Layout::Packed, false},     {1, 1025, Layout::Packed, true},     {129, 130, Layout::Packed, true},
    {70, 129, Layout::Unpacked, true},     {7, 5, Layout::PackedRows4, false},  {257, 63, Layout::PackedRows4, false},
    {301, 130, Layout::PackedRows4, true}, {13, 9, Layout::PackedRows8, false}, {301, 130, Layout::PackedRows8, true}};

}  // namespace

TEST(KernelsElementwise, ArithmeticIsExact) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix a = randomMatrix(c.rows, c.cols, 1), b = randomMatrix(c.rows, c.cols, 2);
        Tensor ta(ctx, a, c.layout), tb(ctx, b, c.layout), out(ctx, c.rows, c.cols, c.layout);
        add(ta, tb, out);
        EXPECT_EQ(out.download().data, ref::add(a, b).data) << "add " << name(c);
        sub(ta, tb, out);
        EXPECT_EQ(out.download().data, ref::sub(a, b).data) << "sub " << name(c);
        mul(ta, tb, out);
        EXPECT_EQ(out.download().data, ref::mul(a, b).data) << "mul " << name(c);
        scale(ta, -2.5f, out);
        EXPECT_EQ(out.download().data, ref::scale(a, -2.5f).data) << "scale " << name(c);
        axpy(0.75f, ta, tb, out);
        EXPECT_LE(relativeError(out.download(), ref::axpy(0.75f, a, b)), 1e-7) << "axpy " << name(c);
        fill(out, 3.25f);
        EXPECT_EQ(out.download().data, HostMatrix(c.rows, c.cols, 3.25f).data) << "fill " << name(c);
    }
}

TEST(KernelsElementwise, MixedLayoutsAgree) {
    Context& ctx = test::smallContext();
    HostMatrix a = randomMatrix(65, 131, 3), b = randomMatrix(65, 131, 4);
    Tensor ta(ctx, a, Layout::Packed), tb(ctx, b, Layout::Unpacked), out(ctx, 65, 131, Layout::Packed);
    mul(ta, tb, out);
    EXPECT_EQ(out.download().data, ref::mul(a, b).data);
    Tensor tr(ctx, a, Layout::PackedRows4), out4(ctx, 65, 131, Layout::PackedRows4),
        outU(ctx, 65, 131, Layout::Unpacked);
    mul(tr, tb, out4);
    EXPECT_EQ(out4.download().data, ref::mul(a, b).data);
    mul(tr, ta, outU);
    EXPECT_EQ(outU.download().data, ref::mul(a, a).data);
}

TEST(KernelsElementwise, BiasAdd) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 5), b = randomMatrix(1, c.cols, 6);
        for (Layout bl : {Layout::Packed, Layout::Unpacked}) {
            Tensor tx(ctx, x, c.layout), tb(ctx, b, bl), out(ctx, c.rows, c.cols, c.layout);
            biasAdd(tx, tb, out);
            EXPECT_EQ(out.download().data, ref::addBias(x, b).data) << name(c) << " bias " << layoutName(bl);
        }
    }
}

TEST(KernelsElementwise, ActivationsForwardAndBackward) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix z = randomMatrix(c.rows, c.cols, 7, -6.0f, 6.0f), dy = randomMatrix(c.rows, c.cols, 8);
        Tensor tz(ctx, z, c.layout), tdy(ctx, dy, c.layout), out(ctx, c.rows, c.cols, c.layout);
        for (Activation act : kAllActivations) {
            activation(tz, act, out, 0.1f);
            EXPECT_LE(relativeError(out.download(), ref::activate(z, act, 0.1f)), 2e-6)
                << activationName(act) << " forward " << name(c);
            activationGrad(tdy, tz, act, out, 0.1f);
            EXPECT_LE(relativeError(out.download(), ref::activationGrad(dy, z, act, 0.1f)), 2e-6)
                << activationName(act) << " backward " << name(c);
        }
    }
}

TEST(KernelsElementwise, ActivationsAtExtremesStayFinite) {
    Context& ctx = test::context();
    HostMatrix z(1, 8, {-1e30f, -1e4f, -88.0f, -1e-40f, 0.0f, 1e-40f, 88.0f, 1e30f});
    Tensor tz(ctx, z), out(ctx, 1, 8), ones(ctx, HostMatrix(1, 8, 1.0f));
    for (Activation act : kAllActivations) {
        activation(tz, act, out, 0.1f);
        HostMatrix want = ref::activate(z, act, 0.1f), got = out.download();
        for (int i = 0; i < 8; ++i) {
            EXPECT_FALSE(std::isnan(got.data[size_t(i)])) << activationName(act) << " f(" << z.data[size_t(i)] << ")";
            EXPECT_NEAR(got.data[size_t(i)], want.data[size_t(i)],
                        1e-6 * std::max(1.0f, std::fabs(want.data[size_t(i)])))
                << activationName(act) << " f(" << z.data[size_t(i)] << ")";
        }
        activationGrad(ones, tz, act, out, 0.1f);
        got = out.download();
        want = ref::activationGrad(HostMatrix(1, 8, 1.0f), z, act, 0.1f);
        // GPUs may flush denormal inputs to zero (GLSL ES allows it), which moves
        // ±1e-40 onto ReLU's kink: there f'(0) is also accepted.
        HostMatrix flushed = z;
        for (float& v : flushed.data)
            if (std::fpclassify(v) == FP_SUBNORMAL) v = 0.0f;
        HostMatrix wantFlushed = ref::activationGrad(HostMatrix(1, 8, 1.0f), flushed, act, 0.1f);
        for (int i = 0; i < 8; ++i) {
            float g = got.data[size_t(i)];
            bool ok =
                std::fabs(g - want.data[size_t(i)]) <= 1e-6f || std::fabs(g - wantFlushed.data[size_t(i)]) <= 1e-6f;
            EXPECT_TRUE(ok) << activationName(act) << " f'(" << z.data[size_t(i)] << ") = " << g << ", want "
                            << want.data[size_t(i)];
        }
    }
}

TEST(KernelsElementwise, NaNPropagatesThroughForward) {
    Context& ctx = test::context();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor tz(ctx, HostMatrix(1, 3, {nan, 1.0f, -1.0f})), out(ctx, 1, 3);
    for (Activation act : kAllActivations) {
        activation(tz, act, out);
        EXPECT_TRUE(std::isnan(out.download().data[0])) << activationName(act);
    }
    Tensor other(ctx, HostMatrix(1, 3, 1.0f));
    add(tz, other, out);
    EXPECT_TRUE(std::isnan(out.download().data[0]));
}

TEST(KernelsElementwise, ShapeErrorsNameTheShapes) {
    Context& ctx = test::context();
    Tensor a(ctx, 3, 5), b(ctx, 5, 3), out(ctx, 3, 5), bias(ctx, 1, 4);
    try {
        add(a, b, out);
        FAIL();
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("add: a is 3x5 but b is 5x3"), std::string::npos) << e.what();
    }
    try {
        biasAdd(a, bias, out);
        FAIL();
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("bias is 1x4, expected 1x5"), std::string::npos) << e.what();
    }
}

// Pass::columns draws only the texels holding the given columns: the rest of the output keeps its values,
// across pages (600 packed columns are 3 pages of 50 texels in smallContext) and row phases; a range that
// starts or ends inside a texel draws that whole texel.
TEST(KernelsElementwise, ColumnsDrawOnlyTheirTexels) {
    for (const Case& c : {Case{3, 600, Layout::Packed, true}, Case{70, 301, Layout::Unpacked, true},
                          Case{9, 600, Layout::PackedRows4, true}, Case{5, 37, Layout::Packed, false}}) {
        Context& ctx = ctxFor(c);
        Tensor out(ctx, c.rows, c.cols, c.layout);
        fill(out, 1.0f);
        PassList list;
        const int first = c.cols > 100 ? 190 : 13, count = c.cols > 100 ? 30 : 7;
        list.add(Pass(ctx, "util/fill")).output(out).uniform("value", 2.0f).columns(first, count);
        list.run();
        const int vpt = isPacked(c.layout) ? 4 : 1;
        const int drawnFrom = first / vpt * vpt, drawnTo = std::min(c.cols, (first + count + vpt - 1) / vpt * vpt);
        const HostMatrix got = out.download();
        for (int r = 0; r < c.rows; ++r)
            for (int col = 0; col < c.cols; ++col)
                ASSERT_EQ(got(r, col), col >= drawnFrom && col < drawnTo ? 2.0f : 1.0f)
                    << name(c) << " at (" << r << ", " << col << ")";
    }
    PassList list;
    Tensor out(test::context(), 2, 8);
    EXPECT_THROW(list.add(Pass(test::context(), "util/fill")).output(out).columns(0, 0), ArgumentError);
}

// util/merge_steps takes each block of `width` columns from the tensor its step's parity names.
TEST(KernelsElementwise, MergeStepsSelectsEachBlockByParity) {
    for (const Case& c : {Case{67, 7 * 10, Layout::Packed, true}, Case{5, 4 * 3, Layout::Unpacked, false},
                          Case{9, 300 * 3, Layout::PackedRows4, true}}) {
        Context& ctx = ctxFor(c);
        const int width = c.cols % 10 == 0 && c.cols < 100 ? 10 : 3;
        HostMatrix even = randomMatrix(c.rows, c.cols, 5), odd = randomMatrix(c.rows, c.cols, 6);
        Tensor te(ctx, even, c.layout), to(ctx, odd, c.layout), out(ctx, c.rows, c.cols, c.layout);
        for (int flip : {0, 1}) {
            PassList list;
            recordMergeSteps(list, StepPair{&te, &to}, width, flip, out);
            list.run();
            const HostMatrix got = out.download();
            for (int r = 0; r < c.rows; ++r)
                for (int col = 0; col < c.cols; ++col)
                    ASSERT_EQ(got(r, col), ((col / width + flip) % 2 ? odd : even)(r, col))
                        << name(c) << " flip " << flip << " at (" << r << ", " << col << ")";
        }
    }
}

}  // namespace kernels_elementwise_test
}  // namespace
