// The CPU backend's other kernels against the reference run in double:
// activations (cpu/activation.hpp), batch normalization (cpu/batchnorm.hpp),
// the fused losses (cpu/loss.hpp) and the optimizer updates with clipping
// (cpu/optimizer.hpp), on odd sizes. Tolerances are stated per test.
#include <cstring>

#include <gtest/gtest.h>

#include "cpu_test_util.hpp"
#include "gltrain/cpu/activation.hpp"
#include "gltrain/cpu/batchnorm.hpp"
#include "gltrain/cpu/fast_math.hpp"
#include "gltrain/cpu/loss.hpp"
#include "gltrain/cpu/optimizer.hpp"
#include "gltrain/reference.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace cpu_ops_test {

using namespace gltrain;
using cputest::d;
using cputest::MatD;
using cputest::relError;
using Vec4 = cpu::Vec<4>;

// 1e-6 relative: one float evaluation of each formula per element.
TEST(CpuOps, ActivationsAndDerivativesMatchReference) {
    for (Activation act : kAllActivations) {
        HostMatrix Z = cputest::random(7, 129, 1, -4.0f, 4.0f), G = cputest::random(7, 129, 2);
        HostMatrix Y(7, 129), dZ = G;
        cpu::activate(Y.data.data(), Z.data.data(), Z.size(), act, 0.2f);
        cpu::multiplyDerivative(dZ.data.data(), Z.data.data(), Z.size(), act, 0.2f);
        EXPECT_LE(relError(Y, ref::activate(d(Z), act, 0.2)), 1e-6) << activationName(act);
        EXPECT_LE(relError(dZ, ref::activationGrad(d(G), d(Z), act, 0.2)), 1e-6) << activationName(act);
    }
}

// How many floats apart a and b are (the same sign assumed; 0 when equal).
int64_t ulps(float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, sizeof ia);
    std::memcpy(&ib, &b, sizeof ib);
    return ia > ib ? int64_t(ia) - ib : int64_t(ib) - ia;
}

// fast_math's exp and tanh within 1 ulp of the correctly rounded value on a
// sample of every 613th float of +-[1e-30, 88] (checked on every float once),
// in the lanes of a vector and alone, and at the edges.
TEST(CpuOps, FastExpAndTanhAreWithinOneUlp) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    int64_t worstExp = 0, worstTanh = 0;
    float x = 1e-30f;
    int32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    for (; x < 88.0f; bits += 613, std::memcpy(&x, &bits, sizeof x)) {
        const float y[4] = {x, -x, 0.5f * x, -0.5f * x};
        Vec4 v;
        std::memcpy(&v, y, sizeof v);
        const Vec4 e = cpu::expApprox(v), t = cpu::tanhApprox(v);
        for (int l = 0; l < 4; ++l) {
            if (y[l] > -87.0f) worstExp = std::max(worstExp, ulps(e[l], float(std::exp(double(y[l])))));
            worstTanh = std::max(worstTanh, ulps(t[l], float(std::tanh(double(y[l])))));
            ASSERT_EQ(e[l], cpu::expApprox(y[l])) << y[l];  // the lanes agree with the scalar form
            ASSERT_EQ(t[l], cpu::tanhApprox(y[l])) << y[l];
        }
    }
    EXPECT_LE(worstExp, 1);
    EXPECT_LE(worstTanh, 1);
    EXPECT_EQ(cpu::expApprox(-inf), 0.0f);
    EXPECT_EQ(cpu::expApprox(-100.0f), 0.0f);
    EXPECT_EQ(cpu::expApprox(inf), inf);
    EXPECT_EQ(cpu::expApprox(100.0f), inf);
    EXPECT_EQ(cpu::expApprox(0.0f), 1.0f);
    EXPECT_TRUE(std::isnan(cpu::expApprox(nan)));
    EXPECT_EQ(cpu::tanhApprox(inf), 1.0f);
    EXPECT_EQ(cpu::tanhApprox(-inf), -1.0f);
    EXPECT_EQ(cpu::tanhApprox(30.0f), 1.0f);
    EXPECT_TRUE(std::isnan(cpu::tanhApprox(nan)));
    // sumExp: the softmax denominator, against double.
    HostMatrix z = cputest::random(1, 259, 3, -30.0f, 5.0f);
    double want = 0;
    for (float x : z.data) want += std::exp(double(x) - 5.0);
    EXPECT_NEAR(cpu::sumExp(z.data.data(), z.data.size(), 5.0f), want, 1e-6 * want);
}

// Statistics summed in double: 1e-6 relative; the backward's float result 1e-5.
TEST(CpuOps, BatchNormMatchesReference) {
    struct Case {
        int rows, cols, C;
    };
    for (Case c : {Case{1, 3, 3}, Case{5, 7 * 7 * 3, 3}, Case{64, 12 * 12 * 8, 8}, Case{33, 127, 127}}) {
        HostMatrix X = cputest::random(c.rows, c.cols, 3, -2.0f, 3.0f), dY = cputest::random(c.rows, c.cols, 4);
        HostMatrix gamma = cputest::random(1, c.C, 5, 0.5f, 1.5f), beta = cputest::random(1, c.C, 6);
        HostMatrix mean(1, c.C), var(1, c.C), Y(c.rows, c.cols), dX(c.rows, c.cols), dg(1, c.C), db(1, c.C);
        std::vector<double> acc;
        std::vector<float> scratch;
        const float eps = 1e-3f;
        cpu::batchStats(X.data.data(), c.rows, c.cols, c.C, mean.data.data(), var.data.data(), acc);
        auto s = ref::batchStats(d(X), c.C);
        EXPECT_LE(relError(mean, s.mean), 1e-6);
        EXPECT_LE(relError(var, s.var), 1e-6);
        cpu::batchNormApply(X.data.data(), c.rows, c.cols, c.C, mean.data.data(), var.data.data(), gamma.data.data(),
                            beta.data.data(), eps, Y.data.data(), scratch);
        EXPECT_LE(relError(Y, ref::batchNormApply(d(X), s.mean, s.var, d(gamma), d(beta), eps)), 1e-5);
        cpu::batchNormBackward(X.data.data(), dY.data.data(), c.rows, c.cols, c.C, mean.data.data(), var.data.data(),
                               gamma.data.data(), eps, dg.data.data(), db.data.data(), dX.data.data(), acc);
        auto g = ref::batchNormBackward(d(X), d(dY), d(gamma), eps);
        EXPECT_LE(relError(dX, g.dX), 1e-5) << c.rows << "x" << c.cols;
        EXPECT_LE(relError(dg, g.dGamma), 1e-5);
        EXPECT_LE(relError(db, g.dBeta), 1e-5);
    }
}

// Loss sums 1e-5 relative, gradients 1e-6 (of 1/N-scaled values), correct counts exact.
TEST(CpuOps, LossesMatchReference) {
    for (int C : {2, 3, 10, 127}) {
        const int N = 37;
        HostMatrix X = cputest::random(N, C, 7, -6.0f, 6.0f), G(N, C);
        std::vector<int> labels(N);
        for (int r = 0; r < N; ++r) labels[size_t(r)] = (r * 7 + 3) % C;
        cpu::LossSums s = cpu::softmaxCrossEntropy(X.data.data(), labels.data(), N, C, G.data.data(), N);
        auto want = ref::softmaxCrossEntropy(d(X), labels);
        EXPECT_NEAR(s.loss, want.mean() * N, 1e-5 * std::max(1.0, want.mean() * N)) << C;
        EXPECT_LE(relError(G, want.grad), 1e-6) << C;
        EXPECT_EQ(s.correct, ref::correctCount(d(X), labels)) << C;

        HostMatrix T = cputest::random(N, C, 8, 0.0f, 1.0f);
        for (auto kind : {cpu::PointwiseLoss::SquaredError, cpu::PointwiseLoss::BinaryCrossEntropy}) {
            cpu::LossSums p = cpu::pointwiseLoss(kind, X.data.data(), T.data.data(), N, C, G.data.data(), N);
            auto w = kind == cpu::PointwiseLoss::SquaredError ? ref::mse(d(X), d(T))
                                                              : ref::binaryCrossEntropyWithLogits(d(X), d(T));
            EXPECT_NEAR(p.loss / N, w.loss, 1e-5 * std::max(1.0, w.loss)) << C;
            EXPECT_LE(relError(G, w.grad), 1e-6) << C;
        }
    }
    // A NaN logit makes its row's loss NaN and never wins the argmax.
    HostMatrix X(1, 3, std::vector<float>{NAN, 1.0f, 2.0f}), G(1, 3);
    int label = 2;
    cpu::LossSums s = cpu::softmaxCrossEntropy(X.data.data(), &label, 1, 3, G.data.data(), 1);
    EXPECT_TRUE(std::isnan(s.loss));
    EXPECT_EQ(s.correct, 1);
}

// Five steps of every optimizer (weight decay on) against reference/optimizer.hpp
// in double: 2e-6 relative, the GPU updates' tolerance.
TEST(CpuOps, OptimizerUpdatesMatchReference) {
    const OptimizerKind kinds[] = {OptimizerKind::SGD,  OptimizerKind::Momentum, OptimizerKind::Nesterov,
                                   OptimizerKind::Adam, OptimizerKind::AdamW,    OptimizerKind::RMSProp};
    for (OptimizerKind kind : kinds)
        for (float momentum : {0.0f, 0.9f}) {
            if (momentum == 0.0f && kind != OptimizerKind::RMSProp) continue;
            OptimizerConfig o;
            o.kind = kind;
            o.lr = 0.01f;
            o.weightDecay = 0.01f;
            o.momentum = momentum;
            const int n = 1025;
            HostMatrix p = cputest::random(1, n, 9);
            MatD pd = d(p);
            std::vector<HostMatrix> slots(size_t(o.stateSlots()), HostMatrix(1, n));
            ref::MomentumState<double> ms(pd);
            ref::AdamState<double> as(pd);
            ref::RmspropState<double> rs(pd);
            for (int t = 1; t <= 5; ++t) {
                HostMatrix g = cputest::random(1, n, 10 + uint32_t(t));
                const float scale = 0.5f;  // as clip-by-norm would give
                std::vector<float*> state;
                for (auto& s : slots) state.push_back(s.data.data());
                const std::vector<const float*> state0(state.begin(), state.end());
                cpu::optimizerUpdate(o, p.data.data(), p.data.data(), g.data.data(), state0.data(), state.data(), 0,
                                     size_t(n), scale, t, o.lr);
                MatD gd = d(g);
                for (double& v : gd.data) v *= scale;
                switch (kind) {
                    case OptimizerKind::SGD: ref::sgdStep(pd, gd, {o.lr, o.weightDecay}); break;
                    case OptimizerKind::Momentum:
                    case OptimizerKind::Nesterov:
                        ref::momentumStep(pd, gd, ms,
                                          {o.lr, o.momentum, o.weightDecay, kind == OptimizerKind::Nesterov});
                        break;
                    case OptimizerKind::Adam:
                        ref::adamStep(pd, gd, as, t, {o.lr, o.beta1, o.beta2, o.eps, o.weightDecay});
                        break;
                    case OptimizerKind::AdamW:
                        ref::adamWStep(pd, gd, as, t, {o.lr, o.beta1, o.beta2, o.eps, o.weightDecay});
                        break;
                    case OptimizerKind::RMSProp:
                        ref::rmspropStep(pd, gd, rs, {o.lr, o.rho, o.eps, o.momentum, o.weightDecay});
                        break;
                }
            }
            EXPECT_LE(relError(p, pd), 2e-6) << optimizerName(kind) << " momentum " << momentum;
        }
}

// The updates run four elements at a time with the tail one at a time; an
// element must come out with the same bits whichever way it is computed, and
// whatever range a thread is given (here: the whole array against one element
// per call, which takes the scalar path every time).
TEST(CpuOps, OptimizerUpdatesGiveTheSameBitsInLanesAndAlone) {
    const OptimizerKind kinds[] = {OptimizerKind::SGD,  OptimizerKind::Momentum, OptimizerKind::Nesterov,
                                   OptimizerKind::Adam, OptimizerKind::AdamW,    OptimizerKind::RMSProp};
    for (OptimizerKind kind : kinds)
        for (float momentum : {0.0f, 0.9f}) {
            OptimizerConfig o;
            o.kind = kind;
            o.weightDecay = 0.01f;
            o.momentum = momentum;
            const int n = 203;
            const HostMatrix p0 = cputest::random(1, n, 3), g = cputest::random(1, n, 4);
            std::vector<HostMatrix> slots0;
            for (int s = 0; s < o.stateSlots(); ++s) {
                slots0.push_back(cputest::random(1, n, 5 + uint32_t(s)));
                for (float& v : slots0.back().data) v = std::fabs(v);  // RMSProp's and Adam's v are >= 0
            }
            std::vector<const float*> state0;
            for (auto& s : slots0) state0.push_back(s.data.data());
            auto run = [&](bool alone) {
                std::vector<HostMatrix> slots(slots0.size(), HostMatrix(1, n));
                std::vector<float*> state;
                for (auto& s : slots) state.push_back(s.data.data());
                HostMatrix p(1, n);
                if (alone)
                    for (size_t i = 0; i < size_t(n); ++i)
                        cpu::optimizerUpdate(o, p0.data.data(), p.data.data(), g.data.data(), state0.data(),
                                             state.data(), i, i + 1, 0.75f, 3, 0.01f);
                else
                    cpu::optimizerUpdate(o, p0.data.data(), p.data.data(), g.data.data(), state0.data(), state.data(),
                                         0, size_t(n), 0.75f, 3, 0.01f);
                slots.insert(slots.begin(), p);
                return slots;
            };
            const std::vector<HostMatrix> lanes = run(false), alone = run(true);
            for (size_t a = 0; a < lanes.size(); ++a)
                EXPECT_EQ(0, std::memcmp(lanes[a].data.data(), alone[a].data.data(), sizeof(float) * size_t(n)))
                    << optimizerName(kind) << " momentum " << momentum << " array " << a;
        }
}

TEST(CpuOps, ClipFactorIsTheGlobalNormRatio) {
    HostMatrix a = cputest::random(3, 5, 1), b = cputest::random(1, 7, 2);
    const double norm = ref::globalL2Norm(std::vector<HostMatrixT<double>>{d(a), d(b)});
    std::vector<std::pair<const float*, size_t>> grads = {{a.data.data(), a.size()}, {b.data.data(), b.size()}};
    EXPECT_NEAR(cpu::clipFactor(grads, 0.5f), 0.5 / norm, 1e-6);
    EXPECT_EQ(cpu::clipFactor(grads, float(norm) * 2.0f), 1.0f);
    a.data[0] = NAN;
    EXPECT_EQ(cpu::clipFactor(grads, 0.5f), 1.0f);  // NaN norm: the gradients stay as they are
}

}  // namespace cpu_ops_test
}  // namespace
