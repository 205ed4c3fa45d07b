// A compiled model's variables — every layer's parameters and statistics, as
// the layers declare them (layers/variable.hpp) — and its checkpoint: which
// tensors it holds in which order, under which names, with which metadata.
// Both engines store the values (engine/engine.hpp); this is where they are
// named, so a checkpoint or snapshot of either engine is the same file.
#pragma once
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gltrain/graph/model_graph.hpp"
#include "gltrain/layers.hpp"
#include "gltrain/safetensors.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain {

// A layer as compiled: its name, spec and geometry (input and output shapes, window).
struct CompiledLayer {
    const Layer* spec = nullptr;
    graph::LayerGeometry geometry;
};

struct ModelVariable {
    std::string layer;                    // the layer's name
    graph::VariableDecl decl;             // name, saved shape, trainable (a parameter of a layer that trains)
    bool frozen = false;                  // a parameter of a frozen layer: no gradient, slots or update
    bool decays = false;                  // a parameter weight decay applies to (OptimizerConfig::decays)
    int rows = 0, cols = 0;               // the matrix it is stored as
    std::function<HostMatrix()> initial;  // its value at compile, from the seed
    std::string key() const { return layer + "/" + decl.name; }
};

// One tensor of a checkpoint: a variable's value (slot -1) or one of its optimizer slots.
struct SavedTensor {
    size_t var = 0;
    int slot = -1;
    std::string name;  // "<layer>/<variable>" or "<layer>/<variable>/slot<i>"
};

struct ModelVariables {
    std::vector<ModelVariable> list;  // by layer; in a layer, in its declared order
    int slots = 0;                    // optimizer slots of each trainable variable
    std::vector<SavedTensor> saved;   // per layer: parameters, each with its slots, then statistics

    // The random stream of layer i's k-th variable: 2i + k for the first two
    // (what checkpoints of a seed have always held); a layer of more (attention's
    // eight) draws the others from streams of their own, past 2^31, so that no two
    // variables of a model share one.
    static uint32_t stream(size_t i, size_t k) {
        return k < 2 ? uint32_t(2 * i + k) : 0x80000000u | uint32_t(i) << 4 | uint32_t(k);
    }
    // The variables of `layers` (layer i's k-th variable draws from random stream stream(i, k)).
    static ModelVariables of(const std::vector<CompiledLayer>& layers, const CompileOptions& o) {
        ModelVariables m;
        m.slots = o.optimizer.stateSlots();
        const uint32_t seed = o.seed;
        for (size_t i = 0; i < layers.size(); ++i) {
            if (!layers[i].geometry.weightsOf.empty()) continue;  // a shared layer's variables are its first call's
            const size_t first = m.list.size();
            const std::vector<LayerVariable> vars = layerVariables(*layers[i].spec, layers[i].geometry.in);
            for (size_t k = 0; k < vars.size(); ++k) {
                const LayerVariable v = vars[k];
                ModelVariable mv;
                mv.layer = layers[i].geometry.name;
                mv.decl = {v.name, v.shape, v.trainable && layerTrainable(*layers[i].spec), v.stored()};
                mv.frozen = v.trainable && !mv.decl.trainable;
                mv.decays = v.trainable && o.optimizer.decays(mv.layer, v.name);
                mv.rows = v.rows;
                mv.cols = v.cols;
                mv.initial = [v, seed, s = stream(i, k)] { return v.initial(seed, s); };
                m.list.push_back(std::move(mv));
            }
            for (bool trainable : {true, false})
                for (size_t j = first; j < m.list.size(); ++j) {
                    if (m.list[j].decl.trainable != trainable) continue;
                    m.saved.push_back({j, -1, m.list[j].key()});
                    if (trainable)
                        for (int s = 0; s < m.slots; ++s)
                            m.saved.push_back({j, s, m.list[j].key() + "/slot" + std::to_string(s)});
                }
        }
        m.requireDecayPatternsMatch(o.optimizer);
        return m;
    }
    // The variable a key ("dense_1/kernel") names; list.size() when none.
    size_t find(const std::string& layer, const std::string& name) const {
        for (size_t i = 0; i < list.size(); ++i)
            if (list[i].layer == layer && list[i].decl.name == name) return i;
        return list.size();
    }
    // Each of the optimizer's decay patterns names a parameter: a misspelt layer
    // would otherwise change nothing, silently.
    void requireDecayPatternsMatch(const OptimizerConfig& o) const {
        for (const auto* patterns : {&o.decayInclude, &o.decayExclude})
            for (const std::string& p : *patterns) {
                bool matched = false;
                for (const ModelVariable& v : list)
                    matched = matched || ((v.decl.trainable || v.frozen) &&
                                          OptimizerConfig::matchesAny({p}, v.layer, v.decl.name));
                if (matched) continue;
                const std::string example = list.empty() ? "dense_0/kernel" : list.front().key();
                throw ArgumentError(
                    "compile: optimizer." + std::string(patterns == &o.decayInclude ? "decayInclude" : "decayExclude") +
                    " '" + p + "' names no parameter of the model (a layer's name, or a parameter's: " + example +
                    "; '*' matches any run of characters)");
            }
    }
    // The graph's view of a layer's variables.
    std::vector<graph::VariableDecl> declsOf(const std::string& layer) const {
        std::vector<graph::VariableDecl> out;
        for (const ModelVariable& v : list)
            if (v.layer == layer) out.push_back(v.decl);
        return out;
    }
};

inline std::map<std::string, std::string> checkpointMetadata(const CompileOptions& o, long step) {
    return {{"format", "gltrain-1"},
            {"step", std::to_string(step)},
            {"seed", std::to_string(o.seed)},
            {"optimizer", optimizerName(o.optimizer.kind)}};
}

using CheckpointTensors = std::vector<std::pair<std::string, TensorData>>;

// The step guard keeps non-finite values out of a model's state; should one
// get there all the same, no checkpoint or snapshot is made of it.
inline void requireFiniteTensor(const std::string& name, const std::vector<float>& data, long step) {
    for (float x : data)
        if (!std::isfinite(x))
            throw TrainingError("saveCheckpoint: tensor '" + name + "' holds NaN or Inf at step " +
                                std::to_string(step) + "; no checkpoint is made of a state that is not finite");
}

// A checkpoint's tensors, `read(i)` giving the values of vars.saved[i].
template <class Read>
CheckpointTensors checkpointTensors(const ModelVariables& vars, long step, Read&& read) {
    CheckpointTensors out;
    for (size_t i = 0; i < vars.saved.size(); ++i) {
        const SavedTensor& s = vars.saved[i];
        std::vector<float> data = read(i);
        requireFiniteTensor(s.name, data, step);
        out.emplace_back(s.name, TensorData::f32(vars.list[s.var].decl.savedShape, data));
    }
    return out;
}

// The compiled initial state as a checkpoint (step 0), made on the host.
inline std::vector<uint8_t> initialCheckpoint(const ModelVariables& vars, const CompileOptions& o) {
    std::vector<HostMatrix> initial;
    for (const ModelVariable& v : vars.list) initial.push_back(v.initial());
    auto t = checkpointTensors(vars, 0, [&](size_t i) {
        const SavedTensor& s = vars.saved[i];
        return s.slot < 0 ? initial[s.var].data : std::vector<float>(initial[s.var].data.size(), 0.0f);
    });
    return serializeSafetensors(t, checkpointMetadata(o, 0));
}

// A checkpoint, and every snapshot a fit takes, is one buffer: compile
// refuses a model whose checkpoint one buffer cannot hold (a std::vector's
// max_size: 2^31 - 1 bytes on wasm32) from its shapes, before anything is
// allocated — it failed at fit() or saveCheckpoint() with a bare "vector" before.
inline void requireCheckpointFits(const std::vector<CompiledLayer>& layers, const CompileOptions& options) {
    double params = 0, statistics = 0;
    for (const CompiledLayer& L : layers)
        for (const LayerVariable& v :
             L.geometry.weightsOf.empty() ? layerVariables(*L.spec, L.geometry.in) : std::vector<LayerVariable>{})
            (v.trainable ? params : statistics) += double(v.size());
    const int slotsPerParam = options.optimizer.stateSlots();
    const double slots = params * slotsPerParam, bytes = 8.0 + 4.0 * (params + slots + statistics);
    const double limit = double(std::vector<uint8_t>().max_size());
    if (bytes <= limit) return;
    auto grouped = [](double v) {  // 10803960128 -> "10,803,960,128"
        std::string digits = std::to_string(int64_t(v)), out;
        for (size_t k = 0; k < digits.size(); ++k) {
            if (k && (digits.size() - k) % 3 == 0) out += ',';
            out += digits[k];
        }
        return out;
    };
    auto gib = [](double b, const char* format) {
        char text[32];
        std::snprintf(text, sizeof text, format, b / 1073741824.0);
        return std::string(text);
    };
    std::string parts = grouped(params) + " parameters";
    if (slots > 0)
        parts += ", " + grouped(slots) + " values of " + optimizerName(options.optimizer.kind) + "'s " +
                 std::to_string(slotsPerParam) + " optimizer slot" + (slotsPerParam > 1 ? "s" : "");
    if (statistics > 0) parts += ", " + grouped(statistics) + " statistics";
    throw ArgumentError("compile: the model's checkpoint would take " + gib(bytes, "%.1f") + " GiB (" + grouped(bytes) +
                        " bytes: " + parts + ", 4 bytes each), more than the " + gib(limit + 1, "%g") + " GiB (" +
                        grouped(limit) + " bytes) one " +
#ifdef __EMSCRIPTEN__
                        "WebAssembly " +
#endif
                        "buffer can hold; fit() (whose snapshots are checkpoints) and saveCheckpoint() could not "
                        "make it. Use fewer or smaller layers" +
                        (slots > 0 ? std::string(", or an optimizer with fewer slots (sgd keeps none)") : "") + ".");
}

}  // namespace gltrain
