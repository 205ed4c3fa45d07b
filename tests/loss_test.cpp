// The losses of loss_spec.hpp on both engines: for each, one SGD step of a
// small dense model against the loss written out in double here (Keras 3's
// formulas), its gradient by central differences of that double loss; the
// loss after the step through evaluate; the model-file forms and bad
// parameters. Tolerances: the step's loss to 1e-4 relative, the gradient
// (read back as (W0 - W1) / lr) to 2e-3 of its largest element (a float
// weight minus lr times a float gradient, and float sums).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gltrain/graph/loss_graph.hpp"
#include "gltrain/model_config.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

namespace {
namespace loss_test {

using namespace gltrain;
using MatD = HostMatrixT<double>;
using Row = std::vector<double>;

constexpr double kEps = 1e-7;

double clip(double v, double lo, double hi) { return std::min(std::max(v, lo), hi); }
double logSumExp(const Row& z) {
    double m = z[0], s = 0;
    for (double v : z) m = std::max(m, v);
    for (double v : z) s += std::exp(v - m);
    return m + std::log(s);
}

// One row's loss in double: prediction p (logits or outputs, as the loss reads them), target t.
double rowLoss(const LossSpec& l, const Row& p, const Row& t) {
    const size_t C = p.size();
    const double s = l.labelSmoothing;
    double sum = 0;
    switch (l.kind) {
        case LossKind::SoftmaxCrossEntropy: {  // t = {label}
            const double lse = logSumExp(p);
            for (size_t j = 0; j < C; ++j) sum += lse - p[j];
            return (1 - s) * (lse - p[size_t(t[0])]) + s * sum / double(C);
        }
        case LossKind::CategoricalCrossEntropy: {
            const double lse = logSumExp(p);
            for (size_t j = 0; j < C; ++j) sum += (t[j] * (1 - s) + s / double(C)) * (lse - p[j]);
            return sum;
        }
        case LossKind::MeanSquaredError:
            for (size_t j = 0; j < C; ++j) sum += (p[j] - t[j]) * (p[j] - t[j]);
            return sum / double(C);
        case LossKind::MeanAbsoluteError:
            for (size_t j = 0; j < C; ++j) sum += std::fabs(p[j] - t[j]);
            return sum / double(C);
        case LossKind::Huber:
            for (size_t j = 0; j < C; ++j) {
                const double d = std::fabs(p[j] - t[j]);
                sum += d <= l.delta ? 0.5 * d * d : l.delta * (d - 0.5 * l.delta);
            }
            return sum / double(C);
        case LossKind::BinaryCrossEntropy:
            for (size_t j = 0; j < C; ++j) {
                const double ts = t[j] * (1 - s) + s / 2;
                if (l.fromLogits) {
                    sum += std::max(p[j], 0.0) - p[j] * ts + std::log1p(std::exp(-std::fabs(p[j])));
                } else {
                    const double q = clip(p[j], kEps, 1 - kEps);
                    sum -= ts * std::log(q) + (1 - ts) * std::log(1 - q);
                }
            }
            return sum / double(C);
        case LossKind::KlDivergence:
            for (size_t j = 0; j < C; ++j) {
                const double tc = clip(t[j], kEps, 1), pc = clip(p[j], kEps, 1);
                sum += tc * std::log(tc / pc);
            }
            return sum;
        case LossKind::CategoricalHinge: {
            double pos = 0, neg = -INFINITY;
            for (size_t j = 0; j < C; ++j) {
                pos += t[j] * p[j];
                neg = std::max(neg, (1 - t[j]) * p[j]);
            }
            return std::max(0.0, neg - pos + 1);
        }
        case LossKind::Custom: break;                // (tested against the built-ins they mimic)
        case LossKind::SequenceCrossEntropy: break;  // (tests/model_sequence_test.cpp: a class id per step)
    }
    return NAN;
}

// What the model ends in: a dense layer's activation, and a final Softmax layer.
struct Case {
    std::string name;
    LossSpec loss;
    Activation act = Activation::Linear;
    bool softmax = false;
};
LossSpec spec(LossKind k, float delta = 1.0f, float smoothing = 0.0f, bool fromLogits = true) {
    LossSpec l(k);
    l.delta = delta;
    l.labelSmoothing = smoothing;
    l.fromLogits = fromLogits;
    return l;
}
std::vector<Case> cases() {
    return {
        {"softmax_cross_entropy", spec(LossKind::SoftmaxCrossEntropy)},
        {"softmax_cross_entropy labelSmoothing 0.2", spec(LossKind::SoftmaxCrossEntropy, 1, 0.2f), {}, true},
        {"categorical_crossentropy", spec(LossKind::CategoricalCrossEntropy), {}, true},
        {"categorical_crossentropy labelSmoothing 0.1", spec(LossKind::CategoricalCrossEntropy, 1, 0.1f)},
        {"mse", spec(LossKind::MeanSquaredError)},
        {"mae", spec(LossKind::MeanAbsoluteError)},
        {"huber delta 0.3", spec(LossKind::Huber, 0.3f)},
        {"binary_cross_entropy (logits)", spec(LossKind::BinaryCrossEntropy)},
        {"binary_cross_entropy labelSmoothing 0.2", spec(LossKind::BinaryCrossEntropy, 1, 0.2f)},
        {"binary_crossentropy (probabilities)", spec(LossKind::BinaryCrossEntropy, 1, 0, false), Activation::Sigmoid},
        {"binary_crossentropy labelSmoothing 0.1", spec(LossKind::BinaryCrossEntropy, 1, 0.1f, false),
         Activation::Sigmoid},
        {"kl_divergence", spec(LossKind::KlDivergence), {}, true},
        {"categorical_hinge", spec(LossKind::CategoricalHinge)},
    };
}

constexpr int kRows = 6, kIn = 5, kOut = 4;

// Targets as each loss wants them, and as rows for rowLoss.
Targets targetsFor(const LossSpec& l, std::vector<Row>* rows) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> unit(0.0, 1.0), normal(-1.5, 1.5);
    if (l.labels()) {
        std::vector<int> labels;
        for (int r = 0; r < kRows; ++r) labels.push_back((r * 3 + 1) % kOut), rows->push_back({double(labels.back())});
        return Targets(labels);
    }
    HostMatrix t(kRows, kOut);
    for (int r = 0; r < kRows; ++r) {
        Row row(kOut);
        double sum = 0;
        for (int j = 0; j < kOut; ++j) {
            switch (l.kind) {
                case LossKind::CategoricalCrossEntropy:
                case LossKind::KlDivergence: row[size_t(j)] = 0.1 + unit(rng), sum += row[size_t(j)]; break;
                case LossKind::CategoricalHinge: row[size_t(j)] = j == (r % kOut) ? 1 : 0; break;
                case LossKind::BinaryCrossEntropy: row[size_t(j)] = unit(rng); break;
                default: row[size_t(j)] = normal(rng);
            }
        }
        for (int j = 0; j < kOut; ++j) {
            if (sum > 0) row[size_t(j)] /= sum;
            row[size_t(j)] = double(float(row[size_t(j)]));
            t(r, j) = float(row[size_t(j)]);
        }
        rows->push_back(row);
    }
    return Targets(t);
}

// The mean loss of the model x W + b (then the activation, the softmax) in double.
double meanLoss(const Case& c, const MatD& X, const MatD& W, const MatD& b, const std::vector<Row>& t) {
    double total = 0;
    for (int r = 0; r < X.rows; ++r) {
        Row z(kOut);
        for (int j = 0; j < kOut; ++j) {
            z[size_t(j)] = b(0, j);
            for (int k = 0; k < kIn; ++k) z[size_t(j)] += X(r, k) * W(k, j);
            if (c.act == Activation::Sigmoid) z[size_t(j)] = 1 / (1 + std::exp(-z[size_t(j)]));
        }
        if (c.softmax && !c.loss.readsLogits()) {
            const double lse = logSumExp(z);
            for (double& v : z) v = std::exp(v - lse);
        }
        total += rowLoss(c.loss, z, t[size_t(r)]);
    }
    return total / X.rows;
}

void expectOneStepMatchesTheReference(Context& ctx, const Case& c) {
    SCOPED_TRACE(c.name);
    const HostMatrix x = test::randomMatrix(kRows, kIn, 31);
    std::vector<Row> t;
    const Targets y = targetsFor(c.loss, &t);
    Sequential m(ctx, kIn);
    m.add(Dense{kOut, c.act});
    if (c.softmax) m.add(Softmax{});
    CompileOptions o;
    o.loss = c.loss;
    o.optimizer.kind = OptimizerKind::SGD;
    o.optimizer.lr = 0.1f;
    m.compile(o);
    const std::string layer = m.layerName(0);
    const MatD W0 = m.weight(layer, "kernel").cast<double>(), b0 = m.weight(layer, "bias").cast<double>();
    const MatD X = x.cast<double>();
    const double want = meanLoss(c, X, W0, b0, t);

    std::vector<float> losses;
    FitOptions f;
    f.batchSize = kRows;
    f.shuffle = false;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    m.fit(x, y, f, cb);
    ASSERT_EQ(losses.size(), 1u);
    EXPECT_NEAR(losses[0], want, 1e-4 * std::max(1.0, std::fabs(want)));

    // The gradient the step took, against central differences of the double loss.
    const MatD W1 = m.weight(layer, "kernel").cast<double>(), b1 = m.weight(layer, "bias").cast<double>();
    double scale = 1e-3, err = 0;
    for (int which = 0; which < 2; ++which) {
        const MatD& p0 = which ? b0 : W0;
        const MatD& p1 = which ? b1 : W1;
        for (size_t i = 0; i < p0.data.size(); ++i) {
            auto at = [&](double h) {
                MatD W = W0, b = b0;
                (which ? b : W).data[i] += h;
                return meanLoss(c, X, W, b, t);
            };
            const double fd = (at(1e-6) - at(-1e-6)) / 2e-6, got = (p0.data[i] - p1.data[i]) / 0.1;
            scale = std::max(scale, std::fabs(fd));
            err = std::max(err, std::fabs(got - fd));
        }
    }
    EXPECT_LT(err / scale, 2e-3) << "the step's gradient, largest element " << scale;

    // evaluate: the rows' losses after the step.
    const double after = meanLoss(c, X, W1, b1, t);
    EXPECT_NEAR(m.evaluate(x, y).loss, after, 1e-4 * std::max(1.0, std::fabs(after)));
}

TEST(Loss, EachLossStepsAsTheReferenceOnTheGpu) {
    for (const Case& c : cases()) expectOneStepMatchesTheReference(test::context(), c);
}
TEST(Loss, EachLossStepsAsTheReferenceOnTheCpu) {
    for (const Case& c : cases()) expectOneStepMatchesTheReference(test::cpuContext(), c);
}

// Model files: a name (gltrain's or Keras's) or an object with parameters.
CompileOptions compileOf(const std::string& compile) {
    return parseModelConfig(R"({"input": 4, "layers": [{"type": "dense", "units": 3}], "compile": )" + compile + "}")
        .compile;
}
TEST(Loss, ModelFilesNameLossesAndTheirParameters) {
    EXPECT_EQ(compileOf(R"({"loss": "huber"})").loss.kind, LossKind::Huber);
    EXPECT_FLOAT_EQ(compileOf(R"({"loss": "huber"})").loss.delta, 1.0f);
    const LossSpec h = compileOf(R"({"loss": {"type": "huber", "delta": 2}})").loss;
    EXPECT_EQ(h.kind, LossKind::Huber);
    EXPECT_FLOAT_EQ(h.delta, 2.0f);
    EXPECT_EQ(compileOf(R"({"loss": "MAE"})").loss.kind, LossKind::MeanAbsoluteError);
    EXPECT_EQ(compileOf(R"({"loss": "sparse_categorical_crossentropy"})").loss.kind, LossKind::SoftmaxCrossEntropy);
    EXPECT_EQ(compileOf(R"({"loss": "kld"})").loss.kind, LossKind::KlDivergence);
    // Keras's binary_crossentropy is on probabilities; gltrain's binary_cross_entropy on logits.
    EXPECT_FALSE(compileOf(R"({"loss": "binary_crossentropy"})").loss.fromLogits);
    EXPECT_TRUE(compileOf(R"({"loss": "binary_cross_entropy"})").loss.fromLogits);
    const LossSpec b =
        compileOf(R"({"loss": {"type": "binary_crossentropy", "fromLogits": true, "labelSmoothing": 0.1}})").loss;
    EXPECT_TRUE(b.fromLogits);
    EXPECT_FLOAT_EQ(b.labelSmoothing, 0.1f);
    EXPECT_FLOAT_EQ(
        compileOf(R"({"loss": {"type": "categorical_crossentropy", "labelSmoothing": 0.2}})").loss.labelSmoothing,
        0.2f);
}

void expectConfigError(const std::string& compile, const std::vector<std::string>& parts) {
    try {
        compileOf(compile);
        ADD_FAILURE() << compile << ": no error";
    } catch (const Error& e) {
        for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
}
TEST(Loss, BadLossesAreNamedWithWhatIsValid) {
    expectConfigError(R"({"loss": "hubber"})",
                      {"compile.loss", "unknown value 'hubber'", "huber", "categorical_hinge"});
    expectConfigError(R"({"loss": {"type": "nope"}})", {"compile.loss.type", "unknown value 'nope'", "mae"});
    expectConfigError(R"({"loss": {"delta": 2}})", {"compile.loss", "needs a type"});
    expectConfigError(R"({"loss": {"type": "huber", "delta": -1}})",
                      {"compile.loss.delta", "expected a positive number, got -1"});
    expectConfigError(R"({"loss": {"type": "mse", "delta": 2}})", {"compile.loss.delta", "loss mse has no delta"});
    expectConfigError(R"({"loss": {"type": "mae", "labelSmoothing": 0.1}})", {"compile.loss.labelSmoothing", "none"});
    expectConfigError(R"({"loss": {"type": "categorical_crossentropy", "labelSmoothing": 1}})",
                      {"compile.loss.labelSmoothing", "[0, 1)"});
    expectConfigError(R"({"loss": {"type": "huber", "delta": 1, "alpha": 2}})", {"compile.loss.alpha", "unknown key"});
    // In C++: compile checks the parameters and names the field.
    Sequential m(test::cpuContext(), 4);
    m.add(Dense{3});
    CompileOptions o;
    o.loss = spec(LossKind::Huber, 0.0f);
    try {
        m.compile(o);
        ADD_FAILURE() << "no error";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("compile: loss huber: delta must be > 0, got 0"), std::string::npos)
            << e.what();
    }
    o.loss = spec(LossKind::MeanAbsoluteError, 1.0f, 0.5f);
    EXPECT_THROW(m.compile(o), ArgumentError);
}

// A custom loss in C++: each row's loss from graph ops. Mean absolute error
// written out trains as the built-in one, step for step, on both engines.
LossSpec customMae(bool perRow = true) {
    LossSpec l;
    l.kind = LossKind::Custom;
    l.customName = "my_mae";
    l.custom = [perRow](graph::Graph& g, int p, int t) {
        const int abs = g.add1(graph::Unary{graph::MathFn::Abs}, {g.add1(graph::Sub{}, {p, t}, "d")}, "abs");
        if (!perRow) return abs;
        return g.add1(graph::Unary{graph::MathFn::Affine, 1.0f / float(g.shape(abs).cols()), 0.0f},
                      {g.add1(graph::RowSum{}, {abs}, "sum")}, "mean");
    };
    return l;
}
std::vector<float> stepLosses(Context& ctx, const LossSpec& loss, HostMatrix* kernel) {
    const HostMatrix x = test::randomMatrix(24, kIn, 41), y = test::randomMatrix(24, kOut, 42);
    Sequential m(ctx, kIn);
    m.add(Dense{kOut});
    CompileOptions o;
    o.loss = loss;
    o.optimizer.kind = OptimizerKind::SGD;
    o.optimizer.lr = 0.1f;
    m.compile(o);
    std::vector<float> losses;
    FitOptions f;
    f.batchSize = 8;
    f.epochs = 2;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) { losses.push_back(s.loss); };
    m.fit(x, Targets(y), f, cb);
    *kernel = m.weight(m.layerName(0), "kernel");
    return losses;
}
TEST(Loss, CustomLossTrainsAsTheBuiltInItMimics) {
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        HostMatrix wantW, gotW;
        const std::vector<float> want = stepLosses(*ctx, LossSpec(LossKind::MeanAbsoluteError), &wantW);
        const std::vector<float> got = stepLosses(*ctx, customMae(), &gotW);
        ASSERT_EQ(got.size(), 6u);
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f * std::max(1.0f, want[i])) << i;
        for (size_t i = 0; i < gotW.data.size(); ++i) EXPECT_NEAR(gotW.data[i], wantW.data[i], 1e-6f) << i;
    }
}
TEST(Loss, CustomLossThatIsNotPerRowIsNamed) {
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        HostMatrix w;
        try {
            stepLosses(*ctx, customMae(false), &w);
            ADD_FAILURE() << "no error";
        } catch (const ArgumentError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("loss my_mae must give one loss per row, [B, 1], but gives [B, 4]"), std::string::npos)
                << what;
        }
    }
    LossSpec empty;
    empty.kind = LossKind::Custom;
    EXPECT_NE(lossProblem(empty).find("no function builds it"), std::string::npos);
}

// The same as an expression (what JavaScript records, and a model file may hold).
TEST(Loss, ExpressionLossTrainsAsTheBuiltInItMimics) {
    const LossSpec l = compileOf(R"({"loss": {"type": "expression", "name": "my_mae", "expression":
        {"op": "mean", "axis": -1, "x": {"op": "abs", "x": {"op": "sub", "a": "yPred", "b": "yTrue"}}}}})")
                           .loss;
    EXPECT_EQ(l.kind, LossKind::Custom);
    EXPECT_EQ(l.customName, "my_mae");
    // Huber with delta 1, written out: 0.5 min(|d|, 1)^2 + (|d| - min(|d|, 1)).
    const LossSpec huber = compileOf(R"({"loss": {"type": "expression", "expression": {"op": "mean", "x":
        {"op": "add", "a": {"op": "mul", "a": 0.5, "b": {"op": "square", "x": {"op": "clip", "min": 0, "max": 1,
          "x": {"op": "abs", "x": {"op": "sub", "a": "yPred", "b": "yTrue"}}}}},
         "b": {"op": "sub", "a": {"op": "abs", "x": {"op": "sub", "a": "yPred", "b": "yTrue"}},
               "b": {"op": "clip", "min": 0, "max": 1, "x": {"op": "abs", "x": {"op": "sub", "a": "yPred", "b": "yTrue"}}}}}}}})")
                               .loss;
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        HostMatrix wantW, gotW;
        std::vector<float> want = stepLosses(*ctx, LossSpec(LossKind::MeanAbsoluteError), &wantW);
        std::vector<float> got = stepLosses(*ctx, l, &gotW);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f * std::max(1.0f, want[i])) << i;
        want = stepLosses(*ctx, LossSpec(LossKind::Huber), &wantW);
        got = stepLosses(*ctx, huber, &gotW);
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, want[i])) << i;
        for (size_t i = 0; i < gotW.data.size(); ++i) EXPECT_NEAR(gotW.data[i], wantW.data[i], 1e-5f) << i;
    }
}
TEST(Loss, BadExpressionsAreNamedWhereTheyAre) {
    expectConfigError(R"({"loss": {"type": "expression", "expression": {"op": "abz", "x": "yPred"}}})",
                      {"compile.loss.expression.op", "unknown op 'abz'", "abs, square"});
    expectConfigError(R"({"loss": {"type": "expression", "expression": {"op": "mean", "x": {"op": "abs", "x": "y"}}}})",
                      {"compile.loss.expression.x.x", "unknown tensor 'y'"});
    expectConfigError(R"({"loss": {"type": "expression", "expression": {"op": "div", "a": "yPred", "b": "yTrue"}}})",
                      {"compile.loss.expression.b", "by a constant only"});
    expectConfigError(R"({"loss": {"type": "expression", "expression": {"op": "sum", "axis": 0, "x": "yPred"}}})",
                      {"compile.loss.expression.axis", "axis -1"});
    expectConfigError(R"({"loss": {"type": "expression", "delta": 1, "expression": "yPred"}})",
                      {"compile.loss.delta", "an expression loss has no delta"});
    expectConfigError(R"({"loss": {"type": "huber", "expression": "yPred"}})",
                      {"compile.loss.expression", "only an expression loss"});
    // Deep nesting is refused, by the expression's check (65 ops) or, hostile (100000 levels),
    // by the parser before anything could recurse that deep.
    auto nested = [](int depth) {
        std::string e;
        for (int k = 0; k < depth; ++k) e += R"({"op": "abs", "x": )";
        return e + "\"yPred\"" + std::string(size_t(depth), '}');
    };
    expectConfigError(R"({"loss": {"type": "expression", "expression": )" + nested(70) + "}}",
                      {"compile.loss.expression.x.x.x", "ops nest deeper than 64"});
    expectConfigError(R"({"loss": {"type": "expression", "expression": )" + nested(100000) + "}}",
                      {"compile.loss.expression.x.x.x", "nested deeper than 256 levels"});
    // Not one value per row: named at compile.
    const LossSpec l = compileOf(R"({"loss": {"type": "expression", "name": "elementwise", "expression":
        {"op": "abs", "x": {"op": "sub", "a": "yPred", "b": "yTrue"}}}})")
                           .loss;
    HostMatrix w;
    try {
        stepLosses(test::cpuContext(), l, &w);
        ADD_FAILURE() << "no error";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("loss elementwise must give one loss per row, [B, 1], but gives [B, 4]"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace loss_test
}  // namespace
