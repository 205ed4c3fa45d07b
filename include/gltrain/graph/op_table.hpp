// The op table: every op of the graph, listed once. Everything that handles
// ops dispatches with std::visit over `Op` (or iterates `OpTypes`), so an op
// that misses a consumer — a GPU record, a CPU kernel, the oracle, a test
// case — does not compile. docs/adding-a-layer.md says how to add one.
#pragma once
#include <variant>

#include "gltrain/type_list.hpp"

#include "gltrain/graph/ops/activation.hpp"
#include "gltrain/graph/ops/attention.hpp"
#include "gltrain/graph/ops/batchnorm.hpp"
#include "gltrain/graph/ops/concat.hpp"
#include "gltrain/graph/ops/conv.hpp"
#include "gltrain/graph/ops/depthwise.hpp"
#include "gltrain/graph/ops/elementwise.hpp"
#include "gltrain/graph/ops/embedding.hpp"
#include "gltrain/graph/ops/layer_norm.hpp"
#include "gltrain/graph/ops/loss.hpp"
#include "gltrain/graph/ops/math.hpp"
#include "gltrain/graph/ops/matmul.hpp"
#include "gltrain/graph/ops/metric.hpp"
#include "gltrain/graph/ops/position_embedding.hpp"
#include "gltrain/graph/ops/random.hpp"
#include "gltrain/graph/ops/recurrent.hpp"
#include "gltrain/graph/ops/sequence_loss.hpp"
#include "gltrain/graph/ops/spatial.hpp"

namespace gltrain::graph {

using OpTypes =
    TypeList<MatMul, Add, Mul, Sub, Scale, Maximum, GreaterEqual, BiasAdd, ChannelSum, Reshape, Concat, Slice,  //
             DropoutMask,                                                                                       //
             Activate, ActivateGrad, SoftmaxRows, SoftmaxRowsGrad,                                              //
             Conv, ConvGradInput, ConvGradFilter, Pool, PoolGrad,                                               //
             DepthwiseConv, DepthwiseConvGradInput, DepthwiseConvGradFilter, ConvTranspose,                     //
             BatchNormTrain, BatchNormInfer, BatchNormGradParams, BatchNormGradInput,                           //
             SoftmaxAxis, SoftmaxAxisGrad,                                                                      //
             SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad, PointwiseLossOp, PointwiseLossGrad, CorrectCount,    //
             Unary, UnaryGrad, RowSum, RowBroadcast, RowMax, RowMaxGrad, BatchMean, BatchMeanGrad,              //
             Transpose, PadImage, CropImage, Upsample, UpsampleGrad, MetricRows, RunningSum,                    //
             EmbeddingLookup, EmbeddingGrad, LayerNorm, LayerNormGradInput, Standardize, SequenceCrossEntropy,  //
             SequenceCrossEntropyGrad, LstmSequence, LstmSequenceGrad, LstmRecurrentGrad,                       //
             ReverseSteps, HeadMatMul, AttentionSoftmax, PositionAdd, PositionAddGrad, GruSequence,             //
             GruSequenceGrad, GruRecurrentGrad>;
using Op = OpTypes::Variant;

inline const char* opName(const Op& op) {
    return std::visit([](const auto& o) { return o.kName; }, op);
}
inline int opInputs(const Op& op) {
    return std::visit([](const auto& o) { return o.kInputs; }, op);
}
inline int opOutputs(const Op& op) {
    return std::visit([](const auto& o) { return o.kOutputs; }, op);
}
inline unsigned opGradInputs(const Op& op) {
    return std::visit([](const auto& o) { return o.kGradInputs; }, op);
}
inline unsigned opGradOutputs(const Op& op) {
    return std::visit([](const auto& o) { return o.kGradOutputs; }, op);
}

}  // namespace gltrain::graph
