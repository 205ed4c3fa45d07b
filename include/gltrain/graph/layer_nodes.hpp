// How each layer of gltrain/layers.hpp adds its nodes to a graph: one
// overload of addLayerNodes per layer, found by std::visit (a layer without
// one does not compile). Training and inference differ where the layer does:
// batch normalization's statistics, dropout, the final softmax (training
// reads the logits before it).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gltrain/graph/graph.hpp"
#include "gltrain/layers.hpp"

namespace gltrain::graph {

// A layer as compile inferred it.
struct LayerGeometry {
    std::string name;
    Shape3 in, out;
    Window window;  // Conv2D and pooling
};

// Where a training step moves a moving average: toward `batchValue`, the
// batch's statistic (the variance made unbiased over `valuesPerChannel` (B * pixels)).
struct BatchStatistic {
    std::string variable;  // "<layer>/moving_mean" or "<layer>/moving_variance"
    ValueId batchValue = kNoValue;
    float momentum = 0.99f;
    bool variance = false;
    int pixels = 1;  // per example: the unbiasing uses B * pixels values per channel
};

struct LayerBuild {
    Graph& g;
    const LayerGeometry& layer;
    bool training = false;
    uint32_t seed = 1;                               // dropout's masks
    std::function<ValueId(const char*)> variable;    // the layer's variable (parameter or statistic) by name
    std::vector<BatchStatistic>* statistics = nullptr;  // training: batch normalization's
    ValueId logits = kNoValue;                       // set by a final Softmax: what the loss reads

    ValueId add(Op op, std::vector<ValueId> in) { return g.add1(std::move(op), std::move(in), layer.name); }
    std::vector<ValueId> addN(Op op, std::vector<ValueId> in) { return g.add(std::move(op), std::move(in), layer.name); }
};

// Rows are NHWC: a flat [B, n] and an image [B, 1, 1, n] are the same
// matrix, so these reshapes move no data (the GPU plan aliases them).
inline Shape flatOrImage(const Shape3& s) {
    return s.height == 1 && s.width == 1 ? Shape::batched({s.channels}) : imageShape(s);
}
inline ValueId asFlat(LayerBuild& b, ValueId x) {
    const Shape& s = b.g.shape(x);
    return s.rank() == 2 ? x : b.add(Reshape{Shape::batched({s.cols()})}, {x});
}
inline ValueId asImage(LayerBuild& b, ValueId x, const Shape3& image) {
    return b.g.shape(x).rank() == 4 ? x : b.add(Reshape{imageShape(image)}, {x});
}
inline ValueId activated(LayerBuild& b, ValueId x, Activation act, float alpha) {
    return act == Activation::Linear ? x : b.add(Activate{act, alpha}, {x});
}

inline ValueId addLayerNodes(const Dense& d, LayerBuild& b, ValueId x) {
    const ValueId y = b.add(MatMul{}, {asFlat(b, x), b.variable("kernel")});
    return activated(b, b.add(BiasAdd{}, {y, b.variable("bias")}), d.activation, d.alpha);
}
inline ValueId addLayerNodes(const Conv2D& c, LayerBuild& b, ValueId x) {
    const ValueId y = b.add(Conv{b.layer.window}, {asImage(b, x, b.layer.in), b.variable("kernel")});
    return activated(b, b.add(BiasAdd{}, {y, b.variable("bias")}), c.activation, c.alpha);
}
inline ValueId addPoolNodes(LayerBuild& b, ValueId x, PoolKind kind) {
    return b.add(Pool{b.layer.window, kind}, {asImage(b, x, b.layer.in)});
}
inline ValueId addLayerNodes(const MaxPool2D&, LayerBuild& b, ValueId x) { return addPoolNodes(b, x, PoolKind::Max); }
inline ValueId addLayerNodes(const AveragePool2D&, LayerBuild& b, ValueId x) {
    return addPoolNodes(b, x, PoolKind::Average);
}
inline ValueId addLayerNodes(const GlobalAveragePooling2D&, LayerBuild& b, ValueId x) {
    return addPoolNodes(b, x, PoolKind::Average);
}
inline ValueId addLayerNodes(const Flatten&, LayerBuild& b, ValueId x) { return asFlat(b, x); }
inline ValueId addLayerNodes(const BatchNormalization& bn, LayerBuild& b, ValueId x) {
    if (!b.training)
        return b.add(BatchNormInfer{bn.epsilon}, {x, b.variable("moving_mean"), b.variable("moving_variance"),
                                                 b.variable("gamma"), b.variable("beta")});
    const auto out = b.addN(BatchNormTrain{bn.epsilon}, {x, b.variable("gamma"), b.variable("beta")});
    const int pixels = b.layer.out.pixels();
    b.statistics->push_back({b.layer.name + "/moving_mean", out[1], bn.momentum, false, pixels});
    b.statistics->push_back({b.layer.name + "/moving_variance", out[2], bn.momentum, true, pixels});
    return out[0];
}
inline ValueId addLayerNodes(const ActivationLayer& a, LayerBuild& b, ValueId x) {
    return b.add(Activate{a.activation, a.alpha}, {x});
}
inline ValueId addLayerNodes(const Dropout& d, LayerBuild& b, ValueId x) {
    if (!b.training || d.rate <= 0.0f) return x;  // inverted dropout: nothing to undo at inference
    return b.add(Mul{}, {x, b.add(DropoutMask{d.rate, b.seed}, {x})});
}
inline ValueId addLayerNodes(const Softmax&, LayerBuild& b, ValueId x) {
    b.logits = x;
    return b.training ? x : b.add(SoftmaxRows{}, {asFlat(b, x)});
}

inline ValueId addLayerNodes(const Layer& layer, LayerBuild& b, ValueId x) {
    return std::visit([&](const auto& l) { return addLayerNodes(l, b, x); }, layer);
}

}  // namespace gltrain::graph
