// Reading a checkpoint into a model: every tensor is checked against the
// model's variables (model/variables.hpp) — names, shapes, dtype, finite
// values, optimizer state of the model's optimizer — before anything changes,
// so a model given a bad file is left as it was.
#pragma once
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gltrain/model/variables.hpp"

namespace gltrain {

struct StagedCheckpoint {
    struct Write {
        size_t var;
        int slot;
        HostMatrix value;
    };
    std::vector<Write> writes;
    bool optimizerState = false;  // the file's slots are taken (else the slots start at zero)
    long step = 0;                // the file's step, with its optimizer state (else 0)
};

inline std::string shapeString(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The file must hold exactly the model's tensors: one it lacks, one the model
// does not have (a deeper model's file), or optimizer state of another
// optimizer (its metadata 'optimizer') is an error. resetOptimizer: the
// file's optimizer state and step are ignored (as for a file of weights only).
inline StagedCheckpoint stageCheckpoint(const SafetensorsFile& f, const ModelVariables& vars,
                                        const OptimizerConfig& opt, bool resetOptimizer, const std::string& where) {
    StagedCheckpoint out;
    std::set<std::string> used;  // the file's tensors the model takes (or, resetting, ignores)
    bool anyState = false, allState = true;
    auto isSlot = [](const std::string& name) { return name.find("/slot") != std::string::npos; };
    if (resetOptimizer)
        for (const std::string& name : f.names)
            if (isSlot(name)) used.insert(name);
    // A frozen layer keeps no optimizer state: the slots a file has for its
    // parameters (saved while it trained) are left behind, as fine-tuning wants.
    for (const std::string& name : f.names)
        for (const ModelVariable& v : vars.list)
            if (v.frozen && name.rfind(v.key() + "/slot", 0) == 0) used.insert(name);
    const bool fileHasState = std::any_of(f.names.begin(), f.names.end(), isSlot);
    if (fileHasState && !resetOptimizer && f.metadata.count("optimizer") &&
        f.metadata.at("optimizer") != optimizerName(opt.kind))
        throw ArgumentError(where + "its optimizer state is " + f.metadata.at("optimizer") +
                            "'s, the model trains with " + optimizerName(opt.kind) +
                            " (load it with resetOptimizer, or --reset-optimizer, to " +
                            "start the optimizer afresh from its weights)");
    auto take = [&](const SavedTensor& s) {
        const ModelVariable& v = vars.list[s.var];
        if (!f.contains(s.name)) {
            if (s.slot >= 0) return false;
            throw ArgumentError(where + "tensor '" + s.name + "' is missing");
        }
        used.insert(s.name);
        const TensorData& t = f.at(s.name);
        const std::vector<int64_t>& shape = v.decl.savedShape;
        // The saved shape, or the stored matrix's [rows, cols].
        const bool shapeOk = t.shape == shape || (t.shape.size() == 2 && t.shape[0] == v.rows && t.shape[1] == v.cols);
        if (!shapeOk || int64_t(t.numel()) != int64_t(v.rows) * v.cols)
            throw ArgumentError(where + "tensor '" + s.name + "' has shape " + shapeString(t.shape) +
                                ", the model needs " + shapeString(shape));
        if (t.dtype != Dtype::F32)
            throw ArgumentError(where + "tensor '" + s.name + "' is " + dtypeName(t.dtype) + ", expected F32");
        HostMatrix m(v.rows, v.cols, t.floats());
        const bool square = s.slot >= 0 && opt.slotIsSquare(s.slot);
        for (size_t i = 0; i < m.data.size(); ++i) {
            if (!std::isfinite(m.data[i]))
                throw ArgumentError(where + "tensor '" + s.name + "' holds NaN or Inf (element " + std::to_string(i) +
                                    ")");
            if (square && m.data[i] < 0.0f)
                throw ArgumentError(where + "tensor '" + s.name + "' is " + optimizerName(opt.kind) +
                                    "'s mean of squared gradients but holds " + std::to_string(m.data[i]) +
                                    " at element " + std::to_string(i) + " (must be >= 0)");
        }
        out.writes.push_back({s.var, s.slot, std::move(m)});
        return true;
    };
    for (const SavedTensor& s : vars.saved) {
        if (s.slot >= 0 && resetOptimizer) continue;
        const bool taken = take(s);
        if (s.slot >= 0) {
            anyState = anyState || taken;
            allState = allState && taken;
        }
    }
    std::string unknown;
    int unknownCount = 0;
    for (const std::string& name : f.names)
        if (!used.count(name) && ++unknownCount <= 5) unknown += (unknown.empty() ? "'" : ", '") + name + "'";
    if (unknownCount)
        throw ArgumentError(where + std::to_string(unknownCount) + " tensor" + (unknownCount > 1 ? "s" : "") +
                            " the model does not have: " + unknown + (unknownCount > 5 ? ", ..." : "") +
                            (fileHasState && !anyState && !resetOptimizer
                                 ? " (optimizer state of another optimizer? load it with resetOptimizer)"
                                 : " (a checkpoint of another model?)"));
    if (anyState && !allState)
        throw ArgumentError(where +
                            "optimizer state is present for some parameters only (saved with some layers "
                            "frozen? load it with resetOptimizer to start the optimizer afresh)");
    if (f.metadata.count("step") && !resetOptimizer) {
        const std::string& text = f.metadata.at("step");
        size_t usedChars = 0;
        try {
            out.step = std::stol(text, &usedChars);
        } catch (...) {
            usedChars = 0;
        }
        if (usedChars == 0 || usedChars != text.size())
            throw ArgumentError(where + "metadata 'step' is not a number: '" + text + "'");
        if (out.step < 0) throw ArgumentError(where + "metadata 'step' is negative");
    }
    out.optimizerState = anyState;
    if (!anyState) out.step = 0;
    // Without the file's optimizer state the slots start at zero.
    if (!anyState)
        for (const SavedTensor& s : vars.saved)
            if (s.slot >= 0) {
                const ModelVariable& v = vars.list[s.var];
                out.writes.push_back({s.var, s.slot, HostMatrix(v.rows, v.cols)});
            }
    return out;
}

}  // namespace gltrain
