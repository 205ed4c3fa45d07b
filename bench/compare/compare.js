// The side-by-side benchmark's page: each workload runs on gltrain (the JavaScript
// module, used as the README shows), then TensorFlow.js 4.22 on its webgl, wasm and
// webgpu backends, then jax-js 0.1.25 on wasm and webgpu — same model, optimizer,
// batch and data (the real Fashion-MNIST files and issue 39's fortunes corpus from
// web/data, read once here and handed to every contestant). The sequence workloads
// (W5 an LSTM character model, W6 the reference transformer) also run on gltrain's
// CPU engine, forced ('gltrain-cpu'); jax-js and TensorFlow.js's webgpu backend skip them.
// The whole sequence repeats (?reps, default 2) so run-to-run noise is visible.
// Results land in window.compare (read by bench/compare/run.mjs); keys match
// bench/compare_native.cpp's.
//
// Timing rules, the same for every contestant:
// - ms/step: median over >= 50 single steps after warm-up, each ending with the
//   loss read back (loss every step); or median over blocks of 10 steps ending
//   with the 10th step's loss read, divided by 10 (loss every 10 steps).
// - An epoch: the library's own fit() over the training set (its default loss
//   reads), then the test accuracy.
// - GFLOP/s: 2 N^3 over the median time of one product plus reading it back.
import createGltrain from '/web/gltrain.js';
import * as jax from '/jax/index.js';

const params = new URLSearchParams(location.search);
const quick = params.get('quick') === '1';
const reps = Number(params.get('reps') || 2);
const P = quick
  ? { warmup: 3, steps: 20, blocks: 3, epochRows: 60 * 128 }
  : { warmup: 5, steps: 50, blocks: 10, epochRows: 0 };
// The sequence workloads' windows and timing: a step takes seconds to a minute on a
// software renderer, so fewer of them (after a first minute of timed steps, no more
// than 2); --quick trains on short windows (seconds in all).
const S = quick
  ? { warmup: 1, steps: 3, budgetMs: Infinity, batch: 4, context: 8 }
  : { warmup: 1, steps: 5, budgetMs: 60000, batch: 32, context: 64 };
const sizes = (params.get('sizes') || '256,512,1024').split(',').map(Number);
const only = params.get('only')?.split(',');  // contestant names, for a quick look at one
const someWorkloads = params.get('workloads')?.split(',');  // W1 .. W4, likewise

const state = { lines: [], done: false, error: null, results: [], info: {}, protocol: { ...P, quick, reps, sizes, sequence: S } };
window.compare = state;
const logEl = document.getElementById('log');
function log(s) {
  state.lines.push(s);
  logEl.textContent += s + '\n';
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const now = () => performance.now();
const yieldNow = () => new Promise((r) => setTimeout(r, 0));

// ---- data ----------------------------------------------------------------------

async function fetchIdx(name) {
  const r = await fetch('/web/data/' + name);
  if (!r.ok) throw new Error(`fetching web/data/${name}: HTTP ${r.status} (run scripts/setup.sh)`);
  const b = new Uint8Array(await r.arrayBuffer());
  const dv = new DataView(b.buffer);
  const rank = b[3];
  const dims = Array.from({ length: rank }, (_, i) => dv.getUint32(4 + 4 * i));
  return { dims, bytes: b.subarray(4 + 4 * rank) };
}
async function fashionMnist(prefix) {
  const [img, lab] = await Promise.all([fetchIdx(`${prefix}-images-idx3-ubyte`), fetchIdx(`${prefix}-labels-idx1-ubyte`)]);
  const n = img.dims[0];
  const x = new Float32Array(n * 784);
  for (let i = 0; i < x.length; i++) x[i] = img.bytes[i] / 255;
  return { n, x, labels: Int32Array.from(lab.bytes) };
}
// A 32-bit LCG: the same numbers as bench/compare_native.cpp's.
function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
// W4: points in [-1, 1]^2, target 1 where the signs differ (XOR).
function xorData(n) {
  const r = lcg(7), x = new Float32Array(2 * n), y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x[2 * i] = r() * 2 - 1;
    x[2 * i + 1] = r() * 2 - 1;
    y[i] = (x[2 * i] > 0) !== (x[2 * i + 1] > 0) ? 1 : 0;
  }
  return { n, x, y };
}
// The fortunes corpus's training part (the held-out last 10 % cut off, as gltrain's
// Dataset.fromText does) as bytes.
async function fortunes() {
  const r = await fetch('/web/data/fortunes.txt');
  if (!r.ok) throw new Error(`fetching web/data/fortunes.txt: HTTP ${r.status} (run scripts/setup.sh)`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return { bytes, train: bytes.subarray(0, Math.floor(0.9 * bytes.length)) };
}
// n windows of S.context bytes at uniform positions of the training text (inputs) and
// the bytes that follow each (targets), for the TensorFlow.js contestants.
function textWindows(text, n) {
  const r = lcg(9), T = S.context, x = new Int32Array(n * T), y = new Int32Array(n * T);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (text.length - T - 1));
    for (let t = 0; t < T; t++) {
      x[i * T + t] = text[at + t];
      y[i * T + t] = text[at + t + 1];
    }
  }
  return { n, x, y };
}
function randomMatrix(n, seed) {
  const r = lcg(seed), m = new Float32Array(n * n);
  for (let i = 0; i < m.length; i++) m[i] = r() * 2 - 1;
  return m;
}

// Times step(read) calls: single steps each reading the loss (lossEvery 1), or
// blocks of lossEvery steps whose last one reads it, up to count blocks (past 2,
// none begun after budgetMs). Returns the median ms/step (of 2, the slower).
function timeSteps(step, lossEvery, count, budgetMs = Infinity) {
  const t = [], t00 = now();
  for (let b = 0; b < count && (b < 2 || now() - t00 < budgetMs); b++) {
    const t0 = now();
    for (let j = 1; j <= lossEvery; j++) step(j === lossEvery);
    t.push((now() - t0) / lossEvery);
  }
  return median(t);
}
// The same for a step that returns a promise (a backend whose reads are async only).
async function timeStepsAsync(step, lossEvery, count, budgetMs = Infinity) {
  const t = [], t00 = now();
  for (let b = 0; b < count && (b < 2 || now() - t00 < budgetMs); b++) {
    const t0 = now();
    for (let j = 1; j <= lossEvery; j++) await step(j === lossEvery);
    t.push((now() - t0) / lossEvery);
  }
  return median(t);
}
const stepsFor = (lossEvery, scale = 1) => (lossEvery === 1 ? P.steps : P.blocks) * scale;
// The timing plan of most workloads, and the sequence workloads' shorter one (single steps).
const plain = { warmup: P.warmup, count: stepsFor, budgetMs: Infinity };
const sequence = { warmup: S.warmup, count: () => S.steps, budgetMs: S.budgetMs };

// ---- gltrain -------------------------------------------------------------------

// name 'gltrain': the WebGL2 backend, forced; 'gltrain-cpu': the CPU backend,
// forced; 'gltrain-auto': the backend gltrain picks by itself (on a software
// renderer, the CPU backend where a startup benchmark says it is faster — the
// choice and its reason are reported). skips: the workloads (W1 ..) it sits out.
function gltrainContestant(gl, name, options, skips = []) {
  const ctx = new gl.Context(options);
  const caps = ctx.capabilities;
  const mlp = () => new gl.Sequential(ctx, 784)
    .add({ type: 'dense', units: 256, activation: 'relu' })
    .add({ type: 'dense', units: 128, activation: 'relu' })
    .add({ type: 'dense', units: 10 })
    .compile({ optimizer: { type: 'adam', lr: 1e-3 } });
  const cnn = () => new gl.Sequential(ctx, [28, 28, 1])
    .add({ type: 'conv2d', filters: 8, kernelSize: 5, activation: 'relu' })
    .add({ type: 'max_pool2d', poolSize: 2 })
    .add({ type: 'conv2d', filters: 16, kernelSize: 5, activation: 'relu' })
    .add({ type: 'max_pool2d', poolSize: 2 })
    .add({ type: 'flatten' })
    .add({ type: 'dense', units: 10 })
    .compile({ optimizer: { type: 'adam', lr: 1e-3 } });
  const tiny = () => new gl.Sequential(ctx, 2)
    .add({ type: 'dense', units: 8, activation: 'tanh' })
    .add({ type: 'dense', units: 1 })
    .compile({ loss: 'mse', optimizer: { type: 'sgd', lr: 0.1 } });
  // W5: byte ids -> Embedding 256x64 -> LSTM 256 (TF.js's defaults: tanh, hard_sigmoid
  // gates), every step's output -> Dense 256 logits per step.
  const charLstm = () => new gl.Sequential(ctx, [S.context])
    .add({ type: 'embedding', inputDim: 256, outputDim: 64 })
    .add({ type: 'lstm', units: 256, returnSequences: true })
    .add({ type: 'dense', units: 256 })
    .compile({ loss: 'sequence_softmax_cross_entropy', optimizer: { type: 'adam', lr: 1e-3 } });
  // W6: the reference transformer's model file, as the text page builds it (on S.context steps).
  const transformer = (file) => gl.Model.fromConfig(ctx, { input: [S.context], layers: file.layers }).compile(file.compile);
  const textData = (d) => gl.Dataset.fromText(d.text.bytes, { context: S.context, seed: 1 });
  // ms/step through beginFit/stepOnce (the loss arrives in the step events).
  function stepMs(model, data, batch, lossEvery, scale = 1, plan = plain) {
    const count = plan.count(lossEvery, scale);
    const epochs = Math.ceil((model.step + (plan.warmup + 1) * scale + count * lossEvery + lossEvery) / Math.ceil(data.count / batch)) + 1;
    model.beginFit(data, { epochs, batchSize: batch, lossEvery });
    let lost = 0;
    const step = () => {
      model.stepOnce();
      for (const e of model.takeEvents()) if (e.type === 'step' && e.loss !== null) lost += e.loss;
    };
    for (let i = 0; i < plan.warmup * scale || model.step % lossEvery; i++) step();
    const ms = timeSteps(step, lossEvery, count, plan.budgetMs);
    if (!Number.isFinite(lost)) throw new Error('gltrain: the loss is not finite');
    return ms;
  }
  // A sequence workload's ms/step on the fortunes text (loss read every step).
  function sequenceMs(model, d, key) {
    const { train, validation } = textData(d);
    try {
      return { [key]: stepMs(model, train, S.batch, 1, 1, sequence) };
    } finally { model.delete(); train.delete(); validation?.delete(); }
  }
  return {
    name,
    skips: new Set(skips),
    renderer: `${caps.backend} backend: ${caps.renderer} (${caps.version})` + (caps.backendReason ? `; ${caps.backendReason}` : ''),
    async w1Steps(d) {
      const m = mlp();
      const ds = gl.Dataset.fromArrays(d.train.x, d.train.labels, 784);
      try {
        return { w1_step_ms_loss1: stepMs(m, ds, 128, 1), w1_step_ms_loss10: stepMs(m, ds, 128, 10) };
      } finally { m.delete(); ds.delete(); }
    },
    async w1Epoch(d, rows) {
      const m = mlp();
      const ds = gl.Dataset.fromArrays(d.train.x.subarray(0, rows * 784), d.train.labels.subarray(0, rows), 784);
      const test = gl.Dataset.fromArrays(d.test.x, d.test.labels, 784);
      try {
        const t0 = now();
        await m.fit(ds, { epochs: 1, batchSize: 128 });
        const s = (now() - t0) / 1000;
        return { w1_epoch_s: s, w1_epoch_steps: Math.ceil(rows / 128), w1_test_accuracy: m.evaluate(test).accuracy };
      } finally { m.delete(); ds.delete(); test.delete(); }
    },
    async w2Steps(d) {
      const m = cnn();
      const ds = gl.Dataset.fromArrays(d.train.x, d.train.labels, 784);
      try { return { w2_step_ms_loss1: stepMs(m, ds, 64, 1) }; } finally { m.delete(); ds.delete(); }
    },
    async w3(n, a, b) {
      const A = new gl.Tensor(ctx, n, n, a), B = new gl.Tensor(ctx, n, n, b), C = new gl.Tensor(ctx, n, n);
      this.cleanup = () => { A.delete(); B.delete(); C.delete(); };
      return () => { gl.matmul(A, B, C); return C.download(); };
    },
    async w4Steps(d) {
      const m = tiny();
      const ds = gl.Dataset.fromArrays(d.xor.x, d.xor.y, 2);
      try {
        return { w4_step_ms_loss1: stepMs(m, ds, 4, 1, 4), w4_step_ms_loss10: stepMs(m, ds, 4, 10, 4) };
      } finally { m.delete(); ds.delete(); }
    },
    async w5Steps(d) { return sequenceMs(charLstm(), d, 'w5_step_ms'); },
    async w6Steps(d) { return sequenceMs(transformer(d.transformerFile), d, 'w6_step_ms'); },
  };
}

// ---- TensorFlow.js ---------------------------------------------------------------

// backend 'webgpu' reads asynchronously (its dataSync() returns zeros on
// SwiftShader): its steps and products await data(). skips: as gltrain's.
function tfjsContestant(backend, skips = []) {
  const asyncReads = backend === 'webgpu';
  const softmaxCE = (y, logits) => tf.losses.softmaxCrossEntropy(y, logits);
  const mse = (y, p) => tf.losses.meanSquaredError(y, p);
  const mlp = () => tf.sequential({ layers: [
    tf.layers.dense({ inputShape: [784], units: 256, activation: 'relu' }),
    tf.layers.dense({ units: 128, activation: 'relu' }),
    tf.layers.dense({ units: 10 }),
  ] });
  const cnn = () => tf.sequential({ layers: [
    tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 8, kernelSize: 5, activation: 'relu' }),
    tf.layers.maxPooling2d({ poolSize: 2, strides: 2 }),
    tf.layers.conv2d({ filters: 16, kernelSize: 5, activation: 'relu' }),
    tf.layers.maxPooling2d({ poolSize: 2, strides: 2 }),
    tf.layers.flatten(),
    tf.layers.dense({ units: 10 }),
  ] });
  const tiny = () => tf.sequential({ layers: [
    tf.layers.dense({ inputShape: [2], units: 8, activation: 'tanh' }),
    tf.layers.dense({ units: 1 }),
  ] });
  // W5, gltrain's layers: TF.js's LSTM defaults but for the recurrent kernel's glorot_uniform
  // (gltrain's; TF.js's orthogonal is not an initializer gltrain has). Dense on a sequence
  // acts on its last axis, as gltrain's. The wasm backend lacks the Embedding's gradient
  // (UnsortedSegmentSum), so there the table is a bias-free Dense on one-hot bytes: the
  // same function and gradient, as a TF.js user would work around it.
  const oneHotEmbedding = backend === 'wasm';
  const charLstm = () => {
    const m = tf.sequential({ layers: [
      oneHotEmbedding ? tf.layers.dense({ inputShape: [S.context, 256], units: 64, useBias: false })
                      : tf.layers.embedding({ inputDim: 256, outputDim: 64, inputLength: S.context }),
      tf.layers.lstm({ units: 256, returnSequences: true, recurrentInitializer: 'glorotUniform' }),
      tf.layers.dense({ units: 256 }),
    ] });
    if (!oneHotEmbedding) return m;
    return { apply: (ids, o) => m.apply(tf.oneHot(ids, 256).toFloat(), o), dispose: () => m.dispose() };
  };
  // Softmax cross-entropy at every step of every window, the mean (targets: byte ids).
  const sequenceCE = (y, logits) =>
    tf.losses.softmaxCrossEntropy(tf.oneHot(y.reshape([-1]), 256).toFloat(), logits.reshape([-1, 256]));
  // A training step as a performance-minded TensorFlow.js user writes it: gather
  // the batch on the backend, optimizer.minimize, read the loss when asked.
  function trainer(model, optimizer, lossFn, x, y, n, batch) {
    const order = new Int32Array(n).map((_, i) => i);
    const r = lcg(5);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    let pos = 0;
    let lost = 0;
    const step = (read) => {
      if (pos + batch > n) pos = 0;
      const idx = order.subarray(pos, pos + batch);
      pos += batch;
      const cost = tf.tidy(() => {
        const ib = tf.tensor1d(idx, 'int32');
        const xb = tf.gather(x, ib), yb = tf.gather(y, ib);
        return optimizer.minimize(() => lossFn(yb, model.apply(xb, { training: true })), true);
      });
      if (read && asyncReads) return cost.data().then((v) => { lost += v[0]; cost.dispose(); });
      if (read) lost += cost.dataSync()[0];
      cost.dispose();
    };
    step.check = () => { if (!Number.isFinite(lost)) throw new Error(`${backend}: the loss is not finite`); };
    return step;
  }
  async function stepMs(step, lossEvery, scale = 1, plan = plain) {
    for (let i = 0; i < plan.warmup * scale; i++) await step(true);
    const ms = await (asyncReads ? timeStepsAsync : timeSteps)(step, lossEvery, plan.count(lossEvery, scale), plan.budgetMs);
    step.check();
    return ms;
  }
  const images = (d, shape) => tf.tensor(d.x, [d.n, ...shape]);
  const oneHot = (labels) => tf.tidy(() => tf.oneHot(tf.tensor1d(labels, 'int32'), 10).toFloat());
  const disposeAll = (...xs) => xs.forEach((t) => t.dispose());
  return {
    name: 'tfjs-' + backend,
    skips: new Set(skips),
    async setup() {
      // tfjs-wasm runs on hardwareConcurrency / 2 threads at most (1 on 2 cores: its
      // init_with_threads_count caps even setThreadsCount at that, assuming two hardware
      // threads per core). To give it every core, as gltrain's threaded build takes, it
      // is told of twice the cores while its module starts, and asked for all of them.
      const cores = navigator.hardwareConcurrency || 1;
      const everyCore = backend === 'wasm' && !this.renderer;
      if (everyCore) {
        tf.wasm.setThreadsCount(cores);
        Object.defineProperty(navigator, 'hardwareConcurrency', { value: 2 * cores, configurable: true });
      }
      try {
        if (!(await tf.setBackend(backend))) throw new Error(`TensorFlow.js: the ${backend} backend failed to start`);
        await tf.ready();
      } finally {
        if (everyCore) delete navigator.hardwareConcurrency;  // back to Navigator's own getter
      }
      if (this.renderer) return;
      if (backend === 'webgl') {
        const g = tf.backend().gpgpu.gl;
        const ext = g.getExtension('WEBGL_debug_renderer_info');
        this.renderer = `${g.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : g.RENDERER)} (WebGL ${tf.env().get('WEBGL_VERSION')}, ` +
          `float32 ${tf.env().getBool('WEBGL_RENDER_FLOAT32_ENABLED')}, packed ${tf.env().getBool('WEBGL_PACK')})`;
      } else if (backend === 'webgpu') {
        const info = tf.backend().adapterInfo;
        this.renderer = `WebGPU: ${[info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(' ') || 'adapter'} (async reads)`;
      } else {
        const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
        const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
        this.renderer = `WebAssembly, SIMD ${simd}, ` +
          (threads ? `threaded build, ${tf.wasm.getThreadsCount()} thread(s) (navigator.hardwareConcurrency ${navigator.hardwareConcurrency}, ` +
                     'shown to it doubled while it started)' : 'single-threaded build');
      }
    },
    async w1Steps(d) {
      const model = mlp(), opt = tf.train.adam(1e-3);
      const x = images(d.train, [784]), y = oneHot(d.train.labels);
      try {
        const step = trainer(model, opt, softmaxCE, x, y, d.train.n, 128);
        const r = { w1_step_ms_loss1: await stepMs(step, 1), w1_step_ms_loss10: await stepMs(step, 10) };
        if (!this.kernels) this.kernels = (await tf.profile(() => step(false))).kernels.length;
        return r;
      } finally { disposeAll(model, opt, x, y); }
    },
    async w1Epoch(d, rows) {
      const model = mlp();
      model.compile({ optimizer: tf.train.adam(1e-3), loss: softmaxCE });
      const x = tf.tensor(d.train.x.subarray(0, rows * 784), [rows, 784]), y = oneHot(d.train.labels.subarray(0, rows));
      const tx = images(d.test, [784]), ty = tf.tensor1d(d.test.labels, 'int32');
      try {
        const t0 = now();
        await model.fit(x, y, { epochs: 1, batchSize: 128, shuffle: true, verbose: 0 });
        const s = (now() - t0) / 1000;
        const meanAcc = tf.tidy(() => model.predict(tx, { batchSize: 256 }).argMax(-1).equal(ty).mean());
        const acc = (await meanAcc.data())[0];
        meanAcc.dispose();
        return { w1_epoch_s: s, w1_epoch_steps: Math.ceil(rows / 128), w1_test_accuracy: acc };
      } finally { disposeAll(model, x, y, tx, ty); }
    },
    async w2Steps(d) {
      const model = cnn(), opt = tf.train.adam(1e-3);
      const x = images(d.train, [28, 28, 1]), y = oneHot(d.train.labels);
      try {
        return { w2_step_ms_loss1: await stepMs(trainer(model, opt, softmaxCE, x, y, d.train.n, 64), 1) };
      } finally { disposeAll(model, opt, x, y); }
    },
    async w3(n, a, b) {
      const A = tf.tensor2d(a, [n, n]), B = tf.tensor2d(b, [n, n]);
      this.cleanup = () => disposeAll(A, B);
      if (asyncReads) return async () => { const c = tf.matMul(A, B); const v = await c.data(); c.dispose(); return v; };
      return () => { const c = tf.matMul(A, B); const v = c.dataSync(); c.dispose(); return v; };
    },
    async w4Steps(d) {
      const model = tiny(), opt = tf.train.sgd(0.1);
      const x = tf.tensor2d(d.xor.x, [d.xor.n, 2]), y = tf.tensor2d(d.xor.y, [d.xor.n, 1]);
      try {
        const step = trainer(model, opt, mse, x, y, d.xor.n, 4);
        return { w4_step_ms_loss1: await stepMs(step, 1, 4), w4_step_ms_loss10: await stepMs(step, 10, 4) };
      } finally { disposeAll(model, opt, x, y); }
    },
    async w5Steps(d) {
      const model = charLstm(), opt = tf.train.adam(1e-3), w = d.text.windows;
      const x = tf.tensor2d(w.x, [w.n, S.context], 'int32'), y = tf.tensor2d(w.y, [w.n, S.context], 'int32');
      try {
        return { w5_step_ms: await stepMs(trainer(model, opt, sequenceCE, x, y, w.n, S.batch), 1, 1, sequence) };
      } finally { disposeAll(model, opt, x, y); }
    },
  };
}

// ---- jax-js ------------------------------------------------------------------------

// jax-js 0.1.25 on one device ('wasm': WebAssembly on Web Workers; 'webgpu'), as
// its README teaches: the loss a function of a parameter tree, valueAndGrad +
// jit around the whole step, Adam by hand with TensorFlow.js's formula
// (lr_t = lr sqrt(1 - b2^t) / (1 - b1^t), eps 1e-7), the batch gathered on the
// device. Arrays are reference counted: every use but the last takes .ref.
function jaxContestant(jax, device) {
  const { numpy: np, nn, lax, tree } = jax;
  const glorot = (fanIn, fanOut, seed) => {
    const r = lcg(seed), lim = Math.sqrt(6 / (fanIn + fanOut)), w = new Float32Array(fanIn * fanOut);
    for (let i = 0; i < w.length; i++) w[i] = (r() * 2 - 1) * lim;
    return w;
  };
  const dense = (p, i, fanIn, fanOut) => {
    p['w' + i] = np.array(glorot(fanIn, fanOut, 40 + i), { shape: [fanIn, fanOut] });
    p['b' + i] = np.zeros([fanOut]);
  };
  const mlpParams = () => { const p = {}; dense(p, 1, 784, 256); dense(p, 2, 256, 128); dense(p, 3, 128, 10); return p; };
  const mlpLogits = (p, x) => {
    const h1 = nn.relu(np.matmul(x, p.w1).add(p.b1));
    const h2 = nn.relu(np.matmul(h1, p.w2).add(p.b2));
    return np.matmul(h2, p.w3).add(p.b3);
  };
  const softmaxCE = (logits, y, batch) => nn.logSoftmax(logits, -1).mul(y).sum().mul(-1 / batch);
  const tinyParams = () => { const p = {}; dense(p, 1, 2, 8); dense(p, 2, 8, 1); return p; };
  const tinyLoss = (p, x, y, batch) => {
    const out = np.matmul(np.tanh(np.matmul(x, p.w1).add(p.b1)), p.w2).add(p.b2);
    const e = out.sub(y);
    return e.ref.mul(e).sum().mul(1 / batch);
  };
  const cnnParams = () => {
    const k = (n, seed) => np.array(glorot(n[1] * 25, n[0] * 25, seed), { shape: n });
    return { c1: k([8, 1, 5, 5], 51), cb1: np.zeros([1, 8, 1, 1]), c2: k([16, 8, 5, 5], 52), cb2: np.zeros([1, 16, 1, 1]),
             w3: np.array(glorot(256, 10, 53), { shape: [256, 10] }), b3: np.zeros([10]) };
  };
  const maxPool2 = (x) => lax.reduceWindow(x, (w) => np.max(w), [1, 1, 2, 2], [1, 1, 2, 2]);
  const cnnLogits = (p, x, batch) => {  // x: [batch, 1, 28, 28] (NCHW, jax's default)
    const h1 = maxPool2(nn.relu(lax.conv(x, p.c1, [1, 1], 'VALID').add(p.cb1)));
    const h2 = maxPool2(nn.relu(lax.conv(h1, p.c2, [1, 1], 'VALID').add(p.cb2)));
    return np.matmul(h2.reshape([batch, 256]), p.w3).add(p.b3);
  };
  // One jitted step: loss and gradients, then Adam (lrT and the step's other
  // scalars are arguments, so one trace serves every step).
  function adamStep(lossFn) {
    const b1 = 0.9, b2 = 0.999, eps = 1e-7;
    return jax.jit((p, m, v, x, y, lrT) => {
      const [loss, g] = jax.valueAndGrad(lossFn)(tree.ref(p), x, y);
      const p2 = {}, m2 = {}, v2 = {};
      for (const k of Object.keys(p)) {
        const gk = g[k];
        m2[k] = m[k].mul(b1).add(gk.ref.mul(1 - b1));
        v2[k] = v[k].mul(b2).add(gk.ref.mul(gk).mul(1 - b2));
        p2[k] = p[k].sub(m2[k].ref.mul(lrT.ref).div(np.sqrt(v2[k].ref).add(eps)));
      }
      lrT.dispose();
      return [loss, p2, m2, v2];
    });
  }
  function sgdStep(lossFn, lr) {
    return jax.jit((p, x, y) => {
      const [loss, g] = jax.valueAndGrad(lossFn)(tree.ref(p), x, y);
      const p2 = {};
      for (const k of Object.keys(p)) p2[k] = p[k].sub(g[k].mul(lr));
      return [loss, p2];
    });
  }
  const read = async (a) => (await a.data())[0];
  // A trainer over n examples: each step gathers a shuffled batch on the device.
  function trainer(kind, x, y, n, batch, lossFn, params) {
    const order = new Int32Array(n).map((_, i) => i);
    const r = lcg(5);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    let pos = 0, t = 0, lost = 0;
    let p = params, m = tree.map((a) => np.zerosLike(a.ref), p), v = tree.map((a) => np.zerosLike(a.ref), p);
    const update = kind === 'adam' ? adamStep(lossFn) : sgdStep(lossFn, 0.1);
    const step = async (readLoss) => {
      if (pos + batch > n) pos = 0;
      const idx = np.array(order.subarray(pos, pos + batch), { dtype: np.int32 });
      pos += batch;
      const xb = np.take(x.ref, idx.ref, 0), yb = np.take(y.ref, idx, 0);
      let loss;
      if (kind === 'adam') {
        t++;
        const lrT = np.array(new Float32Array([1e-3 * Math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)]), { shape: [] });
        [loss, p, m, v] = update(p, m, v, xb, yb, lrT);
      } else {
        [loss, p] = update(p, xb, yb);
      }
      if (readLoss) lost += await read(loss); else loss.dispose();
    };
    step.check = () => { if (!Number.isFinite(lost)) throw new Error(`jax-js ${device}: the loss is not finite`); };
    step.params = () => tree.ref(p);
    step.dispose = () => { tree.dispose([p, m, v]); update.dispose?.(); };
    return step;
  }
  async function stepMs(step, lossEvery, scale = 1) {
    for (let i = 0; i < P.warmup * scale; i++) await step(true);
    const ms = await timeStepsAsync(step, lossEvery, stepsFor(lossEvery, scale));
    step.check();
    return ms;
  }
  const oneHot = (labels) => nn.oneHot(np.array(labels, { dtype: np.int32 }), 10).astype(np.float32);
  return {
    name: 'jax-' + device,
    async setup() {
      const ok = await jax.init(device);
      if (!ok.includes(device)) throw new Error(`jax-js: the ${device} device failed to start (have ${ok.join(', ')})`);
      jax.defaultDevice(device);
      this.renderer = `jax-js ${device}` + (device === 'wasm' ? ` (navigator.hardwareConcurrency ${navigator.hardwareConcurrency}, ` +
                                                             `${self.crossOriginIsolated ? 'cross-origin isolated' : 'not isolated'})` : '');
    },
    async w1Steps(d) {
      const x = np.array(d.train.x, { shape: [d.train.n, 784] }), y = oneHot(d.train.labels);
      const step = trainer('adam', x, y, d.train.n, 128, (p, xb, yb) => softmaxCE(mlpLogits(p, xb), yb, 128), mlpParams());
      try {
        return { w1_step_ms_loss1: await stepMs(step, 1), w1_step_ms_loss10: await stepMs(step, 10) };
      } finally { step.dispose(); x.dispose(); y.dispose(); }
    },
    async w1Epoch(d, rows) {
      const x = np.array(d.train.x.subarray(0, rows * 784), { shape: [rows, 784] }), y = oneHot(d.train.labels.subarray(0, rows));
      const tx = np.array(d.test.x, { shape: [d.test.n, 784] });
      const step = trainer('adam', x, y, rows, 128, (p, xb, yb) => softmaxCE(mlpLogits(p, xb), yb, 128), mlpParams());
      try {
        // Whole batches (this loop has no short last batch), read the loss every 10 steps.
        const steps = Math.floor(rows / 128);
        const t0 = now();
        for (let i = 1; i <= steps; i++) await step(i % 10 === 0 || i === steps);
        const s = (now() - t0) / 1000;
        const pred = await np.argmax(mlpLogits(step.params(), tx), -1).data();
        const acc = pred.reduce((c, v, i) => c + (v === d.test.labels[i] ? 1 : 0), 0) / d.test.n;
        return { w1_epoch_s: s, w1_epoch_steps: steps, w1_test_accuracy: acc };
      } finally { step.dispose(); x.dispose(); y.dispose(); }
    },
    async w2Steps(d) {
      const x = np.array(d.train.x, { shape: [d.train.n, 1, 28, 28] }), y = oneHot(d.train.labels);
      const step = trainer('adam', x, y, d.train.n, 64, (p, xb, yb) => softmaxCE(cnnLogits(p, xb, 64), yb, 64), cnnParams());
      try { return { w2_step_ms_loss1: await stepMs(step, 1) }; } finally { step.dispose(); x.dispose(); y.dispose(); }
    },
    async w3(n, a, b) {
      const A = np.array(a, { shape: [n, n] }), B = np.array(b, { shape: [n, n] });
      this.cleanup = () => { A.dispose(); B.dispose(); };
      return async () => np.matmul(A.ref, B.ref).data();
    },
    async w4Steps(d) {
      const x = np.array(d.xor.x, { shape: [d.xor.n, 2] }), y = np.array(d.xor.y, { shape: [d.xor.n, 1] });
      const step = trainer('sgd', x, y, d.xor.n, 4, (p, xb, yb) => tinyLoss(p, xb, yb, 4), tinyParams());
      try {
        return { w4_step_ms_loss1: await stepMs(step, 1, 4), w4_step_ms_loss10: await stepMs(step, 10, 4) };
      } finally { step.dispose(); x.dispose(); y.dispose(); }
    },
  };
}

// ---- the run -----------------------------------------------------------------------

async function w3(c, n) {
  const run = await c.w3(n, randomMatrix(n, 11), randomMatrix(n, 12));
  try {
    const out = await run();  // warm-up: compiles, allocates
    if (!Number.isFinite(out[out.length - 1])) throw new Error(`${c.name}: matmul produced a non-finite value`);
    const t = [];
    for (let i = 0; i < (n <= 512 ? 9 : 5); i++) {
      const t0 = now();
      await run();
      t.push(now() - t0);
    }
    return { [`w3_gflops_${n}`]: (2 * n * n * n) / (median(t) / 1e3) / 1e9 };
  } finally { c.cleanup(); }
}

async function main() {
  log(`protocol: ${JSON.stringify(state.protocol)}`);
  const [train, test, text, transformerFile] = await Promise.all([
    fashionMnist('train'), fashionMnist('t10k'), fortunes(),
    fetch('/web/data/char-transformer.json').then((r) => {
      if (!r.ok) throw new Error(`fetching web/data/char-transformer.json: HTTP ${r.status} (run scripts/setup.sh)`);
      return r.json();
    })]);
  text.windows = textWindows(text.train, 64 * S.batch);
  const d = { train, test, xor: xorData(4096), text, transformerFile };
  const rows = P.epochRows || train.n;
  const gl = await createGltrain();
  tf.wasm.setWasmPaths('/tfjs-wasm/');
  const w1ToW4 = ['W1', 'W2', 'W3', 'W4'];
  let contestants = [gltrainContestant(gl, 'gltrain', { backend: 'webgl' }), gltrainContestant(gl, 'gltrain-cpu', { backend: 'cpu' }, w1ToW4),
                     tfjsContestant('webgl'), tfjsContestant('wasm'), tfjsContestant('webgpu', ['W5']),
                     jaxContestant(jax, 'wasm'), jaxContestant(jax, 'webgpu'), gltrainContestant(gl, 'gltrain-auto', {})];
  if (only) contestants = contestants.filter((c) => only.includes(c.name));
  // [label, the contestant's method]: a contestant without the method (or skipping the workload) sits it out.
  const workloads = [
    ['W1 steps', 'w1Steps', (c) => c.w1Steps(d)],
    ['W1 epoch', 'w1Epoch', (c) => c.w1Epoch(d, rows)],
    ['W2 steps', 'w2Steps', (c) => c.w2Steps(d)],
    ...sizes.map((n) => [`W3 N=${n}`, 'w3', (c) => w3(c, n)]),
    ['W4 steps', 'w4Steps', (c) => c.w4Steps(d)],
    ['W5 steps', 'w5Steps', (c) => c.w5Steps(d)],
    ['W6 steps', 'w6Steps', (c) => c.w6Steps(d)],
  ];
  const chosen = someWorkloads ? workloads.filter(([label]) => someWorkloads.includes(label.split(' ')[0])) : workloads;
  for (let rep = 0; rep < reps; rep++) {
    const res = Object.fromEntries(contestants.map((c) => [c.name, {}]));
    state.results.push(res);
    for (const [label, method, run] of chosen) {
      for (const c of contestants) {
        if (!c[method] || c.skips?.has(label.split(' ')[0])) continue;
        const t0 = now();
        let got;
        try {
          await c.setup?.();
          got = await run(c);
          Object.assign(res[c.name], got);
        } catch (e) {
          got = { error: e.message };
          res[c.name].error = (res[c.name].error ? res[c.name].error + '; ' : '') + `${label}: ${e.message}`;
        }
        const shown = Object.entries(got).map(([k, v]) => `${k} ${typeof v === 'number' ? +v.toPrecision(4) : v}`);
        log(`run ${rep + 1} ${label} ${c.name} (${((now() - t0) / 1000).toFixed(1)} s): ${shown.join(', ')}`);
        await yieldNow();
      }
    }
  }
  for (const c of contestants) state.info[c.name] = { renderer: c.renderer, kernelsPerMlpStep: c.kernels ?? null };
  state.info.userAgent = navigator.userAgent;
  state.info.tfjsVersion = tf.version.tfjs;
  state.info.jaxVersion = '0.1.25';  // bench/package-lock.json (the module exports no version)
  state.info.crossOriginIsolated = self.crossOriginIsolated;
}

main().then(() => { state.done = true; }, (e) => { state.error = e.stack || String(e); state.done = true; log('error: ' + state.error); });
