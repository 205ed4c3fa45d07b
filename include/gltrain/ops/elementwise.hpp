// Element-wise ops on tensors of one shape (any layouts): add, sub, mul,
// scale, axpy, fill; activations and their backward; row-broadcast bias.
// Each op comes as record*(list, ...) — passes for a PassList replayed every
// step — and as an immediate call that records and runs once.
#pragma once
#include <string>

#include "gltrain/activation.hpp"
#include "gltrain/pass_list.hpp"

namespace gltrain {

namespace detail {
inline void requireSameShape(const char* op, const char* an, const Tensor& a, const char* bn, const Tensor& b) {
    if (!a || !b) throw ArgumentError(std::string(op) + ": " + (!a ? an : bn) + " is an empty tensor");
    if (a.rows() != b.rows() || a.cols() != b.cols())
        throw ArgumentError(std::string(op) + ": " + an + " is " + a.shapeString() + " but " + bn + " is " +
                            b.shapeString());
    requireSameContext(op, an, a, bn, b);
}
// The kernel's ACT define; refuses an unknown activation or a non-finite slope first.
inline std::string actDefine(const char* op, Activation act, float alpha) {
    requireActivation(op, act, alpha);
    return std::to_string(int(act));
}
}  // namespace detail

// out = OP(a, b) with OP a vec4 GLSL expression of a, b and the uniform alpha.
inline Pass& recordBinary(PassList& list, const char* op, const std::string& expr, const Tensor& a, const Tensor& b,
                          Tensor& out, float alpha = 0.0f) {
    detail::requireSameShape(op, "a", a, "b", b);
    detail::requireSameShape(op, "a", a, "out", out);
    Pass& p = list.add(Pass(a.context(), "forward/binary", {{"OP(a, b)", expr}}));
    p.input("A", a).input("B", b).output(out);
    if (expr.find("alpha") != std::string::npos) p.uniform("alpha", alpha);
    return p;
}
inline Pass& recordUnary(PassList& list, const char* op, const std::string& expr, const Tensor& x, Tensor& out,
                         float alpha = 0.0f, float beta = 0.0f) {
    detail::requireSameShape(op, "x", x, "out", out);
    Pass& p = list.add(Pass(x.context(), "forward/unary", {{"OP(x)", expr}}));
    p.input("X", x).output(out);
    if (expr.find("alpha") != std::string::npos) p.uniform("alpha", alpha);
    if (expr.find("beta") != std::string::npos) p.uniform("beta", beta);
    return p;
}

inline Pass& recordAdd(PassList& l, const Tensor& a, const Tensor& b, Tensor& out) {
    return recordBinary(l, "add", "((a) + (b))", a, b, out);
}
inline Pass& recordSub(PassList& l, const Tensor& a, const Tensor& b, Tensor& out) {
    return recordBinary(l, "sub", "((a) - (b))", a, b, out);
}
inline Pass& recordMul(PassList& l, const Tensor& a, const Tensor& b, Tensor& out) {
    return recordBinary(l, "mul", "((a) * (b))", a, b, out);
}
// out = alpha * x + y
inline Pass& recordAxpy(PassList& l, float alpha, const Tensor& x, const Tensor& y, Tensor& out) {
    return recordBinary(l, "axpy", "(alpha * (a) + (b))", x, y, out, alpha);
}
inline Pass& recordScale(PassList& l, const Tensor& x, float s, Tensor& out) {
    return recordUnary(l, "scale", "(alpha * (x))", x, out, s);
}
inline Pass& recordFill(PassList& l, Tensor& out, float value) {
    if (!out) throw ArgumentError("fill: out is an empty tensor");
    return l.add(Pass(out.context(), "util/fill")).output(out).uniform("value", value);
}
// out = f(z)
inline Pass& recordActivation(PassList& l, const Tensor& z, Activation act, Tensor& out, float alpha = 0.01f) {
    detail::requireSameShape("activation", "z", z, "out", out);
    return l.add(Pass(z.context(), "forward/activation", {{"ACT", detail::actDefine("activation", act, alpha)}}))
        .input("Z", z)
        .output(out)
        .uniform("act_alpha", alpha);
}
// dz = dy * f'(z), z the pre-activation
inline Pass& recordActivationGrad(PassList& l, const Tensor& dy, const Tensor& z, Activation act, Tensor& dz,
                                  float alpha = 0.01f) {
    detail::requireSameShape("activationGrad", "dy", dy, "z", z);
    detail::requireSameShape("activationGrad", "dy", dy, "dz", dz);
    return l.add(Pass(z.context(), "backward/activation", {{"ACT", detail::actDefine("activationGrad", act, alpha)}}))
        .input("DY", dy)
        .input("Z", z)
        .output(dz)
        .uniform("act_alpha", alpha);
}
// out = x + bias (bias 1 x cols, broadcast over rows)
inline Pass& recordBiasAdd(PassList& l, const Tensor& x, const Tensor& bias, Tensor& out) {
    detail::requireSameShape("biasAdd", "x", x, "out", out);
    if (!bias || bias.rows() != 1 || bias.cols() != x.cols())
        throw ArgumentError("biasAdd: bias is " + (bias ? bias.shapeString() : std::string("empty")) + ", expected 1x" +
                            std::to_string(x.cols()) + " for x " + x.shapeString());
    detail::requireSameContext("biasAdd", "x", x, "bias", bias);
    return l.add(Pass(x.context(), "forward/bias_add")).input("X", x).input("BIAS", bias).output(out);
}

GLTRAIN_IMMEDIATE(add, recordAdd, (const Tensor& a, const Tensor& b, Tensor& out), (l, a, b, out))
GLTRAIN_IMMEDIATE(sub, recordSub, (const Tensor& a, const Tensor& b, Tensor& out), (l, a, b, out))
GLTRAIN_IMMEDIATE(mul, recordMul, (const Tensor& a, const Tensor& b, Tensor& out), (l, a, b, out))
GLTRAIN_IMMEDIATE(axpy, recordAxpy, (float alpha, const Tensor& x, const Tensor& y, Tensor& out), (l, alpha, x, y, out))
GLTRAIN_IMMEDIATE(scale, recordScale, (const Tensor& x, float s, Tensor& out), (l, x, s, out))
GLTRAIN_IMMEDIATE(fill, recordFill, (Tensor & out, float value), (l, out, value))
GLTRAIN_IMMEDIATE(activation, recordActivation, (const Tensor& z, Activation act, Tensor& out, float alpha = 0.01f),
                  (l, z, act, out, alpha))
GLTRAIN_IMMEDIATE(activationGrad, recordActivationGrad,
                  (const Tensor& dy, const Tensor& z, Activation act, Tensor& dz, float alpha = 0.01f),
                  (l, dy, z, act, dz, alpha))
GLTRAIN_IMMEDIATE(biasAdd, recordBiasAdd, (const Tensor& x, const Tensor& bias, Tensor& out), (l, x, bias, out))

}  // namespace gltrain
