// The CPU backend's convolution and pooling (cpu/conv.hpp, cpu/pooling.hpp)
// against the reference (reference/conv.hpp, reference/pooling.hpp) run in
// double, on odd image sizes, channel counts that are and are not multiples of
// 4, strides 1 and 2, 'same' and 'valid' padding, both kernel widths.
// Tolerances: convolutions max |got - want| <= 1e-5 * max(1, max |want|)
// (float sums of up to kh*kw*C terms forward, up to n*OH*OW for the filter
// gradient); pooling is exact (max picks a value; the mean of <= 9 values is
// within 1e-6).
#include <gtest/gtest.h>

#include "cpu_test_util.hpp"
#include "gltrain/cpu/conv.hpp"
#include "gltrain/cpu/pooling.hpp"
#include "gltrain/reference.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace cpu_conv_test {

using namespace gltrain;
using cputest::d;
using cputest::MatD;
using cputest::relError;

namespace {

struct ConvCase {
    int n;
    Shape3 in;
    int k, stride;
    Padding pad;
    int filters;
};
const ConvCase kConv[] = {
    {1, {1, 1, 1}, 1, 1, Padding::Valid, 1},   {3, {5, 7, 3}, 3, 1, Padding::Same, 5},
    {2, {9, 8, 4}, 3, 2, Padding::Same, 8},    {5, {12, 12, 8}, 5, 1, Padding::Valid, 16},
    {4, {28, 28, 1}, 5, 1, Padding::Valid, 8}, {2, {7, 5, 6}, 4, 3, Padding::Same, 3},
    {3, {6, 6, 17}, 1, 1, Padding::Valid, 7},
};

Window windowOf(const ConvCase& c) {
    return Window::make("test", c.in, c.k, c.k, c.stride, c.stride, c.pad, c.filters);
}
std::string name(const ConvCase& c) {
    return std::to_string(c.n) + "x" + c.in.str() + " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " " +
           paddingName(c.pad) + " F" + std::to_string(c.filters);
}

}  // namespace

TEST(CpuConv, ForwardAndBothGradientsMatchReference) {
    for (bool wide : {false, cpu::hasAvx2Fma()})
        for (const ConvCase& c : kConv) {
            const Window w = windowOf(c);
            const int K = c.k * c.k * c.in.channels;
            HostMatrix X = cputest::random(c.n, c.in.size(), 1), W = cputest::random(K, c.filters, 2);
            HostMatrix b = cputest::random(1, c.filters, 3), dY = cputest::random(c.n, w.out.size(), 4);
            cpu::Workspace ws;
            ws.wide = wide;
            HostMatrix Y(c.n, w.out.size()), Z(c.n, w.out.size());
            cpu::conv2d(X.data.data(), c.n, w, W.data.data(), b.data.data(), Activation::ReLU, 0.0f, Y.data.data(),
                        Z.data.data(), ws);
            MatD z = ref::conv2d(d(X), d(W), d(b), w);
            EXPECT_LE(relError(Z, z), 1e-5) << name(c);
            EXPECT_LE(relError(Y, ref::activate(z, Activation::ReLU)), 1e-5) << name(c);

            HostMatrix dW(K, c.filters), dX(c.n, c.in.size());
            cpu::conv2dBackwardFilter(X.data.data(), dY.data.data(), c.n, w, dW.data.data(), ws);
            EXPECT_LE(relError(dW, ref::conv2dBackwardFilter(d(X), d(dY), w)), 1e-5) << name(c);
            cpu::conv2dBackwardInput(dY.data.data(), W.data.data(), c.n, w, dX.data.data(), ws);
            EXPECT_LE(relError(dX, ref::conv2dBackwardInput(d(dY), d(W), w)), 1e-5) << name(c);

            HostMatrix db(1, c.filters);
            std::vector<double> acc;
            std::vector<float> rowSum;
            cpu::channelSum(dY.data.data(), c.n, w.out.size(), c.filters, db.data.data(), acc, rowSum, ws);
            EXPECT_LE(relError(db, ref::channelSum(d(dY), c.filters)), 1e-6) << name(c);
        }
}

TEST(CpuPool, MaxAndAverageForwardAndBackwardMatchReference) {
    struct PoolCase {
        int n;
        Shape3 in;
        int size, stride;
        Padding pad;
    };
    const PoolCase cases[] = {{1, {1, 1, 1}, 1, 1, Padding::Valid},
                              {3, {5, 7, 3}, 2, 2, Padding::Same},
                              {2, {24, 24, 8}, 2, 2, Padding::Valid},
                              {4, {7, 7, 5}, 3, 2, Padding::Same},
                              {2, {6, 5, 4}, 5, 1, Padding::Valid}};
    for (const PoolCase& c : cases)
        for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
            const Window w = Window::make("test", c.in, c.size, c.size, c.stride, c.stride, c.pad, c.in.channels);
            // Ties: values on a coarse grid, so windows hold equal maxima (the first one wins).
            HostMatrix X = cputest::random(c.n, c.in.size(), 5);
            for (float& v : X.data) v = std::round(v * 2.0f);
            HostMatrix dY = cputest::random(c.n, w.out.size(), 6);
            HostMatrix Y(c.n, w.out.size()), dX(c.n, c.in.size());
            std::vector<int32_t> arg(size_t(c.n) * size_t(w.out.size()));
            cpu::Workspace ws;
            cpu::pool2d(X.data.data(), c.n, w, kind, Y.data.data(), kind == PoolKind::Max ? arg.data() : nullptr, ws);
            cpu::pool2dBackward(dY.data.data(), arg.data(), c.n, w, kind, dX.data.data(), ws);
            const char* k = kind == PoolKind::Max ? "max" : "average";
            EXPECT_LE(relError(Y, ref::pool2d(d(X), w, kind)), 1e-6) << k << " " << c.in.str();
            EXPECT_LE(relError(dX, ref::pool2dBackward(d(X), d(dY), w, kind)), 1e-6) << k << " " << c.in.str();
        }
}

}  // namespace cpu_conv_test
}  // namespace
