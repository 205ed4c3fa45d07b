// Batch normalization over the last dimension (channels) of [B, ..., C]:
// training normalizes with the batch's statistics, which it also outputs (the
// model moves its moving averages toward them), inference with given ones.
// Formulas: reference/batchnorm.hpp.
#pragma once
#include <cmath>

#include "gltrain/cpu/batchnorm.hpp"
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/batchnorm.hpp"

namespace gltrain::graph {

namespace op_detail {
inline Shapes batchNormShapes(const Shapes& in, std::initializer_list<int> channelVectors) {
    requireBatched("x", in[0]);
    for (int i : channelVectors) requireChannelVector("a statistic or scale", in[0], in[size_t(i)]);
    return {in[0]};
}
inline const std::vector<Shape> kBatchNormExampleShapes = {Shape::batched({6}), Shape::batched({3, 2, 5}),
                                                           Shape::batched({2, 2, 8})};
// The op table's examples of a batch-norm op: for each example shape s,
// `values` inputs of shape s (x; or dy, x) then channel vectors filled as `vectors`.
template <class Op>
std::vector<Example<Op>> batchNormExamples(int values, std::initializer_list<Fill> vectors) {
    std::vector<Example<Op>> e;
    for (const Shape& s : kBatchNormExampleShapes) {
        std::vector<InputSpec> in(size_t(values), InputSpec{s});
        for (Fill f : vectors) in.push_back({Shape{s.last()}, f});
        e.push_back({Op{0.01f}, in});
    }
    return e;
}
}  // namespace op_detail

// dgamma, dbeta: inputs dy, x, mean, var (the batch's).
struct BatchNormGradParams {
    static constexpr const char* kName = "batch_norm_grad_params";
    static constexpr int kInputs = 4, kOutputs = 2;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireSame("dy and x", in[0], in[1]);
        op_detail::batchNormShapes({in[1], in[2], in[3]}, {1, 2});
        return {in[2], in[2]};
    }
    template <class R>
    void gpu(R& r) const {
        recordBatchNormParamGrads(r.list(), r.in(0), r.in(1), r.in(2), r.in(3), epsilon, r.out(0), r.out(1));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &dy = c.in(0), &x = c.in(1);
        cpu::batchNormBackward(x.data.data(), dy.data.data(), x.rows, x.cols, c.in(2).cols, c.in(2).data.data(),
                               c.in(3).data.data(), nullptr, epsilon, c.out(0).data.data(), c.out(1).data.data(),
                               nullptr, c.acc());
    }
    static std::vector<Example<BatchNormGradParams>> examples() {
        return op_detail::batchNormExamples<BatchNormGradParams>(2, {Fill::Normal, Fill::Positive});
    }
};

// dx of training-mode normalization: inputs dy, x, mean, var, gamma, dgamma, dbeta.
struct BatchNormGradInput {
    static constexpr const char* kName = "batch_norm_grad_input";
    static constexpr int kInputs = 7, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const {
        op_detail::requireSame("dy and x", in[0], in[1]);
        return op_detail::batchNormShapes({in[1], in[2], in[3], in[4], in[5], in[6]}, {1, 2, 3, 4, 5});
    }
    template <class R>
    void gpu(R& r) const {
        recordBatchNormInputGrad(r.list(), r.in(0), r.in(1), r.in(2), r.in(3), r.in(4), r.in(5), r.in(6), epsilon,
                                 r.out(0));
    }
    // dx = gamma rstd / M (M dy - dbeta - xhat dgamma), xhat = (x - mean) rstd.
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix &dy = c.in(0), &x = c.in(1), &mean = c.in(2), &var = c.in(3), &gamma = c.in(4),
                         &dgamma = c.in(5), &dbeta = c.in(6);
        const size_t C = size_t(mean.cols), total = x.data.size();
        const double m = double(total / C);
        for (size_t i = 0; i < total; i += C)
            for (size_t k = 0; k < C; ++k) {
                const double rstd = 1.0 / std::sqrt(double(var.data[k]) + double(epsilon));
                const double xhat = (x.data[i + k] - mean.data[k]) * rstd;
                c.out(0).data[i + k] =
                    float(gamma.data[k] * rstd / m * (m * dy.data[i + k] - dbeta.data[k] - xhat * dgamma.data[k]));
            }
    }
    static std::vector<Example<BatchNormGradInput>> examples() {
        return op_detail::batchNormExamples<BatchNormGradInput>(
            2, {Fill::Normal, Fill::Positive, Fill::Normal, Fill::Normal, Fill::Normal});
    }
};

// Training: inputs x, gamma, beta; outputs y, mean, var (biased, the batch's:
// no gradient flows back through them).
struct BatchNormTrain {
    static constexpr const char* kName = "batch_norm_train";
    static constexpr int kInputs = 3, kOutputs = 3;
    static constexpr unsigned kGradInputs = 0b111, kGradOutputs = 0b001;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const {
        op_detail::batchNormShapes(in, {1, 2});
        return {in[0], in[1], in[1]};
    }
    template <class G>
    void grad(G& g) const {
        const auto dy = g.dOut(0), x = g.in(0), mean = g.out(1), var = g.out(2);
        const auto p = g.addN(BatchNormGradParams{epsilon}, {dy, x, mean, var});
        if (g.needs(1)) g.grad(1, p[0]);
        if (g.needs(2)) g.grad(2, p[1]);
        if (g.needs(0)) g.grad(0, g.add(BatchNormGradInput{epsilon}, {dy, x, mean, var, g.in(1), p[0], p[1]}));
    }
    template <class R>
    void gpu(R& r) const {
        const int C = r.in(1).cols();
        Tensor &mean = r.out(1), &var = r.out(2);
        recordBatchStats(r.list(), r.in(0), C, mean, var);
        recordBatchNormApply(r.list(), r.in(0), mean, var, r.in(1), r.in(2), epsilon, Activation::Linear, r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        const int C = c.in(1).cols;
        float *mean = c.out(1).data.data(), *var = c.out(2).data.data();
        cpu::batchStats(x.data.data(), x.rows, x.cols, C, mean, var, c.acc());
        cpu::batchNormApply(x.data.data(), x.rows, x.cols, C, mean, var, c.in(1).data.data(), c.in(2).data.data(),
                            epsilon, c.out(0).data.data(), c.scratch());
    }
    static std::vector<Example<BatchNormTrain>> examples() {
        return op_detail::batchNormExamples<BatchNormTrain>(1, {Fill::Normal, Fill::Normal});
    }
};

// Inference: inputs x, mean, var, gamma, beta (the moving averages). Its
// gradient (a frozen layer that still passes gradients back, or fine-tuning
// in inference mode) treats the statistics as constants:
//   dx = gamma dy / sqrt(var + eps)  — the op itself on dy with a zero mean and shift,
//   dgamma = sum dy xhat, dbeta = sum dy — BatchNormGradParams with these statistics.
struct BatchNormInfer {
    static constexpr const char* kName = "batch_norm_infer";
    static constexpr int kInputs = 5, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0b11001, kGradOutputs = 0b1;
    float epsilon = 1e-3f;
    Shapes shapes(const Shapes& in) const { return op_detail::batchNormShapes(in, {1, 2, 3, 4}); }
    template <class G>
    void grad(G& g) const {
        const auto dy = g.dOut(0), x = g.in(0), mean = g.in(1), var = g.in(2);
        if (g.needs(3) || g.needs(4)) {
            const auto p = g.addN(BatchNormGradParams{epsilon}, {dy, x, mean, var});
            if (g.needs(3)) g.grad(3, p[0]);
            if (g.needs(4)) g.grad(4, p[1]);
        }
        if (g.needs(0)) {
            const auto zero = g.constant("zero", g.shape(mean), 0.0f);
            g.grad(0, g.add(BatchNormInfer{epsilon}, {dy, zero, var, g.in(3), zero}));
        }
    }
    template <class R>
    void gpu(R& r) const {
        recordBatchNormApply(r.list(), r.in(0), r.in(1), r.in(2), r.in(3), r.in(4), epsilon, Activation::Linear,
                             r.out(0));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        const HostMatrix& x = c.in(0);
        cpu::batchNormApply(x.data.data(), x.rows, x.cols, c.in(1).cols, c.in(1).data.data(), c.in(2).data.data(),
                            c.in(3).data.data(), c.in(4).data.data(), epsilon, c.out(0).data.data(), c.scratch());
    }
    static std::vector<Example<BatchNormInfer>> examples() {
        return op_detail::batchNormExamples<BatchNormInfer>(1,
                                                            {Fill::Normal, Fill::Positive, Fill::Normal, Fill::Normal});
    }
};

}  // namespace gltrain::graph
