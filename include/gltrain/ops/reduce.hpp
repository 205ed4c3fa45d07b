// Reductions: sum, mean and max of each row (N x C -> N x 1), of each column
// (-> 1 x C) or of everything (-> 1 x 1); the bias gradient (column sum of
// dY); the global L2 norm of a list of tensors and clipping by it; argmax per
// row and the count of correct predictions against labels.
//
// Naming follows include/gltrain/reference/reduce.hpp: xxxRows reduces each
// ROW to one value, xxxCols each COLUMN, xxxAll the whole matrix.
//
// Every reduction is a multi-pass tree (kernels shaders/reduce/reduce.glsl
// and argmax.glsl): each pass reduces blocks of at most F texel fetches per
// fragment (F = ReduceOptions::blockFactor, default kReduceBlockFactor), so a
// loss or an accuracy is read back as one texel and no fragment runs a long
// loop (a browser's GPU watchdog kills long draws). The intermediates come
// from PassList::temp: allocated when the op is recorded, never per run.
//
//   cols: F rows of whole texels per fragment, lane by lane (packed lanes are
//         columns); intermediates ceil(N/F) x C, in X's layout.
//   rows: F texels of one row per fragment, lanes folded; intermediates
//         N x ceil(T/F) unpacked (T = texels per row).
//   all:  2-D blocks of bc = min(T, F) texels x br = F / bc rows; intermediates
//         unpacked, until 1 x 1.
//
// Choice of F (kReduceBlockFactor = 64), measured on this machine (2 cores,
// loaded): ms per reduction, median of 3 rounds of 20 runs each, synchronised
// by a one-texel readback (tests: KernelsReduceBench.DISABLED_BlockFactor):
//
//                          llvmpipe (native)      SwiftShader (Chromium)
//                          F=16   F=32   F=64     F=16   F=32   F=64
//   sumAll  2048x2048      19.2   18.6   11.5     16.7   11.0   10.1
//   sumCols 2048x2048      26.3   23.0   23.9     21.7   14.9   13.6
//   sumRows 2048x2048      24.2   13.7    9.9     13.7   12.3    9.5
//   maxAll  2048x2048      24.8   16.6   11.6     21.6   19.0   14.0
//   sumAll  10000x10        1.1    0.8    0.7      1.9    1.6    1.2
//
// F = 4 and 8 were 1.5-3x slower (a draw and a temporary per level); F = 128
// was no faster than 64 (sumCols slower) and lengthens each fragment's loop,
// which a browser's GPU watchdog punishes on slow devices.
//
// Numerics (tests/kernels_reduce_test.cpp checks them against the reference):
//   sum / mean: fp32, tree order; |gpu - seq| <= ~n·eps·Σ|x| in the worst case,
//     in practice well under 1e-6·sqrt(n)·Σ|x|. NaN propagates by arithmetic
//     (any NaN in the set gives NaN; +inf and -inf together give NaN). Overflow:
//     a partial sum beyond FLT_MAX becomes ±inf and stays so; when all the
//     values have one sign and the exact sum exceeds FLT_MAX the result is
//     that inf, as in the sequential reference. With mixed signs, whether an
//     intermediate overflows depends on the order (documented, not promised).
//   max: exact; NaN anywhere in the set gives NaN (explicitly, since GLSL's
//     max() is undefined for NaN), like ref::maxRows and numpy.max.
//   argmax: exact, ties to the lowest index, NaN never wins (ref::argmaxRows).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "gltrain/pass_list.hpp"

namespace gltrain {

enum class ReduceOp { Sum, Mean, Max };
enum class ReduceAxis {
    Rows,  // each row to one value: N x C -> N x 1
    Cols,  // each column to one value: N x C -> 1 x C
    All    // everything: -> 1 x 1
};

constexpr int kReduceBlockFactor = 64;

struct ReduceOptions {
    int blockFactor = kReduceBlockFactor;  // texel fetches per fragment per pass (>= 2)
    // If set: a tensor of out's shape combined into the result by the op (sum:
    // added, max: max) in the last pass — a running total without a pass of its
    // own. It may not be out (a pass never reads and writes one texture).
    const Tensor* accumulate = nullptr;
};

namespace detail {
inline const char* reduceOpName(ReduceOp op) {
    return op == ReduceOp::Sum ? "sum" : op == ReduceOp::Mean ? "mean" : "max";
}
inline const char* reduceAxisName(ReduceAxis a) {
    return a == ReduceAxis::Rows ? "Rows" : a == ReduceAxis::Cols ? "Cols" : "All";
}
inline int ceilDiv(int a, int b) { return (a + b - 1) / b; }
inline int texelsPerRow(int cols, Layout l) { return isPacked(l) ? ceilDiv(cols, 4) : cols; }
inline std::string shapeOf(const Tensor& t) { return t ? t.shapeString() : std::string("empty"); }

struct ReduceSpec {
    int op = 0;    // 0 sum, 1 max
    int pre = 0;   // 1: square first, 2: absolute value first
    int post = 0;  // 1: divide by count, 2: sqrt
    float count = 1.0f;
    const Tensor* acc = nullptr;  // combined (sum: added, max: max) in the last pass (same shape as out)
};

inline Pass& addReducePass(PassList& list, Context& ctx, const Tensor& in, Tensor& out, bool keepLanes, int br, int bc,
                           const ReduceSpec& s, bool first, bool last) {
    Defines d = {{"OP", std::to_string(s.op)},
                 {"PRE", first ? std::to_string(s.pre) : "0"},
                 {"KEEP_LANES", keepLanes ? "1" : "0"}};
    Pass& p = list.add(Pass(ctx, "reduce/reduce", d));
    p.input("X", in).output(out).uniformInt("block", br, bc);
    p.uniformInt("post", last ? s.post : 0).uniform("count", s.count);
    if (last && s.acc) p.input("ACC", *s.acc);
    return p;
}

// Records the tree that reduces x into out (shape already checked).
inline void recordReduceTree(PassList& list, const Tensor& x, ReduceAxis axis, Tensor& out, const ReduceSpec& s,
                             int f) {
    Context& ctx = x.context();
    const Tensor* cur = &x;
    bool first = true;
    // A level that can finish the tree with at most 2F fetches per fragment does:
    // one pass instead of two (a pass costs more than F fetches: kReduceBlockFactor).
    if (axis == ReduceAxis::Cols) {
        int rows = x.rows();
        do {
            const int br = rows <= 2 * f ? rows : f;
            const int next = ceilDiv(rows, br);
            const bool last = next == 1;
            Tensor& dst = last ? out : list.temp(ctx, next, x.cols(), x.layout());
            addReducePass(list, ctx, *cur, dst, true, br, 1, s, first, last);
            cur = &dst, rows = next, first = false;
        } while (rows > 1);
        return;
    }
    int rows = x.rows(), texels = texelsPerRow(x.cols(), x.layout());
    for (;;) {
        const bool finish = axis == ReduceAxis::All ? int64_t(rows) * texels <= 2 * f : texels <= 2 * f;
        int bc = finish ? texels : std::min(texels, f);
        int br = axis != ReduceAxis::All ? 1 : finish ? rows : std::max(1, std::min(rows, f / bc));
        const int nr = ceilDiv(rows, br), nc = ceilDiv(texels, bc);
        const bool last = nc == 1 && (axis == ReduceAxis::Rows || nr == 1);
        Tensor& dst = last ? out : list.temp(ctx, nr, nc, Layout::Unpacked);
        addReducePass(list, ctx, *cur, dst, false, br, bc, s, first, last);
        if (last) return;
        cur = &dst, rows = nr, texels = nc, first = false;
    }
}

inline void requireBlockFactor(const char* op, const ReduceOptions& o) {
    if (o.blockFactor < 2)
        throw ArgumentError(std::string(op) + ": blockFactor is " + std::to_string(o.blockFactor) + " (must be >= 2)");
}

// ReduceOptions::accumulate: out's shape, out's context, not out itself.
inline void requireAccumulate(const std::string& op, const ReduceOptions& o, const Tensor& out) {
    if (!o.accumulate) return;
    const Tensor& a = *o.accumulate;
    if (!a || a.rows() != out.rows() || a.cols() != out.cols())
        throw ArgumentError(op + ": accumulate is " + shapeOf(a) + ", expected " + out.shapeString() +
                            " (out's shape)");
    requireSameContext(op, "accumulate", a, "out", out);
    if (a.texture() == out.texture())
        throw ArgumentError(op +
                            ": accumulate is out (a pass never reads and writes one texture; use a PingPong pair)");
}

inline void requireReducedShape(const std::string& op, const Tensor& x, ReduceAxis axis, const Tensor& out) {
    if (!x) throw ArgumentError(op + ": x is an empty tensor");
    const int er = axis == ReduceAxis::Cols || axis == ReduceAxis::All ? 1 : x.rows();
    const int ec = axis == ReduceAxis::Rows || axis == ReduceAxis::All ? 1 : x.cols();
    if (!out || out.rows() != er || out.cols() != ec)
        throw ArgumentError(op + ": out is " + shapeOf(out) + ", expected " + std::to_string(er) + "x" +
                            std::to_string(ec) + " for x " + x.shapeString());
    // Texture names are per context: compare them only within one.
    requireSameContext(op, "x", x, "out", out);
    if (out.texture() == x.texture())
        throw ArgumentError(op + ": out is x (a pass never reads and writes one texture)");
}
}  // namespace detail

// out = op over axis of x. Shapes: Rows -> x.rows() x 1, Cols -> 1 x x.cols(),
// All -> 1 x 1; any layouts, paged or not. Mean divides the tree's sum by the count.
inline void recordReduce(PassList& list, const Tensor& x, ReduceOp op, ReduceAxis axis, Tensor& out,
                         const ReduceOptions& o = {}) {
    const std::string name = std::string(detail::reduceOpName(op)) + detail::reduceAxisName(axis);
    detail::requireReducedShape(name, x, axis, out);
    detail::requireBlockFactor(name.c_str(), o);
    detail::requireAccumulate(name, o, out);
    if (o.accumulate && op == ReduceOp::Mean)
        throw ArgumentError(name + ": accumulate is for sum and max (a mean of running totals is not a running mean)");
    detail::ReduceSpec s;
    s.acc = o.accumulate;
    s.op = op == ReduceOp::Max ? 1 : 0;
    if (op == ReduceOp::Mean) {
        s.post = 1;
        s.count = axis == ReduceAxis::Rows   ? float(x.cols())
                  : axis == ReduceAxis::Cols ? float(x.rows())
                                             : float(double(x.rows()) * double(x.cols()));
    }
    detail::recordReduceTree(list, x, axis, out, s, o.blockFactor);
}
GLTRAIN_IMMEDIATE(reduce, recordReduce,
                  (const Tensor& x, ReduceOp op, ReduceAxis axis, Tensor& out, const ReduceOptions& o = {}),
                  (l, x, op, axis, out, o))

#define GLTRAIN_REDUCE_OP(name, recname, OP, AXIS)                                                \
    inline void recname(PassList& l, const Tensor& x, Tensor& out, const ReduceOptions& o = {}) { \
        recordReduce(l, x, ReduceOp::OP, ReduceAxis::AXIS, out, o);                               \
    }                                                                                             \
    GLTRAIN_IMMEDIATE(name, recname, (const Tensor& x, Tensor& out, const ReduceOptions& o = {}), (l, x, out, o))
GLTRAIN_REDUCE_OP(sumRows, recordSumRows, Sum, Rows)
GLTRAIN_REDUCE_OP(sumCols, recordSumCols, Sum, Cols)
GLTRAIN_REDUCE_OP(sumAll, recordSumAll, Sum, All)
GLTRAIN_REDUCE_OP(meanRows, recordMeanRows, Mean, Rows)
GLTRAIN_REDUCE_OP(meanCols, recordMeanCols, Mean, Cols)
GLTRAIN_REDUCE_OP(meanAll, recordMeanAll, Mean, All)
GLTRAIN_REDUCE_OP(maxRows, recordMaxRows, Max, Rows)
GLTRAIN_REDUCE_OP(maxCols, recordMaxCols, Max, Cols)
GLTRAIN_REDUCE_OP(maxAll, recordMaxAll, Max, All)
#undef GLTRAIN_REDUCE_OP

// db = column sum of dy (1 x dy.cols()): the bias gradient, the column reduction.
inline void recordBiasGrad(PassList& list, const Tensor& dy, Tensor& db, const ReduceOptions& o = {}) {
    if (!dy) throw ArgumentError("biasGrad: dy is an empty tensor");
    if (!db || db.rows() != 1 || db.cols() != dy.cols())
        throw ArgumentError("biasGrad: db is " + detail::shapeOf(db) + ", expected 1x" + std::to_string(dy.cols()) +
                            " for dy " + dy.shapeString());
    recordReduce(list, dy, ReduceOp::Sum, ReduceAxis::Cols, db, o);
}
GLTRAIN_IMMEDIATE(biasGrad, recordBiasGrad, (const Tensor& dy, Tensor& db, const ReduceOptions& o = {}), (l, dy, db, o))

// out (1 x 1) = sqrt(sum over the tensors and their elements of x^2): each
// tensor's sum of squares by the All tree, accumulated tensor by tensor (in
// list order) in the last pass of each tree; the last one takes the sqrt.
inline void recordGlobalL2Norm(PassList& list, const std::vector<const Tensor*>& tensors, Tensor& out,
                               const ReduceOptions& o = {}) {
    if (tensors.empty()) throw ArgumentError("globalL2Norm: the list of tensors is empty");
    for (size_t i = 0; i < tensors.size(); ++i)
        if (!tensors[i] || !*tensors[i])
            throw ArgumentError("globalL2Norm: tensor " + std::to_string(i) + " of the list is empty");
    if (!out || out.rows() != 1 || out.cols() != 1)
        throw ArgumentError("globalL2Norm: out is " + detail::shapeOf(out) + ", expected 1x1");
    for (size_t i = 0; i < tensors.size(); ++i)
        detail::requireSameContext("globalL2Norm", ("tensor " + std::to_string(i)).c_str(), *tensors[i], "out", out);
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i]->texture() == out.texture())
            throw ArgumentError("globalL2Norm: out is tensor " + std::to_string(i) + " of the list");
    detail::requireBlockFactor("globalL2Norm", o);
    Context& ctx = out.context();
    const Tensor* acc = nullptr;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const bool last = i + 1 == tensors.size();
        detail::ReduceSpec s;
        s.pre = 1;
        s.post = last ? 2 : 0;
        s.acc = acc;
        Tensor& dst = last ? out : list.temp(ctx, 1, 1, Layout::Unpacked);
        detail::recordReduceTree(list, *tensors[i], ReduceAxis::All, dst, s, o.blockFactor);
        acc = &dst;
    }
}
GLTRAIN_IMMEDIATE(globalL2Norm, recordGlobalL2Norm,
                  (const std::vector<const Tensor*>& tensors, Tensor& out, const ReduceOptions& o = {}),
                  (l, tensors, out, o))

// out (1 x 1) = max |x| over every element of every tensor, NaN if any is NaN
// (ref::globalMaxAbs): finite exactly when every element is. Dynamic loss
// scaling reads it to tell an overflowed step; unlike the L2 norm it cannot
// overflow itself, so half-float storage gives no false alarms.
inline void recordGlobalMaxAbs(PassList& list, const std::vector<const Tensor*>& tensors, Tensor& out,
                               const ReduceOptions& o = {}) {
    if (tensors.empty()) throw ArgumentError("globalMaxAbs: the list of tensors is empty");
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (!tensors[i] || !*tensors[i])
            throw ArgumentError("globalMaxAbs: tensor " + std::to_string(i) + " of the list is empty");
        if (out && tensors[i]->texture() == out.texture())
            throw ArgumentError("globalMaxAbs: out is tensor " + std::to_string(i) + " of the list");
    }
    if (!out || out.rows() != 1 || out.cols() != 1)
        throw ArgumentError("globalMaxAbs: out is " + detail::shapeOf(out) + ", expected 1x1");
    for (size_t i = 0; i < tensors.size(); ++i)
        detail::requireSameContext("globalMaxAbs", ("tensor " + std::to_string(i)).c_str(), *tensors[i], "out", out);
    detail::requireBlockFactor("globalMaxAbs", o);
    Context& ctx = out.context();
    const Tensor* acc = nullptr;
    for (size_t i = 0; i < tensors.size(); ++i) {
        detail::ReduceSpec s;
        s.op = 1;
        s.pre = 2;
        s.acc = acc;
        Tensor& dst = i + 1 == tensors.size() ? out : list.temp(ctx, 1, 1, Layout::Unpacked);
        detail::recordReduceTree(list, *tensors[i], ReduceAxis::All, dst, s, o.blockFactor);
        acc = &dst;
    }
}
GLTRAIN_IMMEDIATE(globalMaxAbs, recordGlobalMaxAbs,
                  (const std::vector<const Tensor*>& tensors, Tensor& out, const ReduceOptions& o = {}),
                  (l, tensors, out, o))

// outputs[i] = inputs[i] * f with f = min(1, maxNorm / norm), norm the global
// L2 norm of the inputs (written to normOut, 1 x 1, the norm BEFORE clipping),
// all on the GPU: a 1 x 1 pass computes f, each scaling pass samples it. As
// ref::clipByGlobalNorm: f = 1 unless norm > maxNorm (a NaN norm leaves the
// values as they are). outputs[i] has inputs[i]'s shape and is a different
// tensor (a pass never reads and writes one texture); maxNorm > 0.
inline void recordClipByGlobalNorm(PassList& list, const std::vector<const Tensor*>& inputs,
                                   const std::vector<Tensor*>& outputs, float maxNorm, Tensor& normOut,
                                   const ReduceOptions& o = {}) {
    if (!(maxNorm > 0.0f))
        throw ArgumentError("clipByGlobalNorm: maxNorm is " + std::to_string(maxNorm) + " (must be > 0)");
    if (inputs.size() != outputs.size())
        throw ArgumentError("clipByGlobalNorm: " + std::to_string(inputs.size()) + " inputs but " +
                            std::to_string(outputs.size()) + " outputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i] || !*inputs[i] || !outputs[i] || !*outputs[i])
            throw ArgumentError("clipByGlobalNorm: input or output " + std::to_string(i) + " is empty");
        if (inputs[i]->rows() != outputs[i]->rows() || inputs[i]->cols() != outputs[i]->cols())
            throw ArgumentError("clipByGlobalNorm: input " + std::to_string(i) + " is " + inputs[i]->shapeString() +
                                " but output " + std::to_string(i) + " is " + outputs[i]->shapeString());
        detail::requireSameContext("clipByGlobalNorm", "an input", *inputs[i], "normOut", normOut);
        detail::requireSameContext("clipByGlobalNorm", "an output", *outputs[i], "normOut", normOut);
        if (inputs[i]->texture() == outputs[i]->texture())
            throw ArgumentError("clipByGlobalNorm: output " + std::to_string(i) +
                                " is its input (a pass never reads and writes one texture)");
    }
    recordGlobalL2Norm(list, inputs, normOut, o);
    Context& ctx = normOut.context();
    Tensor& factor = list.temp(ctx, 1, 1, Layout::Unpacked);
    list.add(Pass(ctx, "reduce/clip_factor")).input("NORM", normOut).output(factor).uniform("maxNorm", maxNorm);
    for (size_t i = 0; i < inputs.size(); ++i)
        list.add(Pass(ctx, "reduce/scale_by")).input("X", *inputs[i]).input("S", factor).output(*outputs[i]);
}
GLTRAIN_IMMEDIATE(clipByGlobalNorm, recordClipByGlobalNorm,
                  (const std::vector<const Tensor*>& inputs, const std::vector<Tensor*>& outputs, float maxNorm,
                   Tensor& normOut, const ReduceOptions& o = {}),
                  (l, inputs, outputs, maxNorm, normOut, o))

namespace detail {
// The argmax tree; with labels, the last pass writes 1/0 (correct or not).
inline void recordArgmaxTree(PassList& list, const Tensor& x, const Tensor* labels, Tensor& out, int f) {
    Context& ctx = x.context();
    const int n = x.rows();
    // As the reduce tree: a level that can finish in at most 2F fetches per fragment does.
    const int texels = texelsPerRow(x.cols(), x.layout());
    int block = texels <= 2 * f ? texels : f;  // this level's uniform: texels, then pairs, per block
    int blocks = ceilDiv(texels, block);       // blocks per row this level writes
    const int pairBlock = f % 2 ? f + 1 : f;   // pairs per block on later levels (even: whole texels)
    const Tensor* cur = &x;
    bool first = true;
    for (;;) {
        const bool last = blocks == 1;
        Defines d = {{"FIRST", first ? "1" : "0"}, {"LAST", last ? "1" : "0"}};
        Pass& p = list.add(Pass(ctx, "reduce/argmax", d));
        Tensor& dst = last ? out : list.temp(ctx, n, 2 * blocks, Layout::Packed);
        p.input("X", *cur).output(dst).uniformInt("block", block);
        if (last && labels) p.input("LABELS", *labels);
        if (last) return;
        cur = &dst, first = false;
        // The next level reads this one's `blocks` pairs (an even count per block).
        block = blocks <= 2 * pairBlock ? (blocks + 1) / 2 * 2 : pairBlock;
        blocks = ceilDiv(blocks, block);
    }
}
}  // namespace detail

// out (N x 1, any layout) = index of the largest value of each row of x, as a
// float; ties go to the lowest index, NaN never wins (ref::argmaxRows).
inline void recordArgmaxRows(PassList& list, const Tensor& x, Tensor& out, const ReduceOptions& o = {}) {
    detail::requireReducedShape("argmaxRows", x, ReduceAxis::Rows, out);
    detail::requireBlockFactor("argmaxRows", o);
    detail::recordArgmaxTree(list, x, nullptr, out, o.blockFactor);
}
GLTRAIN_IMMEDIATE(argmaxRows, recordArgmaxRows, (const Tensor& x, Tensor& out, const ReduceOptions& o = {}),
                  (l, x, out, o))

// out (1 x 1) = number of rows whose argmax equals the label; labels is N x 1
// holding class indices 0..C-1 as floats (rounded to the nearest integer; a
// label outside [0, C) never matches — the GPU cannot throw, unlike
// ref::correctCount). Accuracy = out / N, read back as one value. With
// o.accumulate: out = accumulate + the count (a running total over batches).
inline void recordCorrectCount(PassList& list, const Tensor& x, const Tensor& labels, Tensor& out,
                               const ReduceOptions& o = {}) {
    if (!x) throw ArgumentError("correctCount: x is an empty tensor");
    if (!labels || labels.rows() != x.rows() || labels.cols() != 1)
        throw ArgumentError("correctCount: labels is " + detail::shapeOf(labels) + ", expected " +
                            std::to_string(x.rows()) + "x1 for x " + x.shapeString());
    if (!out || out.rows() != 1 || out.cols() != 1)
        throw ArgumentError("correctCount: out is " + detail::shapeOf(out) + ", expected 1x1 for x " + x.shapeString());
    detail::requireBlockFactor("correctCount", o);
    detail::requireSameContext("correctCount", "x", x, "labels", labels);
    detail::requireSameContext("correctCount", "x", x, "out", out);
    detail::requireAccumulate("correctCount", o, out);
    Tensor& hits = list.temp(x.context(), x.rows(), 1, Layout::Unpacked);
    detail::recordArgmaxTree(list, x, &labels, hits, o.blockFactor);
    detail::ReduceSpec s;
    s.acc = o.accumulate;
    detail::recordReduceTree(list, hits, ReduceAxis::All, out, s, o.blockFactor);
}
GLTRAIN_IMMEDIATE(correctCount, recordCorrectCount,
                  (const Tensor& x, const Tensor& labels, Tensor& out, const ReduceOptions& o = {}),
                  (l, x, labels, out, o))

}  // namespace gltrain
