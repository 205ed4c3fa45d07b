// CPU reference: optimizer single steps. Hand-computed first steps, Adam's
// sign-like first step, and a few steps on a quadratic that must decrease it.
#include <cmath>
#include <functional>

#include "reference_test_util.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace reference_optimizer_test {

namespace {

using namespace gltrain;
using namespace reftest;
namespace r = gltrain::ref;

TEST(ReferenceOptimizer, SgdOneStep) {
    MatD p(1, 2, {1.0, -2.0});
    r::sgdStep(p, MatD(1, 2, {0.5, 0.25}), r::SgdConfig{0.1, 0.01});
    // g' = g + 0.01 p; p -= 0.1 g'
    EXPECT_DOUBLE_EQ(p(0, 0), 1.0 - 0.1 * (0.5 + 0.01));
    EXPECT_DOUBLE_EQ(p(0, 1), -2.0 - 0.1 * (0.25 - 0.02));
}

TEST(ReferenceOptimizer, MomentumOneStep) {
    for (bool nesterov : {false, true}) {
        MatD p(1, 1, 1.0);
        r::MomentumState<double> s(p);
        s.velocity(0, 0) = 0.2;
        r::momentumStep(p, MatD(1, 1, 0.5), s, r::MomentumConfig{0.1, 0.9, 0.0, nesterov});
        EXPECT_DOUBLE_EQ(s.velocity(0, 0), 0.68);  // 0.9 * 0.2 + 0.5
        EXPECT_DOUBLE_EQ(p(0, 0), nesterov ? 1.0 - 0.1 * (0.5 + 0.9 * 0.68) : 1.0 - 0.1 * 0.68);
    }
}

TEST(ReferenceOptimizer, AdamOneAndTwoSteps) {
    MatD p(1, 1, 1.0);
    r::AdamState<double> s(p);
    const r::AdamConfig c{0.1, 0.9, 0.999, 1e-8, 0.0};
    r::adamStep(p, MatD(1, 1, 0.5), s, 1, c);
    EXPECT_DOUBLE_EQ(s.m(0, 0), 0.05);
    EXPECT_DOUBLE_EQ(s.v(0, 0), 0.00025);
    EXPECT_DOUBLE_EQ(p(0, 0), 1.0 - 0.1 * 0.5 / (0.5 + 1e-8));  // m^ = g, v^ = g^2
    const double p1 = p(0, 0);
    r::adamStep(p, MatD(1, 1, -1.0), s, 2, c);
    const double m2 = 0.9 * 0.05 - 0.1, v2 = 0.999 * 0.00025 + 0.001;
    EXPECT_NEAR(s.m(0, 0), m2, 1e-16);  // (1 - 0.9) is not exact in binary
    EXPECT_NEAR(s.v(0, 0), v2, 1e-17);
    EXPECT_NEAR(p(0, 0), p1 - 0.1 * (m2 / (1 - 0.81)) / (std::sqrt(v2 / (1 - 0.998001)) + 1e-8), 1e-15);
}

TEST(ReferenceOptimizer, AdamFirstStepIsLrTimesSignOfGrad) {
    const MatF g(1, 5, {0.3f, -2.f, 1e-3f, -5e-2f, 40.f});
    MatF p(1, 5, 0.0f);
    r::AdamState<float> s(p);
    r::adamStep(p, g, s, 1, r::AdamConfig{0.01});
    for (int c = 0; c < 5; ++c) EXPECT_NEAR(p(0, c), -0.01f * std::copysign(1.0f, g(0, c)), 1e-6f) << c;
}

TEST(ReferenceOptimizer, AdamWDecouplesTheDecay) {
    MatD p(1, 1, 1.0);
    r::AdamState<double> s(p);
    r::adamWStep(p, MatD(1, 1, 0.5), s, 1, r::AdamConfig{0.1, 0.9, 0.999, 1e-8, 0.1});
    EXPECT_DOUBLE_EQ(p(0, 0), 1.0 - 0.1 * 0.1 * 1.0 - 0.1 * 0.5 / (0.5 + 1e-8));
    // Adam's L2 decay goes through the moments instead: first step is still ~lr * sign.
    MatD q(1, 1, 1.0);
    r::AdamState<double> sq(q);
    r::adamStep(q, MatD(1, 1, 0.5), sq, 1, r::AdamConfig{0.1, 0.9, 0.999, 1e-8, 0.1});
    EXPECT_DOUBLE_EQ(q(0, 0), 1.0 - 0.1 * 0.6 / (0.6 + 1e-8));
}

TEST(ReferenceOptimizer, RmspropOneStep) {
    MatD p(1, 1, 1.0);
    r::RmspropState<double> s(p);
    r::rmspropStep(p, MatD(1, 1, 0.5), s, r::RmspropConfig{0.01, 0.9, 1e-8, 0.0, 0.0});
    EXPECT_DOUBLE_EQ(s.square(0, 0), 0.025);  // 0.1 * 0.25
    EXPECT_DOUBLE_EQ(p(0, 0), 1.0 - 0.01 * 0.5 / (std::sqrt(0.025) + 1e-8));
    EXPECT_NEAR(p(0, 0), 0.968377225398316, 1e-15);
    EXPECT_EQ(s.momentum(0, 0), 0.0);  // untouched without momentum

    MatD q(1, 1, 1.0);
    r::RmspropState<double> sm(q);
    sm.momentum(0, 0) = 0.1;
    r::rmspropStep(q, MatD(1, 1, 0.5), sm, r::RmspropConfig{0.01, 0.9, 1e-8, 0.9, 0.0});
    const double b = 0.9 * 0.1 + 0.5 / (std::sqrt(0.025) + 1e-8);
    EXPECT_DOUBLE_EQ(sm.momentum(0, 0), b);
    EXPECT_DOUBLE_EQ(q(0, 0), 1.0 - 0.01 * b);
}

// L(p) = 0.5 * sum a_i p_i^2 with condition number 20; grad = a ⊙ p.
struct Quadratic {
    MatD a{1, 4, {1.0, 4.0, 0.2, 2.0}};
    double loss(const MatD& p) const {
        double s = 0;
        for (size_t i = 0; i < p.size(); ++i) s += 0.5 * a.data[i] * p.data[i] * p.data[i];
        return s;
    }
    MatD grad(const MatD& p) const { return r::mul(a, p); }
};

void expectDecreases(const char* name, const std::function<void(MatD&, const MatD&, int)>& step) {
    const Quadratic q;
    MatD p(1, 4, {1.0, -1.0, 2.0, 0.5});
    const double initial = q.loss(p);
    double previous = initial;
    for (int t = 1; t <= 20; ++t) {
        step(p, q.grad(p), t);
        if (t <= 3) {
            EXPECT_LT(q.loss(p), previous) << name << " step " << t;
        }
        previous = q.loss(p);
    }
    EXPECT_LT(q.loss(p), 0.5 * initial) << name;
}

TEST(ReferenceOptimizer, FewStepsOnAQuadraticDecreaseTheLoss) {
    expectDecreases("sgd", [](MatD& p, const MatD& g, int) { r::sgdStep(p, g, r::SgdConfig{0.1}); });
    r::MomentumState<double> mom(MatD(1, 4)), nes(MatD(1, 4));
    expectDecreases("momentum", [&](MatD& p, const MatD& g, int) {
        r::momentumStep(p, g, mom, r::MomentumConfig{0.05, 0.5});
    });
    expectDecreases("nesterov", [&](MatD& p, const MatD& g, int) {
        r::momentumStep(p, g, nes, r::MomentumConfig{0.05, 0.5, 0.0, true});
    });
    r::AdamState<double> adam(MatD(1, 4)), adamw(MatD(1, 4));
    expectDecreases("adam", [&](MatD& p, const MatD& g, int t) { r::adamStep(p, g, adam, t, r::AdamConfig{0.1}); });
    expectDecreases("adamw", [&](MatD& p, const MatD& g, int t) {
        r::adamWStep(p, g, adamw, t, r::AdamConfig{0.1, 0.9, 0.999, 1e-8, 0.01});
    });
    r::RmspropState<double> rms(MatD(1, 4)), rmsm(MatD(1, 4));
    expectDecreases("rmsprop", [&](MatD& p, const MatD& g, int) { r::rmspropStep(p, g, rms, r::RmspropConfig{0.02}); });
    expectDecreases("rmsprop+momentum", [&](MatD& p, const MatD& g, int) {
        r::rmspropStep(p, g, rmsm, r::RmspropConfig{0.01, 0.99, 1e-8, 0.5});
    });
}

TEST(ReferenceOptimizer, ShapeAndStepErrors) {
    MatD p(2, 3);
    const MatD g32(3, 2);
    expectArgumentError([&] { r::sgdStep(p, g32, r::SgdConfig{}); }, {"ref::sgdStep", "2x3", "3x2"});
    r::MomentumState<double> ms(g32);
    expectArgumentError([&] { r::momentumStep(p, MatD(2, 3), ms, r::MomentumConfig{}); },
                        {"ref::momentumStep", "2x3", "3x2", "velocity"});
    r::AdamState<double> as(p);
    expectArgumentError([&] { r::adamStep(p, g32, as, 1, r::AdamConfig{}); }, {"ref::adamStep", "2x3", "3x2"});
    expectArgumentError([&] { r::adamStep(p, MatD(2, 3), as, 0, r::AdamConfig{}); }, {"ref::adamStep", "step t is 0"});
    expectArgumentError([&] { r::adamWStep(p, g32, as, 1, r::AdamConfig{}); }, {"ref::adamWStep", "2x3", "3x2"});
    r::AdamState<double> bad(g32);
    expectArgumentError([&] { r::adamWStep(p, MatD(2, 3), bad, 1, r::AdamConfig{}); },
                        {"ref::adamWStep", "2x3", "3x2"});
    r::RmspropState<double> rs(p);
    expectArgumentError([&] { r::rmspropStep(p, g32, rs, r::RmspropConfig{}); }, {"ref::rmspropStep", "2x3", "3x2"});
}

}  // namespace

}  // namespace reference_optimizer_test
}  // namespace
