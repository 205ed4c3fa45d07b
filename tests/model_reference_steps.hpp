// Training steps composed from the CPU reference ops in double, for any engine
// (the GPU's fragment or compute kernels, the CPU backend): the tests of each
// call these with their context, so every engine meets the same oracle.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/reference.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

namespace gltrain::test {

using MatD = HostMatrixT<double>;

// Max |got - want| / max(1e-3, max |want|); infinite when the sizes differ.
inline double maxRelDiff(const HostMatrix& got, const MatD& want) {
    double scale = 1e-3, err = 0;
    for (double v : want.data) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < got.data.size(); ++i) err = std::max(err, std::fabs(double(got.data[i]) - want.data[i]));
    return got.data.size() == want.data.size() ? err / scale : INFINITY;
}

// The same values as rows of `cols`: a [N, T*F] batch as N*T rows of F.
inline MatD asRows(MatD m, int cols) {
    m.rows = int(m.data.size()) / cols;
    m.cols = cols;
    return m;
}

// w - lr * g: a plain SGD step in double.
inline MatD sgd(MatD w, const MatD& g, double lr) {
    for (size_t i = 0; i < w.data.size(); ++i) w.data[i] -= lr * g.data[i];
    return w;
}

// The one-step tests' labels, for a batch of 5 rows.
inline const std::vector<int> kStepLabels = {0, 2, 1, 1, 0};

// Compiles m for the one-step tests: plain SGD at `lr`, softmax cross-entropy.
inline void compileSgd(Model& m, float lr) {
    CompileOptions c;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = lr;
    m.compile(c);
}

// The same with another loss (mean squared error, a sequence loss).
inline void compileSgd(Model& m, float lr, LossKind loss) {
    CompileOptions c;
    c.loss = loss;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = lr;
    m.compile(c);
}

// One training step on all of x's rows as one unshuffled batch.
inline void fitOneBatch(Model& m, const HostMatrix& x, const std::vector<int>& labels = kStepLabels) {
    FitOptions f;
    f.batchSize = x.rows;
    f.shuffle = false;
    m.fit(x, labels, f);
}
// The same with targets y (a row per row of x).
inline void fitOneBatchToTargets(Model& m, const HostMatrix& x, const HostMatrix& y) {
    FitOptions f;
    f.batchSize = x.rows;
    f.shuffle = false;
    m.fit(x, Targets(y), f);
}

// 5 -> 7 (tanh) -> 6 (relu) -> 3, softmax cross-entropy, Adam, 20 steps of one
// batch of 32. fp32 against double (summed in other orders, exp/tanh differing
// by ulps): the loss to 1e-4 relative at every step, every weight to 1e-4 at the end.
inline void expectMlpAdamStepsMatchTheReference(Context& ctx) {
    HostMatrix x = randomMatrix(32, 5, 21);
    std::vector<int> y(32);
    for (int i = 0; i < 32; ++i) y[size_t(i)] = (i * 7) % 3;
    Sequential m(ctx, 5);
    m.add(Dense{7, Activation::Tanh}).add(Dense{6, Activation::ReLU}).add(Dense{3});
    CompileOptions c;
    c.optimizer.lr = 0.01f;
    c.optimizer.eps = 1e-7f;
    m.compile(c);
    std::vector<MatD> W, b;
    for (size_t l = 0; l < 3; ++l) {
        W.push_back(m.weight(m.layerName(l), "kernel").cast<double>());
        b.push_back(m.weight(m.layerName(l), "bias").cast<double>());
    }
    std::vector<float> losses;
    FitOptions f;
    f.epochs = 20;
    f.batchSize = 32;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    m.fit(x, y, f, cb);
    ASSERT_EQ(losses.size(), 20u);

    const Activation acts[3] = {Activation::Tanh, Activation::ReLU, Activation::Linear};
    std::vector<ref::AdamState<double>> sw, sb;
    for (size_t l = 0; l < 3; ++l) sw.emplace_back(W[l]), sb.emplace_back(b[l]);
    ref::AdamConfig ac;
    ac.lr = 0.01;
    ac.eps = c.optimizer.eps;
    const MatD X = x.cast<double>();
    for (int t = 1; t <= 20; ++t) {
        std::vector<MatD> in(3), z(3);
        MatD cur = X;
        for (size_t l = 0; l < 3; ++l) {
            in[l] = cur;
            z[l] = ref::densePreactivation(cur, W[l], b[l]);
            cur = ref::activate(z[l], acts[l]);
        }
        auto loss = ref::softmaxCrossEntropy(cur, y);
        EXPECT_NEAR(losses[size_t(t - 1)], loss.mean(), 1e-4 * std::max(1.0, loss.mean())) << "step " << t;
        MatD dy = loss.grad;
        for (size_t l = 3; l-- > 0;) {
            auto g = ref::denseBackward(in[l], W[l], z[l], dy, acts[l]);
            ref::adamStep(W[l], g.dW, sw[l], t, ac);
            ref::adamStep(b[l], g.db, sb[l], t, ac);
            dy = g.dX;
        }
    }
    for (size_t l = 0; l < 3; ++l) {
        EXPECT_LE(maxRelDiff(m.weight(m.layerName(l), "kernel"), W[l]), 1e-4) << "layer " << l;
        EXPECT_LE(maxRelDiff(m.weight(m.layerName(l), "bias"), b[l]), 1e-4) << "layer " << l;
    }
}

// One SGD step of a small CNN (conv 'same' + ReLU, max pool, batch norm,
// flatten, dense) against the same step in double: every parameter, the
// moving averages and the prediction after it to 1e-4 of the largest value.
inline void expectCnnSgdStepMatchesTheReference(Context& ctx) {
    const Shape3 in{6, 6, 2};
    const int N = 5;
    Sequential m(ctx, in);
    m.add(Conv2D{4, 3, 1, Padding::Same, Activation::ReLU})
        .add(MaxPool2D{2})
        .add(BatchNormalization{})
        .add(Flatten{})
        .add(Dense{3});
    compileSgd(m, 0.1f);
    ASSERT_EQ(m.layerName(2), "batch_normalization_2");
    ASSERT_EQ(m.outputShape(1), (Shape3{3, 3, 4}));

    HostMatrix x = randomMatrix(N, in.size(), 21), w1 = randomMatrix(18, 4, 22),
               b1 = randomMatrix(1, 4, 23, -0.1f, 0.1f);
    HostMatrix gamma = randomMatrix(1, 4, 24, 0.5f, 1.5f), beta = randomMatrix(1, 4, 25);
    HostMatrix w2 = randomMatrix(36, 3, 26), b2 = randomMatrix(1, 3, 27);
    m.setWeight("conv2d_0", "kernel", w1);
    m.setWeight("conv2d_0", "bias", b1);
    m.setWeight("batch_normalization_2", "gamma", gamma);
    m.setWeight("batch_normalization_2", "beta", beta);
    m.setWeight("dense_4", "kernel", w2);
    m.setWeight("dense_4", "bias", b2);
    const std::vector<int>& labels = kStepLabels;
    fitOneBatch(m, x);

    // The same step in double.
    const double lr = 0.1, eps = 1e-3;
    Window conv = Window::make("conv", in, 3, 3, 1, 1, Padding::Same, 4);
    Window pool = Window::make("pool", conv.out, 2, 2, 2, 2, Padding::Valid, 4);
    MatD X = x.cast<double>(), W1 = w1.cast<double>(), B1 = b1.cast<double>(), G = gamma.cast<double>();
    MatD W2 = w2.cast<double>(), B2 = b2.cast<double>();
    MatD Z1 = ref::conv2d(X, W1, B1, conv), A1 = ref::activate(Z1, Activation::ReLU);
    MatD P = ref::pool2d(A1, pool, PoolKind::Max);
    auto stats = ref::batchStats(P, 4);
    MatD Y = ref::batchNormApply(P, stats.mean, stats.var, G, beta.cast<double>(), eps);
    MatD logits = ref::addBias(ref::matmul(Y, W2), B2);
    MatD dL = ref::softmaxCrossEntropy(logits, labels).grad;
    MatD dW2 = ref::matmulTN(Y, dL), dB2 = ref::biasGrad(dL), dY = ref::matmulNT(dL, W2);
    auto bn = ref::batchNormBackward(P, dY, G, eps);
    MatD dZ1 = ref::activationGrad(ref::pool2dBackward(A1, bn.dX, pool, PoolKind::Max), Z1, Activation::ReLU);
    MatD dW1 = ref::conv2dBackwardFilter(X, dZ1, conv), dB1 = ref::channelSum(dZ1, 4);
    auto step = [&](const MatD& w, const MatD& g) { return sgd(w, g, lr); };
    // fp32 on the GPU vs double: 1e-4 of the largest value.
    EXPECT_LE(maxRelDiff(m.weight("dense_4", "kernel"), step(W2, dW2)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("dense_4", "bias"), step(B2, dB2)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "gamma"), step(G, bn.dGamma)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "beta"), step(beta.cast<double>(), bn.dBeta)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "kernel"), step(W1, dW1)), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("conv2d_0", "bias"), step(B1, dB1)), 1e-4);
    // Moving averages: momentum 0.99 from (0, 1), the variance unbiased over M = 5 * 9 values.
    MatD mm(1, 4), mv(1, 4);
    for (int k = 0; k < 4; ++k) {
        mm(0, k) = 0.01 * stats.mean(0, k);
        mv(0, k) = 0.99 + 0.01 * stats.var(0, k) * 45.0 / 44.0;
    }
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "moving_mean"), mm), 1e-4);
    EXPECT_LE(maxRelDiff(m.weight("batch_normalization_2", "moving_variance"), mv), 1e-4);

    // Inference normalises with the moving averages.
    HostMatrix p = m.predict(x);
    MatD Z1n = ref::conv2d(X, step(W1, dW1), step(B1, dB1), conv);
    MatD Pn = ref::pool2d(ref::activate(Z1n, Activation::ReLU), pool, PoolKind::Max);
    MatD Yn = ref::batchNormApply(Pn, mm, mv, step(G, bn.dGamma), step(beta.cast<double>(), bn.dBeta), eps);
    MatD out = ref::addBias(ref::matmul(Yn, step(W2, dW2)), step(B2, dB2));
    EXPECT_LE(maxRelDiff(p, out), 1e-4);
}

// 30 steps (10 epochs of 96 rows, batches of 32, no shuffle) of a 37-70-33-4
// ReLU/tanh MLP on fixed data: the loss of every step, and whether `kernel`
// runs in its step.
inline std::pair<std::vector<float>, bool> mlpLosses(Context& c, const std::string& kernel) {
    HostMatrix x = randomMatrix(96, 37, 5);
    std::vector<int> y(96);
    for (int i = 0; i < 96; ++i) y[size_t(i)] = (i * 5) % 4;
    c.makeCurrent();
    Sequential m(c, 37);
    m.add(Dense{70, Activation::ReLU}).add(Dense{33, Activation::Tanh}).add(Dense{4});
    CompileOptions co;
    co.seed = 9;
    co.optimizer.lr = 0.01f;
    m.compile(co);
    std::vector<float> losses;
    FitOptions f;
    f.epochs = 10;
    f.batchSize = 32;
    f.shuffle = false;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    m.fit(x, y, f, cb);
    bool runs = false;
    for (auto& t : m.profileStep(x, y, 32, 1)) runs = runs || t.kernel == kernel;
    return std::make_pair(losses, runs);
}

// Two engines training the same small MLP (37-70-33-4, Adam, seed 9, 10 epochs of
// 3 unshuffled batches of 32) agree: the losses to 1e-4 relative at every step
// (the kernels sum in different orders), both learn, and `kernel` runs in the
// step on `ctx` and not on `peer`.
inline void expectTrainingAgrees(Context& ctx, Context& peer, const std::string& kernel) {
    auto theirs = mlpLosses(peer, kernel);
    auto ours = mlpLosses(ctx, kernel);
    ASSERT_EQ(ours.first.size(), 30u);
    ASSERT_EQ(theirs.first.size(), 30u);
    for (size_t i = 0; i < 30; ++i)
        EXPECT_NEAR(ours.first[i], theirs.first[i], 1e-4 * std::max(1.0f, std::fabs(theirs.first[i])))
            << "step " << i + 1;
    EXPECT_LT(ours.first.back(), ours.first.front());
    EXPECT_TRUE(ours.second) << kernel << " does not run in the step";
    EXPECT_FALSE(theirs.second) << kernel << " runs in the peer's step too";
}

}  // namespace gltrain::test
