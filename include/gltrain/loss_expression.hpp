// A custom loss written as an expression of yTrue and yPred, as JSON: what
// JavaScript's compile({loss: (yTrue, yPred) => yPred.sub(yTrue).abs().mean(-1)})
// records (web/gltrain-core.js) and a model file may hold
// ({"type": "expression", "name": "my_mae", "expression": {...}}). It becomes
// graph ops (graph/ops/) once, when the model graph is built: both engines
// run it, autodiff gives its gradient, and no JavaScript runs per step.
//
//   "yTrue", "yPred"                      the target and the prediction (the model's output as rows [B, C])
//   a number                              a constant, an operand of add, sub, mul, div with a tensor
//   {"op": "abs" | "square" | "sqrt" | "log" | "exp" | "neg" | "relu", "x": E}
//   {"op": "clip", "x": E, "min": m, "max": M}
//   {"op": "add" | "sub" | "mul" | "maximum", "a": E, "b": E}   (a [B, 1] operand is broadcast over rows)
//   {"op": "div", "a": E, "b": number}
//   {"op": "mean" | "sum" | "max", "x": E, "axis": -1}          each row's: [B, 1]
//
// The whole expression must give one loss per row, [B, 1]; the model's loss is their mean.
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gltrain/error.hpp"
#include "gltrain/graph/graph.hpp"
#include "gltrain/graph/op_table.hpp"
#include "gltrain/loss_spec.hpp"

namespace gltrain {

namespace loss_expression_detail {
using Json = nlohmann::json;
using Fail = std::function<void(const std::string& path, const std::string& what)>;

inline const char* const kUnaryOps[] = {"abs", "square", "sqrt", "log", "exp", "neg", "relu"};
inline const char* const kBinaryOps[] = {"add", "sub", "mul", "maximum", "div"};
inline const char* const kReductions[] = {"mean", "sum", "max"};
template <size_t N>
bool among(const std::string& s, const char* const (&names)[N]) {
    for (const char* n : names)
        if (s == n) return true;
    return false;
}
inline std::string opList() {
    std::string s;
    for (const char* n : kUnaryOps) s += std::string(s.empty() ? "" : ", ") + n;
    s += ", clip";
    for (const char* n : kBinaryOps) s += std::string(", ") + n;
    for (const char* n : kReductions) s += std::string(", ") + n;
    return s;
}

// How deep ops may nest: far past any loss, and a bound on the recursion of check and build.
constexpr int kMaxDepth = 64;

// Checks e's form (ops, operands, constants, nesting), naming the path of what is wrong.
inline void check(const Json& e, const std::string& path, const Fail& fail, int depth = 0) {
    if (depth > kMaxDepth) return fail(path, "ops nest deeper than " + std::to_string(kMaxDepth));
    if (e.is_string()) {
        if (e != "yTrue" && e != "yPred") fail(path, "unknown tensor '" + e.get<std::string>() + "' (yTrue or yPred)");
        return;
    }
    if (e.is_number()) {
        if (!std::isfinite(e.get<double>())) fail(path, "a constant must be finite");
        return;
    }
    if (!e.is_object() || !e.contains("op") || !e["op"].is_string())
        return fail(path, "expected \"yTrue\", \"yPred\", a number or {\"op\": ...}, got " + e.dump());
    const std::string op = e["op"];
    auto operand = [&](const char* k) {
        if (!e.contains(k)) fail(path, op + " needs \"" + k + "\"");
        check(e[k], path + "." + k, fail, depth + 1);
    };
    auto number = [&](const char* k) {
        if (!e.contains(k) || !e[k].is_number() || !std::isfinite(e[k].get<double>()))
            fail(path + "." + k, op + "'s " + k + " must be a finite number");
    };
    if (among(op, kUnaryOps)) return operand("x");
    if (op == "clip") {
        operand("x");
        number("min");
        number("max");
        if (!(e["min"].get<double>() <= e["max"].get<double>())) fail(path, "clip's min is above its max");
        return;
    }
    if (among(op, kBinaryOps)) {
        operand("a");
        operand("b");
        if (e["a"].is_number() && e["b"].is_number()) fail(path, op + " of two constants (one must be a tensor)");
        if (op == "div" && !e["b"].is_number()) fail(path + ".b", "div divides by a constant only");
        if (op == "maximum" && (e["a"].is_number() || e["b"].is_number()))
            fail(path, "maximum takes two tensors (use relu or clip with a constant)");
        return;
    }
    if (among(op, kReductions)) {
        operand("x");
        if (e.contains("axis") && !(e["axis"] == -1 || e["axis"] == 1))
            fail(path + ".axis", op + " reduces each row: axis -1 (or 1), got " + e["axis"].dump());
        return;
    }
    fail(path + ".op", "unknown op '" + op + "' (valid: " + opList() + ")");
}

// Adds e's nodes; returns its value.
inline graph::ValueId build(graph::Graph& g, const Json& e, graph::ValueId pred, graph::ValueId target,
                            const std::string& name) {
    if (e.is_string()) return e == "yTrue" ? target : pred;
    const std::string op = e["op"];
    auto un = [&](graph::MathFn f, float a = 0.0f, float b = 0.0f) {
        return g.add1(graph::Unary{f, a, b}, {build(g, e["x"], pred, target, name)}, name);
    };
    if (op == "abs") return un(graph::MathFn::Abs);
    if (op == "square") return un(graph::MathFn::Square);
    if (op == "sqrt") return un(graph::MathFn::Sqrt);
    if (op == "log") return un(graph::MathFn::Log);
    if (op == "exp") return un(graph::MathFn::Exp);
    if (op == "neg") return un(graph::MathFn::Affine, -1.0f, 0.0f);
    if (op == "relu") return un(graph::MathFn::Relu);
    if (op == "clip") return un(graph::MathFn::Clip, e["min"].get<float>(), e["max"].get<float>());
    if (op == "mean" || op == "sum" || op == "max") {
        const graph::ValueId x = build(g, e["x"], pred, target, name);
        if (op == "max") return g.add1(graph::RowMax{}, {x}, name);
        const graph::ValueId s = g.add1(graph::RowSum{}, {x}, name);
        return op == "sum" ? s : g.add1(graph::Scale{float(1.0 / double(g.shape(x).cols()))}, {s}, name);
    }
    // Binary: a constant operand makes an affine function of the other.
    const Json &ea = e["a"], &eb = e["b"];
    if (ea.is_number() || eb.is_number()) {
        const float c = (ea.is_number() ? ea : eb).get<float>();
        const graph::ValueId x = build(g, ea.is_number() ? eb : ea, pred, target, name);
        const bool constantFirst = ea.is_number();
        if (op == "add") return g.add1(graph::Unary{graph::MathFn::Affine, 1.0f, c}, {x}, name);
        if (op == "sub")
            return g.add1(graph::Unary{graph::MathFn::Affine, constantFirst ? -1.0f : 1.0f, constantFirst ? c : -c},
                          {x}, name);
        if (op == "mul") return g.add1(graph::Unary{graph::MathFn::Affine, c, 0.0f}, {x}, name);
        if (c == 0.0f) throw ArgumentError("loss " + name + ": division by the constant 0");
        return g.add1(graph::Unary{graph::MathFn::Affine, 1.0f / c, 0.0f}, {x}, name);  // div
    }
    graph::ValueId a = build(g, ea, pred, target, name), b = build(g, eb, pred, target, name);
    // A row's value [B, 1] against rows [B, C]: broadcast over the row.
    const graph::Shape rows{graph::kBatch, 1};
    if (g.shape(a) == rows && g.shape(b) != rows) a = g.add1(graph::RowBroadcast{g.shape(b)}, {a}, name);
    if (g.shape(b) == rows && g.shape(a) != rows) b = g.add1(graph::RowBroadcast{g.shape(a)}, {b}, name);
    if (op == "add") return g.add1(graph::Add{}, {a, b}, name);
    if (op == "sub") return g.add1(graph::Sub{}, {a, b}, name);
    if (op == "mul") return g.add1(graph::Mul{}, {a, b}, name);
    return g.add1(graph::Maximum{}, {a, b}, name);
}
}  // namespace loss_expression_detail

// The custom loss `name` from a checked expression (loss_expression_detail::check).
inline LossSpec expressionLoss(const nlohmann::json& expression, const std::string& name) {
    LossSpec l;
    l.kind = LossKind::Custom;
    l.customName = name;
    l.custom = [expression, name](graph::Graph& g, int pred, int target) {
        try {
            return loss_expression_detail::build(g, expression, pred, target, name);
        } catch (const graph::ShapeError& e) {
            throw ArgumentError("loss " + name + ": " + e.what());
        }
    };
    return l;
}

}  // namespace gltrain
