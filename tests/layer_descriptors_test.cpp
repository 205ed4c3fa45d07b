// The layer descriptors (gltrain/layers/): every field of every layer
// round-trips through the model-config printer and parser with a value
// other than its default; every field's check is enforced by the parser and
// by compile's check, naming the field; and web/gltrain.d.ts declares exactly
// the layer types, fields and name lists the tables hold (natively: the test
// reads the file). Runs no GPU work.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gltrain/model_config.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace layer_descriptors_test {

using namespace gltrain;

// A valid value other than `def` for a field checked by `r`.
int otherValue(int def, Range r) {
    for (int v : {def + 2, def + 1, def - 1})
        if (r.contains(v)) return v;
    return def;
}
float otherValue(float def, Range r) {
    for (float v : {0.25f, 0.5f, 0.75f, 2.5f})
        if (v != def && r.contains(v)) return v;
    return def;
}
// Not square, so the printer writes [h, w].
Size2 otherValue(Size2 def, Range r) { return {otherValue(def.h, r), otherValue(otherValue(def.w, r), r)}; }
// Valid for both list fields (Reshape's targetShape, Permute's dims).
std::vector<int> otherValue(const std::vector<int>&, Range) { return {2, 1}; }
// Neither even nor symmetric, so the printer writes [[top, bottom], [left, right]].
Margins otherValue(const Margins&, Range) { return {1, 2, 0, 3}; }
Interpolation otherValue(Interpolation def, Range) {
    return def == Interpolation::Nearest ? Interpolation::Bilinear : Interpolation::Nearest;
}
Activation otherValue(Activation def, Range) { return def == Activation::GELU ? Activation::Tanh : Activation::GELU; }
Padding otherValue(Padding def, Range) { return def == Padding::Same ? Padding::Valid : Padding::Same; }
Initializer otherValue(const Initializer&, Range) { return Initializer::constant(0.25f); }
std::string otherValue(const std::string& def, Range) { return def + "custom_name"; }
bool otherValue(bool def, Range) { return !def; }

// Layer L with every field set to a value other than its default.
template <class L>
L everyFieldSet() {
    L l;
    forEachField<L>([&](const auto& f) { l.*(f.member) = otherValue(f.defaultValue(), f.range); });
    return l;
}

TEST(LayerDescriptors, EveryFieldOfEveryLayerRoundTripsThroughJson) {
    forEachType(LayerTypes{}, [](auto* t) {
        using L = std::remove_pointer_t<decltype(t)>;
        const L original = everyFieldSet<L>();
        const nlohmann::ordered_json j = layerToJson(original);
        const Layer back = layerFromJson(nlohmann::json(j), "round trip");
        ASSERT_TRUE(std::holds_alternative<L>(back)) << j.dump();
        EXPECT_EQ(layerType(back), std::string(L::kType));
        forEachField<L>([&](const auto& f) {
            SCOPED_TRACE(std::string(L::kType) + "." + f.key + " in " + j.dump());
            EXPECT_TRUE(j.contains(f.key)) << "the printer left out a field that differs from its default";
            EXPECT_FALSE(original.*(f.member) == f.defaultValue()) << "the test set the field to its default";
            EXPECT_TRUE(std::get<L>(back).*(f.member) == original.*(f.member));
        });
        // A default layer prints only its type and the fields it must be given.
        size_t required = 0;
        forEachField<L>([&](const auto& f) { required += f.required; });
        EXPECT_EQ(layerToJson(L{}).size(), 1 + required) << layerToJson(L{}).dump();
    });
}

TEST(LayerDescriptors, EveryRangeIsCheckedByTheParserAndByCompileNamingTheField) {
    forEachType(LayerTypes{}, [](auto* t) {
        using L = std::remove_pointer_t<decltype(t)>;
        forEachField<L>([&](const auto& f) {
            using T = std::decay_t<decltype(f.defaultValue())>;
            if constexpr (std::is_same_v<T, int> || std::is_same_v<T, float>) {
                if (std::isinf(f.range.lo)) return;  // any finite value
                SCOPED_TRACE(std::string(L::kType) + "." + f.key);
                // (Not the default, which compile takes as "not given": inputDim's 0.)
                const T bad = T(f.range.lo - 1) == f.defaultValue() ? T(f.range.lo - 2) : T(f.range.lo - 1);
                const L valid = everyFieldSet<L>();  // (a default layer lacks the fields it must be given)
                nlohmann::json j(layerToJson(valid));
                j[f.key] = bad;
                try {
                    layerFromJson(j, "model.json", "layers[0]");
                    ADD_FAILURE() << "the parser accepted " << j.dump();
                } catch (const FormatError& e) {
                    EXPECT_NE(std::string(e.what()).find("model.json: layers[0]." + std::string(f.key) + ": expected " +
                                                         f.range.expected(std::is_same_v<T, int>)),
                              std::string::npos)
                        << e.what();
                }
                L l = valid;
                l.*(f.member) = bad;
                EXPECT_EQ(layerFieldProblem(Layer(l)).rfind(std::string(f.key) + " must be ", 0), 0u)
                    << layerFieldProblem(Layer(l));
            } else if constexpr (std::is_same_v<T, Size2>) {
                // [h, w] with the width out of range: the message names the axis.
                SCOPED_TRACE(std::string(L::kType) + "." + f.key);
                const int bad = int(f.range.lo) - 1;
                const L valid = everyFieldSet<L>();
                nlohmann::json j(layerToJson(valid));
                j[f.key] = {int(f.range.lo), bad};
                try {
                    layerFromJson(j, "model.json", "layers[0]");
                    ADD_FAILURE() << "the parser accepted " << j.dump();
                } catch (const FormatError& e) {
                    EXPECT_NE(std::string(e.what()).find("model.json: layers[0]." + std::string(f.key) +
                                                         "[1]: expected " + f.range.expected(true)),
                              std::string::npos)
                        << e.what();
                }
                L l = valid;
                l.*(f.member) = Size2{int(f.range.lo), bad};
                EXPECT_EQ(layerFieldProblem(Layer(l)).rfind(std::string(f.key) + " must be ", 0), 0u)
                    << layerFieldProblem(Layer(l));
            }
        });
    });
}

TEST(LayerDescriptors, NameListsAreDeclaredOnce) {
    // The model config accepts every loss name the table lists, and mean_squared_error is mse.
    for (const LossName& l : kLossNames) {
        const LossSpec got = compileOptionsFromJson({{"loss", l.name}}, "compile").loss;
        EXPECT_EQ(got.kind, l.kind) << l.name;
        EXPECT_EQ(got.fromLogits, l.fromLogits) << l.name;
    }
    EXPECT_EQ(compileOptionsFromJson({{"loss", "mean_squared_error"}}, "compile").loss.kind,
              LossKind::MeanSquaredError);
    for (OptimizerKind k : kAllOptimizers)
        EXPECT_EQ(compileOptionsFromJson({{"optimizer", optimizerName(k)}}, "compile").optimizer.kind, k);
}

TEST(LayerDescriptors, ParameterCountsComeFromTheDeclaredVariables) {
    EXPECT_EQ(parameterCount(Dense{10}, Shape3{1, 1, 784}), 784 * 10 + 10);
    EXPECT_EQ(parameterCount(Conv2D{8, 3}, Shape3{28, 28, 3}), 3 * 3 * 3 * 8 + 8);
    EXPECT_EQ(parameterCount(BatchNormalization{}, Shape3{4, 4, 6}), 2 * 6);  // the moving averages are not trained
    EXPECT_EQ(layerVariables(BatchNormalization{}, Shape3{4, 4, 6}).size(), 4u);
    EXPECT_EQ(parameterCount(Flatten{}, Shape3{4, 4, 6}), 0);
}

#ifdef GLTRAIN_SOURCE_DIR
// ---- web/gltrain.d.ts ------------------------------------------------------------

std::string readDts() {
    std::ifstream in(std::string(GLTRAIN_SOURCE_DIR) + "/web/gltrain.d.ts");
    std::stringstream s;
    s << in.rdbuf();
    // Without comments: what is left are the declarations.
    return std::regex_replace(s.str(), std::regex(R"(/\*[\s\S]*?\*/|//[^\n]*)"), "");
}

// The string literals of a union: "'a' | 'b'" -> {a, b}.
std::set<std::string> literals(const std::string& text) {
    std::set<std::string> out;
    const std::regex lit("'([^']*)'");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), lit); it != std::sregex_iterator(); ++it)
        out.insert((*it)[1]);
    return out;
}
// The right side of `export type <name> = ...;`.
std::string typeAlias(const std::string& dts, const std::string& name) {
    std::smatch m;
    if (!std::regex_search(dts, m, std::regex("export type " + name + R"(\s*=([\s\S]*?);)"))) return "";
    return m[1];
}

struct DtsInterface {
    std::set<std::string> types;                 // the literals of its `type` member
    std::map<std::string, std::string> members;  // "units" -> "number", "alpha?" -> "number"
};
// The interfaces named in `export type LayerSpec = A | B | ...`.
std::map<std::string, DtsInterface> layerInterfaces(const std::string& dts) {
    std::map<std::string, DtsInterface> out;
    const std::regex name(R"(\w+)");
    const std::string spec = typeAlias(dts, "LayerSpec");
    for (auto it = std::sregex_iterator(spec.begin(), spec.end(), name); it != std::sregex_iterator(); ++it) {
        const std::string iface = (*it)[0];
        std::smatch body;
        if (!std::regex_search(dts, body, std::regex("export interface " + iface + R"(\s*\{([^}]*)\})"))) {
            out[iface];
            continue;
        }
        const std::string text = body[1];
        const std::regex member(R"((\w+\??)\s*:\s*([^;\n]+))");
        for (auto m = std::sregex_iterator(text.begin(), text.end(), member); m != std::sregex_iterator(); ++m) {
            std::string type = (*m)[2];
            type.erase(type.find_last_not_of(" \t") + 1);
            if ((*m)[1] == "type") out[iface].types = literals(type);
            else out[iface].members[(*m)[1]] = type;
        }
    }
    return out;
}

// What the d.ts must declare for layer L: `type` takes kType and its
// snake_case name, then each field, optional unless it must be given.
template <class L>
std::map<std::string, std::string> expectedMembers() {
    std::map<std::string, std::string> m;
    forEachField<L>([&](const auto& f) {
        m[std::string(f.key) + (f.required ? "" : "?")] = tsType<std::decay_t<decltype(f.defaultValue())>>();
    });
    return m;
}
template <class L>
std::string expectedInterfaceText() {
    std::string s = std::string("{ type: '") + L::kType + "'";
    if (std::string(L::kDefaultName) != L::kType) s += std::string(" | '") + L::kDefaultName + "'";
    forEachField<L>([&](const auto& f) {
        s += std::string("; ") + f.key + (f.required ? "" : "?") + ": " +
             tsType<std::decay_t<decltype(f.defaultValue())>>();
    });
    return s + " }";
}

TEST(LayerDescriptors, TheDtsDeclaresEveryLayerAsItsFieldTableDoes) {
    const std::string dts = readDts();
    ASSERT_FALSE(dts.empty()) << "cannot read " << GLTRAIN_SOURCE_DIR << "/web/gltrain.d.ts";
    const auto interfaces = layerInterfaces(dts);
    ASSERT_FALSE(interfaces.empty()) << "no `export type LayerSpec = ...` in web/gltrain.d.ts";
    std::set<std::string> covered;
    forEachType(LayerTypes{}, [&](auto* t) {
        using L = std::remove_pointer_t<decltype(t)>;
        SCOPED_TRACE(std::string("layer type '") + L::kType + "': declare it in web/gltrain.d.ts as " +
                     expectedInterfaceText<L>());
        const DtsInterface* found = nullptr;
        for (auto& [name, iface] : interfaces)
            if (iface.types.count(L::kType)) found = &iface, covered.insert(name);
        ASSERT_NE(found, nullptr) << "no interface of LayerSpec has type '" << L::kType << "'";
        EXPECT_TRUE(found->types.count(L::kDefaultName)) << "type should also accept '" << L::kDefaultName << "'";
        EXPECT_EQ(found->members, expectedMembers<L>());
    });
    for (auto& [name, iface] : interfaces) EXPECT_TRUE(covered.count(name)) << name << " is no gltrain layer type";
}

TEST(LayerDescriptors, TheDtsNameUnionsAreTheTables) {
    const std::string dts = readDts();
    std::set<std::string> activations, optimizers, losses, initializers, paddings, interpolations;
    for (Activation a : kAllActivations) activations.insert(activationName(a));
    for (const ActivationAlias& a : kActivationAliases) activations.insert(a.name);
    for (OptimizerKind k : kAllOptimizers) optimizers.insert(optimizerName(k));
    for (const LossName& l : kLossNames) losses.insert(l.name);
    for (Initializer::Kind k : Initializer::kNamedKinds) initializers.insert(Initializer{k, 0}.name());
    for (Padding p : kAllPaddings) paddings.insert(paddingName(p));
    for (Interpolation i : kAllInterpolations) interpolations.insert(interpolationName(i));
    EXPECT_EQ(literals(typeAlias(dts, "ActivationName")), activations);
    EXPECT_EQ(literals(typeAlias(dts, "OptimizerName")), optimizers);
    EXPECT_EQ(literals(typeAlias(dts, "LossName")), losses);
    EXPECT_EQ(literals(typeAlias(dts, "InitializerName")), initializers);
    EXPECT_EQ(literals(typeAlias(dts, "Padding")), paddings);
    EXPECT_EQ(literals(typeAlias(dts, "Interpolation")), interpolations);
}
#endif

}  // namespace layer_descriptors_test
}  // namespace
