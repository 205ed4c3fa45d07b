// SequentialImpl (sequential.hpp): layers from JavaScript and their description
// back, and the layer types add() takes.
#include <emscripten/bind.h>

#include <string>
#include <utility>
#include <variant>

#include "errors.hpp"
#include "gltrain/model_config.hpp"
#include "sequential.hpp"
#include "values.hpp"

namespace gltrain::js {
namespace {

val layerTypes() {
    return listOf({"dense", "conv2d", "maxpool2d", "averagepool2d", "globalaveragepooling2d", "flatten",
                   "batchnormalization", "activation", "dropout", "softmax"});
}

}  // namespace

void SequentialImpl::add(val spec) {
    guard([&] {
        Layer layer = parseArgument([&] { return layerFromJson(jsonFrom(spec, "add", ""), "add"); });
        model->add(std::move(layer));
    });
}

std::string SequentialImpl::layerType(const Layer& l) {
    static_assert(std::variant_size_v<Layer> == 10, "layerType: name the new layer type below");
    if (std::holds_alternative<Dense>(l)) return "dense";
    if (std::holds_alternative<ActivationLayer>(l)) return "activation";
    if (std::holds_alternative<Dropout>(l)) return "dropout";
    if (std::holds_alternative<Softmax>(l)) return "softmax";
    if (std::holds_alternative<Conv2D>(l)) return "conv2d";
    if (std::holds_alternative<MaxPool2D>(l)) return "maxpool2d";
    if (std::holds_alternative<AveragePool2D>(l)) return "averagepool2d";
    if (std::holds_alternative<GlobalAveragePooling2D>(l)) return "globalaveragepooling2d";
    if (std::holds_alternative<Flatten>(l)) return "flatten";
    return "batchnormalization";
}

val SequentialImpl::layers() const {
    val a = val::array();
    Shape3 in = model->inputShape();
    for (size_t i = 0; i < model->layerCount(); ++i) {
        const std::string type = layerType(model->layer(i));
        val o = val::object();
        if (!compiled()) {  // the name given to add(), if any
            o.set("name", std::visit([](const auto& l) { return l.name; }, model->layer(i)));
            o.set("type", type);
            o.set("outputShape", val::null());
            o.set("outputSize", 0);
            o.set("params", 0);
            a.call<void>("push", o);
            continue;
        }
        const Shape3 out = model->outputShape(i);
        double params = 0;  // trainable values
        if (type == "dense") params = double(in.size()) * out.channels + out.channels;
        else if (type == "conv2d") params = double(model->weight(model->layerName(i), "kernel").size()) + out.channels;
        else if (type == "batchnormalization") params = 2.0 * out.channels;
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
        in = out;
    }
    return a;
}

}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_layers) {
    emscripten::function("layerTypes", &gltrain::js::layerTypes);
}
