// The TensorFlow.js Layers format: a compiled Sequential exported as the
// model.json + weights that tf.loadLayersModel loads, and such a model (saved
// by TensorFlow.js, or by Keras through tensorflowjs_converter) imported into a
// Sequential to predict with or fine-tune.
//
//   model.json: {"format": "layers-model", "generatedBy": ..., "convertedBy": null,
//     "modelTopology": {"class_name": "Sequential", "config": {"name": ..., "layers": [
//         {"class_name": "Dense", "config": {"name": "dense_0", "units": 10, "activation": "relu",
//                                            "use_bias": true, "batch_input_shape": [null, 784], ...}}, ...]},
//                       "keras_version": ..., "backend": ...},
//     "weightsManifest": [{"paths": ["group1-shard1of1.bin"],
//                          "weights": [{"name": "dense_0/kernel", "shape": [784, 10], "dtype": "float32"}, ...]}]}
//   weights: the manifest's tensors back to back (every group's paths in
//   order), float32 little-endian, row-major in the shapes given.
//
// No weight is transposed on the way: gltrain keeps Keras's layouts — Dense
// kernel [in, out], Conv2D kernel [kh, kw, in, out] (HWIO), images NHWC
// (channels_last), so Flatten orders the values as Keras does — and the
// weight names are the checkpoint names ("<layer>/kernel", "<layer>/bias",
// "gamma", "beta", "moving_mean", "moving_variance").
//
// What maps to what (anything else is rejected, naming the layer):
//   Dense, Conv2D, DepthwiseConv2D <-> the gltrain layers (any kernel size, strides and dilation_rate;
//                            channels_last); a DepthwiseConv2D's kernel is "depthwise_kernel" [kh, kw, C, M]
//   SeparableConv2D          <-> SeparableConv2D: "depthwise_kernel", "pointwise_kernel" [1, 1, C*M, filters], "bias"
//   Conv2DTranspose          <-> Conv2DTranspose (kernel [kh, kw, filters, C]; no dilation or output_padding)
//   Conv1D, MaxPooling1D, AveragePooling1D <-> the gltrain layers over sequences [steps, channels], imported
//                            from a [null, steps, channels] input as images [1, steps, channels]
//   GlobalAveragePooling1D, GlobalMaxPooling1D <-> the gltrain layers over such sequences
//   Dense on a sequence [steps, features] <-> Dense (applied at each step; the same kernel)
//   LSTM                     <-> LSTM: "kernel" [F, 4U], "recurrent_kernel" [U, 4U], "bias" [4U] (gates i, f, c, o);
//                            unit_forget_bias; no stateful, return_state, dropout or recurrent_dropout
//   GRU                      <-> GRU: "kernel" [F, 3U], "recurrent_kernel" [U, 3U], "bias" [3U] (gates z, r, h);
//                            reset_after false (TF.js's only form); the LSTM's other limits
//   Bidirectional (an LSTM or a GRU) <-> Bidirectional: "forward_<wrapped>/kernel" .. "backward_<wrapped>/bias"
//                            (gltrain calls the wrapped layer "lstm" or "gru"); merge_mode concat, sum, mul or ave
//   MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, GlobalMaxPooling2D, Flatten, BatchNormalization (axis -1),
//   Dropout, Softmax (any axis), Activation, LeakyReLU, ELU, ReLU <-> the gltrain layers of the same idea
//   activations: linear, relu, sigmoid, tanh, softplus, elu (alpha 1: all TF.js runs), selu, relu6,
//   swish (Keras 3's silu), mish, hard_sigmoid (TF.js's clip(0.2 x + 0.5, 0, 1)), softsign, gelu
//   (the erf form: gltrain's gelu_exact); softmax (imported as the layer plus a Softmax over the
//   last axis). ELU layers import with their alpha; ReLU with max_value 6 imports as relu6. A Dense
//   or Conv2D with a fused LeakyReLU exports as the layer plus a LeakyReLU layer (TF.js has no
//   LeakyReLU activation name).
//   GELU: gltrain's "gelu" is the tanh approximation, which TF.js calls "gelu_new" (its "gelu" is
//   the erf form, gltrain's "gelu_exact"). TF.js 4.22 writes "gelu_new" but cannot read it back (it
//   turns the name into "geluNew", which it does not know), so "gelu_new" imports but a GELU model
//   does not export: exportTfjs says so rather than write a file tf.loadLayersModel rejects.
//   use_bias: false imports as a zero bias (gltrain's Dense and Conv2D always have one; fine-tuning
//   trains it). trainable: false imports and exports as a frozen layer (its field table's
//   "trainable"). Regularizers and constraints are rejected: fine-tuning would silently ignore them.
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <type_traits>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "gltrain/file_io.hpp"
#include "gltrain/format_error.hpp"
#include "gltrain/safetensors.hpp"
#include "gltrain/sequential.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define GLTRAIN_TFJS_HAVE_FSYNC 1
#endif

namespace gltrain {

// model.json's text and the weights shard it names, in memory: what
// tf.io.fromMemory({modelTopology, weightSpecs, weightData}) and a browser
// download of the two files need.
struct TfjsArtifacts {
    // model.json's text.
    std::string modelJson;
    // The weights shard's bytes.
    std::vector<uint8_t> weightData;
};

// The one weights file exportTfjs names in its manifest.
inline constexpr const char* kTfjsShardName = "group1-shard1of1.bin";

// A parsed TF.js Layers model, validated but not yet on a GPU.
struct TfjsModel {
    Shape3 inputShape;          // [1, 1, n] for flat input rows; the first of several
    std::vector<Layer> layers;  // in order, named as in the file
    // A functional model's: what each layer reads (indices; negative: a model
    // input, graph::LayerGeometry::modelInput); empty for a Sequential.
    std::vector<std::vector<int>> inbound;
    // A functional model's inputs in input_layers' order (shapes; names when several).
    std::vector<Shape3> inputShapes;
    // The names of several inputs (empty: one input).
    std::vector<std::string> inputNames;
    // A functional model's output layers, in output_layers' order.
    std::vector<int> outputs;
    // A functional model's: for each layer, the layer whose weights it shares (a
    // shared layer's later inbound node, model/symbolic.hpp's LayerNode::shares; -1: its own).
    std::vector<int> shares;
    // Every weight as "<layer>/<variable>" in Keras's shape (Sequential's checkpoint names and shapes).
    std::vector<std::pair<std::string, TensorData>> weights;
};

namespace tfjs_detail {

using Json = nlohmann::ordered_json;

// Floats as the shortest decimal that reads back as them (0.99, not 0.9900000095367432).
inline double shortest(float f) { return shortestDouble(f); }

// The TF.js name of an activation of layer `layer` (LeakyReLU is a layer of its own in Keras: the caller's).
// tfjs-layers 4.22 writes its camelCase class names in snake_case ("hardSigmoid" as "hard_sigmoid")
// and reads them back through camelCase, so these are the names its model.json files hold.
inline const char* activationName(Activation a, const std::string& layer) {
    switch (a) {
        case Activation::Linear: return "linear";
        case Activation::ReLU: return "relu";
        case Activation::Sigmoid: return "sigmoid";
        case Activation::Tanh: return "tanh";
        case Activation::Softplus: return "softplus";
        case Activation::ELU: return "elu";  // alpha 1 only: the caller checks (requireUnitEluAlpha)
        case Activation::SELU: return "selu";
        case Activation::ReLU6: return "relu6";
        case Activation::Swish: return "swish";
        case Activation::Mish: return "mish";
        case Activation::HardSigmoid: return "hard_sigmoid";
        case Activation::Softsign: return "softsign";
        case Activation::GELUExact: return "gelu";
        case Activation::GELU:
            throw ArgumentError("exportTfjs: layer '" + layer +
                                "' uses GELU, which TF.js cannot load: gltrain's GELU (the tanh approximation) is "
                                "TF.js's 'gelu_new', and tfjs-layers 4.22 fails on that name when loading (its "
                                "'gelu' is the erf form, gltrain's gelu_exact)");
        case Activation::LeakyReLU: break;
    }
    throw ArgumentError("exportTfjs: layer '" + layer + "': activation " + gltrain::activationName(a) +
                        " has no TF.js activation name");
}

// TF.js runs ELU with alpha 1 only (its 'elu' activation has no alpha, and its ELU layer throws
// NotImplementedError on any other): ArgumentError naming the layer otherwise.
inline void requireUnitEluAlpha(float eluAlpha, const std::string& layer) {
    if (eluAlpha != 1.0f)
        throw ArgumentError("exportTfjs: layer '" + layer + "' uses ELU with eluAlpha " + std::to_string(eluAlpha) +
                            ", but TF.js runs ELU only with alpha 1");
}

// Keras's class name of an initializer kind.
inline const char* initializerClass(Initializer::Kind k) {
    switch (k) {
        case Initializer::GlorotUniform: return "GlorotUniform";
        case Initializer::GlorotNormal: return "GlorotNormal";
        case Initializer::HeUniform: return "HeUniform";
        case Initializer::HeNormal: return "HeNormal";
        case Initializer::Zeros: return "Zeros";
        case Initializer::Constant: return "Constant";
        case Initializer::RandomNormal: return "RandomNormal";
        case Initializer::Orthogonal: return "Orthogonal";
    }
    return "Zeros";
}
inline Json initializer(const Initializer& init) {
    if (init.kind == Initializer::Constant)
        return {{"class_name", "Constant"}, {"config", {{"value", shortest(init.value)}}}};
    if (init.kind == Initializer::Zeros) return {{"class_name", "Zeros"}, {"config", Json::object()}};
    if (init.kind == Initializer::RandomNormal)
        return {{"class_name", "RandomNormal"},
                {"config", {{"mean", shortest(init.mean)}, {"stddev", shortest(init.value)}, {"seed", nullptr}}}};
    if (init.kind == Initializer::Orthogonal)
        return {{"class_name", "Orthogonal"}, {"config", {{"gain", shortest(init.gain)}, {"seed", nullptr}}}};
    return {{"class_name", initializerClass(init.kind)}, {"config", {{"seed", nullptr}}}};
}

// A mapped field's value in a TF.js config (activations are the exporter's: LeakyReLU is a layer there).
inline Json fieldJson(int v, TfjsForm form) {
    return form == TfjsForm::Square ? Json{v, v} : form == TfjsForm::Single ? Json::array({v}) : Json(v);
}
inline Json fieldJson(Size2 v, TfjsForm) { return Json{v.h, v.w}; }
inline Json fieldJson(const std::vector<int>& v, TfjsForm) { return v; }
// Keras keeps padding and cropping as [[top, bottom], [left, right]].
inline Json fieldJson(const Margins& m, TfjsForm) { return {{m.top, m.bottom}, {m.left, m.right}}; }
inline Json fieldJson(Interpolation i, TfjsForm) { return interpolationName(i); }
inline Json fieldJson(float v, TfjsForm) { return shortest(v); }
inline Json fieldJson(Padding p, TfjsForm) { return paddingName(p); }
inline Json fieldJson(const Initializer& i, TfjsForm) { return initializer(i); }
inline Json fieldJson(const std::string& v, TfjsForm) { return v; }
inline Json fieldJson(bool v, TfjsForm) { return v; }

// The LeakyReLU slope of a layer with a fused activation (every such layer has an alpha).
template <class L, class = void>
struct HasAlpha : std::false_type {};
template <class L>
struct HasAlpha<L, std::void_t<decltype(std::declval<const L&>().alpha)>> : std::true_type {};
template <class L>
float leakyAlpha(const L& layer) {
    if constexpr (HasAlpha<L>::value) return layer.alpha;
    else return Dense{}.alpha;
}
// The ELU alpha of a layer with a fused activation (every such layer has an eluAlpha).
template <class L, class = void>
struct HasEluAlpha : std::false_type {};
template <class L>
struct HasEluAlpha<L, std::void_t<decltype(std::declval<const L&>().eluAlpha)>> : std::true_type {};
template <class L>
float eluAlpha(const L& layer) {
    if constexpr (HasEluAlpha<L>::value) return layer.eluAlpha;
    else return Dense{}.eluAlpha;
}

// The config entries of the fields a layer's table maps to TF.js; a fused LeakyReLU (TF.js has no such
// activation) is written as linear, its slope left in `leaky` for a layer after it.
template <class L>
void mappedFields(const L& layer, const std::string& name, Json& config, std::optional<float>& leaky) {
    forEachField<L>([&](const auto& f) {
        if (!f.tfjsKey) return;
        const auto& v = layer.*(f.member);
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Activation>) {
            if (v == Activation::LeakyReLU) leaky = leakyAlpha(layer);
            if (v == Activation::ELU) requireUnitEluAlpha(eluAlpha(layer), name);
            config[f.tfjsKey] = v == Activation::LeakyReLU ? "linear" : activationName(v, name);
        } else {
            config[f.tfjsKey] = fieldJson(v, f.tfjsForm);
        }
    });
}

// What TF.js's config of a layer holds besides the fields its table maps:
// the settings gltrain has fixed (a bias, channels_last, no regularizers).
inline const Json kNoRegularizers = {{"kernel_regularizer", nullptr},
                                     {"bias_regularizer", nullptr},
                                     {"activity_regularizer", nullptr},
                                     {"kernel_constraint", nullptr},
                                     {"bias_constraint", nullptr}};
inline void exportExtras(const Dense&, Json& c) {
    c["use_bias"] = true;
    c.update(kNoRegularizers);
}
inline void exportExtras(const Conv2D&, Json& c) {
    c["data_format"] = "channels_last";
    c["use_bias"] = true;
    c.update(kNoRegularizers);
}
inline void exportExtras(const DepthwiseConv2D&, Json& c) {
    c["data_format"] = "channels_last";
    c["use_bias"] = true;
    c.update({{"depthwise_regularizer", nullptr},
              {"bias_regularizer", nullptr},
              {"activity_regularizer", nullptr},
              {"depthwise_constraint", nullptr},
              {"bias_constraint", nullptr}});
}
inline void exportExtras(const SeparableConv2D&, Json& c) {
    c["data_format"] = "channels_last";
    c["use_bias"] = true;
    c.update({{"depthwise_regularizer", nullptr},
              {"pointwise_regularizer", nullptr},
              {"bias_regularizer", nullptr},
              {"activity_regularizer", nullptr},
              {"depthwise_constraint", nullptr},
              {"pointwise_constraint", nullptr},
              {"bias_constraint", nullptr}});
}
template <class Pool>
void exportPoolExtras(const Pool& p, Json& c) {
    const int s = p.stride ? p.stride : p.poolSize;
    c["strides"] = {s, s};
    c["data_format"] = "channels_last";
}
inline void exportExtras(const Conv2DTranspose&, Json& c) {
    c["data_format"] = "channels_last";
    c["dilation_rate"] = {1, 1};
    c["use_bias"] = true;
    c.update(kNoRegularizers);
}
inline void exportExtras(const Conv1D&, Json& c) {
    c["data_format"] = "channels_last";
    c["use_bias"] = true;
    c.update(kNoRegularizers);
}
template <class Pool>
void exportPool1dExtras(const Pool& p, Json& c) {
    c["strides"] = Json::array({p.stride ? p.stride : p.poolSize});
}
inline void exportExtras(const MaxPool1D& p, Json& c) { exportPool1dExtras(p, c); }
inline void exportExtras(const AveragePool1D& p, Json& c) { exportPool1dExtras(p, c); }
inline void exportExtras(const MaxPool2D& p, Json& c) { exportPoolExtras(p, c); }
inline void exportExtras(const AveragePool2D& p, Json& c) { exportPoolExtras(p, c); }
inline void exportExtras(const GlobalAveragePooling2D&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const GlobalMaxPooling2D&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const Embedding&, Json& c) {
    c.update({{"mask_zero", false},
              {"embeddings_regularizer", nullptr},
              {"activity_regularizer", nullptr},
              {"embeddings_constraint", nullptr}});
}
inline void exportExtras(const LayerNormalization&, Json& c) {
    c.update({{"axis", -1},
              {"center", true},
              {"scale", true},
              {"beta_regularizer", nullptr},
              {"gamma_regularizer", nullptr},
              {"beta_constraint", nullptr},
              {"gamma_constraint", nullptr}});
}
template <RecurrentKind K>
void exportExtras(const Recurrent<K>&, Json& c) {
    c.update(kNoRegularizers);
    c.update({{"recurrent_regularizer", nullptr},
              {"recurrent_constraint", nullptr},
              {"dropout", 0},
              {"recurrent_dropout", 0},
              {"implementation", 1},
              {"return_state", false},
              {"stateful", false},
              {"unroll", false}});
    if constexpr (K == RecurrentKind::Gru) c["reset_after"] = false;
}
// The wrapped layer as a layer named after its type (its variables' names say so: Recurrent::kForward).
inline void exportExtras(const Bidirectional& b, Json& c) {
    b.withDirections([&](const auto& forwards, const auto&) {
        Json layer = {{"name", forwards.kType}, {"trainable", b.trainable}};
        std::optional<float> leaky;
        mappedFields(forwards, forwards.kType, layer, leaky);
        exportExtras(forwards, layer);
        c["layer"] = {{"class_name", forwards.kTfjsClass}, {"config", std::move(layer)}};
        return 0;
    });
}
// TF.js 4.22 has no attention or position-embedding layer to read these.
[[noreturn]] inline void refuseExport(const char* cls, const Json& c) {
    throw UnsupportedError("exportTfjs: layer '" + c.at("name").get<std::string>() + "' is a " + cls +
                           ", which TF.js has no layer for");
}
inline void exportExtras(const MultiHeadAttention&, Json& c) { refuseExport(MultiHeadAttention::kTfjsClass, c); }
inline void exportExtras(const PositionEmbedding&, Json& c) { refuseExport(PositionEmbedding::kTfjsClass, c); }
inline void exportExtras(const GlobalAveragePooling1D&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const GlobalMaxPooling1D&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const Flatten&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const BatchNormalization&, Json& c) {
    const Json zeros = {{"class_name", "Zeros"}, {"config", Json::object()}};
    const Json ones = {{"class_name", "Ones"}, {"config", Json::object()}};
    c.update({{"axis", -1},
              {"center", true},
              {"scale", true},
              {"beta_initializer", zeros},
              {"gamma_initializer", ones},
              {"moving_mean_initializer", zeros},
              {"moving_variance_initializer", ones},
              {"beta_regularizer", nullptr},
              {"gamma_regularizer", nullptr},
              {"beta_constraint", nullptr},
              {"gamma_constraint", nullptr}});
}
inline void exportExtras(const ActivationLayer&, Json&) {}  // the exporter writes it (Activation or LeakyReLU)
inline void exportExtras(const Dropout&, Json& c) { c.update({{"noise_shape", nullptr}, {"seed", nullptr}}); }
inline void exportExtras(const Softmax&, Json&) {}  // the field table writes its axis
template <MergeKind K>
void exportExtras(const Merge<K>&, Json&) {}
inline void exportExtras(const Concatenate&, Json&) {}
inline void exportExtras(const Reshape&, Json&) {}  // the field table writes target_shape
inline void exportExtras(const Permute&, Json&) {}  // and dims
inline void exportExtras(const ZeroPadding2D&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const Cropping2D&, Json& c) { c["data_format"] = "channels_last"; }
inline void exportExtras(const UpSampling2D&, Json& c) { c["data_format"] = "channels_last"; }

// The layers whose input is a sequence [steps, channels] in Keras (rank 3 with the batch).
template <class L>
struct IsSequenceLayer : std::false_type {};
template <>
struct IsSequenceLayer<Conv1D> : std::true_type {};
template <PoolKind K>
struct IsSequenceLayer<GlobalPool1D<K>> : std::true_type {};
template <PoolKind K>
struct IsSequenceLayer<Pool1D<K>> : std::true_type {};
template <RecurrentKind K>
struct IsSequenceLayer<Recurrent<K>> : std::true_type {};
template <>
struct IsSequenceLayer<Bidirectional> : std::true_type {};

inline Json shapeJson(const std::vector<int64_t>& shape) {
    Json a = Json::array();
    for (int64_t d : shape) a.push_back(d);
    return a;
}

// Writes bytes to path and flushes them to the disk; IoError naming the path otherwise.
inline void writeSynced(const std::string& path, const void* data, size_t size) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw IoError("saveTfjs: cannot create " + path + ": " + std::strerror(errno));
    bool ok = std::fwrite(data, 1, size, f) == size;
    int err = ok ? 0 : errno;
    if (ok && std::fflush(f) != 0) ok = false, err = errno;
#ifdef GLTRAIN_TFJS_HAVE_FSYNC
    if (ok && ::fsync(fileno(f)) != 0) ok = false, err = errno;
#endif
    if (std::fclose(f) != 0 && ok) ok = false, err = errno;
    if (!ok)
        throw IoError("saveTfjs: writing " + std::to_string(size) + " bytes to " + path +
                      " failed: " + std::strerror(err));
}

}  // namespace tfjs_detail

// model.json + one weights shard for a compiled model, in memory. The first
// layer carries batch_input_shape ([null, n] or [null, h, w, c]).
inline TfjsArtifacts exportTfjs(const Model& model) {
    using tfjs_detail::Json;
    using tfjs_detail::shortest;
    if (!model.compiled()) throw ArgumentError("exportTfjs: the model is not compiled (call compile first)");
    // A stack of layers exports as a Sequential, anything else as a functional Model.
    const std::vector<size_t> outputs = model.outputLayers();
    const bool stack = model.isStack();
    std::set<std::string> names;
    for (size_t i = 0; i < model.layerCount(); ++i) names.insert(model.layerName(i));
    // A name for a layer the export adds (a LeakyReLU split off a Dense), unlike any other.
    auto freshName = [&](const std::string& base) {
        std::string n = base;
        for (int k = 1; names.count(n); ++k) n = base + "_" + std::to_string(k);
        names.insert(n);
        return n;
    };

    Json layers = Json::array(), weights = Json::array();
    std::vector<uint8_t> data;
    auto addWeight = [&](const std::string& layer, const char* which, std::vector<int64_t> shape) {
        const HostMatrix w = model.weight(layer, which);
        const TensorData t = TensorData::f32(shape, w.data);  // checks that the shape holds every value
        data.insert(data.end(), t.bytes.begin(), t.bytes.end());
        weights.push_back(
            {{"name", layer + "/" + which}, {"shape", tfjs_detail::shapeJson(shape)}, {"dtype", "float32"}});
    };
    const Shape3 in0 = model.inputShape();
    // A model that starts with a 1-D layer, or any layer but a 2-D one on an input [1, steps, channels],
    // reads sequences [steps, channels].
    const bool sequence =
        std::visit([](const auto& l) { return tfjs_detail::IsSequenceLayer<std::decay_t<decltype(l)>>::value; },
                   model.layer(0)) ||
        (in0.height == 1 && in0.width > 1 &&
         (std::holds_alternative<Dense>(model.layer(0)) || std::holds_alternative<LayerNormalization>(model.layer(0))));
    auto batchShapeOf = [](Shape3 s, bool sequence) {
        return sequence                        ? Json{nullptr, s.width, s.channels}
               : s.height == 1 && s.width == 1 ? Json{nullptr, s.channels}
                                               : Json{nullptr, s.height, s.width, s.channels};
    };
    const Json batchInputShape = batchShapeOf(in0, sequence);
    // A functional model: its InputLayers first, and each layer's inbound node. outRef[i]: the
    // layer and node whose output is layer i's (its LeakyReLU, when one is split off it; a
    // shared layer's later call: a later node of the layer's entries).
    using Ref = std::pair<std::string, int>;
    std::vector<std::string> inputNames;
    std::vector<Ref> outRef;
    std::vector<Ref> reads;                           // the layer being written reads these
    std::vector<size_t> entriesOfNow;                 // the entries of `layers` the layer being written makes
    std::map<size_t, std::vector<size_t>> entriesOf;  // a shared layer's entries
    for (size_t k = 0; !stack && k < model.inputShapes().size(); ++k) {
        const std::string inputName = freshName(model.inboundName(graph::LayerGeometry::modelInput(int(k))));
        inputNames.push_back(inputName);
        const Json shape = batchShapeOf(model.inputShapes()[k], k == 0 && sequence);
        layers.push_back(
            {{"class_name", "InputLayer"},
             {"config", {{"batch_input_shape", shape}, {"dtype", "float32"}, {"sparse", false}, {"name", inputName}}},
             {"name", inputName},
             {"inbound_nodes", Json::array()}});
    }
    auto push = [&](const char* className, Json config) {
        if (stack && layers.empty()) {
            config["batch_input_shape"] = batchInputShape;
            config["dtype"] = "float32";
        }
        if (!config.contains("trainable")) config["trainable"] = true;
        Json entry = {{"class_name", className}, {"config", config}};
        if (!stack) {
            Json node = Json::array();
            for (const Ref& from : reads) node.push_back(Json{from.first, from.second, 0, Json::object()});
            entry["name"] = config["name"];
            entry["inbound_nodes"] = Json::array({node});
            reads = {{config["name"].get<std::string>(), 0}};  // what a layer split off it reads
        }
        entriesOfNow.push_back(layers.size());
        layers.push_back(std::move(entry));
    };
    auto leaky = [&](const std::string& name, float alpha) {
        push("LeakyReLU", {{"name", name}, {"alpha", shortest(alpha)}});
    };

    for (size_t i = 0; i < model.layerCount(); ++i) {
        const std::string name = model.layerName(i);
        const Shape3 in = model.layerInputShape(i);
        reads.clear();
        for (int k : model.inbound(i))
            reads.push_back(k >= 0  ? outRef.at(size_t(k))
                            : stack ? Ref()
                                    : Ref{inputNames.at(size_t(graph::LayerGeometry::inputIndex(k))), 0});
        entriesOfNow.clear();
        if (const int owner = model.shares(i); owner >= 0) {  // a later call: a node of each of its entries
            for (size_t e : entriesOf.at(size_t(owner))) {
                Json node = Json::array();
                for (const Ref& from : reads) node.push_back(Json{from.first, from.second, 0, Json::object()});
                layers[e]["inbound_nodes"].push_back(std::move(node));
                reads = {{layers[e]["name"].get<std::string>(), int(layers[e]["inbound_nodes"].size()) - 1}};
            }
            outRef.push_back(reads.at(0));
            continue;
        }
        std::visit(
            [&](const auto& layer) {
                using L = std::decay_t<decltype(layer)>;
                // An ActivationLayer is TF.js's Activation, or a LeakyReLU layer of its own.
                if constexpr (std::is_same_v<L, ActivationLayer>) {
                    if (layer.activation == Activation::LeakyReLU) return leaky(name, layer.alpha);
                    if (layer.activation == Activation::ELU) tfjs_detail::requireUnitEluAlpha(layer.eluAlpha, name);
                    return push(L::kTfjsClass,
                                {{"name", name}, {"activation", tfjs_detail::activationName(layer.activation, name)}});
                }
                // A fused LeakyReLU (TF.js has no such activation) follows as a layer.
                std::optional<float> leakyAlpha;
                Json config = {{"name", name}};
                tfjs_detail::mappedFields(layer, name, config, leakyAlpha);
                tfjs_detail::exportExtras(layer, config);
                push(L::kTfjsClass, std::move(config));
                for (const LayerVariable& v : layerVariables(layer, in)) addWeight(name, v.name, v.shape);
                if (leakyAlpha) leaky(freshName(name + "_leaky_relu"), *leakyAlpha);
            },
            model.layer(i));
        outRef.push_back(stack ? Ref{name, 0} : Ref{layers.back()["name"].get<std::string>(), 0});
        entriesOf[i] = entriesOfNow;
    }
    Json config = {{"name", stack ? "sequential" : "model"}, {"layers", std::move(layers)}};
    if (!stack) {
        config["input_layers"] = Json::array();
        for (const std::string& n : inputNames) config["input_layers"].push_back(Json{n, 0, 0});
        config["output_layers"] = Json::array();
        for (size_t o : outputs) config["output_layers"].push_back(Json{outRef.at(o).first, outRef.at(o).second, 0});
    }
    Json j = {{"format", "layers-model"},
              {"generatedBy", "gltrain"},
              {"convertedBy", nullptr},
              {"modelTopology",
               {{"class_name", stack ? "Sequential" : "Model"},
                {"config", std::move(config)},
                {"keras_version", "tfjs-layers 4.22.0"},
                {"backend", "tensor_flow.js"}}},
              {"weightsManifest", Json::array({{{"paths", {kTfjsShardName}}, {"weights", std::move(weights)}}})}};
    return {j.dump(1), std::move(data)};
}

// Writes dir/model.json and dir/group1-shard1of1.bin so that a crash never
// leaves a mix of old and new files: both go to dir + ".tmp", which then
// replaces dir (an existing dir is moved to dir + ".old" and removed after).
// An existing dir must hold nothing but an earlier export (model.json and
// .bin shards): anything else is refused rather than deleted.
inline void saveTfjs(const Model& model, const std::string& dir) {
    namespace fs = std::filesystem;
    const TfjsArtifacts a = exportTfjs(model);
    const fs::path target(dir), tmp(dir + ".tmp"), old(dir + ".old");
    auto fail = [&](const std::string& what, const std::error_code& ec) {
        throw IoError("saveTfjs " + dir + ": " + what + ": " + ec.message());
    };
    std::error_code ec;
    const bool exists = fs::exists(target, ec);
    if (ec) fail("cannot inspect it", ec);
    if (exists) {
        if (!fs::is_directory(target, ec)) throw IoError("saveTfjs " + dir + ": exists and is not a directory");
        for (const auto& entry : fs::directory_iterator(target, ec)) {
            const std::string n = entry.path().filename().string();
            const bool ours = n == "model.json" || (n.size() > 4 && n.compare(n.size() - 4, 4, ".bin") == 0);
            if (!ours || !entry.is_regular_file())
                throw IoError("saveTfjs " + dir + ": holds " + n +
                              ", which is not part of a TF.js export; choose a new or empty directory");
        }
        if (ec) fail("cannot list it", ec);
    }
    fs::remove_all(tmp, ec);  // left by an interrupted save
    if (ec) fail("cannot remove the leftover " + tmp.string(), ec);
    if (!fs::create_directories(tmp, ec)) fail("cannot create " + tmp.string(), ec);
    try {
        tfjs_detail::writeSynced((tmp / kTfjsShardName).string(), a.weightData.data(), a.weightData.size());
        tfjs_detail::writeSynced((tmp / "model.json").string(), a.modelJson.data(), a.modelJson.size());
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    if (exists) {
        fs::remove_all(old, ec);
        fs::rename(target, old, ec);
        if (ec) fail("cannot move the previous export to " + old.string(), ec);
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        const std::error_code renameError = ec;
        if (exists) fs::rename(old, target, ec);  // put the previous export back
        fail("cannot rename " + tmp.string() + " to " + dir, renameError);
    }
    if (exists) fs::remove_all(old, ec);
}

// ---- import -------------------------------------------------------------

namespace tfjs_detail {

// Reads one model.json: every message starts with the source and, inside a
// layer, names the layer by index, name and class.
class Reader {
public:
    explicit Reader(std::string source) : source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& what) const { throw FormatError(source_ + ": " + what); }

    const Json& field(const Json& obj, const char* key, const std::string& where) const {
        if (!obj.is_object() || !obj.contains(key)) fail(where + " has no \"" + key + "\"");
        return obj.at(key);
    }
    static const Json* optional(const Json& obj, const char* key) {
        auto it = obj.find(key);
        return it == obj.end() || it->is_null() ? nullptr : &*it;
    }
    static std::string brief(const Json& j) {
        std::string s = j.dump();
        return s.size() > 60 ? s.substr(0, 57) + "..." : s;
    }
    int integer(const Json& j, const std::string& what) const {
        if (!j.is_number_integer() || j.get<int64_t>() < -(int64_t(1) << 31) || j.get<int64_t>() >= (int64_t(1) << 31))
            fail(what + " must be an integer, got " + brief(j));
        return int(j.get<int64_t>());
    }
    float number(const Json& j, const std::string& what) const {
        if (!j.is_number() || !std::isfinite(j.get<double>())) fail(what + " must be a finite number, got " + brief(j));
        return float(j.get<double>());
    }
    bool boolean(const Json& j, const std::string& what) const {
        if (!j.is_boolean()) fail(what + " must be true or false, got " + brief(j));
        return j.get<bool>();
    }
    std::string string(const Json& j, const std::string& what) const {
        if (!j.is_string()) fail(what + " must be a string, got " + brief(j));
        return j.get<std::string>();
    }

private:
    std::string source_;
};

// One layer of the topology being read.
struct LayerReader {
    const Reader& r;
    const Json& config;
    std::string where;  // "layer 2 'conv2d_1' (Conv2D)"

    [[noreturn]] void fail(const std::string& what) const { r.fail(where + ": " + what); }
    const Json* get(const char* key) const { return Reader::optional(config, key); }
    int integer(const char* key, int fallback) const {
        const Json* j = get(key);
        return j ? r.integer(*j, where + ": " + key) : fallback;
    }
    float number(const char* key, float fallback) const {
        const Json* j = get(key);
        return j ? r.number(*j, where + ": " + key) : fallback;
    }
    bool boolean(const char* key, bool fallback) const {
        const Json* j = get(key);
        return j ? r.boolean(*j, where + ": " + key) : fallback;
    }
    std::string string(const char* key, const std::string& fallback) const {
        const Json* j = get(key);
        return j ? r.string(*j, where + ": " + key) : fallback;
    }
    // A square size or equal strides: n, [n] or [n, n].
    int square(const char* key, int fallback) const {
        const Json* j = get(key);
        if (!j) return fallback;
        if (j->is_number()) return r.integer(*j, where + ": " + key);
        if (!j->is_array() || j->empty() || j->size() > 2)
            fail(std::string(key) + " must be n or [n, n], got " + Reader::brief(*j));
        const int a = r.integer(j->at(0), where + ": " + key);
        const int b = r.integer(j->back(), where + ": " + key);
        if (a != b)
            fail(std::string(key) + " " + Reader::brief(*j) +
                 " is not square (gltrain's windows and strides are n x n)");
        return a;
    }
    // A size along the two image axes: n, [n] or [h, w].
    Size2 pair(const char* key, Size2 fallback) const {
        const Json* j = get(key);
        if (!j) return fallback;
        if (j->is_number()) return r.integer(*j, where + ": " + key);
        if (!j->is_array() || j->empty() || j->size() > 2)
            fail(std::string(key) + " must be n or [h, w], got " + Reader::brief(*j));
        return {r.integer(j->at(0), where + ": " + key), r.integer(j->back(), where + ": " + key)};
    }
    // A list of integers: Reshape's target_shape, Permute's dims.
    std::vector<int> integers(const char* key, const std::vector<int>& fallback) const {
        const Json* j = get(key);
        if (!j) return fallback;
        if (!j->is_array()) fail(std::string(key) + " must be a list of integers, got " + Reader::brief(*j));
        std::vector<int> out;
        for (const Json& d : *j) out.push_back(r.integer(d, where + ": " + key));
        return out;
    }
    // n, [h, w] or [[top, bottom], [left, right]]: ZeroPadding2D's padding, Cropping2D's cropping.
    Margins margins(const char* key, const Margins& fallback) const {
        const Json* j = get(key);
        if (!j) return fallback;
        const std::string at = where + ": " + key;
        if (j->is_number()) return Margins(r.integer(*j, at));
        const auto bad = [&] {
            fail(std::string(key) + " must be n, [h, w] or [[top, bottom], [left, right]], got " + Reader::brief(*j));
        };
        if (!j->is_array() || j->size() != 2) bad();
        const Json &a = (*j)[0], &b = (*j)[1];
        if (a.is_number() && b.is_number()) return {r.integer(a, at), r.integer(b, at)};
        if (!a.is_array() || !b.is_array() || a.size() != 2 || b.size() != 2) bad();
        return {r.integer(a[0], at), r.integer(a[1], at), r.integer(b[0], at), r.integer(b[1], at)};
    }
    Interpolation interpolation(const char* key, Interpolation fallback) const {
        const std::string name = string(key, interpolationName(fallback));
        for (Interpolation i : kAllInterpolations)
            if (name == interpolationName(i)) return i;
        fail(std::string(key) + " '" + name + "' is not supported (nearest, bilinear)");
    }
    void require(const char* key, const Json& expected, const std::string& why) const {
        const Json* j = get(key);
        if (j && *j != expected) fail(std::string(key) + " " + Reader::brief(*j) + " is not supported (" + why + ")");
    }
    void requireNull(std::initializer_list<const char*> keys) const {
        for (const char* k : keys)
            if (get(k))
                fail(std::string(k) + " " + Reader::brief(*get(k)) +
                     " is not supported (gltrain trains without regularizers or constraints)");
    }
    void channelsLast() const {
        const std::string f = string("data_format", "channels_last");
        if (f != "channels_last")
            fail("data_format '" + f + "' is not supported (gltrain images are channels_last, NHWC)");
    }
    Padding padding(const char* key, Padding fallback) const {
        const std::string p = string(key, paddingName(fallback));
        std::string valid;
        for (Padding k : kAllPaddings) {
            if (p == paddingName(k)) return k;
            valid += (valid.empty() ? "" : ", ") + std::string(paddingName(k));
        }
        fail(std::string(key) + " '" + p + "' is not supported (" + valid + ")");
    }
    // Keras's initializer config: one gltrain has takes its place; another
    // (VarianceScaling, ...) leaves the fallback, as the imported weights
    // replace what it would have made anyway.
    Initializer initializer(const char* key, Initializer fallback) const {
        const Json* j = get(key);
        if (!j || !j->is_object() || !j->contains("class_name") || !(*j)["class_name"].is_string()) return fallback;
        const std::string cls = (*j)["class_name"].get<std::string>();
        if (cls == initializerClass(Initializer::Constant)) {
            const Json* c = j->contains("config") ? Reader::optional((*j)["config"], "value") : nullptr;
            return c && c->is_number() && std::isfinite(c->get<double>()) ? Initializer::constant(c->get<float>())
                                                                          : fallback;
        }
        if (cls == initializerClass(Initializer::RandomNormal)) {
            const Json* config = j->contains("config") ? &(*j)["config"] : nullptr;
            const Json* sd = config ? Reader::optional(*config, "stddev") : nullptr;
            const Json* mean = config ? Reader::optional(*config, "mean") : nullptr;
            auto finite = [](const Json* x) { return x && x->is_number() && std::isfinite(x->get<double>()); };
            // Keras's defaults: mean 0, stddev 0.05.
            const float s = finite(sd) ? sd->get<float>() : 0.05f, m = finite(mean) ? mean->get<float>() : 0.0f;
            return s >= 0.0f ? Initializer::randomNormal(s, m) : fallback;
        }
        if (cls == initializerClass(Initializer::Orthogonal)) {
            const Json* g = j->contains("config") ? Reader::optional((*j)["config"], "gain") : nullptr;
            // Keras's default gain: 1.
            return Initializer::orthogonal(g && g->is_number() && std::isfinite(g->get<double>()) ? g->get<float>()
                                                                                                  : 1.0f);
        }
        for (Initializer::Kind k : Initializer::kNamedKinds)
            if (cls == initializerClass(k)) return {k, 0.0f};
        return fallback;
    }
};

inline Activation activation(const LayerReader& l, const std::string& name);
// The fields a layer's table maps to TF.js, read from its config and range-checked; an "activation" through
// `fusedActivation` (softmax may become a layer after it), another (an LSTM's gates') as it is.
template <class L, class F>
void readMappedFields(const LayerReader& l, L& layer, F&& fusedActivation) {
    forEachField<L>([&](const auto& f) {
        if (!f.tfjsKey) return;
        auto& v = layer.*(f.member);
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int>) {
            v = f.tfjsForm == TfjsForm::Plain ? l.integer(f.tfjsKey, v) : l.square(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, Size2>) {
            v = l.pair(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, float>) {
            v = l.number(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, Activation>) {
            // "activation" may be softmax (a layer after this one); another (an LSTM's gates') not.
            if (std::string(f.tfjsKey) == "activation") v = fusedActivation();
            else if (l.get(f.tfjsKey)) v = tfjs_detail::activation(l, l.string(f.tfjsKey, ""));
        } else if constexpr (std::is_same_v<T, Padding>) {
            v = l.padding(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, Initializer>) {
            v = l.initializer(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, bool>) {
            v = l.boolean(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, std::vector<int>>) {
            v = l.integers(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, Margins>) {
            v = l.margins(f.tfjsKey, v);
        } else if constexpr (std::is_same_v<T, Interpolation>) {
            v = l.interpolation(f.tfjsKey, v);
        } else {
            static_assert(std::is_same_v<T, std::string>, "parseTfjs: read the new kind of field");
            v = l.string(f.tfjsKey, v);
        }
        const std::string problem = fieldProblem(v, f.range);
        if (!problem.empty()) l.fail(std::string(f.tfjsKey) + " " + problem);
    });
}

// What importing one layer needs besides its config: the shape flowing in,
// and what the layer's own checks decide.
struct LayerImport {
    const LayerReader& l;
    bool& image;              // whether the layer's input is an image (rank 4); set to whether its output is
    bool functional = false;  // a functional model (merge layers read several layers)
    bool noBias = false;      // use_bias: false: the bias imports as zeros

    void needImage() const {
        if (!image) l.fail("needs an image input [height, width, channels] but receives a flat one");
    }
    void keepsBias() {
        noBias = !l.boolean("use_bias", true);  // gltrain's Dense and Conv2D always have one
    }
};

// Each layer's checks of the TF.js config beyond its mapped fields (which are
// read and range-checked by then), and the gltrain layer it becomes.
// Dense reads a flat input or a sequence [steps, features] (Keras applies it at each step); compile
// names an image input as the error it is.
inline Layer importLayer(Dense d, LayerImport& im) {
    im.l.requireNull(
        {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint"});
    im.keepsBias();
    return d;
}
inline Layer importLayer(Conv2D c, LayerImport& im) {
    im.needImage();
    im.l.requireNull(
        {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint"});
    im.l.channelsLast();
    im.l.require("groups", 1, "grouped convolutions");
    im.keepsBias();
    return c;
}
inline Layer importLayer(DepthwiseConv2D d, LayerImport& im) {
    im.needImage();
    im.l.requireNull({"depthwise_regularizer", "bias_regularizer", "activity_regularizer", "depthwise_constraint",
                      "bias_constraint"});
    im.l.channelsLast();
    im.keepsBias();
    return d;
}
inline Layer importLayer(SeparableConv2D sc, LayerImport& im) {
    im.needImage();
    im.l.requireNull({"depthwise_regularizer", "pointwise_regularizer", "bias_regularizer", "activity_regularizer",
                      "depthwise_constraint", "pointwise_constraint", "bias_constraint"});
    im.l.channelsLast();
    im.keepsBias();
    return sc;
}
template <class Pool>
Layer importPool(Pool p, LayerImport& im) {
    im.needImage();
    im.l.channelsLast();
    p.stride = im.l.square("strides", p.poolSize);
    return p;
}
inline Layer importLayer(Conv2DTranspose t, LayerImport& im) {
    im.needImage();
    im.l.requireNull({"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                      "bias_constraint", "output_padding"});
    im.l.channelsLast();
    if (im.l.pair("dilation_rate", 1) != Size2{1}) im.l.fail("dilation_rate other than 1 is not supported");
    im.keepsBias();
    return t;
}
inline Layer importLayer(Conv1D c, LayerImport& im) {
    im.needImage();
    im.l.requireNull(
        {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint"});
    im.l.channelsLast();
    im.keepsBias();
    return c;
}
template <class Pool>
Layer importPool1d(Pool p, LayerImport& im) {
    im.needImage();
    im.l.channelsLast();
    p.stride = im.l.square("strides", p.poolSize);
    return p;
}
inline Layer importLayer(MaxPool1D p, LayerImport& im) { return importPool1d(p, im); }
inline Layer importLayer(AveragePool1D p, LayerImport& im) { return importPool1d(p, im); }
inline Layer importLayer(MaxPool2D p, LayerImport& im) { return importPool(p, im); }
inline Layer importLayer(AveragePool2D p, LayerImport& im) { return importPool(p, im); }
// A global pooling: an image in, [channels] out.
template <class G>
Layer importGlobalPool(G g, LayerImport& im) {
    im.needImage();
    im.l.channelsLast();
    if (im.l.boolean("keepdims", false)) im.l.fail("keepdims: true is not supported (the output is [channels])");
    im.image = false;
    return g;
}
inline Layer importLayer(GlobalAveragePooling2D g, LayerImport& im) { return importGlobalPool(g, im); }
inline Layer importLayer(GlobalMaxPooling2D g, LayerImport& im) { return importGlobalPool(g, im); }
inline Layer importLayer(GlobalAveragePooling1D g, LayerImport& im) { return importGlobalPool(g, im); }
// Token ids [steps] in, a sequence [steps, outputDim] out.
inline Layer importLayer(Embedding e, LayerImport& im) {
    if (im.image) im.l.fail("needs token ids [steps] but receives an image or a sequence");
    im.l.requireNull({"embeddings_regularizer", "activity_regularizer", "embeddings_constraint"});
    if (im.l.boolean("mask_zero", false)) im.l.fail("mask_zero: true is not supported");
    im.image = true;
    return e;
}
// Keras's classes that TF.js has not (exportExtras refuses them too).
inline Layer importLayer(MultiHeadAttention, LayerImport& im) {
    im.l.fail("MultiHeadAttention is not supported (TF.js has no such layer)");
}
inline Layer importLayer(PositionEmbedding, LayerImport& im) {
    im.l.fail("PositionEmbedding is not supported (TF.js has no such layer)");
}
// Over the last axis only, with its scale and shift.
inline Layer importLayer(LayerNormalization n, LayerImport& im) {
    const LayerReader& l = im.l;
    l.requireNull({"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
    const Json* axis = l.get("axis");
    const Json a = axis && axis->is_array() && axis->size() == 1 ? (*axis)[0] : axis ? *axis : Json(-1);
    if (a != Json(-1)) l.fail("axis " + Reader::brief(*axis) + " is not supported (only -1, the last axis)");
    if (!l.boolean("center", true) || !l.boolean("scale", true))
        l.fail("center and scale must be true (gltrain's LayerNormalization always has gamma and beta)");
    return n;
}
// A sequence [steps, features] in; [units] out, or [steps, units] with return_sequences. implementation only
// changes the kernels' grouping: the weights are the same.
template <RecurrentKind K>
Layer importLayer(Recurrent<K> r, LayerImport& im) {
    const LayerReader& l = im.l;
    if (!im.image) l.fail("needs a sequence [steps, features] but receives a flat input");
    l.requireNull({"kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
                   "kernel_constraint", "recurrent_constraint", "bias_constraint"});
    for (const char* key : {"return_state", "stateful"})
        if (l.boolean(key, false)) l.fail(std::string(key) + ": true is not supported");
    for (const char* key : {"dropout", "recurrent_dropout"})
        if (l.number(key, 0.0f) != 0.0f) l.fail(std::string(key) + " is not supported (only 0)");
    if (K == RecurrentKind::Gru && l.boolean("reset_after", false))
        l.fail("reset_after: true is not supported (TF.js's GRU resets before the recurrent product)");
    im.image = r.returnSequences;
    return r;
}
// The wrapped layer's config ("layer": an LSTM or a GRU reading forwards) as Bidirectional's own fields.
inline Layer importLayer(Bidirectional b, LayerImport& im) {
    const LayerReader& l = im.l;
    const Json* inner = l.get("layer");
    if (!inner || !inner->is_object()) l.fail("has no wrapped layer config (\"layer\")");
    const std::string cls = l.r.string(l.r.field(*inner, "class_name", l.where + ": layer"), l.where + ": layer");
    if (cls != LSTM::kTfjsClass && cls != GRU::kTfjsClass) l.fail("wraps a " + cls + " (only an LSTM or a GRU)");
    b.layer = cls == GRU::kTfjsClass ? GRU::kType : LSTM::kType;
    const LayerReader wrapped{l.r, l.r.field(*inner, "config", l.where + ": layer"), l.where + ": layer"};
    b.withDirections([&](auto w, const auto&) {
        readMappedFields(wrapped, w, [&] { return activation(wrapped, wrapped.string("activation", "tanh")); });
        LayerImport checks{wrapped, im.image, im.functional};
        importLayer(w, checks);
        if (w.goBackwards) wrapped.fail("go_backwards: true is not supported (Bidirectional reads both ways itself)");
        b.units = w.units;
        b.activation = w.activation;
        b.recurrentActivation = w.recurrentActivation;
        b.useBias = w.useBias;
        b.returnSequences = w.returnSequences;
        return 0;
    });
    return b;
}
// A variable's name in the weights manifest: a Bidirectional's directions are named after the layer it wraps
// (forward_<its name>/kernel), which gltrain calls by its type ("lstm", "gru").
inline std::string manifestVariable(const Layer& layer, const LayerReader& l, const std::string& variable) {
    const auto* b = std::get_if<Bidirectional>(&layer);
    if (!b) return variable;
    const std::string wrapped =
        LayerReader{l.r, l.r.field(*l.get("layer"), "config", l.where), l.where + ": layer"}.string("name", b->layer);
    for (const char* direction : {"forward_", "backward_"})
        if (variable.rfind(std::string(direction) + b->layer + "/", 0) == 0)
            return direction + wrapped + variable.substr(variable.find('/'));
    return variable;
}
inline Layer importLayer(GlobalMaxPooling1D g, LayerImport& im) { return importGlobalPool(g, im); }
inline Layer importLayer(Flatten f, LayerImport& im) {
    im.l.channelsLast();
    im.image = false;
    return f;
}
inline Layer importLayer(BatchNormalization bn, LayerImport& im) {
    const LayerReader& l = im.l;
    l.requireNull({"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
    const Json* axis = l.get("axis");
    const Json a = axis && axis->is_array() && axis->size() == 1 ? (*axis)[0] : axis ? *axis : Json(-1);
    if (a != Json(-1) && a != Json(im.image ? 3 : 1))
        l.fail("axis " + Reader::brief(a) + " is not supported (gltrain normalizes the last axis, -1)");
    if (!l.boolean("center", true) || !l.boolean("scale", true))
        l.fail("center: false or scale: false is not supported (gltrain learns both gamma and beta)");
    if (l.boolean("renorm", false)) l.fail("renorm is not supported");
    return bn;
}
inline Activation activation(const LayerReader& l, const std::string& name);
inline Layer importLayer(ActivationLayer a, LayerImport& im) {
    const std::string name =
        im.l.r.string(im.l.r.field(im.l.config, "activation", im.l.where), im.l.where + ": activation");
    if (name == "softmax") return Softmax{a.name};  // over the last axis, as Keras's
    a.activation = activation(im.l, name);
    return a;
}
inline Layer importLayer(Dropout d, LayerImport& im) {
    if (im.l.get("noise_shape")) im.l.fail("noise_shape is not supported");
    return d;
}
// Merge layers read several layers: only a functional model holds them.
template <MergeKind K>
Layer importLayer(Merge<K> m, LayerImport& im) {
    if (!im.functional) im.l.fail("a merge layer reads several layers, which a Sequential model cannot hold");
    return m;
}
inline Layer importLayer(Concatenate c, LayerImport& im) {
    if (!im.functional) im.l.fail("a merge layer reads several layers, which a Sequential model cannot hold");
    return c;
}
inline Layer importLayer(Softmax s, LayerImport&) { return s; }  // its axis is in the field table
// Reshape to one size is flat; to two or three, a sequence or an image (compile checks the sizes).
inline Layer importLayer(Reshape r, LayerImport& im) {
    im.image = r.targetShape.size() >= 2;
    return r;
}
inline Layer importLayer(Permute p, LayerImport&) { return p; }
template <class L>
Layer importImageLayer(L l, LayerImport& im) {
    im.needImage();
    im.l.channelsLast();
    return l;
}
inline Layer importLayer(ZeroPadding2D z, LayerImport& im) { return importImageLayer(z, im); }
inline Layer importLayer(Cropping2D c, LayerImport& im) { return importImageLayer(c, im); }
inline Layer importLayer(UpSampling2D u, LayerImport& im) { return importImageLayer(u, im); }

// Whether a Keras class name is layer L's (its name, or another name Keras has for it).
template <class L, class = void>
struct TfjsAlias {
    static bool is(const std::string&) { return false; }
};
template <class L>
struct TfjsAlias<L, std::void_t<decltype(L::kTfjsAlias)>> {
    static bool is(const std::string& cls) { return cls == L::kTfjsAlias; }
};
template <class L>
bool isTfjsClass(const std::string& cls) {
    return cls == L::kTfjsClass || TfjsAlias<L>::is(cls);
}

// The TF.js classes an import takes, for messages.
inline std::string supportedClasses() {
    std::string list;
    forEachType(LayerTypes{}, [&](auto* t) {
        list += (list.empty() ? "" : ", ") + std::string(std::remove_pointer_t<decltype(t)>::kTfjsClass);
    });
    return list + ", LeakyReLU, ELU, ReLU, InputLayer";
}

inline const char* kSupportedActivations =
    "linear, relu, sigmoid, tanh, softplus, elu, selu, relu6, swish (silu), mish, hard_sigmoid, softsign, gelu, "
    "gelu_new, softmax";

// An activation name of Keras/TF.js; softmax is the caller's business. Both spellings of
// hardSigmoid are TF.js's (it writes snake_case, its classes are camelCase) and mean its
// clip(0.2 x + 0.5, 0, 1), as in Keras 2; "silu" is Keras 3's name for swish.
inline Activation activation(const LayerReader& l, const std::string& name) {
    static const std::pair<const char*, Activation> kNames[] = {{"linear", Activation::Linear},
                                                                {"relu", Activation::ReLU},
                                                                {"sigmoid", Activation::Sigmoid},
                                                                {"tanh", Activation::Tanh},
                                                                {"softplus", Activation::Softplus},
                                                                {"elu", Activation::ELU},
                                                                {"selu", Activation::SELU},
                                                                {"relu6", Activation::ReLU6},
                                                                {"swish", Activation::Swish},
                                                                {"silu", Activation::Swish},
                                                                {"mish", Activation::Mish},
                                                                {"hard_sigmoid", Activation::HardSigmoid},
                                                                {"hardSigmoid", Activation::HardSigmoid},
                                                                {"softsign", Activation::Softsign},
                                                                {"gelu", Activation::GELUExact},
                                                                {"gelu_new", Activation::GELU}};
    for (const auto& [tfjsName, a] : kNames)
        if (name == tfjsName) return a;
    l.fail("activation '" + name + "' is not supported (supported: " + kSupportedActivations + ")");
}

// [null, n], [null, steps, channels] (a sequence: an image of height 1) or
// [null, h, w, c] (Keras's batch_input_shape / batch_shape).
inline Shape3 inputShape(const LayerReader& l, const Json& j) {
    if (!j.is_array() || j.size() < 2 || j.size() > 4)
        l.fail("input shape " + Reader::brief(j) +
               " is not [batch, n], [batch, steps, channels] or [batch, height, width, channels]");
    std::vector<int> dims;
    for (size_t k = 1; k < j.size(); ++k) {
        if (j[k].is_null())
            l.fail("input shape " + Reader::brief(j) + " has an unknown size (gltrain needs fixed sizes)");
        const int d = l.r.integer(j[k], l.where + ": input shape");
        if (d <= 0) l.fail("input shape " + Reader::brief(j) + " has a size that is not positive");
        dims.push_back(d);
    }
    if (dims.size() == 2) return Shape3{1, dims[0], dims[1]};
    return dims.size() == 1 ? Shape3{1, 1, dims[0]} : Shape3{dims[0], dims[1], dims[2]};
}

}  // namespace tfjs_detail

// Parses and validates model.json's text and its weights (every shard in
// manifest order, concatenated — what tf.io.fromMemory takes as weightData).
// FormatError naming the source, the layer and the field on anything gltrain
// cannot represent exactly; nothing is created on a GPU.
inline TfjsModel parseTfjs(const std::string& modelJson, const std::vector<uint8_t>& weightData,
                           const std::string& source = "model.json") {
    using tfjs_detail::Json;
    const tfjs_detail::Reader r(source);
    Json root;
    try {
        root = Json::parse(modelJson);
    } catch (const nlohmann::json::exception& e) {
        r.fail(std::string("not valid JSON: ") + e.what());
    }
    if (!root.is_object()) r.fail("model.json must be a JSON object, got " + tfjs_detail::Reader::brief(root));
    if (const Json* format = tfjs_detail::Reader::optional(root, "format")) {
        const std::string f = r.string(*format, "format");
        if (f != "layers-model")
            r.fail("format '" + f +
                   "' is not a TF.js Layers model (graph models cannot be imported: they have no layers)");
    }
    const Json* topology = &r.field(root, "modelTopology", "model.json");
    if (topology->is_object() && topology->contains("model_config"))
        topology = &topology->at("model_config");  // Keras converter
    const std::string className =
        r.string(r.field(*topology, "class_name", "modelTopology"), "modelTopology.class_name");
    const bool functional = className == "Model" || className == "Functional";
    if (className != "Sequential" && !functional)
        r.fail("the model is a " + className + " model; only Sequential and functional (Model) models can be imported");
    const Json& config = r.field(*topology, "config", "modelTopology");
    const Json& layerList = config.is_array() ? config : r.field(config, "layers", "modelTopology.config");
    if (!layerList.is_array() || layerList.empty()) r.fail("modelTopology.config.layers must be a non-empty array");

    TfjsModel model;
    bool haveInput = false;
    bool image = false;  // whether the current layer's input is an image (rank 4)
    std::set<std::string> names;
    // Per weight-carrying layer: the variables it needs, with checks on their shapes.
    struct Needed {
        std::string layer, variable;
        std::string manifest;  // the variable as the weights manifest names it
        size_t rank;
        std::vector<std::pair<size_t, int64_t>> dims;  // (axis, size) known from the config
    };
    std::vector<Needed> needed;
    std::vector<std::pair<std::string, int64_t>> zeroBiases;  // use_bias: false

    auto freshName = [&](const std::string& base) {
        std::string n = base;
        for (int k = 1; names.count(n); ++k) n = base + "_" + std::to_string(k);
        names.insert(n);
        return n;
    };
    // A functional model: each layer's outputs by (name, node index) -> the
    // layer giving it (negative: a model input), and whether a layer's output is an image.
    using Ref = std::pair<std::string, int>;
    std::map<Ref, int> valueOf;
    std::map<std::string, bool> imageOut;
    // The model's inputs in input_layers' order, by name.
    std::map<std::string, int> inputIndex;
    if (functional) {
        const Json& inputs = r.field(config, "input_layers", "modelTopology.config");
        if (!inputs.is_array() || inputs.empty())
            r.fail("modelTopology.config.input_layers must be a non-empty array of [name, 0, 0]");
        for (const Json& in : inputs) {
            if (!in.is_array() || in.empty() || !in[0].is_string())
                r.fail("modelTopology.config.input_layers: expected [name, 0, 0], got " +
                       tfjs_detail::Reader::brief(in));
            if (!inputIndex.emplace(in[0].get<std::string>(), int(inputIndex.size())).second)
                r.fail("modelTopology.config.input_layers names '" + in[0].get<std::string>() + "' twice");
        }
        model.inputShapes.resize(inputIndex.size());
    }
    // Each inbound node of a functional layer ([[["name", node, 0, {}], ...], ...]): the outputs it reads.
    auto inboundNodes = [&](const Json& entry, const tfjs_detail::LayerReader& l) {
        const Json* nodes = tfjs_detail::Reader::optional(entry, "inbound_nodes");
        if (!nodes || !nodes->is_array())
            l.fail("has no inbound_nodes (a functional model's layers say what they read)");
        if (nodes->empty()) l.fail("has no inbound node (only the model's InputLayers read nothing)");
        std::vector<std::vector<Ref>> out;
        for (size_t n = 0; n < nodes->size(); ++n) {
            const Json& node = (*nodes)[n];
            if (!node.is_array() || node.empty())
                l.fail("inbound_nodes[" + std::to_string(n) + "] must be a non-empty array of [layer, node, 0, {}]");
            out.emplace_back();
            for (const Json& t : node) {
                if (!t.is_array() || t.size() < 3 || !t[0].is_string() || !t[1].is_number_integer() || t[1] < 0)
                    l.fail("an inbound tensor must be [layer, node, tensor, kwargs], got " +
                           tfjs_detail::Reader::brief(t));
                if (t[2] != Json(0))
                    l.fail("reads tensor " + tfjs_detail::Reader::brief(t[2]) + " of '" + t[0].get<std::string>() +
                           "' (only each layer's one output is supported)");
                if (t.size() > 3 && !(t[3].is_object() && t[3].empty()))
                    l.fail("passes arguments to its call (" + tfjs_detail::Reader::brief(t[3]) +
                           "), which is not supported");
                out.back().push_back({t[0].get<std::string>(), t[1].get<int>()});
            }
        }
        return out;
    };
    // A call of a layer (its inbound node `node`) that reads outputs not made
    // yet (a later layer's): made once they are.
    struct Call {
        size_t layer;  // the layer's first call
        std::string name;
        int node;
        std::vector<Ref> reads;
        bool softmax, image;  // a Softmax split off the layer follows each call; the layer reads an image
    };
    std::vector<Call> pending;
    auto ready = [&](const Call& c) {
        for (const Ref& from : c.reads)
            if (!valueOf.count(from)) return false;
        return c.node == 0 || valueOf.count({c.name, c.node - 1});
    };
    // A later call: a layer sharing the first's weights, and its own Softmax when one is split off.
    auto makeCall = [&](const Call& c) {
        if (imageOut.at(c.reads[0].first) != c.image)
            r.fail("layer '" + c.name + "' is applied to an image and to flat rows (its inbound nodes 0 and " +
                   std::to_string(c.node) + ")");
        std::vector<int> in;
        for (const Ref& from : c.reads) in.push_back(valueOf.at(from));
        const Layer layer = model.layers[c.layer], softmax = model.layers[c.layer + (c.softmax ? 1 : 0)];
        model.layers.push_back(layer);
        model.inbound.push_back(std::move(in));
        model.shares.push_back(int(c.layer));
        if (c.softmax) {
            model.layers.push_back(softmax);
            model.inbound.push_back({int(model.layers.size()) - 2});
            model.shares.push_back(int(c.layer + 1));
        }
        valueOf[{c.name, c.node}] = int(model.layers.size()) - 1;
    };
    auto makeReadyCalls = [&] {
        for (bool progress = true; progress;) {
            progress = false;
            for (size_t k = 0; k < pending.size(); ++k)
                if (ready(pending[k])) {
                    makeCall(pending[k]);
                    pending.erase(pending.begin() + std::ptrdiff_t(k));
                    progress = true;
                    break;
                }
        }
    };

    for (size_t i = 0; i < layerList.size(); ++i) {
        const Json& entry = layerList[i];
        const std::string where0 = "layer " + std::to_string(i);
        const std::string cls = r.string(r.field(entry, "class_name", where0), where0 + ".class_name");
        const Json& cfg = r.field(entry, "config", where0);
        if (!cfg.is_object()) r.fail(where0 + " (" + cls + "): config must be an object");
        std::string name = cfg.contains("name") ? r.string(cfg.at("name"), where0 + ".name") : "";
        const tfjs_detail::LayerReader l{r, cfg, where0 + " '" + name + "' (" + cls + ")"};
        if (name.empty()) l.fail("has no name");
        if (name.find('/') != std::string::npos) l.fail("the name contains '/' (weights are named <layer>/<variable>)");
        if (!names.insert(name).second) l.fail("another layer has the same name");
        if (const Json* dtype = l.get("dtype")) {
            const Json& d =
                dtype->is_object() && dtype->contains("config") ? (*dtype)["config"].value("name", Json()) : *dtype;
            if (d != Json("float32"))
                l.fail("dtype " + tfjs_detail::Reader::brief(*dtype) + " is not supported (float32)");
        }
        const Json* batchShape = l.get("batch_input_shape");
        if (!batchShape) batchShape = l.get("batch_shape");  // Keras 3
        std::vector<std::vector<Ref>> calls;                 // a functional layer's inbound nodes
        if (functional && cls == "InputLayer") {
            const auto k = inputIndex.find(name);
            if (k == inputIndex.end()) l.fail("is not one of modelTopology.config.input_layers");
            if (!batchShape) l.fail("has no batch_input_shape (the model's input size is unknown)");
            const Shape3 shape = tfjs_detail::inputShape(l, *batchShape);
            if (l.boolean("sparse", false) || l.boolean("ragged", false))
                l.fail("sparse or ragged input is not supported");
            model.inputShapes[size_t(k->second)] = shape;
            haveInput = true;
            valueOf[{name, 0}] = graph::LayerGeometry::modelInput(k->second);
            imageOut[name] = shape.height != 1 || shape.width != 1;
            continue;
        }
        if (functional) {
            calls = inboundNodes(entry, l);
            for (const Ref& from : calls[0])
                if (!valueOf.count(from))
                    l.fail("reads '" + from.first + "'" +
                           (from.second ? " (its inbound node " + std::to_string(from.second) + ")" : "") +
                           ", which is not a layer or input before it");
            image = imageOut.at(calls[0][0].first);
        } else if (i == 0 || cls == "InputLayer") {
            if (i != 0) l.fail("an InputLayer must come first");
            if (!batchShape) l.fail("the first layer has no batch_input_shape (the model's input size is unknown)");
            model.inputShape = tfjs_detail::inputShape(l, *batchShape);
            image = model.inputShape.height != 1 || model.inputShape.width != 1;
            haveInput = true;
            if (cls == "InputLayer") {
                if (l.boolean("sparse", false) || l.boolean("ragged", false))
                    l.fail("sparse or ragged input is not supported");
                continue;
            }
        }
        const size_t layersBefore = model.layers.size();
        // A fused activation; softmax becomes a Softmax layer after this one.
        bool softmaxAfter = false;
        auto fusedActivation = [&]() {
            const std::string a = l.string("activation", "linear");
            if (a != "softmax") return tfjs_detail::activation(l, a);
            softmaxAfter = true;  // a Softmax layer over the last axis, as Keras's activation
            return Activation::Linear;
        };
        if (cls == "LeakyReLU") {
            // Keras 2 and TF.js: alpha (default 0.3); Keras 3: negative_slope.
            const float alpha = l.get("negative_slope") ? l.number("negative_slope", 0.3f) : l.number("alpha", 0.3f);
            ActivationLayer leaky{Activation::LeakyReLU, alpha};
            leaky.name = name;
            model.layers.push_back(leaky);
        } else if (cls == "ELU") {
            ActivationLayer elu{Activation::ELU};
            elu.eluAlpha = l.number("alpha", 1.0f);
            elu.name = name;
            model.layers.push_back(elu);
        } else if (cls == "ReLU") {
            l.require("negative_slope", 0, "only plain ReLU: use a LeakyReLU layer");
            l.require("threshold", 0, "only plain ReLU");
            // max_value 6 is ReLU6; no other cap is.
            const Json* maxValue = l.get("max_value");
            if (maxValue && l.number("max_value", 0.0f) != 6.0f)
                l.fail("max_value " + tfjs_detail::Reader::brief(*maxValue) +
                       " is not supported (only none, plain ReLU, or 6, ReLU6)");
            ActivationLayer relu{maxValue ? Activation::ReLU6 : Activation::ReLU};
            relu.name = name;
            model.layers.push_back(relu);
        } else {
            bool known = false;
            forEachType(LayerTypes{}, [&](auto* t) {
                using L = std::remove_pointer_t<decltype(t)>;
                if (known || !tfjs_detail::isTfjsClass<L>(cls)) return;
                known = true;
                // The fields the layer's table maps to TF.js config names, each checked as the table says.
                L layer;
                layer.name = name;
                tfjs_detail::readMappedFields(l, layer, fusedActivation);
                tfjs_detail::LayerImport im{l, image, functional};
                const Layer imported = tfjs_detail::importLayer(std::move(layer), im);
                // Its weights, as its header declares them; the sizes that depend on the input
                // (0 here: parseTfjs does not infer shapes) are checked by importTfjs.
                for (const LayerVariable& v : layerVariables(imported, Shape3{})) {
                    if (im.noBias && std::string(v.name) == "bias") {
                        zeroBiases.push_back({name, v.shape[0]});
                        continue;
                    }
                    Needed n{name, v.name, tfjs_detail::manifestVariable(imported, l, v.name), v.shape.size(), {}};
                    for (size_t axis = 0; axis < v.shape.size(); ++axis)
                        if (v.shape[axis] > 0) n.dims.push_back({axis, v.shape[axis]});
                    needed.push_back(std::move(n));
                }
                model.layers.push_back(imported);
            });
            if (!known)
                l.fail("layer type " + cls + " is not supported (supported: " + tfjs_detail::supportedClasses() + ")");
        }
        if (softmaxAfter) model.layers.push_back(Softmax{freshName(name + "_softmax")});
        if (functional) {
            // The layer's first call reads its inbound layers; a Softmax split off it reads the layer.
            std::vector<int> in;
            for (const Ref& from : calls[0]) in.push_back(valueOf.at(from));
            model.inbound.push_back(std::move(in));
            model.shares.push_back(-1);
            if (softmaxAfter) {
                model.inbound.push_back({int(layersBefore)});
                model.shares.push_back(-1);
            }
            valueOf[{name, 0}] = int(model.layers.size()) - 1;
            imageOut[name] = image;
            // Its later calls (a shared layer): each a layer sharing its weights.
            for (size_t n = 1; n < calls.size(); ++n)
                pending.push_back({layersBefore, name, int(n), calls[n], softmaxAfter, image});
            makeReadyCalls();
        }
    }
    if (functional) {
        for (const Call& c : pending)
            for (const Ref& from : c.reads)
                if (!valueOf.count(from))
                    r.fail("layer '" + c.name + "' (its inbound node " + std::to_string(c.node) + ") reads '" +
                           from.first + "' (node " + std::to_string(from.second) + "), which no layer or input makes");
        if (inputIndex.size() > 1) model.inputNames.resize(inputIndex.size());
        for (const auto& [inputName, k] : inputIndex) {
            if (!valueOf.count({inputName, 0}))
                r.fail("modelTopology.config.input_layers names '" + inputName + "', which is not an InputLayer");
            if (inputIndex.size() > 1) model.inputNames[size_t(k)] = inputName;
        }
        model.inputShape = model.inputShapes.at(0);
        // The output layers, by name and node.
        const Json& outputs = r.field(config, "output_layers", "modelTopology.config");
        if (!outputs.is_array() || outputs.empty())
            r.fail("modelTopology.config.output_layers must be a non-empty array of [name, node, 0]");
        for (const Json& o : outputs) {
            const bool wellFormed = o.is_array() && o.size() >= 2 && o[0].is_string() && o[1].is_number_integer();
            const auto it = wellFormed ? valueOf.find({o[0].get<std::string>(), o[1].get<int>()}) : valueOf.end();
            if (it == valueOf.end() || it->second < 0)
                r.fail("modelTopology.config.output_layers: " + tfjs_detail::Reader::brief(o) +
                       " is not [name, node, 0] of a layer's output");
            if (!wellFormed || (o.size() > 2 && o[2] != Json(0)))
                r.fail("modelTopology.config.output_layers: " + tfjs_detail::Reader::brief(o) +
                       " reads a tensor other than the layer's one output");
            model.outputs.push_back(it->second);
        }
    }
    if (!haveInput) r.fail("the model has no input shape");
    if (model.layers.empty()) r.fail("the model has no layers besides its input");

    // The manifest: groups of weights, their bytes back to back in weightData.
    const Json& manifest = r.field(root, "weightsManifest", "model.json");
    if (!manifest.is_array()) r.fail("weightsManifest must be an array");
    std::map<std::string, TensorData> found;
    size_t offset = 0;
    for (size_t g = 0; g < manifest.size(); ++g) {
        const std::string gw = "weightsManifest[" + std::to_string(g) + "]";
        const Json& list = r.field(manifest[g], "weights", gw);
        if (!list.is_array()) r.fail(gw + ".weights must be an array");
        for (size_t k = 0; k < list.size(); ++k) {
            const std::string ww = gw + ".weights[" + std::to_string(k) + "]";
            const std::string name = r.string(r.field(list[k], "name", ww), ww + ".name");
            const std::string w = "weight '" + name + "'";
            if (list[k].contains("quantization")) r.fail(w + " is quantized (only float32 weights are supported)");
            const std::string dtype = list[k].contains("dtype") ? r.string(list[k]["dtype"], w + ".dtype") : "float32";
            if (dtype != "float32") r.fail(w + " has dtype " + dtype + " (only float32 weights are supported)");
            const Json& shapeJson = r.field(list[k], "shape", w);
            if (!shapeJson.is_array()) r.fail(w + ": shape must be an array");
            std::vector<int64_t> shape;
            uint64_t count = 1;
            for (const Json& d : shapeJson) {
                const int v = r.integer(d, w + ": shape");
                if (v < 0) r.fail(w + ": shape " + tfjs_detail::Reader::brief(shapeJson) + " has a negative size");
                shape.push_back(v);
                count *= uint64_t(v);
                if (count > weightData.size()) break;  // caught below, before any overflow
            }
            if (count > (weightData.size() - offset) / 4)
                r.fail("the weights hold " + std::to_string(weightData.size()) + " bytes, but " + w + " (shape " +
                       tfjs_detail::Reader::brief(shapeJson) + ") needs bytes " + std::to_string(offset) + ".." +
                       std::to_string(offset + count * 4) + " (are shards missing?)");
            std::vector<uint8_t> bytes(weightData.begin() + std::ptrdiff_t(offset),
                                       weightData.begin() + std::ptrdiff_t(offset + count * 4));
            offset += size_t(count) * 4;
            if (!found.emplace(name, TensorData(Dtype::F32, shape, std::move(bytes))).second)
                r.fail(w + " appears twice in the weights manifest");
        }
    }
    if (offset != weightData.size())
        r.fail("the weights hold " + std::to_string(weightData.size()) + " bytes, but the manifest describes " +
               std::to_string(offset));
    for (const Needed& n : needed) {
        const std::string full = n.layer + "/" + n.manifest;
        auto it = found.find(full);
        if (it == found.end()) r.fail("layer '" + n.layer + "' needs weight '" + full + "', which the manifest lacks");
        const std::vector<int64_t>& shape = it->second.shape;
        bool ok = shape.size() == n.rank;
        for (auto& [axis, size] : n.dims) ok = ok && shape[axis] == size;
        if (!ok)
            r.fail("weight '" + full + "' has shape " + st_detail::shapeText(shape) + ", which does not fit layer '" +
                   n.layer + "' (rank " + std::to_string(n.rank) + (n.rank == 4 ? ": [kh, kw, in, filters]" : "") +
                   ")");
        model.weights.emplace_back(n.layer + "/" + n.variable, std::move(it->second));
        found.erase(it);
    }
    if (!found.empty())
        r.fail("weight '" + found.begin()->first + "' in the manifest belongs to no layer of the model");
    for (auto& [layer, units] : zeroBiases) {
        int64_t n = units;
        if (n == 0)  // a depthwise bias has C*M values: the depthwise kernel's [kh, kw, C, M] says how many
            for (const auto& [full, t] : model.weights)
                if (full == layer + "/depthwise_kernel" && t.shape.size() == 4) n = t.shape[2] * t.shape[3];
        model.weights.emplace_back(layer + "/bias", TensorData::f32({n}, std::vector<float>(size_t(n), 0.0f)));
    }
    return model;
}

// A compiled Sequential on ctx holding the parsed model's weights. Shapes are
// checked against what the layers infer (a kernel that does not fit its
// input is a FormatError naming the weight, both shapes and the source).
inline std::unique_ptr<Model> importTfjs(Context& ctx, const TfjsModel& parsed, const CompileOptions& options = {},
                                         const std::string& source = "model.json") {
    options.optimizer.validate();  // the caller's options: their errors are not the file's
    options.schedule.validate();
    std::unique_ptr<Model> model;
    if (parsed.inbound.empty()) {
        auto s = std::make_unique<Sequential>(ctx, parsed.inputShape);
        for (const Layer& l : parsed.layers) s->add(l);
        model = std::move(s);
    } else {
        std::vector<LayerNode> nodes;
        for (size_t i = 0; i < parsed.layers.size(); ++i)
            nodes.push_back({parsed.layers[i], parsed.inbound[i], parsed.shares.empty() ? -1 : parsed.shares[i]});
        try {  // (an output named twice, say)
            model = std::make_unique<Model>(
                ctx, parsed.inputShapes.empty() ? std::vector<Shape3>{parsed.inputShape} : parsed.inputShapes,
                std::move(nodes), parsed.outputs, parsed.inputNames);
        } catch (const ArgumentError& e) {
            throw FormatError(source + ": " + e.what());
        }
    }
    try {
        model->compile(options);
    } catch (const ArgumentError& e) {
        throw FormatError(source + ": the layers do not fit together: " + e.what());
    }
    // The shape every weight must have, from the shapes compile() inferred.
    std::map<std::string, std::vector<int64_t>> expected;
    for (size_t i = 0; i < model->layerCount(); ++i) {
        if (model->shares(i) >= 0) continue;  // a shared layer's weights are its first call's
        const std::string& name = model->layerName(i);
        for (const LayerVariable& v : layerVariables(model->layer(i), model->layerInputShape(i)))
            expected[name + "/" + v.name] = v.shape;
    }
    for (auto& [name, t] : parsed.weights) {
        auto it = expected.find(name);
        if (it == expected.end())
            throw FormatError(source + ": weight '" + name + "' belongs to no layer of the model");
        if (it->second != t.shape)
            throw FormatError(source + ": weight '" + name + "' has shape " + st_detail::shapeText(t.shape) +
                              ", the model needs " + st_detail::shapeText(it->second));
    }
    try {  // all or nothing; also rejects NaN and Inf
        model->loadCheckpoint(serializeSafetensors(parsed.weights), source + " weights");
    } catch (const ArgumentError& e) {
        throw FormatError(e.what());
    }
    return model;
}

inline std::unique_ptr<Model> importTfjs(Context& ctx, const std::string& modelJson,
                                         const std::vector<uint8_t>& weightData, const CompileOptions& options = {},
                                         const std::string& source = "model.json") {
    return importTfjs(ctx, parseTfjs(modelJson, weightData, source), options, source);
}

// Reads path (a model.json) and the shards its manifest names, from the same
// directory; only plain relative file names there are followed.
inline std::unique_ptr<Model> loadTfjs(Context& ctx, const std::string& path, const CompileOptions& options = {}) {
    const std::vector<uint8_t> jsonBytes = readFile(path, "TF.js model");
    const std::string text(jsonBytes.begin(), jsonBytes.end());
    const tfjs_detail::Reader r(path);
    std::vector<uint8_t> weights;
    tfjs_detail::Json root;
    try {
        root = tfjs_detail::Json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        r.fail(std::string("not valid JSON: ") + e.what());
    }
    const size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    if (root.is_object() && root.contains("weightsManifest") && root["weightsManifest"].is_array())
        for (const auto& group : root["weightsManifest"]) {
            const tfjs_detail::Json& paths = r.field(group, "paths", "a weightsManifest group");
            if (!paths.is_array()) r.fail("weightsManifest paths must be an array");
            for (const auto& p : paths) {
                const std::string file = r.string(p, "a weightsManifest path");
                if (file.empty() || file[0] == '/' || file.find("..") != std::string::npos ||
                    file.find(':') != std::string::npos)
                    r.fail("weights path '" + file + "' is not a file name next to model.json");
                const std::vector<uint8_t> shard = readFile(dir + file, "TF.js weights");
                weights.insert(weights.end(), shard.begin(), shard.end());
            }
        }
    return importTfjs(ctx, text, weights, options, path);
}

}  // namespace gltrain
