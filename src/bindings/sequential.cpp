// SequentialImpl (sequential.hpp): making and compiling a model; the class's registration.
#include "sequential.hpp"

#include <emscripten/bind.h>

#include <memory>

#include "errors.hpp"
#include "gltrain/model_config.hpp"
#include "values.hpp"

namespace gltrain::js {

SequentialImpl* SequentialImpl::create(ContextImpl& c, val input) {
    return guard([&]() -> SequentialImpl* {
        const Shape3 shape =
            parseArgument([&] { return inputShapeFromJson(jsonFrom(input, "Sequential", "input"), "Sequential"); });
        auto s = std::make_unique<SequentialImpl>();
        s->owner = &c;
        auto m = std::make_unique<Sequential>(*c.ctx, shape);
        s->sequential = m.get();
        s->model = std::move(m);
        return s.release();
    });
}

SequentialImpl* SequentialImpl::fromConfig(ContextImpl& c, val config) {
    return guard([&]() -> SequentialImpl* {
        const ModelConfig parsed =
            parseArgument([&] { return modelConfigFromJson(jsonFrom(config, "Model", ""), "Model"); });
        auto s = std::make_unique<SequentialImpl>();
        s->owner = &c;
        s->model = makeModel(*c.ctx, parsed);
        s->sequential = dynamic_cast<Sequential*>(s->model.get());
        return s.release();
    });
}

void SequentialImpl::compile(val options) {
    guard([&] {
        const CompileOptions c = parseCompile(options, "compile");
        owner->makeCurrent();
        model->compile(c);
    });
}

val SequentialImpl::io() const {
    val o = val::object(), inputs = val::array(), outputs = val::array();
    for (size_t k = 0; k < model->inputShapes().size(); ++k) {
        val i = val::object();
        i.set("name", model->inboundName(graph::LayerGeometry::modelInput(int(k))));
        i.set("size", model->inputShapes()[k].size());
        inputs.call<void>("push", i);
    }
    if (compiled())
        for (const graph::ModelOutput& out : model->io().outputs) {
            val i = val::object();
            i.set("name", out.layer < 0 ? std::string("input") : model->layerName(size_t(out.layer)));
            i.set("size", out.width);
            i.set("targetColumns", out.targetCols());
            outputs.call<void>("push", i);
        }
    o.set("inputs", inputs);
    o.set("outputs", outputs);
    return o;
}

CompileOptions SequentialImpl::parseCompile(val options, const std::string& where) {
    return parseArgument([&] { return compileOptionsFromJson(jsonOptions(options, where), where); });
}

}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_sequential) {
    using namespace emscripten;
    using gltrain::js::SequentialImpl;
    class_<SequentialImpl>("SequentialImpl")
        .class_function("create", &SequentialImpl::create, allow_raw_pointers())
        .class_function("fromTfjs", &SequentialImpl::fromTfjs, allow_raw_pointers())
        .class_function("fromConfig", &SequentialImpl::fromConfig, allow_raw_pointers())
        .function("add", &SequentialImpl::add)
        .function("compile", &SequentialImpl::compile)
        .function("beginFit", &SequentialImpl::beginFit, allow_raw_pointers())
        .function("stepOnce", &SequentialImpl::stepOnce)
        .function("trainFor", &SequentialImpl::trainFor)
        .function("fitting", &SequentialImpl::fitting)
        .function("restore", &SequentialImpl::restore)
        .function("endFit", &SequentialImpl::endFit)
        .function("setTrainable", &SequentialImpl::setTrainable)
        .function("takeEvents", &SequentialImpl::takeEvents)
        .function("history", &SequentialImpl::history)
        .function("evaluate", &SequentialImpl::evaluate)
        .function("profileStep", &SequentialImpl::profileStep)
        .function("predict", &SequentialImpl::predict)
        .function("predictDataset", &SequentialImpl::predictDataset)
        .function("generate", &SequentialImpl::generate)
        .function("saveCheckpoint", &SequentialImpl::saveCheckpoint)
        .function("snapshotCheckpoint", &SequentialImpl::snapshotCheckpoint)
        .function("bestCheckpoint", &SequentialImpl::bestCheckpoint)
        .function("bestEpoch", &SequentialImpl::bestEpoch)
        .function("snapshotStep", &SequentialImpl::snapshotStep)
        .function("exportTfjs", &SequentialImpl::exportTfjs)
        .function("loadCheckpoint", &SequentialImpl::loadCheckpoint)
        .function("getWeight", &SequentialImpl::getWeight)
        .function("setWeight", &SequentialImpl::setWeight)
        .function("inputSize", &SequentialImpl::inputSize)
        .function("outputSize", &SequentialImpl::outputSize)
        .function("step", &SequentialImpl::step)
        .function("compiled", &SequentialImpl::compiled)
        .function("io", &SequentialImpl::io)
        .function("isSequential", &SequentialImpl::isSequential)
        .function("layers", &SequentialImpl::layers);
}
