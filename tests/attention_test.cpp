// MultiHeadAttention and PositionEmbedding in models: one SGD step of
// self-attention (causal and not) and of cross-attention on the GPU (also on
// paged textures) and on the CPU engine against an independent forward and
// backward of attention written here in double; a small causal transformer
// block trained alike on every engine; the causal mask leaving earlier steps'
// bits alone; attention dropout and Dropout on sequences and images; model
// files, checkpoint names and errors.
//
// Tolerances: one step's gradients, read back as (w - w') / lr, to 2e-3 of
// the largest (float sums over at most ~30 terms, then the subtraction of
// two floats near 1); losses of the engines to 1e-4 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gltrain/model/symbolic.hpp"
#include "gltrain/model_config.hpp"
#include "gltrain/reference.hpp"
#include "gltrain/reference/sequence.hpp"
#include "gltrain/sequential.hpp"
#include "model_reference_steps.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace attention_test {

using namespace gltrain;
using gltrain::test::MatD;
using gltrain::test::maxRelDiff;
using gltrain::test::message;
using gltrain::test::randomMatrix;

// The GPU engine, on full-size and on paged textures, and the CPU engine. Each accessor makes
// its context current (engineName too): a test makes the one it uses current again after them.
std::vector<Context*> engines() { return {&test::context(), &test::smallContext(), &test::cpuContext()}; }
std::string engineName(Context* c) {
    return c == &test::cpuContext() ? "cpu" : c == &test::smallContext() ? "gpu paged" : "gpu";
}

// Attention's weights: kernels [in, heads*size] and biases [heads*size] as matrices.
struct Weights {
    MatD wq, bq, wk, bk, wv, bv, wo, bo;
};
struct Grads {
    MatD wq, bq, wk, bk, wv, bv, wo, bo, dq, dv;  // dq, dv: the query's and value's gradients
};

// Row n of a [N, T*F] batch as a [T, F] matrix, and back.
MatD example(const MatD& batch, int n, int F) {
    MatD m(batch.cols / F, F);
    for (int i = 0; i < m.rows * F; ++i) m.data[size_t(i)] = batch(n, i);
    return m;
}
void setExample(MatD& batch, int n, const MatD& m) {
    for (size_t i = 0; i < m.data.size(); ++i) batch(n, int(i)) = m.data[i];
}

// Zero gradients of attention weights of F features.
Grads zeroGrads(int F, int H, int dk, int dv) {
    return {MatD(F, H * dk),
            MatD(1, H * dk),
            MatD(F, H * dk),
            MatD(1, H * dk),
            MatD(F, H * dv),
            MatD(1, H * dv),
            MatD(H * dv, F),
            MatD(1, F),
            {},
            {}};
}

// Independent multi-head attention in double, one example at a time: q [Tq, F]
// and v [Tv, F] (the key is the value), H heads of dk (queries, keys) and dv (values).
struct Attention {
    int H, dk, dv;
    bool causal;
    // Per example: the projections, the probabilities [H][Tq][Tv] and the heads side by side.
    struct Pass {
        MatD Q, K, V, O, Y;
        std::vector<MatD> P;
    };
    Pass forward(const MatD& q, const MatD& v, const Weights& w) const {
        Pass p;
        p.Q = ref::addBias(ref::matmul(q, w.wq), w.bq);
        p.K = ref::addBias(ref::matmul(v, w.wk), w.bk);
        p.V = ref::addBias(ref::matmul(v, w.wv), w.bv);
        p.O = MatD(q.rows, H * dv);
        for (int h = 0; h < H; ++h) {
            MatD P(q.rows, v.rows);
            for (int i = 0; i < q.rows; ++i) {
                double m = -1e300, s = 0;
                std::vector<double> e(size_t(v.rows), 0.0);
                for (int j = 0; j < v.rows && (!causal || j <= i); ++j) {
                    double dot = 0;
                    for (int d = 0; d < dk; ++d) dot += p.Q(i, h * dk + d) * p.K(j, h * dk + d);
                    e[size_t(j)] = dot / std::sqrt(double(dk));
                    m = std::max(m, e[size_t(j)]);
                }
                for (int j = 0; j < v.rows && (!causal || j <= i); ++j) s += std::exp(e[size_t(j)] - m);
                for (int j = 0; j < v.rows && (!causal || j <= i); ++j) P(i, j) = std::exp(e[size_t(j)] - m) / s;
            }
            for (int i = 0; i < q.rows; ++i)
                for (int e = 0; e < dv; ++e)
                    for (int j = 0; j < v.rows; ++j) p.O(i, h * dv + e) += P(i, j) * p.V(j, h * dv + e);
            p.P.push_back(P);
        }
        p.Y = ref::addBias(ref::matmul(p.O, w.wo), w.bo);
        return p;
    }
    // Adds one example's gradients from dY [Tq, F'] to g.
    void backward(const MatD& q, const MatD& v, const Weights& w, const Pass& p, const MatD& dY, Grads& g) const {
        auto add = [](MatD& to, const MatD& d) {
            for (size_t i = 0; i < to.data.size(); ++i) to.data[i] += d.data[i];
        };
        add(g.wo, ref::matmulTN(p.O, dY));
        add(g.bo, ref::channelSum(dY, dY.cols));
        const MatD dO = ref::matmulNT(dY, w.wo);
        MatD dQ(p.Q.rows, p.Q.cols), dK(p.K.rows, p.K.cols), dV(p.V.rows, p.V.cols);
        const double scale = 1.0 / std::sqrt(double(dk));
        for (int h = 0; h < H; ++h) {
            const MatD& P = p.P[size_t(h)];
            for (int i = 0; i < q.rows; ++i) {
                std::vector<double> dP(size_t(v.rows), 0.0);
                double dot = 0;
                for (int j = 0; j < v.rows; ++j) {
                    for (int e = 0; e < dv; ++e) dP[size_t(j)] += dO(i, h * dv + e) * p.V(j, h * dv + e);
                    dot += P(i, j) * dP[size_t(j)];
                    for (int e = 0; e < dv; ++e) dV(j, h * dv + e) += P(i, j) * dO(i, h * dv + e);
                }
                for (int j = 0; j < v.rows; ++j) {
                    const double dS = P(i, j) * (dP[size_t(j)] - dot) * scale;
                    for (int d = 0; d < dk; ++d) {
                        dQ(i, h * dk + d) += dS * p.K(j, h * dk + d);
                        dK(j, h * dk + d) += dS * p.Q(i, h * dk + d);
                    }
                }
            }
        }
        add(g.wq, ref::matmulTN(q, dQ));
        add(g.bq, ref::channelSum(dQ, dQ.cols));
        add(g.wk, ref::matmulTN(v, dK));
        add(g.bk, ref::channelSum(dK, dK.cols));
        add(g.wv, ref::matmulTN(v, dV));
        add(g.bv, ref::channelSum(dV, dV.cols));
        g.dq = ref::matmulNT(dQ, w.wq);
        g.dv = ref::matmulNT(dK, w.wk);
        add(g.dv, ref::matmulNT(dV, w.wv));
    }
    // One step of mean squared error against y over a batch of queries q [N, Tq*F] and values
    // v [N, Tv*F]: the loss, the weights' gradients and the inputs' (dq, dv shaped as q and v).
    struct Step {
        double loss;
        Grads g;
        MatD dq, dv;
    };
    Step step(const MatD& q, const MatD& v, const Weights& w, const MatD& y, int F) const {
        MatD Y(y.rows, y.cols);
        std::vector<Pass> passes;
        for (int n = 0; n < q.rows; ++n) {
            passes.push_back(forward(example(q, n, F), example(v, n, F), w));
            setExample(Y, n, passes.back().Y);
        }
        const auto mse = ref::mse(Y, y);
        Step s{mse.loss, zeroGrads(F, H, dk, dv), MatD(q.rows, q.cols), MatD(v.rows, v.cols)};
        for (int n = 0; n < q.rows; ++n) {
            backward(example(q, n, F), example(v, n, F), w, passes[size_t(n)], example(mse.grad, n, F), s.g);
            setExample(s.dq, n, s.g.dq);
            setExample(s.dv, n, s.g.dv);
        }
        return s;
    }
};

// Random weights of an attention layer named `layer` of F features, set into m (a kernel
// [F, heads, size] as the matrix F x heads*size, a bias [heads, size] as one row).
Weights setAttentionWeights(Model& m, const std::string& layer, int F, int H, int dk, int dv, unsigned seed) {
    const HostMatrix wq = randomMatrix(F, H * dk, seed), bq = randomMatrix(1, H * dk, seed + 1),
                     wk = randomMatrix(F, H * dk, seed + 2), bk = randomMatrix(1, H * dk, seed + 3),
                     wv = randomMatrix(F, H * dv, seed + 4), bv = randomMatrix(1, H * dv, seed + 5),
                     wo = randomMatrix(H * dv, F, seed + 6), bo = randomMatrix(1, F, seed + 7);
    const std::vector<std::pair<const char*, const HostMatrix*>> named = {{"query/kernel", &wq},
                                                                          {"query/bias", &bq},
                                                                          {"key/kernel", &wk},
                                                                          {"key/bias", &bk},
                                                                          {"value/kernel", &wv},
                                                                          {"value/bias", &bv},
                                                                          {"attention_output/kernel", &wo},
                                                                          {"attention_output/bias", &bo}};
    for (const auto& [name, value] : named) m.setWeight(layer, name, *value);
    return {wq.cast<double>(), bq.cast<double>(), wk.cast<double>(), bk.cast<double>(),
            wv.cast<double>(), bv.cast<double>(), wo.cast<double>(), bo.cast<double>()};
}
// The gradient one SGD step at `lr` applied to a weight: (before - after) / lr, as the matrix `before` is.
HostMatrix stepGradient(const MatD& before, const HostMatrix& after, double lr) {
    HostMatrix g(before.rows, before.cols);
    for (size_t i = 0; i < g.data.size(); ++i) g.data[i] = float((before.data[i] - double(after.data[i])) / lr);
    return g;
}
// Every attention weight's step gradient against the reference's.
void expectAttentionGradients(const Model& m, const std::string& layer, const Weights& w, const Grads& g, double lr) {
    const std::vector<std::tuple<const char*, const MatD*, const MatD*>> named = {
        {"query/kernel", &w.wq, &g.wq},
        {"query/bias", &w.bq, &g.bq},
        {"key/kernel", &w.wk, &g.wk},
        {"key/bias", &w.bk, &g.bk},
        {"value/kernel", &w.wv, &g.wv},
        {"value/bias", &w.bv, &g.bv},
        {"attention_output/kernel", &w.wo, &g.wo},
        {"attention_output/bias", &w.bo, &g.bo}};
    for (const auto& [name, before, want] : named)
        EXPECT_LE(maxRelDiff(stepGradient(*before, m.weight(layer, name), lr), *want), 2e-3) << name;
}

CompileOptions sgdMse(double lr) {
    CompileOptions c;
    c.loss = LossKind::MeanSquaredError;
    c.optimizer.kind = OptimizerKind::SGD;
    c.optimizer.lr = float(lr);
    return c;
}
FitOptions oneBatch(int rows) {
    FitOptions f;
    f.batchSize = rows;
    f.shuffle = false;
    return f;
}

// [5 steps, 6 features] -> Dense 6 at each step -> MultiHeadAttention (3 heads of 4, values of 2) ->
// Flatten, mean squared error: one SGD step of every weight, the Dense's carrying the input's gradient.
TEST(MultiHeadAttention, SelfAttentionStepMatchesAnIndependentReference) {
    const int N = 3, T = 5, F = 6, H = 3, dk = 4, dv = 2;
    const double lr = 0.5;
    for (bool causal : {false, true})
        for (Context* ctx : engines()) {
            SCOPED_TRACE(engineName(ctx) + (causal ? " causal" : ""));
            ctx->makeCurrent();
            MultiHeadAttention mha{H, dk, dv};
            mha.causal = causal;
            Sequential m(*ctx, Shape3{1, T, F});
            m.add(Dense{F}).add(mha).add(Flatten{});
            m.compile(sgdMse(lr));
            ASSERT_EQ(m.layerName(1), "multi_head_attention_1");
            ASSERT_EQ(m.outputShape(1), (Shape3{1, T, F}));
            const HostMatrix x = randomMatrix(N, T * F, 11), y = randomMatrix(N, T * F, 12),
                             w0 = randomMatrix(F, F, 13), b0 = randomMatrix(1, F, 14);
            m.setWeight("dense_0", "kernel", w0);
            m.setWeight("dense_0", "bias", b0);
            const Weights w = setAttentionWeights(m, "multi_head_attention_1", F, H, dk, dv, 20);
            const double loss = m.fit(x, Targets(y), oneBatch(N)).at(0).loss;

            const MatD X = test::asRows(x.cast<double>(), F), W0 = w0.cast<double>();
            const MatD A = test::asRows(ref::addBias(ref::matmul(X, W0), b0.cast<double>()), T * F);
            const Attention::Step want = Attention{H, dk, dv, causal}.step(A, A, w, y.cast<double>(), F);
            EXPECT_NEAR(loss, want.loss, 1e-4 * want.loss);
            expectAttentionGradients(m, "multi_head_attention_1", w, want.g, lr);
            MatD dA = want.dq;  // the query's gradient and the value's (and key's), the same input's
            for (size_t i = 0; i < dA.data.size(); ++i) dA.data[i] += want.dv.data[i];
            EXPECT_LE(
                maxRelDiff(stepGradient(W0, m.weight("dense_0", "kernel"), lr), ref::matmulTN(X, test::asRows(dA, F))),
                2e-3);
        }
}

// A functional model: 4 query steps attend over 7 value steps (cross-attention, 2 heads of 3) ->
// Flatten, mean squared error; Dense layers before each input carry their gradients.
TEST(MultiHeadAttention, CrossAttentionStepMatchesAnIndependentReference) {
    const int N = 2, Tq = 4, Tv = 7, F = 5, H = 2, dk = 3;
    const double lr = 0.5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        ctx->makeCurrent();
        const SymbolicTensor q = Input(Shape3{1, Tq, F}, "q"), v = Input(Shape3{1, Tv, F}, "v");
        Dense dq{F}, dvl{F};
        dq.name = "dq", dvl.name = "dv";
        Model m(*ctx, {q, v}, {Flatten{}(MultiHeadAttention{H, dk}({dq(q), dvl(v)}))});
        m.compile(sgdMse(lr));
        const std::string layer = m.layerName(2);
        ASSERT_EQ(layer, "multi_head_attention_2");
        ASSERT_EQ(m.outputShape(2), (Shape3{1, Tq, F}));
        const HostMatrix xq = randomMatrix(N, Tq * F, 31), xv = randomMatrix(N, Tv * F, 32),
                         y = randomMatrix(N, Tq * F, 33), wq0 = randomMatrix(F, F, 34), wv0 = randomMatrix(F, F, 35);
        m.setWeight("dq", "kernel", wq0);
        m.setWeight("dv", "kernel", wv0);
        const Weights w = setAttentionWeights(m, layer, F, H, dk, dk, 40);
        const double loss = m.fit({xq, xv}, {Targets(y)}, oneBatch(N)).at(0).loss;

        const MatD Q = test::asRows(ref::matmul(test::asRows(xq.cast<double>(), F), wq0.cast<double>()), Tq * F),
                   V = test::asRows(ref::matmul(test::asRows(xv.cast<double>(), F), wv0.cast<double>()), Tv * F);
        const Attention::Step want = Attention{H, dk, dk, false}.step(Q, V, w, y.cast<double>(), F);
        EXPECT_NEAR(loss, want.loss, 1e-4 * want.loss);
        expectAttentionGradients(m, layer, w, want.g, lr);
        EXPECT_LE(maxRelDiff(stepGradient(wq0.cast<double>(), m.weight("dq", "kernel"), lr),
                             ref::matmulTN(test::asRows(xq.cast<double>(), F), test::asRows(want.dq, F))),
                  2e-3);
        EXPECT_LE(maxRelDiff(stepGradient(wv0.cast<double>(), m.weight("dv", "kernel"), lr),
                             ref::matmulTN(test::asRows(xv.cast<double>(), F), test::asRows(want.dv, F))),
                  2e-3);
    }
}

// Embedding -> PositionEmbedding (6 positions, 5 steps) -> Flatten, mean squared error: each
// position's row moves by its step's gradient summed over the batch; the unused row stays.
TEST(PositionEmbedding, StepMatchesTheReference) {
    const int N = 3, T = 5, V = 7, D = 4, L = 6;
    const double lr = 0.5;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        ctx->makeCurrent();
        Sequential m(*ctx, T);
        m.add(Embedding{V, D}).add(PositionEmbedding{L}).add(Flatten{});
        m.compile(sgdMse(lr));
        ASSERT_EQ(m.layerName(1), "position_embedding_1");
        HostMatrix ids = randomMatrix(N, T, 50, 0.0f, float(V));
        for (float& id : ids.data) id = std::floor(id);
        const HostMatrix e = randomMatrix(V, D, 51), p = randomMatrix(L, D, 52), y = randomMatrix(N, T * D, 53);
        m.setWeight("embedding_0", "embeddings", e);
        m.setWeight("position_embedding_1", "embeddings", p);
        EXPECT_EQ(m.predict(ids).cols, T * D);
        const double loss = m.fit(ids, Targets(y), oneBatch(N)).at(0).loss;
        MatD Y = ref::embeddingLookup(ids.cast<double>(), e.cast<double>()), dP(L, D);
        for (int n = 0; n < N; ++n)
            for (int c = 0; c < T * D; ++c) Y(n, c) += double(p(c / D, c % D));
        const auto mse = ref::mse(Y, y.cast<double>());
        EXPECT_NEAR(loss, mse.loss, 1e-5 * mse.loss);
        for (int n = 0; n < N; ++n)
            for (int c = 0; c < T * D; ++c) dP(c / D, c % D) += mse.grad(n, c);
        EXPECT_LE(maxRelDiff(stepGradient(p.cast<double>(), m.weight("position_embedding_1", "embeddings"), lr), dP),
                  1e-4);
        EXPECT_EQ(m.weight("position_embedding_1", "embeddings")(L - 1, 2), p(L - 1, 2)) << "row 5 is no step's";
    }
}

// A causal transformer block: Embedding -> PositionEmbedding -> LayerNormalization ->
// MultiHeadAttention (causal, attention dropout) -> Add (the residual) -> Dense at each step,
// sequence cross-entropy. Trained 4 Adam steps from one seed, the GPU engine (also paged) and the
// CPU engine give the same losses; the loss falls.
std::unique_ptr<Model> transformerBlock(Context& ctx, float dropout) {
    const int T = 6, V = 9, D = 8;
    const SymbolicTensor ids = Input(T);
    const SymbolicTensor x = PositionEmbedding{T}(Embedding{V, D}(ids));
    MultiHeadAttention mha{2, 4};
    mha.causal = true;
    mha.dropout = dropout;
    const SymbolicTensor h = Add{}({x, mha(LayerNormalization{}(x))});
    auto m = std::make_unique<Model>(ctx, ids, Dense{V}(h));
    CompileOptions c;
    c.loss = LossKind::SequenceCrossEntropy;
    c.optimizer.kind = OptimizerKind::Adam;
    c.optimizer.lr = 0.02f;
    m->compile(c);
    return m;
}
std::vector<float> blockLosses(Context& ctx, float dropout) {
    HostMatrix ids = randomMatrix(8, 6, 60, 0.0f, 9.0f);
    for (float& id : ids.data) id = std::floor(id);
    HostMatrix next(8, 6);  // each step's target: the token after it, cyclically
    for (int r = 0; r < 8; ++r)
        for (int t = 0; t < 6; ++t) next(r, t) = ids(r, (t + 1) % 6);
    const std::unique_ptr<Model> m = transformerBlock(ctx, dropout);
    FitOptions f;
    f.batchSize = 4;
    f.epochs = 2;
    std::vector<float> losses;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) {
        if (s.lossRead) losses.push_back(s.loss);
    };
    m->fit(ids, Targets(next), f, cb);
    return losses;
}
TEST(MultiHeadAttention, CausalTransformerBlockTrainsAlikeOnEveryEngine) {
    for (float dropout : {0.0f, 0.3f}) {
        SCOPED_TRACE(dropout);
        const std::vector<float> cpu = blockLosses(test::cpuContext(), dropout);
        ASSERT_EQ(cpu.size(), 4u);
        EXPECT_LT(cpu.back(), cpu.front());
        for (Context* ctx : {&test::context(), &test::smallContext()}) {
            ctx->makeCurrent();
            const std::vector<float> gpu = blockLosses(*ctx, dropout);
            ASSERT_EQ(gpu.size(), cpu.size()) << engineName(ctx);
            for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(gpu[i], cpu[i], 1e-4 * cpu[i]) << engineName(ctx);
        }
    }
}

// Changing the last step leaves every earlier step's output bit-identical under the causal mask,
// and changes them without it; attention dropout is the identity in predict.
TEST(MultiHeadAttention, TheCausalMaskMasksAndDropoutOnlyTrains) {
    const int T = 5, F = 4;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        ctx->makeCurrent();
        for (bool causal : {true, false}) {
            MultiHeadAttention mha{2, 3};
            mha.causal = causal;
            mha.dropout = 0.5f;
            Sequential m(*ctx, Shape3{1, T, F});
            m.add(mha);
            m.compile(sgdMse(0.1));
            HostMatrix x = randomMatrix(2, T * F, 70);
            const HostMatrix before = m.predict(x), again = m.predict(x);
            EXPECT_EQ(before.data, again.data) << "dropout is not applied in predict";
            for (int c = (T - 1) * F; c < T * F; ++c) x(1, c) += 1.0f;
            const HostMatrix after = m.predict(x);
            bool earlierSame = true;
            for (int c = 0; c < (T - 1) * F; ++c) earlierSame = earlierSame && after(1, c) == before(1, c);
            EXPECT_EQ(earlierSame, causal);
            EXPECT_NE(after(1, T * F - 1), before(1, T * F - 1));
            for (int c = 0; c < T * F; ++c) EXPECT_EQ(after(0, c), before(0, c)) << "another example";
        }
    }
}

// Dropout on a sequence [steps, features] and on an image: one training step's loss agrees on
// the engines (the same masks) and differs from the step without dropout.
TEST(Dropout, WorksOnSequencesAndImages) {
    for (Shape3 in : {Shape3{1, 5, 3}, Shape3{3, 3, 2}}) {
        SCOPED_TRACE(in.str());
        std::vector<double> losses;
        for (float rate : {0.4f, 0.0f})
            for (Context* ctx : engines()) {
                ctx->makeCurrent();
                Sequential m(*ctx, in);
                m.add(LayerNormalization{});
                if (rate > 0.0f) m.add(Dropout{rate});
                m.add(Flatten{}).add(Dense{4});
                m.compile(sgdMse(0.1));
                losses.push_back(
                    m.fit(randomMatrix(6, in.size(), 80), Targets(randomMatrix(6, 4, 81)), oneBatch(6)).at(0).loss);
            }
        EXPECT_NEAR(losses[1], losses[0], 1e-5 * losses[0]);
        EXPECT_NEAR(losses[2], losses[0], 1e-5 * losses[0]);
        EXPECT_GT(std::fabs(losses[3] - losses[0]), 1e-3 * losses[0]) << "dropout changes the step";
    }
}

// Two Dropout layers of one shape draw different masks (each layer's seed is mixed with its
// name). Summed by a dense layer of ones, 256 ones through Dropout(0.5) give 2 k1 (k1 ~ 128 kept),
// and through Dropout(0.5) twice 4 k12, where k12 ~ 64 elements both keep when the masks are
// independent and k12 = k1 when they are one mask: the ratio of the two sums is about 1, or 2.
TEST(Dropout, TwoLayersDrawDifferentMasks) {
    const int n = 256;
    for (Context* ctx : engines()) {
        SCOPED_TRACE(engineName(ctx));
        ctx->makeCurrent();
        auto sumThrough = [&](int dropouts) {
            Sequential m(*ctx, n);
            for (int i = 0; i < dropouts; ++i) m.add(Dropout{0.5f});
            Dense sum{1};
            sum.kernelInit = Initializer::constant(1.0f);
            m.add(sum);
            m.compile(sgdMse(0.1));
            HostMatrix ones(1, n);
            std::fill(ones.data.begin(), ones.data.end(), 1.0f);
            // MSE against 0 of one output: the sum squared.
            return std::sqrt(m.fit(ones, Targets(HostMatrix(1, 1)), oneBatch(1)).at(0).loss);
        };
        const double one = sumThrough(1), two = sumThrough(2);
        EXPECT_GT(one, 2.0 * 100);
        EXPECT_LT(two / one, 1.4) << "the two layers drew the same mask";
        EXPECT_GT(two / one, 0.6);
    }
}

// The layers in a model file, their variables' checkpoint names and shapes (Keras's).
TEST(MultiHeadAttention, ModelFileAndCheckpointNames) {
    const ModelConfig config = parseModelConfig(R"({
      "input": 6,
      "layers": [
        {"type": "embedding", "inputDim": 9, "outputDim": 8},
        {"type": "positionembedding", "sequenceLength": 6, "name": "pos"},
        {"type": "multiheadattention", "numHeads": 2, "keyDim": 4, "valueDim": 3, "causal": true, "name": "att"}
      ]})",
                                                "m.json");
    const nlohmann::ordered_json j = layerToJson(config.layers[2]);
    EXPECT_EQ(j.dump(),
              R"({"type":"multiheadattention","numHeads":2,"keyDim":4,"valueDim":3,"causal":true,"name":"att"})");
    EXPECT_EQ(layerToJson(config.layers[1]).dump(), R"({"type":"positionembedding","sequenceLength":6,"name":"pos"})");
    const std::unique_ptr<Model> m = buildModel(test::cpuContext(), config);
    const SafetensorsFile f = parseSafetensors(m->saveCheckpoint());
    const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
        {"pos/embeddings", {6, 8}},        {"att/query/kernel", {8, 2, 4}},
        {"att/query/bias", {2, 4}},        {"att/key/kernel", {8, 2, 4}},
        {"att/key/bias", {2, 4}},          {"att/value/kernel", {8, 2, 3}},
        {"att/value/bias", {2, 3}},        {"att/attention_output/kernel", {2, 3, 8}},
        {"att/attention_output/bias", {8}}};
    for (const auto& [name, shape] : want) {
        ASSERT_TRUE(f.contains(name)) << name;
        EXPECT_EQ(f.at(name).shape, shape) << name;
    }
    // No two kernels start alike (each draws its own random stream).
    EXPECT_NE(m->weight("att", "query/kernel").data, m->weight("att", "key/kernel").data);
}

// Bad configurations and inputs: refused at compile, naming the layer and what it received.
TEST(MultiHeadAttention, ErrorsNameTheLayerAndTheInput) {
    Context& ctx = test::cpuContext();
    auto compiled = [&](Shape3 in, auto layer) {
        return message([&] {
            Sequential m(ctx, in);
            m.add(layer);
            m.compile(sgdMse(0.1));
        });
    };
    EXPECT_NE(compiled(Shape3{1, 5, 4}, MultiHeadAttention{2, 0}).find("keyDim must be"), std::string::npos)
        << compiled(Shape3{1, 5, 4}, MultiHeadAttention{2, 0});
    EXPECT_EQ(compiled(Shape3{3, 3, 2}, MultiHeadAttention{2, 2}),
              "compile: layer multi_head_attention_0: needs sequences [steps, features] but receives "
              "[batch, 3, 3, 2] from the model input");
    EXPECT_EQ(compiled(Shape3{1, 7, 4}, PositionEmbedding{6}),
              "compile: layer position_embedding_0: has positions for 6 steps (sequenceLength) but receives "
              "[batch, 1, 7, 4] from the model input, 7 steps");
    EXPECT_EQ(message([&] {
                  const SymbolicTensor q = Input(Shape3{1, 4, 5}, "q"), v = Input(Shape3{1, 6, 3}, "v");
                  Model m(ctx, {q, v}, {MultiHeadAttention{2, 2}({q, v})});
                  m.compile(sgdMse(0.1));
              }),
              "compile: layer multi_head_attention_0: needs a value with the query's 5 features but receives "
              "[batch, 1, 4, 5] from model input q and [batch, 1, 6, 3] from model input v");
    EXPECT_EQ(message([&] {
                  const SymbolicTensor q = Input(Shape3{1, 4, 5});
                  MultiHeadAttention{2, 2}({q, q, q});
              }),
              "multiheadattention: takes at most 2 values, applied to 3");
}

}  // namespace attention_test
}  // namespace
