// GPU reductions against the CPU reference (include/gltrain/reference):
// sum / mean / max per row, per column and over everything; bias gradient;
// global L2 norm and clip by it; argmax per row and correct count. Shapes
// 1x1 .. 5000x1, packed and unpacked, paged (MAX_TEXTURE_SIZE 64), and deep
// trees (blockFactor 2).
//
// Tolerances:
//   max, argmax, correct count, clip below the threshold: exact.
//   sum: |gpu - ref| <= 1e-6 · sqrt(n) · Σ|x| per output element (n the count
//     it reduces; the tree adds in another order than the sequential fp32
//     reference — both are within ~sqrt(n)·eps·Σ|x| of the exact sum for
//     random data); mean: the same divided by n.
//   global norm: 1e-6 relative to the exact (double) norm; clipped values: 2e-6
//     relative to max(1, max |value|) against the clip done in double.
// Overflow policy (tested): same-sign values whose exact sum exceeds FLT_MAX
// give that signed inf, as the reference does; a sum that stays below
// FLT_MAX (10 x 1e37) stays finite. NaN anywhere propagates (sum and max);
// +inf with -inf gives NaN for sum.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "gltrain/ops/reduce.hpp"
#include "gltrain/ping_pong.hpp"
#include "gltrain/reference.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace kernels_reduce_test {

using namespace gltrain;
using gltrain::test::Case;
using gltrain::test::ctxFor;
using gltrain::test::name;
using gltrain::test::randomMatrix;

namespace {
const Case kCases[] = {
    {1, 1, Layout::Packed, false},     {1, 1, Layout::Unpacked, false},    {1, 37, Layout::Packed, false},
    {41, 1, Layout::Unpacked, false},  {3, 5, Layout::Packed, false},      {3, 5, Layout::Unpacked, false},
    {127, 129, Layout::Packed, false}, {257, 63, Layout::Unpacked, false}, {1000, 10, Layout::Packed, false},
    {1, 5000, Layout::Packed, false},  {5000, 1, Layout::Unpacked, false}, {1, 5000, Layout::Unpacked, true},
    {5000, 1, Layout::Packed, true},   {129, 130, Layout::Packed, true},   {70, 129, Layout::Unpacked, true}};

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

int outRows(const HostMatrix& x, ReduceAxis a) { return a == ReduceAxis::Rows ? x.rows : 1; }
int outCols(const HostMatrix& x, ReduceAxis a) { return a == ReduceAxis::Cols ? x.cols : 1; }
int countOf(const HostMatrix& x, ReduceAxis a) {
    return a == ReduceAxis::Rows ? x.cols : a == ReduceAxis::Cols ? x.rows : x.rows * x.cols;
}

HostMatrix refReduce(const HostMatrix& x, ReduceOp op, ReduceAxis a) {
    switch (op) {
        case ReduceOp::Sum:
            return a == ReduceAxis::Rows ? ref::sumRows(x) : a == ReduceAxis::Cols ? ref::sumCols(x) : ref::sumAll(x);
        case ReduceOp::Mean:
            return a == ReduceAxis::Rows   ? ref::meanRows(x)
                   : a == ReduceAxis::Cols ? ref::meanCols(x)
                                           : ref::meanAll(x);
        default:
            return a == ReduceAxis::Rows ? ref::maxRows(x) : a == ReduceAxis::Cols ? ref::maxCols(x) : ref::maxAll(x);
    }
}

// Σ|x| over the set each output element reduces.
HostMatrix absSums(const HostMatrix& x, ReduceAxis a) {
    HostMatrix ax = x;
    for (float& v : ax.data) v = std::fabs(v);
    return refReduce(ax, ReduceOp::Sum, a);
}

HostMatrix gpuReduce(Context& ctx, const HostMatrix& x, Layout in, Layout out, ReduceOp op, ReduceAxis a,
                     ReduceOptions o = {}) {
    Tensor tx(ctx, x, in), ty(ctx, outRows(x, a), outCols(x, a), out);
    reduce(tx, op, a, ty, o);
    return ty.download();
}

// Checks one reduction under the tolerances stated at the top.
void expectReduce(Context& ctx, const HostMatrix& x, Layout in, Layout out, ReduceOp op, ReduceAxis a,
                  const std::string& what, ReduceOptions o = {}) {
    const HostMatrix got = gpuReduce(ctx, x, in, out, op, a, o), want = refReduce(x, op, a);
    ASSERT_EQ(got.data.size(), want.data.size()) << what;
    if (op == ReduceOp::Max) {
        EXPECT_EQ(got.data, want.data) << what;
        return;
    }
    const HostMatrix s = absSums(x, a);
    const double n = countOf(x, a);
    const double tol = 1e-6 * std::sqrt(n) / (op == ReduceOp::Mean ? n : 1.0);
    for (size_t i = 0; i < got.data.size(); ++i)
        ASSERT_LE(std::fabs(double(got.data[i]) - double(want.data[i])), tol * s.data[i] + 1e-30)
            << what << " element " << i << ": gpu " << got.data[i] << " ref " << want.data[i];
}

const char* opName(ReduceOp op) { return op == ReduceOp::Sum ? "sum" : op == ReduceOp::Mean ? "mean" : "max"; }
const char* axisName(ReduceAxis a) { return a == ReduceAxis::Rows ? "Rows" : a == ReduceAxis::Cols ? "Cols" : "All"; }
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max};
const ReduceAxis kAxes[] = {ReduceAxis::Rows, ReduceAxis::Cols, ReduceAxis::All};

template <class F>
void expectArgumentError(F f, const std::vector<std::string>& mentions, const std::string& what) {
    try {
        f();
        ADD_FAILURE() << what << ": expected ArgumentError";
    } catch (const ArgumentError& e) {
        for (auto& m : mentions)
            EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << what << ": " << e.what();
    }
}
}  // namespace

TEST(KernelsReduce, AllOpsAxesShapesLayouts) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        const HostMatrix x = randomMatrix(c.rows, c.cols, 11, -2.0f, 3.0f);
        for (ReduceOp op : kOps)
            for (ReduceAxis a : kAxes)
                expectReduce(ctx, x, c.layout, c.layout, op, a, std::string(opName(op)) + axisName(a) + " " + name(c));
    }
}

TEST(KernelsReduce, OutputLayoutMayDiffer) {
    Context& ctx = test::context();
    const HostMatrix x = randomMatrix(37, 23, 12);
    for (Layout in : {Layout::Packed, Layout::Unpacked}) {
        Layout out = in == Layout::Packed ? Layout::Unpacked : Layout::Packed;
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max})
            for (ReduceAxis a : kAxes)
                expectReduce(ctx, x, in, out, op, a,
                             std::string(opName(op)) + axisName(a) + " into " + layoutName(out));
    }
}

TEST(KernelsReduce, DeepTreesWithBlockFactorTwo) {
    ReduceOptions o;
    o.blockFactor = 2;
    for (const Case& c : {Case{257, 63, Layout::Packed, false}, Case{70, 129, Layout::Unpacked, true},
                          Case{1, 300, Layout::Unpacked, false}}) {
        Context& ctx = ctxFor(c);
        const HostMatrix x = randomMatrix(c.rows, c.cols, 13);
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max})
            for (ReduceAxis a : kAxes)
                expectReduce(ctx, x, c.layout, c.layout, op, a,
                             std::string(opName(op)) + axisName(a) + " F=2 " + name(c), o);
    }
}

// Max must not see the zero padding of packed rows (nor an unpacked texel's .yzw).
TEST(KernelsReduce, MaxOfNegativesIgnoresPadding) {
    Context& ctx = test::context();
    const HostMatrix x = randomMatrix(3, 5, 14, -2.0f, -1.0f);
    for (Layout l : {Layout::Packed, Layout::Unpacked})
        for (ReduceAxis a : kAxes) {
            HostMatrix got = gpuReduce(ctx, x, l, l, ReduceOp::Max, a);
            EXPECT_EQ(got.data, refReduce(x, ReduceOp::Max, a).data) << axisName(a) << " " << layoutName(l);
            for (float v : got.data) EXPECT_LT(v, -0.5f);
        }
}

TEST(KernelsReduce, ZerosAndLargeMagnitudes) {
    Context& ctx = test::context();
    const HostMatrix zeros(127, 129);
    for (ReduceOp op : kOps)
        for (ReduceAxis a : kAxes)
            for (float v : gpuReduce(ctx, zeros, Layout::Packed, Layout::Packed, op, a).data)
                EXPECT_EQ(v, 0.0f) << opName(op) << axisName(a);

    // Max is exact at ±1e30.
    HostMatrix big = randomMatrix(127, 129, 15);
    for (float& v : big.data) v *= 1e30f;
    for (ReduceAxis a : kAxes)
        for (Layout l : {Layout::Packed, Layout::Unpacked})
            expectReduce(ctx, big, l, l, ReduceOp::Max, a, std::string("max 1e30 ") + axisName(a));

    // Sums near FLT_MAX: 10 x 1e37 per row stays finite; 1000 or 10000 of them overflow
    // to +inf (-inf for negatives), as in the reference.
    for (float sign : {1.0f, -1.0f}) {
        const HostMatrix x(1000, 10, sign * 1e37f);
        HostMatrix rows = gpuReduce(ctx, x, Layout::Packed, Layout::Packed, ReduceOp::Sum, ReduceAxis::Rows);
        for (float v : rows.data) EXPECT_NEAR(v / (sign * 1e38f), 1.0f, 1e-6f);
        for (ReduceAxis a : {ReduceAxis::Cols, ReduceAxis::All}) {
            const HostMatrix want = refReduce(x, ReduceOp::Sum, a);
            for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean}) {
                HostMatrix got = gpuReduce(ctx, x, Layout::Packed, Layout::Packed, op, a);
                for (size_t i = 0; i < got.data.size(); ++i) {
                    EXPECT_EQ(got.data[i], sign * kInf) << opName(op) << axisName(a);
                    EXPECT_EQ(want.data[i], sign * kInf);
                }
            }
        }
    }
    // +inf and -inf in one set: NaN.
    HostMatrix x(3, 5, 1.0f);
    x(1, 0) = kInf, x(1, 4) = -kInf;
    HostMatrix s = gpuReduce(ctx, x, Layout::Packed, Layout::Packed, ReduceOp::Sum, ReduceAxis::Rows);
    EXPECT_EQ(s.data[0], 5.0f);
    EXPECT_TRUE(std::isnan(s.data[1]));
    EXPECT_EQ(s.data[2], 5.0f);
}

TEST(KernelsReduce, NaNPropagatesThroughSumAndMax) {
    for (const Case& c : {Case{127, 129, Layout::Packed, false}, Case{257, 63, Layout::Unpacked, false},
                          Case{129, 130, Layout::Packed, true}}) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 16);
        // First element, the last column (next to packed padding), and one inside.
        const int nanAt[3][2] = {{0, 0}, {c.rows / 2, c.cols - 1}, {c.rows - 1, c.cols / 3}};
        for (auto& p : nanAt) x(p[0], p[1]) = kNaN;
        for (ReduceOp op : kOps)
            for (ReduceAxis a : kAxes) {
                const HostMatrix got = gpuReduce(ctx, x, c.layout, c.layout, op, a);
                const HostMatrix want = refReduce(x, op, a);
                for (size_t i = 0; i < got.data.size(); ++i) {
                    const bool nan = std::isnan(want.data[i]);
                    EXPECT_EQ(std::isnan(got.data[i]), nan)
                        << opName(op) << axisName(a) << " " << name(c) << " element " << i;
                    if (!nan && op == ReduceOp::Max) {
                        EXPECT_EQ(got.data[i], want.data[i]);
                    }
                }
            }
    }
}

TEST(KernelsReduce, BiasGradIsColumnSum) {
    for (const Case& c : {Case{1000, 10, Layout::Packed, false}, Case{3, 5, Layout::Unpacked, false},
                          Case{129, 130, Layout::Packed, true}}) {
        Context& ctx = ctxFor(c);
        const HostMatrix dy = randomMatrix(c.rows, c.cols, 17);
        for (Layout bl : {Layout::Packed, Layout::Unpacked}) {
            Tensor tdy(ctx, dy, c.layout), tdb(ctx, 1, c.cols, bl);
            biasGrad(tdy, tdb);
            const HostMatrix got = tdb.download(), want = ref::biasGrad(dy), s = absSums(dy, ReduceAxis::Cols);
            for (size_t i = 0; i < got.data.size(); ++i)
                ASSERT_LE(std::fabs(got.data[i] - want.data[i]), 1e-6 * std::sqrt(double(c.rows)) * s.data[i])
                    << name(c) << " db " << layoutName(bl) << " column " << i;
        }
    }
}

TEST(KernelsReduce, PassListReplaysWithoutAllocating) {
    Context& ctx = test::context();
    HostMatrix x = randomMatrix(300, 70, 18);
    Tensor tx(ctx, x), out(ctx, 1, 1);
    PassList list;
    recordSumAll(list, tx, out);
    const size_t passes = list.size();
    EXPECT_GE(passes, 2u);
    for (int i = 0; i < 3; ++i) {
        for (float& v : x.data) v += 1.0f;
        tx.upload(x);
        list.run();
        const double want = ref::sumAll(x.cast<double>())(0, 0);
        EXPECT_NEAR(out.download()(0, 0), want, 1e-6 * std::sqrt(double(x.size())) * ref::sumAll(x)(0, 0) + 1.0);
    }
    EXPECT_EQ(list.size(), passes);
}

TEST(KernelsReduce, GlobalL2NormAndClip) {
    for (bool small : {false, true}) {
        Context& ctx = small ? test::smallContext() : test::context();
        std::vector<HostMatrix> hs = {randomMatrix(127, 129, 19), randomMatrix(1, 129, 20), randomMatrix(70, 3, 21),
                                      randomMatrix(1, 1, 22)};
        const Layout layouts[] = {Layout::Packed, Layout::Unpacked, Layout::Packed, Layout::Unpacked};
        std::vector<Tensor> in, out;
        for (size_t i = 0; i < hs.size(); ++i) {
            in.emplace_back(ctx, hs[i], layouts[i]);
            out.emplace_back(ctx, hs[i].rows, hs[i].cols, layouts[i]);
        }
        std::vector<const Tensor*> ins;
        std::vector<Tensor*> outs;
        for (size_t i = 0; i < hs.size(); ++i) ins.push_back(&in[i]), outs.push_back(&out[i]);

        // The fp32 reference sums 16k squares sequentially and is itself ~2e-6 off;
        // the norm is checked against the same reference run in double.
        std::vector<HostMatrixT<double>> hd;
        for (auto& h : hs) hd.push_back(h.cast<double>());
        const double exact = ref::globalL2Norm(hd);
        const float norm = ref::globalL2Norm(hs);
        EXPECT_NEAR(norm, exact, 1e-5 * exact);
        Tensor tn(ctx, 1, 1);
        globalL2Norm(ins, tn);
        EXPECT_NEAR(tn.download()(0, 0), exact, 1e-6 * exact) << (small ? "paged" : "");

        for (float maxNorm : {norm * 0.25f, norm * 4.0f}) {
            std::vector<HostMatrixT<double>> want = hd;
            ref::clipByGlobalNorm(want, double(maxNorm));
            Tensor tnorm(ctx, 1, 1, Layout::Unpacked);
            clipByGlobalNorm(ins, outs, maxNorm, tnorm);
            EXPECT_NEAR(tnorm.download()(0, 0), exact, 1e-6 * exact);
            for (size_t i = 0; i < hs.size(); ++i) {
                const HostMatrix got = out[i].download();
                if (maxNorm > norm) {
                    EXPECT_EQ(got.data, hs[i].data) << "below the threshold the values are untouched, tensor " << i;
                } else {
                    EXPECT_LE(test::relativeError(got, want[i].cast<float>()), 2e-6) << "tensor " << i;
                }
            }
            if (maxNorm < norm) {  // the clipped global norm is maxNorm
                Tensor clippedNorm(ctx, 1, 1);
                std::vector<const Tensor*> outsConst(outs.begin(), outs.end());
                globalL2Norm(outsConst, clippedNorm);
                EXPECT_NEAR(clippedNorm.download()(0, 0), maxNorm, 3e-6 * maxNorm);
            }
        }
    }
}

TEST(KernelsReduce, ArgmaxMatchesReferenceAndTies) {
    for (const Case& c : kCases) {
        Context& ctx = ctxFor(c);
        HostMatrix x = randomMatrix(c.rows, c.cols, 23);
        // Quantised values give ties within rows.
        for (float& v : x.data) v = std::round(v * 2.0f);
        if (c.cols > 2) {
            for (int j = 0; j < c.cols; ++j) x(0, j) = 7.0f;            // all tied: index 0
            x(c.rows - 1, c.cols - 1) = 9.0f, x(c.rows - 1, 1) = 9.0f;  // tie: index 1
        }
        const HostMatrixT<int> want = ref::argmaxRows(x);
        // Deep trees (F = 2) on the larger shapes only: each level is another compiled variant.
        for (int f : {kReduceBlockFactor, c.cols > 100 ? 2 : kReduceBlockFactor}) {
            ReduceOptions o;
            o.blockFactor = f;
            Tensor tx(ctx, x, c.layout), out(ctx, c.rows, 1, c.layout);
            argmaxRows(tx, out, o);
            const HostMatrix got = out.download();
            for (int r = 0; r < c.rows; ++r)
                ASSERT_EQ(got(r, 0), float(want(r, 0))) << name(c) << " F=" << f << " row " << r;
        }
    }
}

TEST(KernelsReduce, ArgmaxNaNAndInfinities) {
    Context& ctx = test::context();
    HostMatrix x(4, 70, -kInf);                        // row 0 all -inf: 0
    for (int j = 0; j < 70; ++j) x(1, j) = kNaN;       // all NaN: 0
    x(2, 0) = kNaN, x(2, 40) = 1.0f, x(2, 69) = kNaN;  // NaN never wins: 40
    x(3, 3) = kInf, x(3, 65) = kInf;                   // +inf ties: 3
    const HostMatrixT<int> want = ref::argmaxRows(x);
    EXPECT_EQ(want.data, (std::vector<int>{0, 0, 40, 3}));
    for (int f : {kReduceBlockFactor, 2})
        for (Layout l : {Layout::Packed, Layout::Unpacked}) {
            ReduceOptions o;
            o.blockFactor = f;
            Tensor tx(ctx, x, l), out(ctx, 4, 1);
            argmaxRows(tx, out, o);
            EXPECT_EQ(out.download().data, (std::vector<float>{0, 0, 40, 3})) << "F=" << f << " " << layoutName(l);
        }
}

TEST(KernelsReduce, CorrectCountOnTenThousandRows) {
    for (bool small : {false, true}) {
        Context& ctx = small ? test::smallContext() : test::context();
        const int n = 10000, classes = 10;
        HostMatrix x = randomMatrix(n, classes, 24);
        std::vector<int> labels(n);
        HostMatrix hl(n, 1);
        std::mt19937 rng(25);
        const HostMatrixT<int> pred = ref::argmaxRows(x);
        for (int r = 0; r < n; ++r) {
            // About 60 % right, so the count is not trivially 0, n or n / C.
            labels[size_t(r)] = rng() % 10 < 6 ? pred(r, 0) : int(rng() % classes);
            hl(r, 0) = float(labels[size_t(r)]);
        }
        const int want = ref::correctCount(x, labels);
        for (Layout l : {Layout::Packed, Layout::Unpacked}) {
            Tensor tx(ctx, x, l), tl(ctx, hl, Layout::Unpacked), out(ctx, 1, 1);
            correctCount(tx, tl, out);
            EXPECT_EQ(out.download()(0, 0), float(want)) << layoutName(l) << (small ? " paged" : "");
        }
    }
}

// A level that can finish the tree with at most 2F fetches per fragment does:
// the pass counts on both sides of that boundary, and the results there.
TEST(KernelsReduce, SmallTreesFinishInOnePass) {
    Context& ctx = test::context();
    const int f = kReduceBlockFactor;
    struct Count {
        int rows, cols;
        Layout layout;
        ReduceAxis axis;
        size_t passes;
    };
    for (const Count& c :
         {Count{2 * f, 1, Layout::Unpacked, ReduceAxis::All, 1},  // a batch's losses
          Count{2 * f + 1, 1, Layout::Unpacked, ReduceAxis::All, 2}, Count{4, 1, Layout::Unpacked, ReduceAxis::All, 1},
          Count{2 * f, 7, Layout::Packed, ReduceAxis::Cols, 1},
          Count{2 * f + 1, 7, Layout::Packed, ReduceAxis::Cols, 2},
          Count{5, 8 * f, Layout::Packed, ReduceAxis::Rows, 1},
          Count{5, 8 * f + 4, Layout::Packed, ReduceAxis::Rows, 2}, Count{f, 8, Layout::Packed, ReduceAxis::All, 1},
          Count{f + 1, 8, Layout::Packed, ReduceAxis::All, 2}}) {
        const HostMatrix x = randomMatrix(c.rows, c.cols, 31);
        const std::string what = std::to_string(c.rows) + "x" + std::to_string(c.cols) + " " + axisName(c.axis);
        for (ReduceOp op : kOps) {
            Tensor tx(ctx, x, c.layout);
            Tensor out(ctx, c.axis == ReduceAxis::Rows ? c.rows : 1, c.axis == ReduceAxis::Cols ? c.cols : 1);
            PassList list;
            recordReduce(list, tx, op, c.axis, out);
            EXPECT_EQ(list.size(), c.passes) << what;
            expectReduce(ctx, x, c.layout, c.layout, op, c.axis, std::string(opName(op)) + " " + what);
        }
    }
    // argmax: a row of at most 2F texels in one pass; a longer one's second level
    // takes all the first level's pairs at once.
    for (int cols : {8 * f, 8 * f + 1, 4 * 5 * f}) {
        HostMatrix x = randomMatrix(3, cols, 32);
        x(1, cols - 1) = 100.0f;
        Tensor tx(ctx, x, Layout::Packed), out(ctx, 3, 1);
        PassList list;
        recordArgmaxRows(list, tx, out);
        EXPECT_EQ(list.size(), cols <= 8 * f ? 1u : 2u) << cols << " columns";
        list.run();
        const HostMatrixT<int> want = ref::argmaxRows(x);
        for (int r = 0; r < 3; ++r) EXPECT_EQ(out.download()(r, 0), float(want(r, 0))) << cols << " columns, row " << r;
    }
}

// ReduceOptions::accumulate: running totals (sum, max, correct counts) added in
// the last pass, with no pass of their own.
TEST(KernelsReduce, AccumulateIntoRunningTotals) {
    Context& ctx = test::context();
    const HostMatrix x = randomMatrix(300, 3, 33);
    Tensor tx(ctx, x, Layout::Packed);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
        const HostMatrix base = randomMatrix(1, 3, 34, 0.0f, 5.0f);
        Tensor acc(ctx, base), out(ctx, 1, 3), plain(ctx, 1, 3);
        ReduceOptions o;
        o.accumulate = &acc;
        PassList with, without;
        recordReduce(with, tx, op, ReduceAxis::Cols, out, o);
        recordReduce(without, tx, op, ReduceAxis::Cols, plain);
        EXPECT_EQ(with.size(), without.size()) << opName(op);
        with.run();
        without.run();
        const HostMatrix got = out.download(), alone = plain.download();
        for (int j = 0; j < 3; ++j) {
            const float want = op == ReduceOp::Sum ? alone(0, j) + base(0, j) : std::max(alone(0, j), base(0, j));
            EXPECT_NEAR(got(0, j), want, 1e-5f * (1.0f + std::fabs(want))) << opName(op) << " column " << j;
        }
    }
    // Correct counts over three batches into a ping-pong total.
    const HostMatrix scores = randomMatrix(37, 10, 35);
    const HostMatrixT<int> pred = ref::argmaxRows(scores);
    HostMatrix labels(37, 1);
    std::vector<int> ilabels(37);
    for (int r = 0; r < 37; ++r) {
        ilabels[size_t(r)] = r % 3 ? pred(r, 0) : (pred(r, 0) + 1) % 10;  // two in three right
        labels(r, 0) = float(ilabels[size_t(r)]);
    }
    Tensor ts(ctx, scores), tl(ctx, labels, Layout::Unpacked);
    PingPong total(ctx, HostMatrix(1, 1));
    PassList list;
    ReduceOptions o;
    o.accumulate = &total.front();
    recordCorrectCount(list, ts, tl, total.back(), o);
    for (int b = 0; b < 3; ++b) {
        list.run();
        total.swap();
    }
    EXPECT_EQ(total.front().download()(0, 0), float(3 * ref::correctCount(scores, ilabels)));

    Tensor one(ctx, 1, 1), two(ctx, 1, 2);
    ReduceOptions self;
    self.accumulate = &one;
    expectArgumentError([&] { sumAll(tx, one, self); }, {"sumAll", "accumulate is out"}, "accumulate into itself");
    ReduceOptions wrong;
    wrong.accumulate = &two;
    expectArgumentError([&] { sumAll(tx, one, wrong); }, {"sumAll", "accumulate is 1x2", "1x1"}, "accumulate shape");
    Tensor other(ctx, 1, 1);
    ReduceOptions mean;
    mean.accumulate = &other;
    expectArgumentError([&] { meanAll(tx, one, mean); }, {"meanAll", "sum and max"}, "mean with accumulate");
}

TEST(KernelsReduce, ShapeErrorsNameTheShapes) {
    Context& ctx = test::context();
    Tensor x(ctx, 3, 5), wrong(ctx, 2, 2), one(ctx, 1, 1), row(ctx, 1, 5), col(ctx, 3, 1);
    expectArgumentError([&] { sumRows(x, row); }, {"sumRows", "1x5", "3x1", "3x5"}, "sumRows");
    expectArgumentError([&] { maxCols(x, col); }, {"maxCols", "3x1", "1x5", "3x5"}, "maxCols");
    expectArgumentError([&] { meanAll(x, wrong); }, {"meanAll", "2x2", "1x1", "3x5"}, "meanAll");
    expectArgumentError([&] { biasGrad(x, col); }, {"biasGrad", "3x1", "1x5", "3x5"}, "biasGrad");
    expectArgumentError([&] { argmaxRows(x, row); }, {"argmaxRows", "1x5", "3x1", "3x5"}, "argmaxRows");
    expectArgumentError([&] { correctCount(x, row, one); }, {"correctCount", "1x5", "3x1", "3x5"}, "labels");
    expectArgumentError([&] { correctCount(x, col, wrong); }, {"correctCount", "2x2", "1x1"}, "count out");
    expectArgumentError([&] { globalL2Norm({&x}, wrong); }, {"globalL2Norm", "2x2", "1x1"}, "norm out");
    expectArgumentError([&] { globalL2Norm({}, one); }, {"globalL2Norm", "empty"}, "empty list");
    Tensor y(ctx, 3, 5);
    expectArgumentError(
        [&] {
            clipByGlobalNorm({&x, &row}, {&y, &wrong}, 1.0f, one);
        },
        {"clipByGlobalNorm", "1x5", "2x2"}, "clip shapes");
    expectArgumentError(
        [&] {
            clipByGlobalNorm({&x}, {&y, &wrong}, 1.0f, one);
        },
        {"clipByGlobalNorm", "1", "2"}, "clip counts");
    expectArgumentError([&] { clipByGlobalNorm({&x}, {&x}, 1.0f, one); }, {"clipByGlobalNorm", "its input"},
                        "clip in place");
    expectArgumentError([&] { clipByGlobalNorm({&x}, {&y}, 0.0f, one); }, {"clipByGlobalNorm", "maxNorm"},
                        "clip maxNorm");
    ReduceOptions o;
    o.blockFactor = 1;
    expectArgumentError([&] { sumAll(x, one, o); }, {"sumAll", "blockFactor"}, "block factor");
}

// Timing behind kReduceBlockFactor (run with --gtest_also_run_disabled_tests
// --gtest_filter='KernelsReduceBench*'): ms per reduction of a 2048 x 2048
// packed tensor and of 10000 x 10, per block factor, three interleaved rounds
// (take the median; the figures are in include/gltrain/ops/reduce.hpp).
TEST(KernelsReduceBench, DISABLED_BlockFactor) {
    Context& ctx = test::context();
    const HostMatrix big = randomMatrix(2048, 2048, 26), tall = randomMatrix(10000, 10, 27);
    Tensor tbig(ctx, big), ttall(ctx, tall);
    Tensor one(ctx, 1, 1), row(ctx, 1, 2048), col(ctx, 2048, 1);
    for (int f : {16, 32, 64, 16, 32, 64, 16, 32, 64}) {
        ReduceOptions o;
        o.blockFactor = f;
        // Synchronised by reading one texel back: glFinish does not wait in a browser.
        auto time = [&](const char* what, Tensor& out, auto record) {
            PassList l;
            record(l);
            l.run();
            out.download();
            const int reps = 20;
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < reps; ++i) l.run();
            out.download();
            const double ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
            std::printf("F=%3d %-22s %8.2f ms  (%zu passes)\n", f, what, ms, l.size());
        };
        time("sumAll 2048x2048", one, [&](PassList& l) { recordSumAll(l, tbig, one, o); });
        time("sumCols 2048x2048", row, [&](PassList& l) { recordSumCols(l, tbig, row, o); });
        time("sumRows 2048x2048", col, [&](PassList& l) { recordSumRows(l, tbig, col, o); });
        time("maxAll 2048x2048", one, [&](PassList& l) { recordMaxAll(l, tbig, one, o); });
        time("sumAll 10000x10", one, [&](PassList& l) { recordSumAll(l, ttall, one, o); });
    }
}

}  // namespace kernels_reduce_test
}  // namespace
