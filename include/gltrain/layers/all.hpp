// Every layer kind: the list the consumers of the layer descriptors iterate
// (the model-config parser and printer, the TF.js import and export, the
// bindings, Sequential's checks and variables). Adding a layer: its header
// here (see layers/dense.hpp for what it declares) and one entry in LayerTypes;
// a consumer that does not handle it then fails to compile.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "gltrain/layers/activation_layer.hpp"
#include "gltrain/layers/pool2d.hpp"
#include "gltrain/layers/separable_conv2d.hpp"
#include "gltrain/layers/batch_normalization.hpp"
#include "gltrain/layers/conv1d.hpp"
#include "gltrain/layers/conv2d.hpp"
#include "gltrain/layers/conv2d_transpose.hpp"
#include "gltrain/layers/dense.hpp"
#include "gltrain/layers/depthwise_conv2d.hpp"
#include "gltrain/layers/dropout.hpp"
#include "gltrain/layers/embedding.hpp"
#include "gltrain/layers/flatten.hpp"
#include "gltrain/layers/global_pool1d.hpp"
#include "gltrain/layers/global_pool2d.hpp"
#include "gltrain/layers/gru.hpp"
#include "gltrain/layers/layer_normalization.hpp"
#include "gltrain/layers/bidirectional.hpp"
#include "gltrain/layers/lstm.hpp"
#include "gltrain/layers/merge.hpp"
#include "gltrain/layers/multi_head_attention.hpp"
#include "gltrain/layers/softmax.hpp"
#include "gltrain/layers/cropping2d.hpp"
#include "gltrain/layers/permute.hpp"
#include "gltrain/layers/position_embedding.hpp"
#include "gltrain/layers/reshape.hpp"
#include "gltrain/layers/up_sampling2d.hpp"
#include "gltrain/layers/zero_padding2d.hpp"
#include "gltrain/type_list.hpp"

namespace gltrain {

using LayerTypes = TypeList<Dense, Conv2D, MaxPool2D, AveragePool2D, GlobalAveragePooling2D, Flatten,
                            BatchNormalization, ActivationLayer, Dropout, Softmax,                                //
                            Add, Subtract, Multiply, Average, Maximum, Concatenate,                               //
                            DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, Conv1D, MaxPool1D, AveragePool1D,  //
                            GlobalMaxPooling2D, Reshape, Permute, ZeroPadding2D, Cropping2D, UpSampling2D,        //
                            GlobalAveragePooling1D, GlobalMaxPooling1D, Embedding, LayerNormalization, LSTM,
                            Bidirectional, MultiHeadAttention, PositionEmbedding, GRU>;
using Layer = LayerTypes::Variant;

// The model config's / JavaScript's "type" of a layer ("dense").
inline const char* layerType(const Layer& l) {
    return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kType; }, l);
}
// The name the layer was given (empty: compile names it "<kDefaultName>_<i>").
inline const std::string& givenLayerName(const Layer& l) {
    return std::visit([](const auto& x) -> const std::string& { return x.name; }, l);
}

namespace layer_detail {
template <class L, class = void>
struct IsMerge : std::false_type {};
template <class L>
struct IsMerge<L, std::void_t<decltype(L::kMerge)>> : std::bool_constant<L::kMerge> {};
template <class L, class = void>
struct MaxInputs : std::integral_constant<int, IsMerge<L>::value ? INT32_MAX : 1> {};
template <class L>
struct MaxInputs<L, std::void_t<decltype(L::kMaxInputs)>> : std::integral_constant<int, L::kMaxInputs> {};
template <class L, class = void>
struct HasVariables : std::false_type {};
template <class L>
struct HasVariables<L, std::void_t<decltype(std::declval<const L&>().variables(Shape3{}))>> : std::true_type {};
}  // namespace layer_detail

// The name compile gives layer i when it was given none: "<kDefaultName>_<i>".
inline std::string defaultLayerName(const Layer& l, size_t i) {
    return std::visit([](const auto& x) { return std::string(x.kDefaultName); }, l) + "_" + std::to_string(i);
}

// Whether layer type L reads several inputs (a merge layer, `kMerge`: its
// shape function reads ShapeContext::ins, its addNodes a vector of values).
template <class L>
inline constexpr bool isMergeLayer = layer_detail::IsMerge<L>::value;
// Whether layer l reads several inputs.
inline bool mergeLayer(const Layer& l) {
    return std::visit([](const auto& x) { return isMergeLayer<std::decay_t<decltype(x)>>; }, l);
}

// The most inputs layer type L reads: a merge layer any number, a layer of
// `kMaxInputs` (attention: query and value) that many, others one. Its
// addNodes takes a vector of values where this is more than one.
template <class L>
inline constexpr int maxLayerInputs = layer_detail::MaxInputs<L>::value;
// The most inputs layer l reads (maxLayerInputs of its type).
inline int layerMaxInputs(const Layer& l) {
    return std::visit([](const auto& x) { return maxLayerInputs<std::decay_t<decltype(x)>>; }, l);
}

// A layer's variables from its input shape, in the order they are saved;
// none for a layer without any.
inline std::vector<LayerVariable> layerVariables(const Layer& l, Shape3 in) {
    return std::visit(
        [&](const auto& x) -> std::vector<LayerVariable> {
            if constexpr (layer_detail::HasVariables<std::decay_t<decltype(x)>>::value) return x.variables(in);
            else return {};
        },
        l);
}

// Whether training updates the layer (its "trainable" field; false: frozen).
inline bool layerTrainable(const Layer& l) {
    return std::visit([](const auto& x) { return x.trainable; }, l);
}

// The trainable values of a layer (what a model summary lists as parameters).
inline int64_t parameterCount(const Layer& l, Shape3 in) {
    int64_t n = 0;
    for (const LayerVariable& v : layerVariables(l, in))
        if (v.trainable) n += v.size();
    return n;
}

// An empty string when every field holds a value its check accepts, else
// what is wrong, naming the field ("units must be positive, got 0").
inline std::string layerFieldProblem(const Layer& l) {
    return std::visit([](const auto& x) { return layerFieldProblem(x); }, l);
}

}  // namespace gltrain
