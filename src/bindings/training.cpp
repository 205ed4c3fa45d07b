// SequentialImpl (sequential.hpp): fitting step by step, its events, evaluating,
// profiling and predicting.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "errors.hpp"
#include "gltrain/model_config.hpp"
#include "sequential.hpp"
#include "values.hpp"

namespace gltrain::js {

void SequentialImpl::beginFit(DatasetImpl& train, DatasetImpl* validation, val options) {
    guard([&] {
        FitOptions f = parseArgument([&] { return fitOptionsFromJson(jsonOptions(options, "fit"), "fit"); });
        if (validation) {
            if (f.validationSplit > 0.0f) throw ArgumentError("fit: give validationSplit or validationData, not both");
            f.validationX = &validation->x;
            f.validationY = &validation->y;
        }
        if (!train.y.rows()) throw ArgumentError("fit: the training data has no targets (y)");
        if (validation && !validation->y.rows()) throw ArgumentError("fit: the validation data has no targets (y)");
        owner->makeCurrent();
        Callbacks cb;
        cb.onStep = [this](const StepInfo& s) { events.push_back({false, s, {}}); };
        cb.onEpoch = [this](const EpochInfo& e) { events.push_back({true, {}, e}); };
        model->beginFit(train.x, train.y, f, std::move(cb));
        events.clear();
    });
}

bool SequentialImpl::stepOnce() {
    return guard([&] {
        owner->makeCurrent();
        return model->stepOnce();
    });
}

int SequentialImpl::trainFor(double ms, int maxSteps) {
    return guard([&] {
        if (!(ms >= 0) || !std::isfinite(ms)) throw ArgumentError("trainFor: ms must be a finite number >= 0");
        owner->makeCurrent();
        return model->trainFor(ms, maxSteps);
    });
}

double SequentialImpl::restore() {
    return guard([&] {
        owner->makeCurrent();
        return double(model->restore());
    });
}

// The compiled metrics by name ("val_<name>" on validation data), NaN as null.
static val metricsObject(const std::map<std::string, float>& metrics) {
    val o = val::object();
    for (const auto& [name, value] : metrics) o.set(name, numberOrNull(value));
    return o;
}

val SequentialImpl::epochObject(const EpochInfo& e) {
    val o = val::object();
    o.set("type", std::string("epoch"));
    o.set("epoch", e.epoch);
    o.set("step", double(e.step));
    o.set("loss", numberOrNull(e.loss));
    o.set("accuracy", numberOrNull(e.accuracy));
    o.set("valLoss", numberOrNull(e.valLoss));
    o.set("valAccuracy", numberOrNull(e.valAccuracy));
    o.set("metrics", metricsObject(e.metrics));
    o.set("seconds", e.seconds);
    o.set("samplesPerSecond", e.samplesPerSecond);
    return o;
}

val SequentialImpl::takeEvents() {
    val a = val::array();
    for (auto& ev : events) {
        if (ev.epoch) {
            a.call<void>("push", epochObject(ev.e));
        } else {
            val o = val::object();
            o.set("type", std::string("step"));
            o.set("step", double(ev.s.step));
            o.set("epoch", ev.s.epoch);
            o.set("loss", ev.s.lossRead ? numberOrNull(ev.s.loss) : val::null());
            o.set("lossStep", ev.s.lossRead ? val(double(ev.s.lossStep)) : val::null());
            o.set("samplesPerSecond", ev.s.samplesPerSecond);
            o.set("elapsedSeconds", ev.s.elapsedSeconds);
            a.call<void>("push", o);
        }
    }
    events.clear();
    return a;
}

val SequentialImpl::history() const {
    val a = val::array();
    for (auto& e : model->history()) a.call<void>("push", epochObject(e));
    return a;
}

int SequentialImpl::batchOption(val options, const char* where) {
    Options o(options, where, {"batchSize"});
    return int(o.integer("batchSize", 256, 1));
}

val SequentialImpl::evaluate(DatasetImpl& data, val options) {
    return guard([&] {
        int b = batchOption(options, "evaluate");
        if (!data.y.rows()) throw ArgumentError("evaluate: the data has no targets (y)");
        owner->makeCurrent();
        Evaluation e = model->evaluate(data.x, data.y, b);
        val o = val::object();
        o.set("loss", numberOrNull(e.loss));
        o.set("accuracy", numberOrNull(e.accuracy));
        o.set("metrics", metricsObject(e.metrics));
        return o;
    });
}

val SequentialImpl::profileStep(DatasetImpl& data, val options) {
    return guard([&] {
        Options o(options, "profileStep", {"batchSize", "reps"});
        const int rows = data.x.rows;
        int b = int(o.integer("batchSize", std::min(32, std::max(rows, 1)), 1, std::max(rows, 1)));
        int reps = int(o.integer("reps", 5, 1, 1000));
        if (!data.y.rows()) throw ArgumentError("profileStep: the data has no targets (y)");
        owner->makeCurrent();
        val a = val::array();
        for (const PassTiming& t : model->profileStep(data.x, data.y, b, reps)) {
            val e = val::object();
            e.set("kernel", t.kernel);
            e.set("ms", t.ms);
            e.set("gpuTimer", t.gpuTimer);
            a.call<void>("push", e);
        }
        return a;
    });
}

val SequentialImpl::predictMatrix(const HostMatrix& x, int b) {
    owner->makeCurrent();
    HostMatrix y = model->predict(x, b);
    return float32Copy(y.data.data(), y.data.size());
}

val SequentialImpl::predict(val x, val options) {
    return guard([&] {
        int b = batchOption(options, "predict");
        if (!model->outputSize()) throw ArgumentError("predict: the model is not compiled (call compile first)");
        const int cols = model->inputSize();
        if (!x.instanceof (val::global("Float32Array")))
            throw ArgumentError("predict: x must be a Float32Array, got " + typeName(x));
        const size_t n = x["length"].as<size_t>();
        if (n == 0) throw ArgumentError("predict: x is empty");
        if (n % size_t(cols))
            throw ArgumentError("predict: x has " + std::to_string(n) + " values, expected a multiple of " +
                                std::to_string(cols) + " (the model's input size)");
        HostMatrix m(int(n / size_t(cols)), cols, floatsFrom(x, "predict: x"));
        return predictMatrix(m, b);
    });
}

val SequentialImpl::predictDataset(DatasetImpl& data, val options) {
    return guard([&] { return predictMatrix(data.x, batchOption(options, "predict")); });
}

// The options' types are gltrain-core.js's to check, their ranges Model::generate's.
val SequentialImpl::generate(val prompt, int length, double temperature, int topK, double seed) {
    return guard([&] {
        if (!(seed >= 0 && seed <= 4294967295.0 && seed == std::floor(seed)))
            throw ArgumentError("generate: seed must be an integer in [0, 4294967295], got " + std::to_string(seed));
        GenerateOptions o;
        o.length = length;
        o.temperature = float(temperature);
        o.topK = topK;
        o.seed = uint32_t(seed);
        owner->makeCurrent();
        const std::vector<uint8_t> out = model->generate(bytesFrom(prompt, "generate: prompt"), o);
        return val::global("Uint8Array").new_(arrayBufferCopy(out));
    });
}

}  // namespace gltrain::js
