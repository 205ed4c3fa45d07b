// Metrics (metric_spec.hpp) on both engines: evaluate's figures against the
// same figures computed here in double from predict()'s outputs (Keras's
// definitions: thresholds, AUC's 200 thresholds and trapezoids); an epoch's
// figures, summed over full and short batches, against evaluate on the same
// rows; callbacks watching a metric; several outputs' names; model files and
// bad metrics. Tolerances: counts are exact, so ratios agree to float rounding
// (1e-5); AUC to 1e-5 against the same thresholds and to 0.02 against the
// exact area.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

namespace {
namespace metrics_test {

using namespace gltrain;

constexpr int kRows = 61, kIn = 5, kOut = 3;

// Binary targets that depend on x (so a model's predictions are informative).
HostMatrix binaryTargets(const HostMatrix& x) {
    HostMatrix y(x.rows, kOut);
    for (int r = 0; r < x.rows; ++r)
        for (int j = 0; j < kOut; ++j) y(r, j) = x(r, j) + 0.3f * x(r, j + 1) > 0.1f ? 1.0f : 0.0f;
    return y;
}

struct Figures {
    double accuracy = 0, precision = 0, recall = 0, auc = 0, exactAuc = 0, mae = 0;
};
// Keras's definitions over every element of p against t.
Figures expected(const HostMatrix& p, const HostMatrix& t, double threshold) {
    Figures f;
    double tp = 0, predicted = 0, actual = 0, agree = 0, abs = 0;
    const size_t n = p.data.size();
    for (size_t i = 0; i < n; ++i) {
        const bool pos = p.data[i] > threshold, act = t.data[i] > 0.5;
        tp += pos && act;
        predicted += pos;
        actual += act;
        agree += pos == act;
        abs += std::fabs(double(p.data[i]) - double(t.data[i]));
    }
    f.accuracy = agree / double(n);
    f.precision = predicted ? tp / predicted : 0;
    f.recall = actual ? tp / actual : 0;
    f.mae = abs / double(n);
    // AUC at Keras's 200 thresholds, trapezoids over (fpr, tpr).
    const int T = 200;
    std::vector<double> tpr(T), fpr(T);
    for (int i = 0; i < T; ++i) {
        const double th = i == 0 ? -1e-7 : i == T - 1 ? 1 + 1e-7 : double(i) / (T - 1);
        double a = 0, b = 0;
        for (size_t k = 0; k < n; ++k)
            if (double(p.data[k]) > double(float(th))) (t.data[k] > 0.5 ? a : b) += 1;
        tpr[size_t(i)] = a / actual;
        fpr[size_t(i)] = b / (double(n) - actual);
    }
    for (int i = 0; i + 1 < T; ++i)
        f.auc += (fpr[size_t(i)] - fpr[size_t(i) + 1]) * (tpr[size_t(i)] + tpr[size_t(i) + 1]) / 2;
    // The exact area: the chance a positive outranks a negative (ties count half).
    double wins = 0;
    for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b < n; ++b)
            if (t.data[a] > 0.5 && t.data[b] <= 0.5)
                wins += p.data[a] > p.data[b] ? 1.0 : p.data[a] == p.data[b] ? 0.5 : 0.0;
    f.exactAuc = wins / (actual * (double(n) - actual));
    return f;
}

CompileOptions binaryCompile(float lr) {
    CompileOptions o;
    o.loss = LossSpec(LossKind::BinaryCrossEntropy);
    o.loss.fromLogits = false;
    o.optimizer.kind = OptimizerKind::SGD;
    o.optimizer.lr = lr;
    MetricSpec precision(MetricKind::Precision);
    precision.threshold = 0.4f;
    precision.name = "precision_40";
    o.metrics = {MetricKind::Accuracy, precision, MetricKind::Recall, MetricKind::Auc,
                 MetricSpec::ofLoss(LossKind::MeanAbsoluteError, "mae")};
    return o;
}

void expectFigures(const std::map<std::string, float>& got, float accuracy, const Figures& want,
                   const std::string& prefix = "") {
    EXPECT_NEAR(accuracy, want.accuracy, 1e-5);
    EXPECT_NEAR(got.at(prefix + "recall"), want.recall, 1e-5);
    EXPECT_NEAR(got.at(prefix + "auc"), want.auc, 1e-5);
    EXPECT_NEAR(got.at(prefix + "auc"), want.exactAuc, 0.02);
    EXPECT_NEAR(got.at(prefix + "mae"), want.mae, 1e-5);
}

void expectEvaluateMatchesTheDefinitions(Context& ctx) {
    const HostMatrix x = test::randomMatrix(kRows, kIn + 1, 7);
    const HostMatrix y = binaryTargets(x);
    Sequential m(ctx, kIn + 1);
    m.add(Dense{8, Activation::Tanh});
    m.add(Dense{kOut, Activation::Sigmoid});
    m.compile(binaryCompile(0.5f));
    FitOptions f;
    f.epochs = 3;
    f.batchSize = 16;
    m.fit(x, y, f);  // informative predictions: AUC well above 0.5
    const HostMatrix p = m.predict(x);
    const Evaluation e = m.evaluate(x, y, 13);  // full batches and a short one
    const Figures want = expected(p, y, 0.5);
    expectFigures(e.metrics, e.accuracy, want);
    EXPECT_NEAR(e.metrics.at("precision_40"), expected(p, y, 0.4).precision, 1e-5);
    EXPECT_GT(want.auc, 0.7);
    EXPECT_EQ(e.metrics.size(), 4u) << "accuracy goes to Evaluation::accuracy";
}
TEST(Metrics, EvaluateMatchesTheDefinitionsOnTheGpu) { expectEvaluateMatchesTheDefinitions(test::context()); }
TEST(Metrics, EvaluateMatchesTheDefinitionsOnTheCpu) { expectEvaluateMatchesTheDefinitions(test::cpuContext()); }

// An epoch's figures are sums over its steps (full and short batches): with a
// learning rate too small to move a weight they equal evaluate's on the same rows.
void expectEpochFiguresSumTheSteps(Context& ctx) {
    const HostMatrix x = test::randomMatrix(kRows, kIn + 1, 9), xv = test::randomMatrix(20, kIn + 1, 10);
    const HostMatrix y = binaryTargets(x), yvValues = binaryTargets(xv);
    const Targets yv(yvValues);
    Sequential m(ctx, kIn + 1);
    m.add(Dense{kOut, Activation::Sigmoid});
    m.compile(binaryCompile(1e-20f));
    FitOptions f;
    f.epochs = 2;
    f.batchSize = 8;  // 7 full steps and one of 5 rows
    f.validationX = &xv;
    f.validationY = &yv;
    const std::vector<EpochInfo> h = m.fit(x, y, f);
    ASSERT_EQ(h.size(), 2u);
    const Evaluation e = m.evaluate(x, y), v = m.evaluate(xv, yvValues);
    for (const EpochInfo& epoch : h) {
        EXPECT_NEAR(epoch.accuracy, e.accuracy, 1e-5);
        EXPECT_NEAR(epoch.valAccuracy, v.accuracy, 1e-5);
        for (const char* name : {"precision_40", "recall", "auc", "mae"}) {
            EXPECT_NEAR(epoch.metrics.at(name), e.metrics.at(name), 1e-5) << name;
            EXPECT_NEAR(epoch.metrics.at(std::string("val_") + name), v.metrics.at(name), 1e-5) << name;
        }
    }
}
TEST(Metrics, EpochFiguresSumTheStepsOnTheGpu) { expectEpochFiguresSumTheSteps(test::context()); }
TEST(Metrics, EpochFiguresSumTheStepsOnTheCpu) { expectEpochFiguresSumTheSteps(test::cpuContext()); }

// Softmax cross-entropy reports accuracy itself; asked-for metrics come beside it,
// and categorical accuracy against one-hot targets equals it.
TEST(Metrics, ClassificationMetricsBesideTheAccuracy) {
    const HostMatrix x = test::randomMatrix(kRows, kIn, 3);
    std::vector<int> labels;
    for (int r = 0; r < kRows; ++r) labels.push_back(x(r, 0) > 0 ? (x(r, 1) > 0 ? 2 : 1) : 0);
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        Sequential m(*ctx, kIn);
        m.add(Dense{kOut});
        CompileOptions o;
        o.metrics = {MetricKind::Accuracy, MetricKind::SparseCategoricalAccuracy,
                     MetricSpec::ofLoss(LossKind::SoftmaxCrossEntropy, "xent")};
        m.compile(o);
        const Evaluation e = m.evaluate(x, labels, 16);
        EXPECT_EQ(e.metrics.count("accuracy"), 0u);
        EXPECT_NEAR(e.metrics.at("sparse_categorical_accuracy"), e.accuracy, 1e-6);
        EXPECT_NEAR(e.metrics.at("xent"), e.loss, 1e-5);
    }
}

// Callbacks watch a metric: its direction is the metric's (AUC up, MAE down).
TEST(Metrics, CallbacksWatchMetricsInTheirDirection) {
    const HostMatrix x = test::randomMatrix(kRows, kIn + 1, 11);
    const HostMatrix y = binaryTargets(x);
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        // Fits a new model keeping the best epoch by `monitor`; returns its history and best epoch.
        auto fitWatching = [&](const std::string& monitor, int* bestEpoch) {
            Sequential m(*ctx, kIn + 1);
            m.add(Dense{kOut, Activation::Sigmoid});
            m.compile(binaryCompile(0.5f));
            FitOptions f;
            f.epochs = 4;
            f.batchSize = 16;
            f.validationSplit = 0.25f;
            f.keepBest.enabled = true;
            f.keepBest.monitor.name = monitor;
            const std::vector<EpochInfo> h = m.fit(x, y, f);
            *bestEpoch = m.bestEpoch();
            return h;
        };
        int got = -1;
        const std::vector<EpochInfo> h = fitWatching("val_auc", &got);
        int best = 0;
        for (size_t k = 1; k < h.size(); ++k)
            if (h[k].metrics.at("val_auc") > h[size_t(best)].metrics.at("val_auc")) best = int(k);
        EXPECT_EQ(got, best);
        const std::vector<EpochInfo> h2 = fitWatching("mae", &got);
        best = 0;
        for (size_t k = 1; k < h2.size(); ++k)
            if (h2[k].metrics.at("mae") < h2[size_t(best)].metrics.at("mae")) best = int(k);
        EXPECT_EQ(got, best);
        const std::string error = test::message([&] { fitWatching("val_auk", &got); });
        EXPECT_NE(
            error.find("'val_auk' is none of the model's figures (loss, accuracy, precision_40, recall, auc, mae"),
            std::string::npos)
            << error;
    }
}

// Several outputs: each output's metrics and loss, named after its layer.
TEST(Metrics, SeveralOutputsNameTheirMetricsAfterTheirLayers) {
    const SymbolicTensor in = Input(kIn + 1);
    const SymbolicTensor a = Dense{kOut, Activation::Sigmoid}(in), b = Dense{2}(in);
    const HostMatrix x = test::randomMatrix(kRows, kIn + 1, 5);
    const HostMatrix ya = binaryTargets(x);
    std::vector<int> yb;
    for (int r = 0; r < kRows; ++r) yb.push_back(x(r, 2) > 0 ? 1 : 0);
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        Model m(*ctx, {in}, {a, b});
        CompileOptions o;
        o.losses = {LossSpec(LossKind::BinaryCrossEntropy), LossSpec(LossKind::SoftmaxCrossEntropy)};
        o.losses[0].fromLogits = false;  // "accuracy" is then binary accuracy, as Keras resolves it
        o.metrics = {MetricKind::Accuracy, MetricSpec::ofLoss(LossKind::MeanAbsoluteError, "mae")};
        m.compile(o);
        const std::string la = m.layerName(0), lb = m.layerName(1);
        const Evaluation e = m.evaluate(Model::InputRows{x}, {ya, yb}, 16);
        const std::vector<HostMatrix> p = m.predict(Model::InputRows{x});
        EXPECT_NEAR(e.metrics.at(la + "_accuracy"), expected(p[0], ya, 0.5).accuracy, 1e-5);
        EXPECT_NEAR(e.metrics.at(la + "_mae"), expected(p[0], ya, 0.5).mae, 1e-5);
        EXPECT_NEAR(e.metrics.at(lb + "_accuracy"), e.accuracy, 1e-6);
        EXPECT_EQ(e.metrics.count(lb + "_mae"), 0u) << "mae compares values; " << lb << "'s targets are labels";
        // Each output's own loss, whose sum (weights 1) is the model's.
        EXPECT_NEAR(e.metrics.at(la + "_loss") + e.metrics.at(lb + "_loss"), e.loss, 1e-5);
    }
}

CompileOptions compileOf(const std::string& compile) {
    return parseModelConfig(R"({"input": 4, "layers": [{"type": "dense", "units": 3}], "compile": )" + compile + "}")
        .compile;
}
TEST(Metrics, ModelFilesNameMetricsAndCustomOnes) {
    const CompileOptions c = compileOf(R"({"loss": "mse", "metrics": ["acc", {"type": "auc", "thresholds": 50},
        {"type": "precision", "threshold": 0.7, "name": "p70"}, "huber", {"type": "expression", "name": "sq",
        "expression": {"op": "mean", "axis": -1, "x": {"op": "square", "x": {"op": "sub", "a": "yPred", "b": "yTrue"}}}}]})");
    ASSERT_EQ(c.metrics.size(), 5u);
    EXPECT_EQ(c.metrics[0].kind, MetricKind::Accuracy);
    EXPECT_EQ(metricName(c.metrics[0]), "accuracy");
    EXPECT_EQ(c.metrics[1].thresholds, 50);
    EXPECT_EQ(metricName(c.metrics[2]), "p70");
    EXPECT_FLOAT_EQ(c.metrics[2].threshold, 0.7f);
    EXPECT_EQ(c.metrics[3].loss.kind, LossKind::Huber);
    EXPECT_EQ(c.metrics[4].loss.kind, LossKind::Custom);
    EXPECT_EQ(metricName(c.metrics[4]), "sq");
    // The custom one (mse written out) reports what the mse metric does, on both engines.
    const HostMatrix x = test::randomMatrix(kRows, 4, 21), y = test::randomMatrix(kRows, 3, 22);
    for (Context* ctx : {&test::context(), &test::cpuContext()}) {
        Sequential m(*ctx, 4);
        m.add(Dense{3});
        CompileOptions o = c;
        o.metrics = {c.metrics[4], MetricSpec::ofLoss(LossKind::MeanSquaredError, "mse")};
        m.compile(o);
        const Evaluation e = m.evaluate(x, y, 16);
        EXPECT_NEAR(e.metrics.at("sq"), e.metrics.at("mse"), 1e-6);
        EXPECT_NEAR(e.metrics.at("mse"), e.loss, 1e-6);
    }
}

void expectError(const std::function<void()>& f, const std::vector<std::string>& parts) {
    const std::string e = test::message(f);
    for (const std::string& p : parts) EXPECT_NE(e.find(p), std::string::npos) << e;
}
TEST(Metrics, BadMetricsAreNamed) {
    expectError([] { compileOf(R"({"metrics": ["acuracy"]})"); },
                {"compile.metrics[0]", "unknown metric 'acuracy'", "accuracy", "auc", "mae"});
    expectError([] { compileOf(R"({"metrics": [{"type": "auc", "thresholds": 2}]})"); },
                {"compile.metrics[0].thresholds"});
    expectError([] { compileOf(R"({"metrics": [{"type": "auc", "threshold": 0.2}]})"); },
                {"compile.metrics[0].threshold", "metric auc has no threshold"});
    expectError([] { compileOf(R"({"metrics": "auc"})"); }, {"compile.metrics", "expected an array"});
    Sequential m(test::cpuContext(), 4);
    m.add(Dense{3});
    CompileOptions o;  // softmax cross-entropy: class labels
    o.metrics = {MetricKind::Precision};
    expectError([&] { m.compile(o); },
                {"compile: metric precision compares values shaped like the output", "targets are class labels"});
    o.loss = LossSpec(LossKind::MeanSquaredError);
    o.metrics = {MetricKind::SparseCategoricalAccuracy};
    expectError([&] { m.compile(o); }, {"metric sparse_categorical_accuracy compares class labels"});
    o.metrics = {MetricKind::Auc, MetricKind::Auc};
    expectError([&] { m.compile(o); }, {"metric auc is given twice"});
    MetricSpec bad(MetricKind::Auc);
    bad.thresholds = 1;
    o.metrics = {bad};
    expectError([&] { m.compile(o); }, {"thresholds must be in [3, 10000]"});
}

}  // namespace metrics_test
}  // namespace
