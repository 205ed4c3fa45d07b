// SequentialImpl (sequential.hpp): layers from JavaScript and their description
// back, the layer types add() takes and each type's fields — all read from
// the layers' field tables (gltrain/layers/).
#include <emscripten/bind.h>

#include <string>
#include <utility>
#include <type_traits>
#include <variant>

#include "errors.hpp"
#include "gltrain/model_config.hpp"
#include "sequential.hpp"
#include "values.hpp"

namespace gltrain::js {
namespace {

val layerTypes() {
    val a = val::array();
    forEachType(LayerTypes{},
                [&](auto* t) { a.call<void>("push", std::string(std::remove_pointer_t<decltype(t)>::kType)); });
    return a;
}

// A JSON value as a JavaScript value.
template <class Json>
val toJs(const Json& j) {
    return val::global("JSON").call<val>("parse", j.dump());
}

// {dense: [{name, type, optional, default}, ...], ...}: the fields each layer
// type takes, as web/gltrain.d.ts declares them (`type` is the TypeScript
// type; a field that must be given has no default).
val layerFields() {
    val all = val::object();
    forEachType(LayerTypes{}, [&](auto* t) {
        using L = std::remove_pointer_t<decltype(t)>;
        val fields = val::array();
        forEachField<L>([&](const auto& f) {
            val o = val::object();
            o.set("name", std::string(f.key));
            o.set("type", std::string(tsType<std::decay_t<decltype(f.defaultValue())>>()));
            o.set("optional", !f.required);
            o.set("default", f.required ? val::undefined() : toJs(model_config_detail::fieldJson(f.defaultValue())));
            o.set("doc", std::string(f.doc));
            fields.call<void>("push", o);
        });
        all.set(L::kType, fields);
    });
    return all;
}

// The model's layers as add() takes them: the fields that differ from their defaults.
val layerSpecs(const SequentialImpl& m) {
    val a = val::array();
    // A functional model's layers say what they read ("inputs"), as a model file's do.
    // Before compile inbound() is not known: there, only the inputs and outputs say.
    const bool stack =
        m.compiled() ? m.model->isStack() : m.model->inputShapes().size() == 1 && m.model->outputLayers().size() == 1;
    for (size_t i = 0; i < m.model->layerCount(); ++i) {
        // A shared layer's later call names the layer (model_config.hpp).
        const int owner = m.model->shares(i);
        nlohmann::ordered_json j = owner < 0 ? layerToJson(m.model->layer(i))
                                             : nlohmann::ordered_json{{"shares", m.model->layerName(size_t(owner))}};
        if (!stack)
            for (int k : m.model->inbound(i)) j["inputs"].push_back(m.model->inboundName(k));
        a.call<void>("push", toJs(j));
    }
    return a;
}

// The name compile gives layer i of this spec when it was given none
// (functional models in JavaScript name the layers their layers read).
std::string defaultLayerName(val spec, int i) {
    return guard([&] {
        const Layer layer = parseArgument([&] { return layerFromJson(jsonFrom(spec, "layer", ""), "layer"); });
        const std::string& given = givenLayerName(layer);
        return given.empty() ? gltrain::defaultLayerName(layer, size_t(i)) : given;
    });
}

}  // namespace

void SequentialImpl::add(val spec) {
    guard([&] {
        Layer layer = parseArgument([&] { return layerFromJson(jsonFrom(spec, "add", ""), "add"); });
        if (!sequential)
            throw ArgumentError(
                "add: a functional model's layers are given when it is made (gl.Model(ctx, {inputs, outputs}))");
        sequential->add(std::move(layer));
    });
}

std::string SequentialImpl::layerType(const Layer& l) { return gltrain::layerType(l); }

val SequentialImpl::layers() const {
    val a = val::array();
    const std::vector<Model::LayerSummary> summary = compiled() ? model->summary() : std::vector<Model::LayerSummary>{};
    for (size_t i = 0; i < model->layerCount(); ++i) {
        const std::string type = layerType(model->layer(i));
        val o = val::object();
        if (!compiled()) {  // the name given to add(), if any
            o.set("name", givenLayerName(model->layer(i)));
            o.set("type", type);
            o.set("outputShape", val::null());
            o.set("outputSize", 0);
            o.set("params", 0);
            o.set("inbound", val::array());
            o.set("trainable", layerTrainable(model->layer(i)));
            a.call<void>("push", o);
            continue;
        }
        const Shape3 out = model->outputShape(i);
        const Model::LayerSummary& L = summary[i];
        const double params = double(L.parameters);
        val inbound = val::array();
        for (const std::string& n : L.inbound) inbound.call<void>("push", n);
        o.set("inbound", inbound);
        if (!L.shares.empty()) o.set("shares", L.shares);
        o.set("trainable", layerTrainable(model->layer(i)));
        o.set("name", model->layerName(i));
        o.set("type", type);
        val shape = val::array();
        shape.call<void>("push", out.height);
        shape.call<void>("push", out.width);
        shape.call<void>("push", out.channels);
        o.set("outputShape", shape);
        o.set("outputSize", out.size());
        o.set("params", params);
        a.call<void>("push", o);
    }
    return a;
}

}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_layers) {
    emscripten::function("layerTypes", &gltrain::js::layerTypes);
    emscripten::function("layerFields", &gltrain::js::layerFields);
    emscripten::function("layerSpecs", &gltrain::js::layerSpecs);
    emscripten::function("defaultLayerName", &gltrain::js::defaultLayerName);
}
