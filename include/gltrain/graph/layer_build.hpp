// What a layer sees when it adds its nodes to a model's graph (each layer's
// `addNodes`, in its header under gltrain/layers/, as tfjs-layers' `call`):
// the graph, its geometry, whether the graph trains, its variables by name,
// and the helpers for the shapes layers meet. Training and inference differ
// where a layer does: batch normalization's statistics, dropout, the final
// softmax (training reads the logits before it).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gltrain/graph/graph.hpp"
#include "gltrain/window.hpp"

namespace gltrain::graph {

// A layer as compile inferred it.
struct LayerGeometry {
    std::string name;
    Shape3 in, out;
    Window window;  // Conv2D and pooling
    // The layers whose outputs it reads, in order (negative: a model input,
    // modelInput(k)); empty: the layer before it (the model input for the first).
    std::vector<int> inbound;
    std::vector<Shape3> ins;  // each inbound value's shape (`in` is the first); empty: just `in`
    // A shared layer's later call: the layer whose variables it reads (empty: its own).
    std::string weightsOf;
    // The layer whose variables it reads: weightsOf, or its own name.
    const std::string& variablesOf() const { return weightsOf.empty() ? name : weightsOf; }
    static constexpr int kModelInput = -1;  // the model's (first) input
    // Model input k as an inbound index.
    static constexpr int modelInput(int k) { return -1 - k; }
    // Whether an inbound index is a model input.
    static constexpr bool isModelInput(int inbound) { return inbound < 0; }
    // The model input an inbound index names.
    static constexpr int inputIndex(int inbound) { return -1 - inbound; }
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
    uint32_t seed = 1;                                  // dropout's masks
    std::function<ValueId(const char*)> variable;       // the layer's variable (parameter or statistic) by name
    std::vector<BatchStatistic>* statistics = nullptr;  // training: batch normalization's
    ValueId logits = kNoValue;                          // set by a final Softmax: what the loss reads

    // The seed of this layer's random masks: the model's, mixed with the layer's
    // name (FNV-1a), so that two layers of one shape drop different elements.
    uint32_t maskSeed() const {
        uint32_t h = 2166136261u;
        for (char ch : layer.name) h = (h ^ uint8_t(ch)) * 16777619u;
        return seed ^ h;
    }
    ValueId add(Op op, std::vector<ValueId> in) { return g.add1(std::move(op), std::move(in), layer.name); }
    std::vector<ValueId> addN(Op op, std::vector<ValueId> in) {
        return g.add(std::move(op), std::move(in), layer.name);
    }
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

}  // namespace gltrain::graph
