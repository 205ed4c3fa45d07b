// TypeScript declarations of gltrain.js (hand-written; checked by `tsc --noEmit`
// against tests/web/usage.ts in scripts/test.sh).

/** The kinds of error gltrain throws; C++ errors keep their C++ kind. */
export type ErrorKind =
  | 'ArgumentError' | 'TrainingError' | 'FormatError' | 'UnsupportedError' | 'ShaderError' | 'GlError'
  | 'ContextLostError' | 'RangeError' | 'IoError' | 'DeletedError' | 'WorkerError' | 'Error';

/** Every gltrain error: `name` and `kind` are the kind, `message` the C++ message. */
export declare class GltrainError extends Error {
  /** An error of `kind` with the C++ message. */
  constructor(kind: ErrorKind, message: string);
  readonly kind: ErrorKind;
}

/**
 * Activation functions, for dense, conv2d and activation layers. 'gelu' is the tanh approximation
 * (TF.js's 'gelu_new'), 'gelu_exact' the erf form (TF.js's and Keras's 'gelu'); 'silu' is 'swish';
 * 'hard_sigmoid' is clip(0.2x + 0.5, 0, 1), as in TF.js.
 */
export type ActivationName =
  | 'linear' | 'relu' | 'leaky_relu' | 'sigmoid' | 'tanh' | 'gelu' | 'softplus' | 'elu' | 'selu' | 'relu6'
  | 'swish' | 'silu' | 'mish' | 'hard_sigmoid' | 'softsign' | 'gelu_exact';
/** Variable initializers by name. */
export type InitializerName = 'glorot_uniform' | 'glorot_normal' | 'he_uniform' | 'he_normal' | 'zeros' | 'orthogonal';
/**
 * An initializer: a name, `{type}`, a constant value, a normal distribution (mean default 0), or an orthogonal
 * matrix times a gain (default 1; TF.js's default for recurrent kernels).
 */
export type Initializer =
  | InitializerName
  | { type: InitializerName }
  | { type: 'constant'; value: number }
  | { type: 'random_normal'; stddev: number; mean?: number }
  | { type: 'orthogonal'; gain?: number };
/** Optimizers by name. */
export type OptimizerName = 'sgd' | 'momentum' | 'nesterov' | 'adam' | 'adamw' | 'rmsprop';
/** Losses by name ('mean_squared_error' is Keras's name for 'mse'). */
/**
 * A loss by name: gltrain's, then Keras's. Keras's 'binary_crossentropy' is on probabilities (fromLogits false);
 * 'binary_cross_entropy' on logits. The softmax cross-entropies read the logits before a final Softmax.
 */
export type LossName =
  | 'softmax_cross_entropy' | 'mse' | 'mean_squared_error' | 'binary_cross_entropy'
  | 'sparse_categorical_crossentropy' | 'categorical_crossentropy' | 'binary_crossentropy'
  | 'mae' | 'mean_absolute_error' | 'huber' | 'huber_loss'
  | 'kl_divergence' | 'kld' | 'kullback_leibler_divergence' | 'categorical_hinge'
  | 'sequence_softmax_cross_entropy';
/** A loss with its parameters (a model file's {"type": "huber", "delta": 2}). */
export interface LossOptions {
  type: LossName;
  /** huber: where the loss turns from quadratic to linear (> 0, default 1). */
  delta?: number;
  /** The cross-entropies: targets t become t (1 - s) + s / classes (2 for binary), s in [0, 1). */
  labelSmoothing?: number;
  /** Binary cross-entropy: on logits (true) or probabilities (false). The default follows the name. */
  fromLogits?: boolean;
}
/** A custom loss as a model file holds it: what compile() records from a loss function. */
export interface ExpressionLoss {
  type: 'expression';
  /** Named in errors (a function's name when recorded). */
  name?: string;
  /** "yTrue", "yPred", a number, or {op, x | a, b, ...} (include/gltrain/loss_expression.hpp). */
  expression: unknown;
}
/**
 * yTrue or yPred in a custom loss `(yTrue, yPred) => yPred.sub(yTrue).abs().mean(-1)`: its methods record an
 * expression once, which both engines run as graph ops (no JavaScript runs per step). The loss must give one value per
 * row (reduce with mean, sum or max over the last axis); a [rows, 1] operand is broadcast over the other's rows.
 */
export declare class LossTensor {
  /** Element-wise this + other. */
  add(other: LossTensor | number): LossTensor;
  /** Element-wise this - other. */
  sub(other: LossTensor | number): LossTensor;
  /** Element-wise this * other. */
  mul(other: LossTensor | number): LossTensor;
  /** Divided by a constant. */
  div(other: number): LossTensor;
  /** Element-wise max(this, other). */
  maximum(other: LossTensor): LossTensor;
  /** |x|. */
  abs(): LossTensor;
  /** x². */
  square(): LossTensor;
  /** √x. */
  sqrt(): LossTensor;
  /** The natural log. */
  log(): LossTensor;
  /** eˣ. */
  exp(): LossTensor;
  /** -x. */
  neg(): LossTensor;
  /** max(x, 0). */
  relu(): LossTensor;
  /** Clipped to [min, max] (the gradient passes inside, as TensorFlow's clip_by_value). */
  clip(min: number, max: number): LossTensor;
  /** The same as clip (TF.js's name). */
  clipByValue(min: number, max: number): LossTensor;
  /** Each row's mean: [rows, 1]. */
  mean(axis?: -1 | 1): LossTensor;
  /** Each row's sum: [rows, 1]. */
  sum(axis?: -1 | 1): LossTensor;
  /** Each row's max: [rows, 1] (its gradient goes to the elements equal to it). */
  max(axis?: -1 | 1): LossTensor;
}
/** A loss: a name, a name with parameters, a custom loss (a function compile() records, or its record). */
export type Loss = LossName | LossOptions | ExpressionLoss | ((yTrue: LossTensor, yPred: LossTensor) => LossTensor);

/**
 * A metric by name. 'accuracy' (or 'acc') is the one the output's loss implies, as Keras resolves it: sparse categorical
 * for class labels, binary for binary cross-entropy or one column, else categorical. Precision, recall and binary
 * accuracy count a prediction above `threshold` (default 0.5) as positive and a target above 0.5 as positive; 'auc' is
 * the ROC curve's area from `thresholds` (default 200) thresholds, as Keras's AUC. Every loss name is a metric too (its
 * mean, on the model's output).
 */
export type MetricName =
  | 'accuracy' | 'acc' | 'binary_accuracy' | 'categorical_accuracy' | 'sparse_categorical_accuracy'
  | 'precision' | 'recall' | 'auc' | LossName;
/** A metric with its parameters; `name` is what history calls it (default: its type). */
export interface MetricOptions {
  type: MetricName;
  name?: string;
  /** binary_accuracy, precision, recall: a prediction above it is positive (default 0.5). */
  threshold?: number;
  /** auc: how many thresholds the curve is sampled at (3 to 10000, default 200). */
  thresholds?: number;
}
/**
 * A metric: a name, a name with parameters, or a function of (yTrue, yPred) giving one value per row (as a custom loss),
 * reported as the rows' mean under the function's name.
 */
export type Metric =
  | MetricName | MetricOptions | ExpressionLoss | ((yTrue: LossTensor, yPred: LossTensor) => LossTensor);

/** A fully connected layer: y = f(x·kernel + bias), kernel [in, units]. */
export interface DenseLayer {
  type: 'dense';
  units: number;
  activation?: ActivationName;
  /** LeakyReLU slope (default 0.01). */
  alpha?: number;
  /** ELU's alpha: negative inputs saturate at -eluAlpha (default 1). */
  eluAlpha?: number;
  kernelInitializer?: Initializer;
  biasInitializer?: Initializer;
  /** Checked against the previous layer's output size at compile(). */
  inputDim?: number;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** An activation function applied element-wise. */
export interface ActivationLayer {
  type: 'activation';
  activation: ActivationName;
  /** LeakyReLU slope (default 0.01). */
  alpha?: number;
  /** ELU's alpha: negative inputs saturate at -eluAlpha (default 1). */
  eluAlpha?: number;
  name?: string;
  trainable?: boolean;
}
/** Identity in evaluate/predict. */
export interface DropoutLayer { type: 'dropout'; rate?: number; name?: string; trainable?: boolean }
/**
 * Probabilities over one axis, at any depth. As the last layer (over a flat output, with the softmax
 * cross-entropy loss) training reads the logits before it.
 */
export interface SoftmaxLayer {
  type: 'softmax';
  name?: string;
  trainable?: boolean;
  /** The axis, counting the batch as 0: -1 (default) the last, of an image 1 height, 2 width, 3 channels. */
  axis?: number;
}
/** 'valid': no padding; 'same': as TensorFlow (the odd pixel goes after). */
export type Padding = 'valid' | 'same';
/** A 2-D convolution over NHWC images; kernel saved as [kh, kw, C, filters] (HWIO). */
export interface Conv2DLayer {
  type: 'conv2d';
  filters: number;
  /** n (n x n) or [height, width] (default 3). */
  kernelSize?: number | [number, number];
  /** n or [height, width] (default 1). */
  stride?: number | [number, number];
  /** n or [height, width]: pixels between taps (default 1); stride and dilationRate may not both exceed 1 along an axis. */
  dilationRate?: number | [number, number];
  padding?: Padding;
  activation?: ActivationName;
  alpha?: number;
  /** ELU's alpha: negative inputs saturate at -eluAlpha (default 1). */
  eluAlpha?: number;
  kernelInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** Each channel of an NHWC image convolved with its own filters; kernel saved as [kh, kw, C, depthMultiplier] ('depthwise_kernel'). */
export interface DepthwiseConv2DLayer {
  type: 'depthwiseconv2d' | 'depthwise_conv2d';
  /** n (n x n) or [height, width] (default 3). */
  kernelSize?: number | [number, number];
  /** Filters per input channel (default 1). */
  depthMultiplier?: number;
  /** n or [height, width] (default 1). */
  stride?: number | [number, number];
  /** n or [height, width]: pixels between taps (default 1). */
  dilationRate?: number | [number, number];
  padding?: Padding;
  activation?: ActivationName;
  alpha?: number;
  depthwiseInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** A depthwise then a pointwise (1x1) convolution over NHWC images; saved as 'depthwise_kernel' [kh, kw, C, M], 'pointwise_kernel' [1, 1, C*M, filters], 'bias'. */
export interface SeparableConv2DLayer {
  type: 'separableconv2d' | 'separable_conv2d';
  filters: number;
  /** n (n x n) or [height, width] (default 3). */
  kernelSize?: number | [number, number];
  /** n or [height, width] (default 1). */
  stride?: number | [number, number];
  /** n or [height, width]: pixels between taps (default 1). */
  dilationRate?: number | [number, number];
  /** Depthwise filters per channel (default 1). */
  depthMultiplier?: number;
  padding?: Padding;
  activation?: ActivationName;
  alpha?: number;
  depthwiseInitializer?: Initializer;
  pointwiseInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** The transpose of a convolution (upsampling by the strides); kernel saved as [kh, kw, filters, C]. */
export interface Conv2DTransposeLayer {
  type: 'conv2dtranspose' | 'conv2d_transpose';
  filters: number;
  /** n (n x n) or [height, width] (default 3). */
  kernelSize?: number | [number, number];
  /** n or [height, width]: the upsampling (default 1). */
  stride?: number | [number, number];
  padding?: Padding;
  activation?: ActivationName;
  alpha?: number;
  kernelInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** A 1-D convolution over sequences [steps, channels] (images of height 1); kernel saved as [k, C, filters]. */
export interface Conv1DLayer {
  type: 'conv1d';
  filters: number;
  /** Window length (default 3). */
  kernelSize?: number;
  stride?: number;
  /** Steps between taps (default 1). */
  dilationRate?: number;
  padding?: Padding;
  activation?: ActivationName;
  alpha?: number;
  kernelInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** Max or average pooling over windows of sequences [steps, channels]. */
export interface Pool1DLayer {
  type: 'maxpool1d' | 'max_pool1d' | 'averagepool1d' | 'average_pool1d';
  /** Default 2. */
  poolSize?: number;
  /** 0 or omitted: poolSize. */
  stride?: number;
  padding?: Padding;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** Max or average pooling over square windows of NHWC images. */
export interface Pool2DLayer {
  type: 'maxpool2d' | 'max_pool2d' | 'averagepool2d' | 'average_pool2d';
  /** Default 2. */
  poolSize?: number;
  /** 0 or omitted: poolSize. */
  stride?: number;
  padding?: Padding;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** [H, W, C] -> [C]: the mean of each channel. */
export interface GlobalAveragePooling2DLayer { type: 'globalaveragepooling2d' | 'global_average_pooling2d'; name?: string; trainable?: boolean }
/** The largest value of each channel over the image: [H, W, C] to [C]. */
export interface GlobalMaxPooling2DLayer { type: 'globalmaxpooling2d' | 'global_max_pooling2d'; name?: string; trainable?: boolean }
/** A table of inputDim vectors of outputDim values: token ids [steps] to a sequence [steps, outputDim]. */
export interface EmbeddingLayer {
  type: 'embedding';
  /** The vocabulary: token ids are 0 .. inputDim - 1. */
  inputDim: number;
  /** Each token's vector length. */
  outputDim: number;
  embeddingsInitializer?: Initializer;
  name?: string;
  trainable?: boolean;
}
/** Layer normalization over the last axis: (x - mean) / sqrt(var + epsilon) * gamma + beta. */
export interface LayerNormalizationLayer {
  type: 'layernormalization' | 'layer_normalization';
  /** Added to the variance (default 0.001). */
  epsilon?: number;
  gammaInitializer?: Initializer;
  betaInitializer?: Initializer;
  name?: string;
  trainable?: boolean;
}
/** An LSTM over a sequence: the last step's output [units], or every step's [steps, units]. */
export interface LSTMLayer {
  type: 'lstm';
  /** The state's size: each step's output. */
  units: number;
  /** The cell's activation (default tanh). */
  activation?: ActivationName;
  /** The gates' activation (default hard_sigmoid, as TF.js). */
  recurrentActivation?: ActivationName;
  /** Whether the gates have a bias (default true). */
  useBias?: boolean;
  /** true: every step's output [steps, units]; false (default): the last step's. */
  returnSequences?: boolean;
  /** Read the sequence from its end (default false). */
  goBackwards?: boolean;
  kernelInitializer?: Initializer;
  recurrentInitializer?: Initializer;
  biasInitializer?: Initializer;
  /** The forget gate's bias starts at 1 (default false, as TF.js). */
  unitForgetBias?: boolean;
  name?: string;
  trainable?: boolean;
}
/** An LSTM or a GRU in both directions over a sequence, merged by concatenation, sum, product or mean. */
export interface BidirectionalLayer {
  type: 'bidirectional';
  /** The wrapped layer: lstm (default) or gru. */
  layer?: string;
  /** Each direction's state size. */
  units: number;
  /** The cells' activation (default tanh). */
  activation?: ActivationName;
  /** The gates' activation (default hard_sigmoid, as TF.js). */
  recurrentActivation?: ActivationName;
  /** Whether the gates have a bias (default true). */
  useBias?: boolean;
  /** true: every step's output; false (default): each direction's last. */
  returnSequences?: boolean;
  /** concat (default), sum, mul or ave. */
  mergeMode?: string;
  name?: string;
  trainable?: boolean;
}
/** A GRU over a sequence: the last step's output [units], or every step's [steps, units]. */
export interface GRULayer {
  type: 'gru';
  /** The state's size: each step's output. */
  units: number;
  /** The cell's activation (default tanh). */
  activation?: ActivationName;
  /** The gates' activation (default hard_sigmoid, as TF.js). */
  recurrentActivation?: ActivationName;
  /** Whether the gates have a bias (default true). */
  useBias?: boolean;
  /** true: every step's output [steps, units]; false (default): the last step's. */
  returnSequences?: boolean;
  /** Read the sequence from its end (default false). */
  goBackwards?: boolean;
  kernelInitializer?: Initializer;
  recurrentInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  trainable?: boolean;
}
/** Multi-head scaled dot-product attention: self-attention on one sequence, cross-attention on [query, value]. */
export interface MultiHeadAttentionLayer {
  type: 'multiheadattention' | 'multi_head_attention';
  /** Heads. */
  numHeads: number;
  /** Each head's size of queries and keys. */
  keyDim: number;
  /** Each head's size of values (default keyDim). */
  valueDim?: number;
  /** Whether the projections add biases (default true). */
  useBias?: boolean;
  /** Fraction of the attention probabilities dropped while training (default 0). */
  dropout?: number;
  /** Query i attends to keys 0..i only (default false). */
  causal?: boolean;
  /** Features of each output step (default the query's). */
  outputShape?: number;
  kernelInitializer?: Initializer;
  biasInitializer?: Initializer;
  name?: string;
  trainable?: boolean;
}
/** Learned position embeddings added to a sequence: step t plus row t of a [sequenceLength, features] table. */
export interface PositionEmbeddingLayer {
  type: 'positionembedding' | 'position_embedding';
  /** The most steps a sequence may have: the table's rows. */
  sequenceLength: number;
  embeddingsInitializer?: Initializer;
  name?: string;
  trainable?: boolean;
}
/** The mean of each feature over the steps: [steps, features] to [features]. */
export interface GlobalAveragePooling1DLayer { type: 'globalaveragepooling1d' | 'global_average_pooling1d'; name?: string; trainable?: boolean }
/** The largest value of each feature over the steps: [steps, features] to [features]. */
export interface GlobalMaxPooling1DLayer { type: 'globalmaxpooling1d' | 'global_max_pooling1d'; name?: string; trainable?: boolean }
/** [H, W, C] -> [H*W*C] (free: rows are stored flat). */
export interface FlattenLayer { type: 'flatten'; name?: string; trainable?: boolean }
/** Batch normalization over the channels: batch statistics in training, moving averages in inference. */
export interface BatchNormalizationLayer {
  type: 'batchnormalization' | 'batch_normalization';
  momentum?: number;
  epsilon?: number;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** The element-wise sum, difference (of two), product, mean or maximum of inputs of one shape (functional models). */
export interface MergeLayer { type: 'add' | 'subtract' | 'multiply' | 'average' | 'maximum'; name?: string; trainable?: boolean }
/** Inputs side by side along one axis (functional models); they agree on every other axis. */
export interface ConcatenateLayer {
  type: 'concatenate';
  /** The axis, the batch being 0; negative from the end (default -1). */
  axis?: number;
  name?: string;
  /** false freezes the layer: no gradient, optimizer state or update for its parameters; a frozen BatchNormalization normalizes with its moving statistics. */
  trainable?: boolean;
}
/** Each example's values in another shape of the same size (free: rows are stored flat). */
export interface ReshapeLayer {
  type: 'reshape';
  /** The shape after the batch: 1 to 3 sizes, one of them may be -1 (the rest). */
  targetShape: number[];
  name?: string;
  trainable?: boolean;
}
/** Each example's axes reordered: output axis k is input axis dims[k] (from 1, after the batch). */
export interface PermuteLayer {
  type: 'permute';
  /** A permutation of the axes after the batch, from 1: [2, 1] for [steps, features], [3, 1, 2] moves an image's channels first. */
  dims: number[];
  name?: string;
  trainable?: boolean;
}
/** Zeros around each image: [H, W, C] -> [top + H + bottom, left + W + right, C]. */
export interface ZeroPadding2DLayer {
  type: 'zeropadding2d' | 'zero_padding2d';
  /** n on every side, [h, w] or [[top, bottom], [left, right]] (default 1). */
  padding?: number | [number, number] | [[number, number], [number, number]];
  name?: string;
  trainable?: boolean;
}
/** Each image without its edges: [H, W, C] -> [H - top - bottom, W - left - right, C]. */
export interface Cropping2DLayer {
  type: 'cropping2d';
  /** n from every side, [h, w] or [[top, bottom], [left, right]] (default 0). */
  cropping?: number | [number, number] | [[number, number], [number, number]];
  name?: string;
  trainable?: boolean;
}
/** How UpSampling2D fills the new pixels: each pixel repeated, or TF.js's resizeBilinear. */
export type Interpolation = 'nearest' | 'bilinear';
/** Each image enlarged: [H, W, C] -> [H*sh, W*sw, C]. */
export interface UpSampling2DLayer {
  type: 'upsampling2d' | 'up_sampling2d';
  /** n or [sh, sw]: the factors along the height and width (default 2). */
  size?: number | [number, number];
  /** nearest (default) or bilinear. */
  interpolation?: Interpolation;
  name?: string;
  trainable?: boolean;
}
/** A layer as `add()` takes it (a model file's `layers[]` entry). */
export type LayerSpec =
  | DenseLayer | Conv2DLayer | Pool2DLayer | GlobalAveragePooling2DLayer | FlattenLayer | BatchNormalizationLayer
  | ActivationLayer | DropoutLayer | SoftmaxLayer | MergeLayer | ConcatenateLayer
  | DepthwiseConv2DLayer | SeparableConv2DLayer | Conv2DTransposeLayer | Conv1DLayer | Pool1DLayer | GlobalMaxPooling2DLayer
  | ReshapeLayer | PermuteLayer | ZeroPadding2DLayer | Cropping2DLayer | UpSampling2DLayer
  | GlobalAveragePooling1DLayer | GlobalMaxPooling1DLayer | EmbeddingLayer | LayerNormalizationLayer | LSTMLayer
  | BidirectionalLayer
  | MultiHeadAttentionLayer | PositionEmbeddingLayer | GRULayer;
/** The variables a layer may hold, as getWeight/setWeight and checkpoints name them. */
export type WeightName =
  | 'kernel' | 'bias' | 'gamma' | 'beta' | 'moving_mean' | 'moving_variance' | 'depthwise_kernel' | 'pointwise_kernel' | 'embeddings'
  | 'recurrent_kernel' | 'query/kernel' | 'query/bias' | 'key/kernel' | 'key/bias' | 'value/kernel' | 'value/bias'
  | 'attention_output/kernel' | 'attention_output/bias';

/** An optimizer and its hyper-parameters (defaults as in Keras). */
export interface OptimizerOptions {
  type: OptimizerName;
  lr?: number;
  learningRate?: number;
  /** L2 weight decay (decoupled for adamw) of the parameters it applies to: kernels, and decayInclude's less decayExclude's. */
  weightDecay?: number;
  /**
   * Parameters weightDecay applies to besides the kernels: layer names ('embedding_0') or parameters
   * ('layer_normalization_1/gamma'), '*' matching any run of characters. A pattern matching none is an error.
   */
  decayInclude?: string[];
  /** Parameters weightDecay leaves out (before decayInclude), as decayInclude names them ('dense_2', 'conv2d_*'). */
  decayExclude?: string[];
  momentum?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  rho?: number;
}
/** How `generate()` samples: temperature 0 is always the most likely byte; the same seed gives the same bytes. */
export interface GenerateOptions {
  /** Bytes to add (default 100). */
  length?: number;
  /** Divides the logits before sampling (default 1; 0: greedy). */
  temperature?: number;
  /** Sample among the k most likely bytes only (default 0: all). */
  topK?: number;
  /** The draws' seed (default 1), an integer in [0, 2^32). */
  seed?: number;
}
/** A learning-rate schedule, with optional warm-up. */
export interface ScheduleOptions {
  type: 'constant' | 'step' | 'exponential' | 'cosine';
  stepSize?: number;
  gamma?: number;
  warmupSteps?: number;
  totalSteps?: number;
  minLr?: number;
}
/** What `compile()` takes (a model file's `compile`). */
export interface CompileOptions {
  /** Default 'softmax_cross_entropy'; a model of several outputs may give one per output, in its output order. */
  loss?: Loss | Loss[];
  /** A model of several outputs: each output's weight in the loss training minimizes (default 1 each). */
  lossWeights?: number[];
  /**
   * Figures each epoch (history's `metrics`) and evaluate report, summed over all rows. Softmax cross-entropy reports
   * `accuracy` without asking. With several outputs a metric goes to each output it fits, named
   * `<output layer>_<name>`, and each output's own loss is reported as `<output layer>_loss`.
   */
  metrics?: Metric[];
  /** Default Adam, lr 1e-3. */
  optimizer?: OptimizerName | OptimizerOptions;
  /** Overrides the optimizer's learning rate. */
  learningRate?: number;
  schedule?: ScheduleOptions['type'] | ScheduleOptions;
  /** > 0: clip gradients by their global L2 norm. */
  clipNorm?: number;
  /** Initialisers, shuffling and dropout (default 1). */
  seed?: number;
  /** A NaN/Inf loss stops training (default), skips the step's updates, or is ignored. */
  onNaN?: 'stop' | 'skip' | 'ignore';
}

/** What onStep is told after each step. */
export interface StepEvent {
  type: 'step';
  /** Global step, 1-based after the step ran. */
  step: number;
  epoch: number;
  /** The loss read this step (every lossEvery steps), else null. */
  loss: number | null;
  /** The step that loss belongs to (earlier with asyncLoss). */
  lossStep: number | null;
  samplesPerSecond: number;
  elapsedSeconds: number;
}
/** What onEpoch is told (and history keeps) after each epoch. */
export interface EpochEvent {
  type: 'epoch';
  epoch: number;
  step: number;
  loss: number | null;
  /** Classification only. */
  accuracy: number | null;
  valLoss: number | null;
  valAccuracy: number | null;
  /** The compiled metrics by name (`val_<name>` on the validation data); null where not finite. */
  metrics: Record<string, number | null>;
  seconds: number;
  samplesPerSecond: number;
}

/** Class labels (one per row) in an integer typed array, or target values (rows x k) in a Float32Array. */
export type Targets = Int32Array | Uint8Array | Uint16Array | Uint32Array | Int8Array | Int16Array | Uint8ClampedArray | Float32Array;

/** What `beginFit()` takes (a model file's `fit`). */
export interface BeginFitOptions {
  epochs?: number;
  /** Train until the model's step reaches this instead of for `epochs`, the last epoch cut short (0: off). */
  steps?: number;
  batchSize?: number;
  shuffle?: boolean;
  /**
   * Leave out an epoch's last rows that do not fill a batch (default false: they train as one
   * short step, as in Keras and tfjs; a batchSize above the row count then makes one step).
   */
  dropRemainder?: boolean;
  /** The last fraction of the rows is held out (as Keras does). */
  validationSplit?: number;
  validationData?: Dataset | { x: Float32Array; y: Targets };
  /** Read the loss every N steps (0: only at epoch ends). Default 1. */
  lossEvery?: number;
  /** Read the loss through a fence instead of stalling. */
  asyncLoss?: boolean;
  /**
   * Every N steps (default 100; 0: only at the fit's start and end) the weights, optimizer
   * state and step are read back through a fence into a snapshot that training resumes
   * from after a lost WebGL context.
   */
  snapshotEvery?: number;
  /** Stops after `patience` epochs (default 1) without improvement (Keras's EarlyStopping); restoreBest ends in the best epoch's state (weights, optimizer state, step). */
  earlyStopping?: { monitor?: Monitor; minDelta?: number; mode?: MonitorMode; patience?: number; restoreBest?: boolean };
  /** Multiplies the learning rate by `factor` (default 0.1, not below minLr) after `patience` epochs (default 1) without improvement; it stays so after the fit. */
  reduceLrOnPlateau?: { monitor?: Monitor; minDelta?: number; mode?: MonitorMode; patience?: number; factor?: number; minLr?: number };
  /** Keeps the best epoch's checkpoint by `monitor`: `bestCheckpoint()`. */
  keepBest?: { monitor?: Monitor; minDelta?: number; mode?: MonitorMode };
}
/**
 * The epoch figure a fit callback watches (default 'val_loss'): the loss, the accuracy, a compiled metric's name, or
 * one of those after 'val_' (on the validation data).
 */
export type Monitor = 'loss' | 'accuracy' | 'val_loss' | 'val_accuracy' | (string & {});
/** Which way a watched figure improves: 'auto' (default) as the figure does (losses down, accuracies, precision, recall and AUC up, custom metrics down). */
export type MonitorMode = 'auto' | 'min' | 'max';
/** What `fit()` takes: beginFit's options and the callbacks. */
export interface FitOptions extends BeginFitOptions {
  /** Called after every step. */
  onStep?: (event: StepEvent) => void;
  /** Called after every epoch. */
  onEpoch?: (event: EpochEvent) => void;
  /** The WebGL context was lost at this step: training waits for the browser to restore it. */
  onContextLost?: (event: { step: number }) => void;
  /**
   * The context is back: the model was rebuilt from its snapshot of `step` and replays the
   * steps up to lostAtStep without reporting them again (onStep stays continuous).
   */
  onContextRestored?: (event: { step: number; lostAtStep: number }) => void;
  /** Stops training between slices; fit then resolves with stopped: true. */
  signal?: AbortSignal;
  /** Milliseconds of training between yields to the event loop (default 16). */
  sliceMs?: number;
}
/** What `fit()` resolves with: the epochs' reports, the steps run, and whether it was stopped. */
export interface FitResult {
  history: EpochEvent[];
  steps: number;
  stopped: boolean;
}
/** Mean loss and accuracy over the rows evaluated. */
export interface Evaluation {
  loss: number | null;
  /** Classification only. */
  accuracy: number | null;
  /** The compiled metrics by name; null where not finite. */
  metrics: Record<string, number | null>;
}
/** Rows per batch for evaluate and predict (default 256). */
export interface BatchOptions { batchSize?: number }
/** What `profileStep()` takes. */
export interface ProfileOptions {
  /** Rows per step, from the data's first rows (default min(32, rows)). */
  batchSize?: number;
  /** Times each pass runs; the median is reported (default 5). */
  reps?: number;
}
/** One part of a training step, as Sequential.profileStep timed it: a GPU pass (`forward/dense`), or on the CPU engine an op of the step's graph (`cpu/dense_0 (matmul, fused)`). */
export interface PassTiming {
  /** The GLSL kernel, e.g. 'forward/matmul_block' or 'update/adam'. */
  kernel: string;
  /** Median over the repetitions, in milliseconds. */
  ms: number;
  /** Timed by a GPU timer query (EXT_disjoint_timer_query_webgl2); else on the host clock, the pass waited for. */
  gpuTimer: boolean;
}
/** One field of a layer type, as LayerSpec declares it. */
export interface LayerField {
  name: string;
  /** Its TypeScript type: 'number', 'number | [number, number]' (a size n or [height, width]), 'string', 'boolean', 'ActivationName', 'Padding' or 'Initializer'. */
  type: string;
  /** Whether add() may leave it out (then it has this default). */
  optional: boolean;
  default?: unknown;
  doc: string;
}
/** One layer of `summary()`. Before compile: the given name (or ''), outputShape null, outputSize and params 0. */
export interface LayerSummary {
  name: string;
  type: string;
  /** [height, width, channels]; flat layers are [1, 1, n]. */
  outputShape: [number, number, number] | null;
  outputSize: number;
  /** Trainable values (a frozen layer's too). */
  params: number;
  /** The layers it reads ('input': the model's input); empty before compile. */
  inbound: string[];
  /** false: frozen. */
  trainable: boolean;
  /** A shared layer's later call ('tower@1'): the layer whose weights it uses (its params are 0: they are counted there). */
  shares?: string;
}

/** The capability report of a Context: the device, its limits, measured precision, and the engine chosen and why. */
export interface Capabilities {
  platform: string;
  vendor: string;
  renderer: string;
  version: string;
  shadingLanguageVersion: string;
  maxTextureSize: number;
  maxArrayTextureLayers: number;
  maxDrawBuffers: number;
  maxTextureImageUnits: number;
  /** Floats a vertex can output for transform feedback to capture (the feedback matmul's block follows). */
  maxFeedbackComponents: number;
  colorBufferFloat: boolean;
  colorBufferHalfFloat: boolean;
  floatBlend: boolean;
  /** Measured: an RGBA32F framebuffer is complete. */
  float32Renderable: boolean;
  /** Measured: an RGBA16F framebuffer is complete. */
  float16Renderable: boolean;
  /** The engine models train on: 'gpu-float32'; 'gpu-float16' (half-float storage) when RGBA32F
   *  is not renderable; 'cpu' when asked for, without float render targets, or on a software
   *  renderer where a startup matmul ran faster on the CPU (backendReason gives the timings). */
  backend: 'gpu-float32' | 'gpu-float16' | 'cpu';
  /** Why this backend: what was missing or disabled. */
  backendReason: string;
  /** How many threads the CPU backend trains on (ContextOptions.cpuThreads)... */
  cpuThreads: number;
  /** ...and why, e.g. 'the single-threaded build: the page is not cross-origin isolated (...)'. */
  cpuThreadsReason: string;
  /** Large matmuls run as a vertex kernel whose outputs transform feedback captures (SwiftShader by
   *  default: faster there than the fragment kernels); feedbackReason says why or why not. */
  feedbackKernels: boolean;
  feedbackReason: string;
  /** Kernels read texels with texture() at the texel's centre rather than texelFetch (SwiftShader by
   *  default: cheaper there); fetchReason says why. */
  sampledFetch: boolean;
  fetchReason: string;
  /** SwiftShader, llvmpipe, ... */
  softwareRenderer: boolean;
  /** Measured by a probe kernel through the storage (fp32: 23, half floats: 10). */
  measuredMantissaBits: number;
  extensions: string[];
  /** Restored contexts queried again and found able to run what the lost one held (the figures
   *  above are then the restored device's). One that cannot (no float render targets, smaller
   *  limits) makes every call throw UnsupportedError, saying what it lacks. */
  restoresChecked: number;
  /** The printable report of all of the above. */
  report: string;
}
/** Textures on loan (live) and kept for reuse (free), and how many were ever created. */
export interface PoolStats { live: number; liveBytes: number; free: number; freeBytes: number; created: number }

/** Every gltrain object owns WebAssembly and GPU memory until delete() (or its scope ends). */
export interface Deletable {
  /** Frees the object now (idempotent); later use throws DeletedError. */
  delete(): void;
  /** Whether delete() has run. */
  isDeleted(): boolean;
}

/** How a Context is made: the engine, kernel choices, the canvas and test switches. */
export interface ContextOptions {
  /** Which engine trains models. 'auto' (default): WebGL2 when it renders float textures, else the
   *  CPU backend (WebAssembly SIMD); on a software renderer (SwiftShader) the faster of the two by a
   *  startup matmul. 'webgl': WebGL2 or an error. 'cpu': no WebGL context at all. Tensors follow the
   *  backend: textures on WebGL2, host memory (and a WebAssembly matmul) on the CPU. */
  backend?: 'auto' | 'webgl' | 'cpu';
  /** The transform-feedback matmul: 'auto' (default: on SwiftShader), 'on' or 'off'. */
  feedback?: 'auto' | 'on' | 'off';
  /** How kernels read texels: 'auto' (default: texture() on SwiftShader, texelFetch elsewhere),
   *  'sampled' (texture() at the texel's centre) or 'texelFetch'. Results are the same either way. */
  fetch?: 'auto' | 'sampled' | 'texelFetch';
  /** CSS selector of a <canvas>; omitted: a fresh OffscreenCanvas (works in workers). */
  canvas?: string;
  /** Pretend MAX_TEXTURE_SIZE is this (tests use it to exercise paging). */
  maxTextureSize?: number;
  /** glGetError after every pass and read-back (slow: a GPU-process round trip each). */
  debugChecks?: boolean;
  /** Treat RGBA32F render targets as missing: half-float storage (tests run the fallback this way). */
  disableFloat32Render?: boolean;
  /** Treat RGBA16F render targets as missing too. */
  disableHalfFloatRender?: boolean;
  /** The CPU backend: how many threads share a product or convolution, the training one included
   *  (bit-identical results on any count). 0 (default): one per hardware thread
   *  (navigator.hardwareConcurrency), at most 8. Only the threaded build has more than one
   *  (`Gltrain.threaded`: a cross-origin isolated page); `capabilities.cpuThreadsReason` says why. */
  cpuThreads?: number;
}
export interface Context extends Deletable {
  readonly capabilities: Readonly<Capabilities>;
  /** The WebGL context is lost now: calls that need the GPU throw ContextLostError. */
  readonly lost: boolean;
  /** Loses the WebGL context through WEBGL_lose_context, as a GPU reset would (to test recovery). */
  loseContext(): void;
  /** Asks the browser to restore it; the restore arrives asynchronously (webglcontextrestored). Asked
   *  for in the same tick as loseContext() (before the browser's webglcontextlost event, when the
   *  browser would refuse it), it is made just after that event. */
  restoreContext(): void;
  /** Counts of the context's textures. */
  poolStats(): PoolStats;
}
/** `new gl.Context(options)`. */
export interface ContextConstructor {
  /** Deleting a context first deletes every model and tensor made on it. */
  new (options?: ContextOptions): Context;
}

/** A matrix on its Context's backend: a texture on WebGL2; host memory on the CPU backend (asked for,
 *  or 'auto' on a software renderer where the CPU measured faster), where matmul runs on the CPU. */
export interface Tensor extends Deletable {
  readonly rows: number;
  readonly cols: number;
  /** Replaces the values (rows x cols, row-major). */
  upload(data: Float32Array): this;
  /** The values, rows x cols, row-major. */
  download(): Float32Array;
}
/** Read an operand transposed, in place. */
export interface MatmulOptions {
  transA?: boolean;
  transB?: boolean;
}
/** `new gl.Tensor(ctx, rows, cols, data?)`. */
export interface TensorConstructor {
  /** A rows x cols tensor on ctx's backend, holding data if given (else zeros). */
  new (ctx: Context, rows: number, cols: number, data?: Float32Array): Tensor;
}

/** Rows of x and their targets in WebAssembly memory: fit and evaluate use them without copies. */
export interface Dataset extends Deletable {
  readonly count: number;
  readonly features: number;
  /** Image height and width when loaded from IDX files, else 0. */
  readonly imageRows: number;
  readonly imageCols: number;
  readonly hasLabels: boolean;
  /** A copy of rows [start, start + count) of x. */
  x(start?: number, count?: number): Float32Array;
  /** x as a view of WebAssembly memory (no copy): valid until the next gltrain call. */
  view(): Float32Array;
  /** A copy of the labels (Int32Array) or target values (Float32Array); null without targets. */
  targets(): Int32Array | Float32Array | null;
  /** Rows [start, start + count) as a new Dataset (a copy). */
  slice(start: number, count?: number): Dataset;
}
/** `gl.Dataset.fromArrays`, `fromIdx`, `fetchIdx`, `fromText`. */
export interface DatasetConstructor {
  /** Rows of `features` values in x, with labels or target values y (or none, for predict). */
  fromArrays(x: Float32Array, y: Targets | undefined, features: number): Dataset;
  /** Validated IDX files: images N x rows x cols unsigned bytes (scaled to [0, 1]), labels N integers. */
  fromIdx(images: ArrayBuffer | ArrayBufferView, labels: ArrayBuffer | ArrayBufferView, options?: { numClasses?: number }): Dataset;
  /** fromIdx on two fetched IDX files (URLs are the page's). */
  fetchIdx(imagesUrl: string | URL, labelsUrl: string | URL, options?: { numClasses?: number }): Promise<Dataset>;
  /**
   * A UTF-8 text's bytes as byte tokens, for a model of input [context] trained with 'sequence_softmax_cross_entropy':
   * windows of `context` bytes (default 64) whose targets are the next bytes. train: `windows` windows (default 0:
   * one epoch's, trainBytes / context) at uniform positions drawn from `seed` — each one fresh, so steps x batchSize
   * of them train `steps` steps on windows never seen twice; validation: the held-out tail (`heldOut`, default 0.1)
   * cut into windows, null when heldOut is 0.
   */
  fromText(bytes: ArrayBuffer | ArrayBufferView, options?: { context?: number; heldOut?: number; seed?: number; windows?: number }):
    { train: Dataset; validation: Dataset | null };
}

/**
 * As a model file's "input": the number of input features, [steps] (token ids), a sequence [steps, features], or
 * images as [height, width, channels] (rows of h*w*c values, NHWC).
 */
export type ModelInput = number | [number] | [number, number] | [number, number, number];

/** A value of a functional model being built: `gl.input()` or a layer's `apply()`. */
export interface SymbolicTensor {
  /** The layer that makes it (null: a model input). */
  readonly layer: LayerSpec | null;
  /** The values that layer reads. */
  readonly inbound: readonly SymbolicTensor[];
  /** A model input's shape (null for a layer's output). */
  readonly shape: ModelInput | null;
}
/** A layer to apply (`gl.layers.dense({units: 10})`). Applied to several values it is one layer, its weights shared
 *  (TF.js's semantics): its later calls are layers named '<name>@<k>' that use its weights. */
export interface LayerCall {
  readonly spec: LayerSpec;
  /** The layer's output on one value, or a merge layer's on several. */
  apply(x: SymbolicTensor | SymbolicTensor[]): SymbolicTensor;
}
/** `gl.layers.<type>(config)` for every layer type: the config is the layer spec without its `type`. */
export type LayerFactories = {
  readonly [T in LayerSpec['type']]: (config?: Omit<Extract<LayerSpec, { type: T }>, 'type'>) => LayerCall;
};
/** A functional model's inputs and outputs; with several, fit, evaluate and predict take and give arrays in these orders. */
export interface FunctionalModelArgs {
  inputs: SymbolicTensor | SymbolicTensor[];
  outputs: SymbolicTensor | SymbolicTensor[];
}
/** A shared layer's later call in a model file: the layer `shares` names (its options and weights) applied again. */
export interface SharedLayerCall {
  /** The layer applied again: a layer before it with weights of its own (not another call). */
  shares: string;
  /** What this call reads (as a layer spec's `inputs`). */
  inputs?: string[];
}
/** A model file's layer: a layer spec (which may name its `inputs`), or a shared layer's later call. */
export type ModelLayerSpec = (LayerSpec & { inputs?: string[] }) | SharedLayerCall;
/** A model file's input and layers (layers may name their `inputs`), as `layerSpecs()` and `save` write them;
 *  several inputs are `inputs` (each named, as layers' `inputs` name them) and several outputs `outputs` (layer names). */
export type ModelConfig =
  | { input: ModelInput; layers: ModelLayerSpec[]; outputs?: string[] }
  | { inputs: Array<{ name: string; shape: ModelInput }>; layers: ModelLayerSpec[]; outputs?: string[] };
/** How a model of several inputs or outputs packs their rows side by side (`model.io`). */
export interface ModelIo {
  inputs: Array<{ name: string; size: number }>;
  /** targetColumns: 1 for an output trained on class labels, else its size. */
  outputs: Array<{ name: string; size: number; targetColumns: number }>;
}

/** A model: a functional one (`new gl.Model(ctx, {inputs, outputs})`) or a Sequential. */
export interface Model extends Deletable {
  readonly context: Context;
  readonly inputSize: number;
  /** 0 until compiled. */
  readonly outputSize: number;
  readonly step: number;
  readonly compiled: boolean;
  readonly fitting: boolean;
  readonly history: EpochEvent[];
  /** Its inputs' and outputs' names and sizes (outputs after compile). */
  readonly io: ModelIo;
  /** Each layer's name, type, output shape and parameter count. */
  summary(): LayerSummary[];
  /** The layers as add() takes them: each one's type and the fields that differ from their defaults (a functional
   *  model's also name their `inputs`: earlier layers, or 'input'; a shared layer's later call is {shares, inputs}). */
  layerSpecs(): ModelLayerSpec[];
  /**
   * A Dataset of each input's rows and each output's targets side by side, as this model reads them (`io`; after
   * compile): what `fit([x...], [y...])` makes for one call, kept for many (and what a worker's `load` makes).
   */
  dataset(x: Float32Array[], y?: Targets[]): Dataset;
  /** Checks every shape; a model whose checkpoint (and so every snapshot fit() takes) would pass the
   *  2 GiB one WebAssembly buffer holds is an ArgumentError naming its size, before anything is allocated. */
  compile(options?: CompileOptions): this;
  /** Trains without blocking the page: yields between slices; resolves when the epochs are done. */
  fit(x: Float32Array, y: Targets, options?: FitOptions): Promise<FitResult>;
  /** fit on a Dataset (rows and targets already in WebAssembly memory). */
  fit(data: Dataset, options?: FitOptions): Promise<FitResult>;
  /** A model of several inputs or outputs: each input's rows and each output's targets (labels or values), in order. */
  fit(xs: Float32Array[], ys: Targets[], options?: FitOptions): Promise<FitResult>;
  /** Starts a fit to drive step by step (stepOnce, trainFor); checks every argument first. */
  beginFit(x: Float32Array, y: Targets, options?: BeginFitOptions): void;
  /** beginFit on a Dataset. */
  beginFit(data: Dataset, options?: BeginFitOptions): void;
  /** One step; false when the fit is done. */
  stepOnce(): boolean;
  /** Ends a fit begun with beginFit() early; the model keeps its last completed step. */
  endFit(): void;
  /**
   * After a lost WebGL context came back: rebuilds the model from its last snapshot (every
   * call that needs the GPU does this itself) and returns the step it resumed from.
   */
  restore(): number;
  /**
   * Steps for about ms milliseconds (at least one, at most maxSteps: a loop can stop or look
   * at the model at a chosen step whatever the machine's speed); returns how many ran.
   */
  trainFor(ms: number, maxSteps?: number): number;
  /** Step and epoch reports since the last call (beginFit / stepOnce / trainFor). */
  takeEvents(): Array<StepEvent | EpochEvent>;
  /** Mean loss and accuracy over rows x and their targets y; the model does not change. */
  evaluate(x: Float32Array, y: Targets, options?: BatchOptions): Evaluation;
  /** evaluate on a Dataset. */
  evaluate(data: Dataset, options?: BatchOptions): Evaluation;
  /** A model of several inputs or outputs: the weighted sum of the outputs' losses, the first softmax output's accuracy. */
  evaluate(xs: Float32Array[], ys: Targets[], options?: BatchOptions): Evaluation;
  /**
   * Where a training step's time goes: every pass of one step on the data's first rows, in order,
   * each run `reps` times; the model does not change. WebGL2 only (the CPU backend throws
   * UnsupportedError). Passes waited for one by one add the waits to the sum.
   */
  profileStep(x: Float32Array, y: Targets, options?: ProfileOptions): PassTiming[];
  /** profileStep on a Dataset. */
  profileStep(data: Dataset, options?: ProfileOptions): PassTiming[];
  /** rows x outputSize values, row-major (probabilities after a softmax layer). */
  predict(x: Float32Array | Dataset, options?: BatchOptions): Float32Array;
  /** Each input's rows in; each output's predictions out, in order. */
  predict(xs: Float32Array[], options?: BatchOptions): Float32Array[];
  /** The predicted class (argmax) of each row. */
  predictClasses(x: Float32Array | Dataset, options?: BatchOptions): Int32Array;
  /**
   * Continues `prompt` (a string's UTF-8 bytes, or bytes) with a byte-level language model (input [context] token ids,
   * logits [context, vocab <= 256] per step, trained with 'sequence_softmax_cross_entropy'): the continuation's bytes.
   * Each byte reruns the model on the last `context` bytes (fewer: they start the window, padding after them).
   */
  generate(prompt: string | Uint8Array | ArrayBuffer, options?: GenerateOptions): Uint8Array;
  /** safetensors bytes: weights, optimizer state and step. */
  saveCheckpoint(): ArrayBuffer;
  /**
   * The model's last snapshot (see FitOptions.snapshotEvery) as saveCheckpoint's bytes, its
   * metadata step `snapshotStep`: the state a lost context restores. It reads nothing from
   * the GPU, so it works while the context is lost, or after a restore was refused (a device
   * that cannot run what the Context chose): the way to keep a model's progress then. The
   * CPU backend keeps no snapshots: its state now.
   */
  snapshotCheckpoint(): ArrayBuffer;
  /** With fit's `keepBest`: the checkpoint of the best epoch by its monitor (null: none yet). */
  bestCheckpoint(): ArrayBuffer | null;
  /** That epoch (0-based; -1: none). */
  readonly bestEpoch: number;
  /** The step of the last snapshot (0 after compile). */
  readonly snapshotStep: number;
  /**
   * Validates everything first: on any error the model is unchanged. The file must hold exactly the
   * model's tensors (one it lacks or one the model does not have is an ArgumentError naming it), and
   * optimizer state of another optimizer than the model's (the file's metadata) is an ArgumentError
   * naming both, unless `resetOptimizer`.
   */
  loadCheckpoint(bytes: ArrayBuffer | ArrayBufferView, options?: LoadCheckpointOptions): this;
  /**
   * The TensorFlow.js Layers format in memory: model.json's text and its one weights shard, which the
   * manifest names `weightsFile`. Serve the two files side by side for `tf.loadLayersModel(url)`, or with
   * `j = JSON.parse(modelJson)`: `tf.loadLayersModel(tf.io.fromMemory({modelTopology: j.modelTopology,
   * weightSpecs: j.weightsManifest[0].weights, weightData}))`. A model with GELU does not export (TF.js 4.22
   * cannot load its name): ArgumentError.
   */
  exportTfjs(): TfjsExport;
  /**
   * Saves the model in TF.js's convention: `'downloads://name'` downloads `name.json` (a model file: input,
   * layers, compile, as the CLI reads it) and `name.safetensors` (weights, optimizer state, step);
   * `'indexeddb://name'` keeps both in this origin's IndexedDB. Load with `Sequential.load`.
   */
  save(url: string): Promise<{ url: string; modelBytes: number; checkpointBytes: number; step: number }>;
  /** A parameter or statistic as stored (Conv2D kernel: (kh*kw*C) x filters, row-major). */
  getWeight(layer: string, which: WeightName): Float32Array;
  /** Replaces a parameter or statistic (as getWeight gives it); validated first. */
  setWeight(layer: string, which: WeightName, data: Float32Array): this;
  /**
   * Freezes (false) or unfreezes a layer by name. A compiled model recompiles at once, keeping its weights,
   * statistics, step and the optimizer state of what trains on (an unfrozen layer's starts at zero).
   */
  setTrainable(layer: string, trainable: boolean): this;
}
/** What `loadCheckpoint()` takes. */
export interface LoadCheckpointOptions {
  /** Ignore the file's optimizer state and step: its weights and statistics load, and the model's own
   *  optimizer starts afresh (step 0, zeroed slots), e.g. from a checkpoint of another optimizer. */
  resetOptimizer?: boolean;
}
/** The TensorFlow.js Layers format in memory (`exportTfjs()`). */
export interface TfjsExport {
  /** model.json's text. */
  modelJson: string;
  /** The one weights shard's bytes. */
  weightData: ArrayBuffer;
  /** The shard's file name, as the manifest names it. */
  weightsFile: string;
}
/** A stack of layers, each reading the one before. */
export interface Sequential extends Model {
  /** Appends a layer; before compile(). */
  add(layer: LayerSpec): this;
}
/** `new gl.Model(ctx, {inputs, outputs})`, `fromConfig`. */
export interface ModelConstructor {
  /** A functional model of the layers from `inputs` (gl.input) to `outputs`; compile it next. */
  new (ctx: Context, args: FunctionalModelArgs): Model;
  /** A model from a model file's `{input, layers}`, not compiled yet; layers naming their `inputs` make a functional model. */
  fromConfig(ctx: Context, config: ModelConfig): Model;
}
/** `new gl.Sequential(ctx, input)`, `fromTfjs`, `load`. */
export interface SequentialConstructor {
  /** An empty model of `input` inputs on ctx: add layers, then compile. */
  new (ctx: Context, input: ModelInput): Sequential;
  /**
   * A compiled model from TensorFlow.js's Layers format: model.json's text (or the parsed object) and its one weights
   * shard, as `exportTfjs()` gives them or as TF.js saves them (`model.save(tf.io.withSaveHandler(...))`). Layers
   * and activations as the C++ `importTfjs` takes; anything else is a FormatError naming the layer or weight.
   * A TF.js Sequential gives a `Sequential`, a functional model (`class_name` Model) a `Model`.
   */
  fromTfjs(ctx: Context, modelJson: string | object, weightData: ArrayBuffer | ArrayBufferView, options?: CompileOptions): Model;
  /** A compiled model as `save` left it: `'indexeddb://name'`, or the URL of a `name.json` with `name.safetensors` beside it
   *  (a functional model's file gives a Model). */
  load(ctx: Context, url: string | URL): Promise<Sequential | Model>;
}

/** What `gl.scope(fn)` gives fn. */
export interface Scope {
  /** Adds an object made after an await to this scope. */
  track<T extends Deletable>(obj: T): T;
  /** Exempts an object from this scope (it survives the scope's end). */
  keep<T extends Deletable>(obj: T): T;
}

/** The module `createGltrain()` resolves with: the classes, matmul, scopes and the names it knows. */
export interface Gltrain {
  readonly version: string;
  /** Whether this is the threaded build (see CreateOptions.threads). */
  readonly threaded: boolean;
  readonly Context: ContextConstructor;
  readonly Tensor: TensorConstructor;
  readonly Dataset: DatasetConstructor;
  readonly Sequential: SequentialConstructor;
  readonly Model: ModelConstructor;
  /** A functional model's input: `{shape: n}` (rows of n features) or `{shape: [h, w, c]}` (NHWC images); a name
   *  for summaries, errors and model files (default 'input', or 'input_<k>' of several). */
  input(options: { shape: ModelInput; name?: string }): SymbolicTensor;
  /** One factory per layer type: `gl.layers.dense({units: 10}).apply(x)`, `gl.layers.add().apply([a, b])`. */
  readonly layers: LayerFactories;
  /**
   * out = op(a)·op(b) on the GPU (transA / transB read an operand transposed, in
   * place); out must have the product's shape and be neither a nor b. Returns out.
   */
  matmul(a: Tensor, b: Tensor, out: Tensor, options?: MatmulOptions): Tensor;
  /**
   * Runs fn; every gltrain object made while it runs (synchronously) is deleted
   * when it returns (or when its promise settles), except the objects it returns
   * (directly, in an array or in a plain object) and those passed to keep().
   */
  scope<T>(fn: (scope: Scope) => T): T;
  /** Exempts an object from the enclosing scopes. */
  keep<T extends Deletable>(obj: T): T;
  readonly activations: readonly ActivationName[];
  readonly optimizers: readonly OptimizerName[];
  readonly losses: readonly LossName[];
  readonly layerTypes: readonly string[];
  /** The fields each layer type takes (by type, as in layerTypes), from the layers' field tables. */
  readonly layerFields: Readonly<Record<string, readonly LayerField[]>>;
  readonly GltrainError: typeof GltrainError;
}

/** Where `createGltrain()` finds its WebAssembly. */
export interface CreateOptions {
  /** Where gltrain_wasm.wasm is (relative to the page); default: dist/ next to gltrain-core.js, found through
   *  `new URL('./dist/gltrain_wasm.wasm', import.meta.url)`, which bundlers follow. In Node: read from the file system. */
  wasmUrl?: string | URL;
  /** The module's bytes, fetched or read elsewhere. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Emscripten's hook (then the module fetches the file itself). */
  locateFile?: (path: string, prefix: string) => string;
  /** Left out: the threaded build (dist/gltrain_wasm_mt.*: the CPU backend on Web Workers) where the page is
   *  cross-origin isolated and none of the options above names a file, else the single-threaded one.
   *  true: the threaded build or an UnsupportedError; false: the single-threaded build. */
  threads?: boolean;
}
/** Loads the WebAssembly module; every call gives an independent instance. */
export declare function createGltrain(options?: CreateOptions): Promise<Gltrain>;
export default createGltrain;

/** Resolves after the browser has had a chance to run other tasks. */
export declare function yieldToEventLoop(): Promise<void>;

// ---- training in a Web Worker ----------------------------------------------------------

/** What `TrainingWorker.load` reads: arrays (transferred with `transfer`), IDX file URLs, or rows of a loaded dataset. */
export type WorkerDataSource =
  | { x: Float32Array; y?: Targets; features: number }
  /** A model of several inputs and outputs (built first): each input's rows and each output's targets. */
  | { x: Float32Array[]; y?: Targets[] }
  | { images: string; labels: string; start?: number; count?: number }
  /**
   * A text (a URL, fetched once per worker, or its bytes) as byte windows (`Dataset.fromText`): its training windows,
   * or with `validation: true` its held-out tail.
   */
  | {
      text: string | ArrayBuffer | ArrayBufferView;
      context?: number;
      heldOut?: number;
      seed?: number;
      windows?: number;
      validation?: boolean;
    }
  /** Rows of a dataset loaded before (nothing fetched again). */
  | { dataset: string; start?: number; count?: number };
/** As a model file's "input" and "layers", or a functional model's config (several inputs and outputs). */
export type WorkerModelSpec = ModelConfig;
/** What onEvaluate is told (WorkerFitOptions.evaluateEvery). */
export interface EvaluateEvent { type: 'evaluate'; step: number; loss: number | null; accuracy: number | null; ms: number }
/** What `TrainingWorker.fit` takes: beginFit's options (validation by dataset name) and callbacks. */
export interface WorkerFitOptions extends Omit<BeginFitOptions, 'validationData'> {
  /** The name of a loaded dataset. */
  validationData?: string;
  /** Evaluates a loaded dataset every `steps` steps while training (onEvaluate). */
  evaluateEvery?: { dataset: string; steps: number };
  sliceMs?: number;
  /** Called after every step. */
  onStep?: (event: StepEvent) => void;
  /** Called after every epoch. */
  onEpoch?: (event: EpochEvent) => void;
  /** Called after each evaluation of evaluateEvery. */
  onEvaluate?: (event: EvaluateEvent) => void;
  /** The worker's WebGL context was lost at this step (the fit waits for the restore). */
  onContextLost?: (event: { step: number }) => void;
  /** It is back: the model resumed from its snapshot of `step` (see FitOptions). */
  onContextRestored?: (event: { step: number; lostAtStep: number }) => void;
}
/** A loaded dataset's rows, features and image size (0 for non-images). */
export interface DatasetInfo { count: number; features: number; imageRows: number; imageCols: number }
/** Rows to predict: values, or rows of a loaded dataset. */
/** Rows, each input's rows (a model of several inputs), or rows of a loaded dataset. */
export type WorkerPredictData = Float32Array | Float32Array[] | { dataset: string; start?: number; count?: number };

/** A gltrain worker training on an OffscreenCanvas: the page stays responsive. */
export declare class TrainingWorker {
  /** Rejects with the reason the worker could not start: its script's HTTP status, or the module's own error. */
  static create(options?: { workerUrl?: string | URL; wasmUrl?: string | URL; context?: Omit<ContextOptions, 'canvas'> }): Promise<TrainingWorker>;
  private constructor(worker: Worker);
  readonly capabilities: Capabilities;
  /** The layer types the worker's module supports. */
  readonly layerTypes: readonly string[];
  readonly version: string;
  /** IDX and text file URLs are resolved against the page (document.baseURI), not the worker script. */
  load(name: string, source: WorkerDataSource, options?: { transfer?: boolean }): Promise<DatasetInfo>;
  /** Replaces the worker's model with one built and compiled from a model description. */
  build(model: WorkerModelSpec, compile?: CompileOptions): Promise<LayerSummary[]>;
  /** Replaces the worker's model with a TF.js Layers model (as `Sequential.fromTfjs`). */
  buildFromTfjs(modelJson: string | object, weightData: ArrayBuffer | ArrayBufferView, compile?: CompileOptions): Promise<LayerSummary[]>;
  /** Trains on a loaded dataset; callbacks arrive as the worker posts them. */
  fit(train: string, options?: WorkerFitOptions): Promise<FitResult>;
  /** Stops a running fit between slices (it resolves with stopped: true). */
  stop(): void;
  /** A loaded dataset, or some of its rows. */
  evaluate(dataset: string | { dataset: string; start?: number; count?: number }, options?: BatchOptions): Promise<Evaluation>;
  /** As Sequential.profileStep, on a loaded dataset. */
  profileStep(dataset: string, options?: ProfileOptions): Promise<PassTiming[]>;
  /** As Sequential.predict. */
  /** Several outputs, given each input's rows: each output's predictions. */
  predict(data: Float32Array[], options?: BatchOptions): Promise<Float32Array[]>;
  predict(data: WorkerPredictData, options?: BatchOptions): Promise<Float32Array>;
  /** As Sequential.predictClasses. */
  predictClasses(data: WorkerPredictData, options?: BatchOptions): Promise<Int32Array>;
  /** As Sequential.generate; during a fit, from the weights of the last completed step. */
  generate(prompt: string | Uint8Array | ArrayBuffer, options?: GenerateOptions): Promise<Uint8Array>;
  /** A copy of rows [start, start + count) of a loaded dataset's x. */
  x(dataset: string, start?: number, count?: number): Promise<Float32Array>;
  /** A copy of a loaded dataset's labels or target values. */
  targets(dataset: string): Promise<Int32Array | Float32Array | null>;
  /** During a fit: the weights of the last completed step, read between slices. */
  saveCheckpoint(): Promise<ArrayBuffer>;
  /** The model's last snapshot, as Sequential.snapshotCheckpoint; answered during a fit too (while it waits for a lost context). */
  snapshotCheckpoint(): Promise<ArrayBuffer>;
  /** As Sequential.exportTfjs. */
  exportTfjs(): Promise<TfjsExport>;
  /** As Sequential.loadCheckpoint; resolves true. */
  loadCheckpoint(bytes: ArrayBuffer, options?: LoadCheckpointOptions): Promise<boolean>;
  /** The worker context's texture counts. */
  poolStats(): Promise<PoolStats>;
  /** As Sequential.summary. */
  summary(): Promise<LayerSummary[]>;
  /** Loses / restores the worker's WebGL context (WEBGL_lose_context), to test recovery. */
  loseContext(): Promise<boolean>;
  /** Restores the worker's WebGL context (see loseContext). */
  restoreContext(): Promise<boolean>;
  /** Ends the worker and everything in it. */
  terminate(): void;
}
