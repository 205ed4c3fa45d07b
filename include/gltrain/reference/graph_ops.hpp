// The oracle of every op in graph/op_table.hpp, in any precision (the tests
// use double): `run(op, inputs)` returns the op's outputs from the reference
// formulas of this directory, and RefPlan runs a whole graph with them.
// An op without an overload here does not compile in the tests (std::visit).
#pragma once
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "gltrain/graph/graph.hpp"
#include "gltrain/reference/activations.hpp"
#include "gltrain/reference/batchnorm.hpp"
#include "gltrain/reference/bias.hpp"
#include "gltrain/reference/conv.hpp"
#include "gltrain/reference/elementwise.hpp"
#include "gltrain/reference/loss.hpp"
#include "gltrain/reference/matmul.hpp"
#include "gltrain/reference/metrics.hpp"
#include "gltrain/reference/pooling.hpp"
#include "gltrain/reference/random.hpp"
#include "gltrain/reference/recurrent.hpp"
#include "gltrain/reference/sequence.hpp"
#include "gltrain/reference/softmax.hpp"
#include "gltrain/reference/spatial.hpp"

namespace gltrain::ref {

namespace graph_detail {
template <class T>
using Ins = std::vector<const HostMatrixT<T>*>;
template <class T>
std::vector<int> labels(const HostMatrixT<T>& m) {
    std::vector<int> l;
    for (T v : m.data) l.push_back(int(std::lround(double(v))));
    return l;
}
// Per-channel x + v[c] over C interleaved channels (v is 1 x C).
template <class T>
HostMatrixT<T> channelAdd(const HostMatrixT<T>& X, const HostMatrixT<T>& v) {
    HostMatrixT<T> Y = X;
    for (size_t i = 0; i < Y.data.size(); ++i) Y.data[i] += v.data[i % size_t(v.cols)];
    return Y;
}
template <class T>
HostMatrixT<T> scaled(HostMatrixT<T> m, T s) {
    for (T& v : m.data) v *= s;
    return m;
}
template <class T>
HostMatrixT<T> scalar(T v) {
    return HostMatrixT<T>(1, 1, v);
}
}  // namespace graph_detail

template <class T>
std::vector<HostMatrixT<T>> run(const graph::MatMul& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&A = *in[0], &B = *in[1];
    if (o.transA && o.transB) return {matmul(transpose(A), transpose(B))};
    if (o.transA) return {matmulTN(A, B)};
    if (o.transB) return {matmulNT(A, B)};
    return {matmul(A, B)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Add&, const graph_detail::Ins<T>& in) {
    return {add(*in[0], *in[1])};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Mul&, const graph_detail::Ins<T>& in) {
    return {mul(*in[0], *in[1])};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BiasAdd&, const graph_detail::Ins<T>& in) {
    return {graph_detail::channelAdd(*in[0], *in[1])};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::ChannelSum& o, const graph_detail::Ins<T>& in) {
    return {channelSum(*in[0], o.channels)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Reshape&, const graph_detail::Ins<T>& in) {
    return {*in[0]};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Scale& o, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> y = *in[0];
    for (T& v : y.data) v *= T(o.s);
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Sub&, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> y = *in[0];
    for (size_t i = 0; i < y.data.size(); ++i) y.data[i] -= in[1]->data[i];
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::GreaterEqual&, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> y = *in[0];
    for (size_t i = 0; i < y.data.size(); ++i) y.data[i] = in[0]->data[i] >= in[1]->data[i] ? T(1) : T(0);
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Maximum&, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> y = *in[0];
    for (size_t i = 0; i < y.data.size(); ++i) y.data[i] = std::max(in[0]->data[i], in[1]->data[i]);
    return {y};
}
// Concat and Slice read their inputs' shapes (the axis's place in a row): by
// index, the way the formula is written, one element at a time.
namespace graph_detail {
// A batched shape's dimensions after the batch.
inline std::vector<int64_t> perExample(const graph::Shape& s) { return {s.dims.begin() + 1, s.dims.end()}; }
// The row offset of per-example index `idx` in dimensions `d`.
inline int64_t offsetOf(const std::vector<int64_t>& d, const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t k = 0; k < d.size(); ++k) o = o * d[k] + idx[k];
    return o;
}
// Every per-example index of dimensions d, in row order: f(idx).
template <class F>
void forEachIndex(const std::vector<int64_t>& d, F&& f) {
    std::vector<int64_t> idx(d.size(), 0);
    int64_t n = 1;
    for (int64_t v : d) n *= v;
    for (int64_t i = 0; i < n; ++i) {
        f(idx);
        for (size_t k = d.size(); k-- > 0;)
            if (++idx[k] < d[k]) break;
            else idx[k] = 0;
    }
}
}  // namespace graph_detail
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Concat& o, const graph_detail::Ins<T>& in,
                                const std::vector<graph::Shape>& shapes) {
    const std::vector<int64_t> a = graph_detail::perExample(shapes[0]), b = graph_detail::perExample(shapes[1]);
    const size_t k = size_t((o.axis < 0 ? shapes[0].rank() + o.axis : o.axis) - 1);
    std::vector<int64_t> d = a;
    d[k] += b[k];
    HostMatrixT<T> y(in[0]->rows, in[0]->cols + in[1]->cols);
    for (int r = 0; r < y.rows; ++r)
        graph_detail::forEachIndex(d, [&](const std::vector<int64_t>& idx) {
            std::vector<int64_t> from = idx;
            const bool first = idx[k] < a[k];
            if (!first) from[k] -= a[k];
            y(r, int(graph_detail::offsetOf(d, idx))) = first ? (*in[0])(r, int(graph_detail::offsetOf(a, from)))
                                                              : (*in[1])(r, int(graph_detail::offsetOf(b, from)));
        });
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Slice& o, const graph_detail::Ins<T>& in,
                                const std::vector<graph::Shape>& shapes) {
    const std::vector<int64_t> x = graph_detail::perExample(shapes[0]);
    const size_t k = size_t((o.axis < 0 ? shapes[0].rank() + o.axis : o.axis) - 1);
    std::vector<int64_t> d = x;
    d[k] = o.length;
    int64_t cols = 1;
    for (int64_t v : d) cols *= v;
    HostMatrixT<T> y(in[0]->rows, int(cols));
    for (int r = 0; r < y.rows; ++r)
        graph_detail::forEachIndex(d, [&](const std::vector<int64_t>& idx) {
            std::vector<int64_t> from = idx;
            from[k] += o.start;
            y(r, int(graph_detail::offsetOf(d, idx))) = (*in[0])(r, int(graph_detail::offsetOf(x, from)));
        });
    return {y};
}
// The step is the plan's (RefPlan::run's): 0 unless given.
template <class T>
std::vector<HostMatrixT<T>> run(const graph::DropoutMask& o, const graph_detail::Ins<T>& in, long step = 0) {
    return {dropoutMask<T>(in[0]->rows, in[0]->cols, o.seed, graph::DropoutMask::stepKey(step), T(o.rate))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Activate& o, const graph_detail::Ins<T>& in) {
    return {activate(*in[0], o.act, T(o.alpha))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::ActivateGrad& o, const graph_detail::Ins<T>& in) {
    return {activationGrad(*in[0], *in[1], o.act, T(o.alpha))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SoftmaxRows&, const graph_detail::Ins<T>& in) {
    return {softmaxRows(*in[0])};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SoftmaxRowsGrad&, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&y = *in[0], &dy = *in[1];
    HostMatrixT<T> dx(y.rows, y.cols);
    for (int r = 0; r < y.rows; ++r) {
        T dot = T(0);
        for (int c = 0; c < y.cols; ++c) dot += dy(r, c) * y(r, c);
        for (int c = 0; c < y.cols; ++c) dx(r, c) = y(r, c) * (dy(r, c) - dot);
    }
    return {dx};
}
// x plus table row t at each step t.
template <class T>
std::vector<HostMatrixT<T>> run(const graph::PositionAdd&, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&x = *in[0], &table = *in[1];
    HostMatrixT<T> y = x;
    for (int r = 0; r < x.rows; ++r)
        for (int c = 0; c < x.cols; ++c) y(r, c) += table(c / table.cols, c % table.cols);
    return {y};
}
// Each table row's gradient: its step's, summed over the batch (zero past the steps).
template <class T>
std::vector<HostMatrixT<T>> run(const graph::PositionAddGrad& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>& dy = *in[0];
    HostMatrixT<T> g(int(o.table.dims[0]), int(o.table.dims[1]));
    for (int r = 0; r < dy.rows; ++r)
        for (int c = 0; c < dy.cols; ++c) g(c / g.cols, c % g.cols) += dy(r, c);
    return {g};
}
// Each head's product from its definition: element (i, j) of head h of a view at h*head + i*row + j*col.
template <class T>
std::vector<HostMatrixT<T>> run(const graph::HeadMatMul& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&A = *in[0], &B = *in[1];
    const HeadProduct& p = o.p;
    HostMatrixT<T> C(A.rows, int(o.out.cols()));
    for (int r = 0; r < A.rows; ++r)
        for (int h = 0; h < p.heads; ++h)
            for (int i = 0; i < p.m; ++i)
                for (int j = 0; j < p.n; ++j) {
                    T sum = T(0);
                    for (int q = 0; q < p.k; ++q) sum += A(r, int(p.a.at(h, i, q))) * B(r, int(p.b.at(h, q, j)));
                    C(r, int(p.c.at(h, i, j))) = T(p.scale) * sum;
                }
    return {C};
}
// Each query's scores: the keys it sees (all, or causally 0..i) softmaxRows'd, the others 0.
template <class T>
std::vector<HostMatrixT<T>> run(const graph::AttentionSoftmax& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>& x = *in[0];
    HostMatrixT<T> y(x.rows, x.cols);
    for (int r = 0; r < x.rows; ++r)
        for (int g = 0; g < x.cols / o.keys; ++g) {
            const int seen = o.causal ? std::min(g % o.queries + 1, o.keys) : o.keys;
            HostMatrixT<T> scores(1, seen);
            for (int j = 0; j < seen; ++j) scores(0, j) = x(r, g * o.keys + j);
            const HostMatrixT<T> p = softmaxRows(scores);
            for (int j = 0; j < seen; ++j) y(r, g * o.keys + j) = p(0, j);
        }
    return {y};
}
// Softmax over an axis: gathers each axis' values into a row, softmaxRows it, scatters back.
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SoftmaxAxis& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>& x = *in[0];
    HostMatrixT<T> y(x.rows, x.cols);
    const int n = o.axis.count, s = o.axis.stride, block = n * s;
    for (int r = 0; r < x.rows; ++r)
        for (int outer = 0; outer < x.cols / block; ++outer)
            for (int inner = 0; inner < s; ++inner) {
                HostMatrixT<T> group(1, n);
                for (int k = 0; k < n; ++k) group(0, k) = x(r, outer * block + k * s + inner);
                const HostMatrixT<T> p = softmaxRows(group);
                for (int k = 0; k < n; ++k) y(r, outer * block + k * s + inner) = p(0, k);
            }
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SoftmaxAxisGrad& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&y = *in[0], &dy = *in[1];
    HostMatrixT<T> dx(y.rows, y.cols);
    const int n = o.axis.count, s = o.axis.stride, block = n * s;
    for (int r = 0; r < y.rows; ++r)
        for (int outer = 0; outer < y.cols / block; ++outer)
            for (int inner = 0; inner < s; ++inner) {
                auto at = [&](int k) { return outer * block + k * s + inner; };
                T dot = T(0);
                for (int k = 0; k < n; ++k) dot += dy(r, at(k)) * y(r, at(k));
                for (int k = 0; k < n; ++k) dx(r, at(k)) = y(r, at(k)) * (dy(r, at(k)) - dot);
            }
    return {dx};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Conv& o, const graph_detail::Ins<T>& in) {
    return {conv2d(*in[0], *in[1], HostMatrixT<T>(1, o.window.out.channels), o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::ConvGradInput& o, const graph_detail::Ins<T>& in) {
    return {conv2dBackwardInput(*in[0], *in[1], o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::ConvGradFilter& o, const graph_detail::Ins<T>& in) {
    return {conv2dBackwardFilter(*in[0], *in[1], o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::ConvTranspose& o, const graph_detail::Ins<T>& in) {
    return {conv2dBackwardInput(*in[0], *in[1], o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::DepthwiseConv& o, const graph_detail::Ins<T>& in) {
    return {depthwiseConv2d(*in[0], *in[1], o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::DepthwiseConvGradInput& o, const graph_detail::Ins<T>& in) {
    return {depthwiseConv2dBackwardInput(*in[0], *in[1], o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::DepthwiseConvGradFilter& o, const graph_detail::Ins<T>& in) {
    return {depthwiseConv2dBackwardFilter(*in[0], *in[1], o.window)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Pool& o, const graph_detail::Ins<T>& in) {
    return {pool2d(*in[0], o.window, o.kind)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::PoolGrad& o, const graph_detail::Ins<T>& in) {
    return {pool2dBackward(*in[0], *in[1], o.window, o.kind)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BatchNormTrain& o, const graph_detail::Ins<T>& in) {
    const BatchStats<T> s = batchStats(*in[0], in[1]->cols);
    return {batchNormApply(*in[0], s.mean, s.var, *in[1], *in[2], T(o.epsilon)), s.mean, s.var};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BatchNormInfer& o, const graph_detail::Ins<T>& in) {
    return {batchNormApply(*in[0], *in[1], *in[2], *in[3], *in[4], T(o.epsilon))};
}
// With the given statistics (the batch's, in a training graph).
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BatchNormGradParams& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&dy = *in[0], &x = *in[1], &mean = *in[2], &var = *in[3];
    const int C = mean.cols;
    HostMatrixT<T> dgamma(1, C), dbeta(1, C);
    for (int n = 0; n < x.rows; ++n)
        for (int j = 0; j < x.cols; ++j) {
            const int c = j % C;
            dbeta(0, c) += dy(n, j);
            dgamma(0, c) += dy(n, j) * (x(n, j) - mean(0, c)) / std::sqrt(var(0, c) + T(o.epsilon));
        }
    return {dgamma, dbeta};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BatchNormGradInput& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&dy = *in[0], &x = *in[1], &mean = *in[2], &var = *in[3], &gamma = *in[4], &dgamma = *in[5],
          &dbeta = *in[6];
    const int C = mean.cols;
    const T m = T(x.rows) * T(x.cols / C);
    HostMatrixT<T> dx(x.rows, x.cols);
    for (int n = 0; n < x.rows; ++n)
        for (int j = 0; j < x.cols; ++j) {
            const int c = j % C;
            const T rstd = T(1) / std::sqrt(var(0, c) + T(o.epsilon));
            const T xhat = (x(n, j) - mean(0, c)) * rstd;
            dx(n, j) = gamma(0, c) * rstd / m * (m * dy(n, j) - dbeta(0, c) - xhat * dgamma(0, c));
        }
    return {dx};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SoftmaxCrossEntropy&, const graph_detail::Ins<T>& in) {
    const RowLoss<T> l = softmaxCrossEntropy(*in[0], graph_detail::labels(*in[1]));
    return {l.lossPerRow, graph_detail::scalar(l.mean())};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::SoftmaxCrossEntropyGrad&, const graph_detail::Ins<T>& in) {
    return {graph_detail::scaled(softmaxCrossEntropy(*in[0], graph_detail::labels(*in[1])).grad, in[2]->data[0])};
}
namespace graph_detail {
template <class T>
ScalarLoss<T> pointwise(PointwiseLoss kind, const HostMatrixT<T>& x, const HostMatrixT<T>& t) {
    return kind == PointwiseLoss::MeanSquaredError ? mse(x, t) : binaryCrossEntropyWithLogits(x, t);
}
}  // namespace graph_detail
template <class T>
std::vector<HostMatrixT<T>> run(const graph::PointwiseLossOp& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&x = *in[0], &t = *in[1];
    HostMatrixT<T> rows(x.rows, 1);
    for (int r = 0; r < x.rows; ++r) {
        HostMatrixT<T> xr(1, x.cols), tr(1, x.cols);
        for (int c = 0; c < x.cols; ++c) {
            xr(0, c) = x(r, c);
            tr(0, c) = t(r, c);
        }
        rows(r, 0) = graph_detail::pointwise(o.kind, xr, tr).loss;
    }
    return {rows, graph_detail::scalar(graph_detail::pointwise(o.kind, x, t).loss)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::PointwiseLossGrad& o, const graph_detail::Ins<T>& in) {
    return {graph_detail::scaled(graph_detail::pointwise(o.kind, *in[0], *in[1]).grad, in[2]->data[0])};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::CorrectCount&, const graph_detail::Ins<T>& in) {
    return {graph_detail::scalar(in[2]->data[0] + T(correctCount(*in[0], graph_detail::labels(*in[1]))))};
}

// The metrics' ops (graph/ops/metric.hpp), from metric_spec.hpp's definitions.
template <class T>
std::vector<HostMatrixT<T>> run(const graph::MetricRows& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&P = *in[0], &Y = *in[1];
    const int K = metricSumsPerRow(o.spec());
    HostMatrixT<T> out(P.rows, K);
    const HostMatrixT<int> predicted = argmaxRows(P);
    if (o.steps > 0) {  // per token: each step's classes are a row of their own
        const int V = P.cols / o.steps;
        HostMatrixT<T> steps(P.rows * o.steps, V);
        for (int r = 0; r < P.rows; ++r)
            for (int s = 0; s < o.steps; ++s)
                for (int c = 0; c < V; ++c) steps(r * o.steps + s, c) = P(r, s * V + c);
        const HostMatrixT<int> best = argmaxRows(steps);
        for (int r = 0; r < P.rows; ++r)
            for (int s = 0; s < o.steps; ++s) {
                if (Y(r, s) < T(0)) continue;
                out(r, 0) += T(T(best(r * o.steps + s, 0)) == Y(r, s));
                out(r, 1) += T(1);
            }
        return {out};
    }
    for (int r = 0; r < P.rows; ++r) {
        auto positive = [&](int c) { return P(r, c) > T(o.threshold); };
        auto actual = [&](int c) { return Y(r, c) > T(0.5); };
        switch (o.kind) {
            case MetricKind::BinaryAccuracy: {
                int agree = 0;
                for (int c = 0; c < P.cols; ++c) agree += positive(c) == actual(c);
                out(r, 0) = T(agree) / T(P.cols);
                break;
            }
            case MetricKind::CategoricalAccuracy: out(r, 0) = T(predicted(r, 0) == argmaxRows(Y)(r, 0)); break;
            case MetricKind::SparseCategoricalAccuracy: out(r, 0) = T(T(predicted(r, 0)) == Y(r, 0)); break;
            case MetricKind::Precision:
            case MetricKind::Recall:
                for (int c = 0; c < P.cols; ++c) {
                    out(r, 0) += T(positive(c) && actual(c));
                    out(r, 1) += T(o.kind == MetricKind::Precision ? positive(c) : actual(c));
                }
                break;
            default:
                for (int i = 0; i < o.thresholds; ++i)
                    for (int c = 0; c < P.cols; ++c)
                        if (P(r, c) > T(aucThreshold(i, o.thresholds))) out(r, 2 * i + (actual(c) ? 0 : 1)) += T(1);
        }
    }
    return {out};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::RunningSum&, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> out = *in[1];
    for (int r = 0; r < in[0]->rows; ++r)
        for (int c = 0; c < in[0]->cols; ++c) out.data[size_t(c)] += (*in[0])(r, c);
    return {out};
}

// The math ops (graph/ops/math.hpp), from their definitions.
namespace graph_detail {
template <class T>
T mathFn(graph::MathFn f, T a, T b, T x) {
    using graph::MathFn;
    switch (f) {
        case MathFn::Abs: return x < 0 ? -x : x;
        case MathFn::Square: return x * x;
        case MathFn::Sqrt: return std::sqrt(x);
        case MathFn::Log: return std::log(x);
        case MathFn::Exp: return std::exp(x);
        case MathFn::Clip: return x < a ? a : x > b ? b : x;
        case MathFn::Affine: return a * x + b;
        case MathFn::Huber: return (x < 0 ? -x : x) <= a ? x * x / 2 : a * ((x < 0 ? -x : x) - a / 2);
        case MathFn::Relu: return x > 0 ? x : T(0);
    }
    return x;
}
template <class T>
T mathFnDerivative(graph::MathFn f, T a, T b, T x) {
    using graph::MathFn;
    switch (f) {
        case MathFn::Abs: return x > 0 ? T(1) : x < 0 ? T(-1) : T(0);
        case MathFn::Square: return 2 * x;
        case MathFn::Sqrt: return 1 / (2 * std::sqrt(x));
        case MathFn::Log: return 1 / x;
        case MathFn::Exp: return std::exp(x);
        case MathFn::Clip: return a <= x && x <= b ? T(1) : T(0);
        case MathFn::Affine: return a;
        case MathFn::Huber: return x < -a ? -a : x > a ? a : x;
        case MathFn::Relu: return x > 0 ? T(1) : T(0);
    }
    return T(1);
}
}  // namespace graph_detail
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Unary& o, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> y = *in[0];
    for (T& v : y.data) v = graph_detail::mathFn<T>(o.fn, T(o.a), T(o.b), v);
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::UnaryGrad& o, const graph_detail::Ins<T>& in) {
    HostMatrixT<T> y = *in[0];
    for (size_t i = 0; i < y.data.size(); ++i)
        y.data[i] *= graph_detail::mathFnDerivative<T>(o.fn, T(o.a), T(o.b), in[1]->data[i]);
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::RowSum&, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>& x = *in[0];
    HostMatrixT<T> y(x.rows, 1);
    for (int r = 0; r < x.rows; ++r)
        for (int c = 0; c < x.cols; ++c) y(r, 0) += x(r, c);
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::RowBroadcast& o, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>& d = *in[0];
    HostMatrixT<T> y(d.rows, int(o.shape.cols()));
    for (int r = 0; r < y.rows; ++r)
        for (int c = 0; c < y.cols; ++c) y(r, c) = d(r, 0);
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::RowMax&, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>& x = *in[0];
    HostMatrixT<T> y(x.rows, 1);
    for (int r = 0; r < x.rows; ++r) {
        y(r, 0) = x(r, 0);
        for (int c = 1; c < x.cols; ++c) y(r, 0) = std::max(y(r, 0), x(r, c));
    }
    return {y};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::RowMaxGrad&, const graph_detail::Ins<T>& in) {
    const HostMatrixT<T>&d = *in[0], &x = *in[1], &y = *in[2];
    HostMatrixT<T> g(x.rows, x.cols);
    for (int r = 0; r < x.rows; ++r)
        for (int c = 0; c < x.cols; ++c) g(r, c) = x(r, c) == y(r, 0) ? d(r, 0) : T(0);
    return {g};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BatchMean&, const graph_detail::Ins<T>& in) {
    T s = 0;
    for (T v : in[0]->data) s += v;
    return {graph_detail::scalar(s / T(in[0]->rows))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::BatchMeanGrad&, const graph_detail::Ins<T>& in) {
    return {HostMatrixT<T>(in[1]->rows, 1, in[0]->data[0] / T(in[1]->rows))};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Transpose& o, const graph_detail::Ins<T>& in) {
    return {permuteAxes(*in[0], o.in, o.perm)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::PadImage& o, const graph_detail::Ins<T>& in) {
    return {padImages(*in[0], o.in, o.pad)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::CropImage& o, const graph_detail::Ins<T>& in) {
    return {cropImages(*in[0], o.in, o.crop)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::Upsample& o, const graph_detail::Ins<T>& in) {
    return {upsampleImages(*in[0], o.in, o.size, o.interpolation)};
}
template <class T>
std::vector<HostMatrixT<T>> run(const graph::UpsampleGrad& o, const graph_detail::Ins<T>& in) {
    return {upsampleImagesBackward(*in[0], o.in, o.size, o.interpolation)};
}

// A whole graph in precision T for one batch size: every node, in order.
template <class T>
class RefPlan {
public:
    RefPlan(const graph::Graph& g, int batch) : g_(g), values_(size_t(g.values())) {
        for (graph::ValueId v = 0; v < g.values(); ++v) {
            const graph::Value& x = g.value(v);
            values_[size_t(v)] = HostMatrixT<T>(int(x.shape.rows(batch)), int(x.shape.cols()), T(x.constant));
        }
    }
    HostMatrixT<T>& operator[](graph::ValueId v) { return values_.at(size_t(v)); }
    // `step` numbers dropout's masks.
    void run(long step = 0) {
        for (int n = 0; n < g_.nodes(); ++n) {
            const graph::Node& node = g_.node(n);
            graph_detail::Ins<T> in;
            for (graph::ValueId v : node.inputs) in.push_back(&values_[size_t(v)]);
            std::vector<HostMatrixT<T>> out = std::visit(
                [&](const auto& o) {
                    using O = std::decay_t<decltype(o)>;
                    if constexpr (std::is_same_v<O, graph::DropoutMask>) return ref::run<T>(o, in, step);
                    else if constexpr (std::is_same_v<O, graph::Concat> || std::is_same_v<O, graph::Slice>) {
                        std::vector<graph::Shape> shapes;
                        for (graph::ValueId v : node.inputs) shapes.push_back(g_.shape(v));
                        return ref::run<T>(o, in, shapes);
                    } else return ref::run<T>(o, in);
                },
                node.op);
            for (size_t k = 0; k < out.size(); ++k) values_[size_t(node.outputs[k])] = std::move(out[k]);
        }
    }

private:
    const graph::Graph& g_;
    std::vector<HostMatrixT<T>> values_;
};

}  // namespace gltrain::ref
