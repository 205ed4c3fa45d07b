// Sequential: a model (model/model.hpp) built as a stack of layers, each
// taking the previous one's output.
//
//   gltrain::Sequential model(ctx, 784);
//   model.add(gltrain::Dense{256, gltrain::Activation::ReLU})
//        .add(gltrain::Dense{128, gltrain::Activation::ReLU})
//        .add(gltrain::Dense{10});
//   model.compile({});                       // softmax cross-entropy, Adam 1e-3
//   model.fit(x, labels, {.epochs = 2, .batchSize = 128});
//
// compile() names the layers, checks each one's fields (their tables) and
// infers each one's output from its input (their shape functions,
// layers/shape.hpp), every error naming the layer, what it received and from
// where — all before the engine allocates anything.
#pragma once
#include <string>
#include <vector>

#include "gltrain/layers.hpp"
#include "gltrain/model/model.hpp"

namespace gltrain {

// A model built as a stack of layers; see the comment at the top of this header.
class Sequential : public Model {
public:
    // A model of flat inputs (rows of inputSize values)...
    Sequential(Context& ctx, int inputSize) : Sequential(ctx, Shape3{1, 1, inputSize}) {}
    // ...or of images: rows of height*width*channels values in NHWC order.
    Sequential(Context& ctx, Shape3 inputShape) : Model(ctx, checkedInput(inputShape)) {}

    // Appends a layer (Dense, Conv2D, ...); before compile().
    Sequential& add(Layer layer) {
        if (compiled()) throw ArgumentError("Sequential::add: the model is already compiled");
        specs_.push_back(std::move(layer));
        return *this;
    }

    // Infers and checks every shape, then creates and initialises the
    // parameters and optimizer state. Errors name the layer and the shapes.
    void compile(const CompileOptions& options = {}) {
        if (specs_.empty()) throw ArgumentError("compile: the model has no layers");
        checkCompileOptions(options);
        std::vector<CompiledLayer> layers;
        Shape3 shape = inputShape();
        for (size_t i = 0; i < specs_.size(); ++i) {
            CompiledLayer L = inferLayer(i, shape, i == 0 ? "the model input" : layers.back().geometry.name, options);
            for (auto& other : layers)
                if (other.geometry.name == L.geometry.name)
                    throw ArgumentError("compile: two layers are named '" + L.geometry.name + "'");
            shape = L.geometry.out;
            layers.push_back(std::move(L));
        }
        compileLayers(std::move(layers), options);
    }

    // The number of layers added.
    // Freezes (false) or unfreezes a layer, by name ("dense_0" before compile
    // too). A compiled model recompiles at once, keeping its weights,
    // statistics, step and the optimizer state of what trains on; a layer it
    // unfreezes starts its optimizer state at zero.
    Sequential& setTrainable(const std::string& layer, bool trainable) {
        if (fitting())
            throw ArgumentError("setTrainable: a fit is in progress (let it finish, or call endFit() first)");
        Layer& spec = specs_.at(indexOf(layer, "setTrainable"));
        if (layerTrainable(spec) == trainable) return *this;
        if (!compiled()) {
            std::visit([&](auto& l) { l.trainable = trainable; }, spec);
            return *this;
        }
        const State kept = state();
        std::visit([&](auto& l) { l.trainable = trainable; }, spec);
        compile(options());
        restoreState(kept);
        return *this;
    }

    // How many layers were added.
    size_t layerCount() const { return specs_.size(); }
    // Layer i as it was added (kind and options; its name is layerName(i) after compile).
    const Layer& layer(size_t i) const { return specs_.at(i); }

private:
    // Layer i's name: given, or "<kDefaultName>_<i>".
    std::string nameOf(size_t i) const {
        const std::string& given = givenLayerName(specs_[i]);
        return given.empty() ? std::visit([](const auto& l) { return std::string(l.kDefaultName); }, specs_[i]) + "_" +
                                   std::to_string(i)
                             : given;
    }
    size_t indexOf(const std::string& name, const char* what) const {
        std::string names;
        for (size_t i = 0; i < specs_.size(); ++i) {
            if (nameOf(i) == name) return i;
            names += (names.empty() ? "" : ", ") + nameOf(i);
        }
        throw ArgumentError(std::string(what) + ": no layer named '" + name + "' (the layers: " + names + ")");
    }

    static Shape3 checkedInput(Shape3 s) {
        if (s.height <= 0 || s.width <= 0 || s.channels <= 0)
            throw ArgumentError("Sequential: input shape " + s.str() + " has a zero or negative size");
        if (Window::cappedProduct({s.height, s.width, s.channels}) > Window::kMaxExtent)
            throw ArgumentError("Sequential: input shape " + s.str() + " is more than " +
                                std::to_string(Window::kMaxExtent) + " values per example");
        return s;
    }

    // Layer i's name and output shape from its input shape; errors name the
    // layer, what it received and from where.
    CompiledLayer inferLayer(size_t i, Shape3 in, const std::string& from, const CompileOptions& options) const {
        const Layer& spec = specs_[i];
        CompiledLayer L;
        L.spec = &spec;
        L.geometry.name = nameOf(i);
        L.geometry.in = in;
        // The checks of each field's own value, from the layer's field table (layers/field.hpp).
        if (const std::string problem = layerFieldProblem(spec); !problem.empty())
            throw ArgumentError("compile: layer " + L.geometry.name + ": " + problem);
        // Its output, from the layer's own shape function (layers/shape.hpp).
        ShapeContext c;
        c.in = in;
        c.name = L.geometry.name;
        c.from = from;
        c.flatModelInput = i == 0 && inputShape().height == 1 && inputShape().width == 1;
        c.last = i + 1 == specs_.size();
        c.softmaxLoss = options.loss == LossKind::SoftmaxCrossEntropy;
        const LayerShape s = std::visit([&](const auto& l) { return l.shape(c); }, spec);
        L.geometry.out = s.out;
        L.geometry.window = s.window;
        return L;
    }

    std::vector<Layer> specs_;
};

}  // namespace gltrain
