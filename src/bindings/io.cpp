// SequentialImpl (sequential.hpp): checkpoints, weights, and TF.js's Layers format.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "gltrain/tfjs_layers.hpp"
#include "sequential.hpp"
#include "values.hpp"

namespace gltrain::js {

SequentialImpl* SequentialImpl::fromTfjs(ContextImpl& c, val modelJson, val weightData, val options) {
    return guard([&]() -> SequentialImpl* {
        if (!modelJson.isString())
            throw ArgumentError("fromTfjs: modelJson must be model.json's text (a string), got " + typeName(modelJson));
        const std::vector<uint8_t> bytes = bytesFrom(weightData, "fromTfjs: weightData");
        const CompileOptions options_ = parseCompile(options, "fromTfjs");
        c.makeCurrent();
        auto s = std::make_unique<SequentialImpl>();
        s->owner = &c;
        s->model = importTfjs(*c.ctx, modelJson.as<std::string>(), bytes, options_, "model.json");
        s->sequential = dynamic_cast<Sequential*>(s->model.get());
        return s.release();
    });
}

val SequentialImpl::saveCheckpoint() {
    return guard([&] {
        owner->makeCurrent();
        return arrayBufferCopy(model->saveCheckpoint());
    });
}

void SequentialImpl::setTrainable(std::string layer, bool trainable) {
    guard([&] { model->setTrainable(layer, trainable); });
}

val SequentialImpl::bestCheckpoint() {
    return guard([&]() -> val {
        const std::vector<uint8_t>& best = model->bestCheckpoint();
        return best.empty() ? val::null() : arrayBufferCopy(best);
    });
}

val SequentialImpl::snapshotCheckpoint() {
    return guard([&] { return arrayBufferCopy(model->snapshotCheckpoint()); });
}

val SequentialImpl::exportTfjs() {
    return guard([&] {
        owner->makeCurrent();
        const TfjsArtifacts a = gltrain::exportTfjs(*model);
        val u8 =
            val::global("Uint8Array").new_(emscripten::typed_memory_view(a.weightData.size(), a.weightData.data()));
        val out = val::object();
        out.set("modelJson", a.modelJson);
        out.set("weightData", u8["buffer"]);
        out.set("weightsFile", std::string(kTfjsShardName));
        return out;
    });
}

void SequentialImpl::loadCheckpoint(val bytes, val options) {
    guard([&] {
        Options o(options, "loadCheckpoint", {"resetOptimizer"});
        const bool resetOptimizer = o.boolean("resetOptimizer", false);
        std::vector<uint8_t> b = bytesFrom(bytes, "loadCheckpoint: bytes");
        owner->makeCurrent();
        model->loadCheckpoint(b, "<ArrayBuffer>", resetOptimizer);
    });
}

val SequentialImpl::getWeight(std::string layer, std::string which) {
    return guard([&] {
        owner->makeCurrent();
        HostMatrix m = model->weight(layer, which);
        return float32Copy(m.data.data(), m.data.size());
    });
}

void SequentialImpl::setWeight(std::string layer, std::string which, val data) {
    guard([&] {
        std::vector<float> v = floatsFrom(data, "setWeight: data");
        owner->makeCurrent();
        HostMatrix cur = model->weight(layer, which);
        if (v.size() != cur.data.size())
            throw ArgumentError("setWeight: " + layer + "/" + which + " has " + std::to_string(cur.data.size()) +
                                " values (" + std::to_string(cur.rows) + "x" + std::to_string(cur.cols) + "), got " +
                                std::to_string(v.size()));
        model->setWeight(layer, which, HostMatrix(cur.rows, cur.cols, std::move(v)));
    });
}

}  // namespace gltrain::js
