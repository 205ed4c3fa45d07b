// A typed use of the JavaScript API, checked by `tsc --noEmit -p tests/web` (scripts/test.sh).
// The @ts-expect-error lines must stay errors: the declarations reject those mistakes.
import createGltrain, {
  GltrainError, TrainingWorker, yieldToEventLoop,
  type Capabilities, type EpochEvent, type FitResult, type Gltrain, type LayerSpec, type LayerSummary, type LossTensor, type Model, type PassTiming, type SharedLayerCall, type StepEvent, type Tensor,
} from '../../web/gltrain.js';
import { lossChart, metricChart, fitCallbacks, confusionMatrix, modelSummary } from '../../web/gltrain-vis.js';

export async function main(): Promise<number> {
  const gl: Gltrain = await createGltrain();
  const ctx = new gl.Context();
  const caps: Readonly<Capabilities> = ctx.capabilities;
  const layers: LayerSpec[] = [
    { type: 'dense', units: 32, activation: 'relu', kernelInitializer: 'he_uniform' },
    { type: 'dropout', rate: 0.1 },
    { type: 'dense', units: 10, biasInitializer: { type: 'constant', value: 0.1 } },
    { type: 'softmax' },
  ];
  const model = new gl.Sequential(ctx, 4);
  for (const l of layers) model.add(l);
  model.compile({ optimizer: { type: 'adam', lr: 1e-3 }, schedule: { type: 'cosine', totalSteps: 100 }, clipNorm: 1 });

  // A functional model: a residual block and a concatenation.
  const input = gl.input({ shape: [8, 8, 1] });
  const conv = gl.layers.conv2d({ filters: 4, padding: 'same', activation: 'relu' }).apply(input);
  const block = gl.layers.add().apply([conv, gl.layers.conv2d({ filters: 4, padding: 'same' }).apply(conv)]);
  const joined = gl.layers.concatenate({ axis: -1 }).apply([block, input]);
  const functional: Model = new gl.Model(ctx, { inputs: input, outputs: gl.layers.dense({ units: 3 }).apply(gl.layers.flatten().apply(joined)) });
  functional.compile({});
  const inbound: string[] = functional.summary()[2].inbound;
  const again: Model = gl.Model.fromConfig(ctx, { input: [8, 8, 1], layers: functional.layerSpecs() });
  void inbound, again;
  // Several inputs and outputs, a loss per output with weights; arrays in, arrays out.
  const meta = gl.input({ shape: 4, name: 'meta' });
  const heads: Model = new gl.Model(ctx, { inputs: [input, meta], outputs: [
    gl.layers.dense({ units: 3 }).apply(gl.layers.concatenate().apply([gl.layers.flatten().apply(block), meta])),
    gl.layers.dense({ units: 1 }).apply(meta)] });
  heads.compile({ loss: ['softmax_cross_entropy', 'mse'], lossWeights: [1, 0.5],
                  metrics: ['accuracy', { type: 'auc', thresholds: 50 }, (t, p) => p.sub(t).abs().mean()] });
  const evaluated: Record<string, number | null> = heads.evaluate([new Float32Array(64), new Float32Array(4)],
                                                                  [new Int32Array(1), new Float32Array(1)]).metrics;
  void evaluated;
  const [headClasses, headValues]: Float32Array[] = heads.predict([new Float32Array(64), new Float32Array(4)]);
  const sizes: number[] = heads.io.outputs.map((o) => o.targetColumns);
  void headClasses, headValues, sizes;
  // A layer applied twice: one layer, its weights shared.
  const tower = gl.layers.dense({ units: 4, activation: 'tanh' });
  const siamese: Model = new gl.Model(ctx, { inputs: [meta, gl.input({ shape: 4 })], outputs: gl.layers.subtract().apply([tower.apply(meta), tower.apply(meta)]) });
  const shares: string | undefined = siamese.summary()[1].shares;
  const call: SharedLayerCall = { shares: 'dense_0', inputs: ['b'] };
  void shares, call;
  // @ts-expect-error a dense layer has no 'filters'
  gl.layers.dense({ filters: 3 });
  // @ts-expect-error a functional model has no add()
  functional.add({ type: 'dense', units: 2 });

  const x = new Float32Array(8 * 4);
  const y = new Int32Array(8);
  const steps: number[] = [];
  const result: FitResult = await model.fit(x, y, {
    epochs: 2, batchSize: 4, dropRemainder: false,
    onStep: (s: StepEvent) => { if (s.loss !== null) steps.push(s.loss); },
    onEpoch: (e: EpochEvent) => { void e.accuracy; },
    onContextLost: (e) => { void e.step; },
    onContextRestored: (e) => { void (e.lostAtStep - e.step); },
    snapshotEvery: 50,
    signal: new AbortController().signal,
  });
  const half = new gl.Context({ disableFloat32Render: true });
  const backend: string = half.capabilities.backend + half.capabilities.backendReason;
  const resumedFrom: number = half.lost ? 0 : model.restore();
  void backend, resumedFrom;
  const onCpu = new gl.Context({ backend: 'cpu' });
  const engine: 'gpu-float32' | 'gpu-float16' | 'cpu' = onCpu.capabilities.backend;
  void engine;
  // @ts-expect-error: the backends are 'auto', 'webgl' and 'cpu'
  void new gl.Context({ backend: 'gpu' });
  const kernels = new gl.Context({ backend: 'webgl', feedback: 'off', fetch: 'texelFetch' });
  const chosen: string = `${kernels.capabilities.feedbackKernels} ${kernels.capabilities.sampledFetch}`;
  void chosen;
  // @ts-expect-error: texel reads are 'auto', 'sampled' or 'texelFetch'
  void new gl.Context({ fetch: 'texture' });
  const data = gl.Dataset.fromArrays(x, y, 4);
  // Byte-level text for a sequence model of input [context].
  const text = gl.Dataset.fromText(new TextEncoder().encode('some text'), { context: 4, heldOut: 0.2, seed: 7 });
  const windows: number = text.train.count + (text.validation ? text.validation.count : 0);
  void windows;
  const lm = new gl.Sequential(ctx, [4]).add({ type: 'embedding', inputDim: 256, outputDim: 8 })
    .add({ type: 'layernormalization', epsilon: 1e-5 }).add({ type: 'dense', units: 256 })
    .compile({ loss: 'sequence_softmax_cross_entropy', metrics: ['accuracy'],
      optimizer: { type: 'adamw', weightDecay: 0.1, decayInclude: ['embedding_0'], decayExclude: ['dense_2'] } });
  const continuation: Uint8Array = lm.generate('some', { length: 8, temperature: 0.8, topK: 20, seed: 3 });
  void continuation;
  await lm.fit(gl.Dataset.fromText(new Uint8Array(64), { context: 4, windows: 40 }).train, { steps: 10, batchSize: 4 });
  // @ts-expect-error: generate's options are length, temperature, topK and seed
  lm.generate('some', { temp: 1 });
  // @ts-expect-error: fromText's options are context, heldOut, seed and windows
  gl.Dataset.fromText(new Uint8Array(8), { window: 4 });
  const ev = model.evaluate(data, { batchSize: 4 });
  const passes: PassTiming[] = model.profileStep(data, { batchSize: 4, reps: 3 });
  const slowest: string = passes.reduce((a, b) => (b.ms > a.ms ? b : a)).kernel + (passes[0].gpuTimer ? ' (GPU timer)' : '');
  void slowest;
  // @ts-expect-error: profileStep's options are batchSize and reps
  model.profileStep(data, { epochs: 1 });
  const probs: Float32Array = model.predict(x);
  const classes: Int32Array = model.predictClasses(data);
  const bytes: ArrayBuffer = model.saveCheckpoint();
  const snapshot: ArrayBuffer = model.snapshotCheckpoint();
  const snapshotStep: number = model.snapshotStep;
  void snapshot, snapshotStep;
  model.loadCheckpoint(bytes).setWeight('dense_0', 'bias', model.getWeight('dense_0', 'bias'));
  model.loadCheckpoint(new Uint8Array(bytes), { resetOptimizer: true });
  // @ts-expect-error: resetOptimizer is a boolean
  model.loadCheckpoint(bytes, { resetOptimizer: 'yes' });
  // @ts-expect-error: loadCheckpoint's only option is resetOptimizer
  model.loadCheckpoint(bytes, { strict: false });
  const exported: { modelJson: string; weightData: ArrayBuffer; weightsFile: string } = model.exportTfjs();
  const imported: Model = gl.Sequential.fromTfjs(ctx, exported.modelJson, exported.weightData, { optimizer: 'sgd' });
  imported.delete();
  const kept = gl.scope((s) => {
    const t = new gl.Tensor(ctx, 2, 2, new Float32Array(4));
    s.keep(t);
    return new gl.Tensor(ctx, 1, 1);
  });
  kept.delete();
  const product: Tensor = gl.matmul(kept, kept, new gl.Tensor(ctx, 1, 1), { transB: true });
  void product;
  // @ts-expect-error: matmul's options are transA and transB
  gl.matmul(kept, kept, kept, { transpose: true });
  const cnn = new gl.Sequential(ctx, [28, 28, 1])
    .add({ type: 'conv2d', filters: 8, kernelSize: 5, activation: 'relu', padding: 'same' })
    .add({ type: 'max_pool2d', poolSize: 2 })
    .add({ type: 'batch_normalization', momentum: 0.9 })
    .add({ type: 'globalaveragepooling2d' })
    .add({ type: 'flatten' })
    .add({ type: 'dense', units: 10 })
    .compile();
  const shape: [number, number, number] | null = cnn.summary()[0].outputShape;
  void shape;
  void cnn.getWeight('batch_normalization_2', 'moving_mean');
  // @ts-expect-error: padding is 'valid' or 'same'
  cnn.add({ type: 'conv2d', filters: 2, padding: 'full' });
  cnn.delete();
  try {
    model.add({ type: 'dense', units: -1 });
  } catch (e) {
    if (e instanceof GltrainError && e.kind === 'ArgumentError') console.log(e.message);
  }
  await yieldToEventLoop();

  const worker = await TrainingWorker.create();
  await worker.load('train', { images: 'data/train-images-idx3-ubyte', labels: 'data/train-labels-idx1-ubyte', count: 100 });
  await worker.build({ input: 784, layers: [{ type: 'dense', units: 10 }] }, { optimizer: 'sgd' });
  await worker.fit('train', { epochs: 1, batchSize: 10, evaluateEvery: { dataset: 'train', steps: 5 }, onEvaluate: (e) => e.accuracy,
                              onContextLost: (e) => e.step, onContextRestored: (e) => e.lostAtStep - e.step });
  const lostOk: boolean = await worker.loseContext();
  const workerSnapshot: ArrayBuffer = await worker.snapshotCheckpoint();
  const workerPasses: PassTiming[] = await worker.profileStep('train', { batchSize: 10 });
  void workerPasses;
  void lostOk, workerSnapshot;
  ctx.loseContext();
  ctx.restoreContext();
  const loadedOk: boolean = await worker.loadCheckpoint(workerSnapshot, { resetOptimizer: true });
  void loadedOk;
  const p: Int32Array = await worker.predictClasses({ dataset: 'train', count: 10 });
  const sample: Uint8Array = await worker.generate(new Uint8Array([104, 105]), { length: 4 });
  void sample;
  const ex = await worker.exportTfjs();
  const rebuilt: LayerSummary[] = await worker.buildFromTfjs(ex.modelJson, ex.weightData);
  void rebuilt;
  worker.terminate();

  // @ts-expect-error: a layer type that does not exist
  model.add({ type: 'dens', units: 3 });
  // @ts-expect-error: dense layers need units
  model.add({ type: 'dense' });
  // @ts-expect-error: activations are checked by name
  model.add({ type: 'activation', activation: 'relu7' });
  // @ts-expect-error: x is a Float32Array, not a number[]
  model.predict([1, 2, 3, 4]);
  // @ts-expect-error: optimizers are checked by name
  model.compile({ optimizer: 'adagrad' });
  // @ts-expect-error: fit's callbacks receive step events
  void model.fit(data, { onStep: (s: string) => s });

  // gltrain/vis: charts as fit callbacks, a confusion matrix, a summary table.
  const loss = lossChart(document.body, { log: true });
  const acc = metricChart(document.body);
  await model.fit(data, { epochs: 1, ...fitCallbacks(loss, acc) });
  const counts: number[][] = confusionMatrix(document.body, new Int32Array(3), new Int32Array(3), ['a', 'b']);
  const total: number = modelSummary(document.body, model.summary());
  // @ts-expect-error: a chart's options are checked
  lossChart(document.body, { logarithmic: true });

  model.delete();
  data.delete();
  ctx.delete();
  return counts.length + total + result.steps + ev.loss! + probs.length + classes.length + p.length + caps.maxTextureSize + steps.length;
}

// Losses: a name, parameters, a custom loss recorded from a function.
export function losses(gl: Gltrain): void {
  const ctx = new gl.Context();
  const m = new gl.Sequential(ctx, 3).add({ type: 'dense', units: 2 });
  m.compile({ loss: 'huber' });
  m.compile({ loss: { type: 'huber', delta: 2 } });
  m.compile({ loss: { type: 'binary_crossentropy', fromLogits: false, labelSmoothing: 0.1 } });
  m.compile({ loss: (yTrue: LossTensor, yPred: LossTensor) => yPred.sub(yTrue).abs().mean(-1) });
  m.compile({ loss: (yTrue, yPred) => yPred.sub(yTrue).square().mul(0.5).clip(0, 1).sum() });
  // @ts-expect-error: a loss by an unknown name
  m.compile({ loss: 'hubber' });
}
