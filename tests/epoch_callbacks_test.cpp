// The fit loop's epoch callbacks (issue 38; model/fit_loop.hpp): early
// stopping (and restoring the best epoch's state), keeping the best epoch's
// checkpoint, reducing the learning rate on a plateau — their options from
// C++ and the model config, checked before anything runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gltrain/model_config.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace epoch_callbacks_test {

using namespace gltrain;
using gltrain::test::randomMatrix;

// 64 rows of 6 features in 3 classes: 4 steps an epoch in batches of 16.
struct Data : test::ClassData {
    Data() : ClassData(64, 6, 7) {}
};

void build(Sequential& m, OptimizerKind kind, float lr) {
    m.add(Dense{12, Activation::Tanh}).add(Dense{3});
    CompileOptions c;
    c.optimizer.kind = kind;
    c.optimizer.lr = lr;
    c.seed = 4;
    m.compile(c);
}

FitOptions epochs(int n) {
    FitOptions f;
    f.epochs = n;
    f.batchSize = 16;
    return f;
}

using gltrain::test::message;

// A learning rate too small to move the loss: no epoch improves on the first,
// so patience 2 stops after the third, and restoreBest goes back to the first's state.
TEST(EpochCallbacks, EarlyStoppingStopsAndRestoresTheBestEpochsState) {
    const Data d;
    for (bool restore : {false, true}) {
        SCOPED_TRACE(restore ? "restoreBest" : "plain");
        Sequential m(test::context(), 6);
        build(m, OptimizerKind::SGD, 1e-12f);
        FitOptions f = epochs(20);
        f.earlyStopping.patience = 2;
        f.earlyStopping.monitor.name = "loss";
        f.earlyStopping.monitor.minDelta = 1e-4f;
        f.earlyStopping.restoreBest = restore;
        std::vector<std::vector<uint8_t>> atEpoch;
        Callbacks cb;
        cb.onEpoch = [&](const EpochInfo&) { atEpoch.push_back(m.saveCheckpoint()); };
        m.fit(d.x, d.y, f, cb);
        ASSERT_EQ(m.history().size(), 3u) << "stopped after 2 epochs without improvement";
        EXPECT_FALSE(m.fitting());
        if (restore) {
            EXPECT_EQ(m.step(), 4) << "the state at the end of epoch 0";
            EXPECT_EQ(m.saveCheckpoint(), atEpoch[0]);
        } else {
            EXPECT_EQ(m.step(), 12);
        }
    }
}

TEST(EpochCallbacks, KeepBestHoldsTheBestEpochsCheckpoint) {
    const Data d;
    Sequential m(test::context(), 6);
    build(m, OptimizerKind::Adam, 0.3f);  // a rate that makes the loss jump about
    FitOptions f = epochs(12);
    f.validationSplit = 0.25f;
    f.keepBest.enabled = true;  // val_loss
    std::vector<std::vector<uint8_t>> atEpoch;
    Callbacks cb;
    cb.onEpoch = [&](const EpochInfo&) { atEpoch.push_back(m.saveCheckpoint()); };
    m.fit(d.x, d.y, f, cb);
    const auto& h = m.history();
    const int best =
        int(std::min_element(h.begin(), h.end(), [](auto& a, auto& b) { return a.valLoss < b.valLoss; }) - h.begin());
    EXPECT_EQ(m.bestEpoch(), best);
    EXPECT_EQ(m.bestCheckpoint(), atEpoch[size_t(best)]);
    // A new fit starts afresh.
    f.epochs = 13;
    f.keepBest.monitor.name = "loss";
    m.fit(d.x, d.y, f);
    EXPECT_EQ(m.bestEpoch(), 12);
}

// Adam's step is the rate times what its slots give: the plateau's halved rate
// in epoch 2 is the same as a model compiled with half the rate that resumes there.
TEST(EpochCallbacks, ReduceLrOnPlateauScalesTheRateFromTheNextEpoch) {
    const Data d;
    Sequential a(test::context(), 6);
    build(a, OptimizerKind::Adam, 0.01f);
    FitOptions f = epochs(3);
    f.reduceLrOnPlateau.patience = 1;
    f.reduceLrOnPlateau.factor = 0.5f;
    f.reduceLrOnPlateau.monitor.name = "loss";
    f.reduceLrOnPlateau.monitor.minDelta = 1e9f;  // no epoch after the first improves
    a.fit(d.x, d.y, f);

    Sequential b(test::context(), 6);
    build(b, OptimizerKind::Adam, 0.01f);
    b.fit(d.x, d.y, epochs(2));
    Sequential c(test::context(), 6);
    build(c, OptimizerKind::Adam, 0.005f);
    c.loadCheckpoint(b.saveCheckpoint());
    c.fit(d.x, d.y, epochs(3));
    EXPECT_EQ(a.weight("dense_0", "kernel").data, c.weight("dense_0", "kernel").data);
    EXPECT_NE(a.weight("dense_0", "kernel").data, b.weight("dense_0", "kernel").data);
}

TEST(EpochCallbacks, OptionsAreCheckedBeforeAnythingRuns) {
    const Data d;
    Sequential m(test::context(), 6);
    build(m, OptimizerKind::Adam, 0.01f);
    FitOptions f = epochs(2);
    f.earlyStopping.patience = 1;  // val_loss, without validation data
    EXPECT_EQ(message([&] { m.fit(d.x, d.y, f); }),
              "fit: earlyStopping.monitor is val_loss but the fit has no validation data (give validationSplit or "
              "validationX/validationY, or monitor loss)");
    f.earlyStopping.monitor.name = "val_acc";
    EXPECT_EQ(message([&] { m.fit(d.x, d.y, f); }),
              "fit: earlyStopping.monitor 'val_acc' is none of the model's figures (loss, accuracy, or one of "
              "them after val_)");
    f.earlyStopping = {};
    f.reduceLrOnPlateau.patience = 1;
    f.reduceLrOnPlateau.monitor.name = "loss";
    f.reduceLrOnPlateau.factor = 1.5f;
    EXPECT_NE(message([&] { m.fit(d.x, d.y, f); }).find("reduceLrOnPlateau.factor must be in (0, 1)"),
              std::string::npos);
    EXPECT_EQ(m.step(), 0);

    // The model config (and so JavaScript's fit options) reads them.
    const FitOptions j = fitOptionsFromJson(nlohmann::json::parse(R"({"epochs": 5,
        "earlyStopping": {"monitor": "val_accuracy", "patience": 3, "restoreBest": true},
        "reduceLrOnPlateau": {"monitor": "loss", "factor": 0.2, "minLr": 1e-5, "minDelta": 0.01},
        "keepBest": {"monitor": "loss"}})"),
                                            "fit.json");
    EXPECT_EQ(j.earlyStopping.patience, 3);
    EXPECT_EQ(j.earlyStopping.monitor.name, "val_accuracy");
    EXPECT_TRUE(j.earlyStopping.restoreBest);
    EXPECT_EQ(j.reduceLrOnPlateau.patience, 1);
    EXPECT_FLOAT_EQ(j.reduceLrOnPlateau.factor, 0.2f);
    EXPECT_FLOAT_EQ(j.reduceLrOnPlateau.minLr, 1e-5f);
    EXPECT_FLOAT_EQ(j.reduceLrOnPlateau.monitor.minDelta, 0.01f);
    EXPECT_TRUE(j.keepBest.enabled);
    EXPECT_EQ(j.keepBest.monitor.name, "loss");
    // A metric's name is checked against the model's when the fit begins; the mode is read here.
    EXPECT_EQ(fitOptionsFromJson(nlohmann::json::parse(R"({"keepBest": {"monitor": "auc", "mode": "max"}})"), "f.json")
                  .keepBest.monitor.mode,
              MonitorMode::Max);
    EXPECT_NE(message([&] {
                  fitOptionsFromJson(nlohmann::json::parse(R"({"earlyStopping": {"monitor": 3}})"), "f.json");
              }).find("earlyStopping.monitor: expected a figure's name"),
              std::string::npos);
    EXPECT_NE(message([&] {
                  fitOptionsFromJson(nlohmann::json::parse(R"({"earlyStopping": {"mode": "up"}})"), "f.json");
              }).find("earlyStopping.mode: unknown value 'up' (valid: auto, min, max)"),
              std::string::npos);
}

}  // namespace epoch_callbacks_test
}  // namespace
