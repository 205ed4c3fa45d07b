// The CPU backend's threads in the browser, page side: W1-like MLP and W2 CNN
// steps on deterministic rows, trained on the main thread or in a TrainingWorker,
// and Tensor products, with the single-threaded or the threaded build. Used by tests/web/threads.test.mjs
// (same bits on every thread count and build) and bench/cpu_threads_web.mjs (ms/step).
import createGltrain, { TrainingWorker } from '/gltrain.js';

const ROWS = 512;
const lcg = (seed) => {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
};
function rows() {
  const r = lcg(7), x = new Float32Array(ROWS * 784), y = new Int32Array(ROWS);
  for (let i = 0; i < x.length; i++) x[i] = r();
  for (let i = 0; i < ROWS; i++) y[i] = Math.floor(r() * 10);
  return { x, y };
}
// W1 (bench/compare's MLP) and W2 (its TF.js CNN), with their batch sizes.
export const MODELS = {
  mlp: { batch: 128, input: 784, layers: [{ type: 'dense', units: 256, activation: 'relu' },
                                          { type: 'dense', units: 128, activation: 'relu' }, { type: 'dense', units: 10 }] },
  cnn: { batch: 64, input: [28, 28, 1], layers: [{ type: 'conv2d', filters: 8, kernelSize: 5, activation: 'relu' },
                                                 { type: 'max_pool2d', poolSize: 2 },
                                                 { type: 'conv2d', filters: 16, kernelSize: 5, activation: 'relu' },
                                                 { type: 'max_pool2d', poolSize: 2 }, { type: 'flatten' }, { type: 'dense', units: 10 }] },
};
const COMPILE = { optimizer: { type: 'adam', lr: 1e-3 } };

const modules = {};
// The module of one build: 'auto' (what the page gets), 'single' or 'threaded'.
export async function load(build = 'auto') {
  modules[build] ??= createGltrain(build === 'auto' ? {} : { threads: build === 'threaded' });
  return modules[build];
}
async function sha256(bytes) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return [...d].map((b) => b.toString(16).padStart(2, '0')).join('');
}
function model(gl, ctx, kind) {
  const m = new gl.Sequential(ctx, MODELS[kind].input);
  for (const l of MODELS[kind].layers) m.add(l);
  return m.compile(COMPILE);
}

// Trains `steps` steps of `kind` on the page's thread; the checkpoint's SHA-256 and the threads' report.
export async function trainHere(build, cpuThreads, kind, steps) {
  const gl = await load(build);
  const ctx = new gl.Context({ backend: 'cpu', cpuThreads });
  try {
    const m = model(gl, ctx, kind);
    const { x, y } = rows();
    m.beginFit(x, y, { epochs: 100, batchSize: MODELS[kind].batch, shuffle: false, lossEvery: 1 });
    for (let i = 0; i < steps; i++) m.stepOnce();
    const losses = m.takeEvents().filter((e) => e.type === 'step').map((e) => e.loss);
    const digest = await sha256(m.saveCheckpoint());
    const caps = ctx.capabilities;
    return { digest, lastLoss: losses.at(-1), threaded: gl.threaded, cpuThreads: caps.cpuThreads,
             cpuThreadsReason: caps.cpuThreadsReason, report: caps.report };
  } finally {
    ctx.delete();
  }
}

// C = op(A)·op(B) of `m` x `k` and `k` x `n` deterministic operands through Tensor and matmul on the
// page's thread (the CPU engine); the SHA-256 of C's bits and the threads the context has.
export async function productHere(build, cpuThreads, [m, k, n], transA, transB) {
  const gl = await load(build);
  const ctx = new gl.Context({ backend: 'cpu', cpuThreads });
  try {
    const r = lcg(11);
    const tensor = (rows, cols) => new gl.Tensor(ctx, rows, cols, Float32Array.from({ length: rows * cols }, () => r() * 2 - 1));
    const a = transA ? tensor(k, m) : tensor(m, k), b = transB ? tensor(n, k) : tensor(k, n), c = new gl.Tensor(ctx, m, n);
    gl.matmul(a, b, c, { transA, transB });
    return { digest: await sha256(c.download()), threaded: gl.threaded, cpuThreads: ctx.capabilities.cpuThreads,
             cpuThreadsReason: ctx.capabilities.cpuThreadsReason };
  } finally {
    ctx.delete();
  }
}

// The same in a TrainingWorker (whose module picks its build as the page's would).
export async function trainInWorker(cpuThreads, kind, steps) {
  const w = await TrainingWorker.create({ context: { backend: 'cpu', cpuThreads } });
  try {
    const { x, y } = rows();
    await w.load('train', { x, y, features: 784 });
    await w.build({ input: MODELS[kind].input, layers: MODELS[kind].layers }, COMPILE);
    await w.fit('train', { epochs: 100, steps, batchSize: MODELS[kind].batch, shuffle: false });
    const digest = await sha256(await w.saveCheckpoint());
    return { digest, cpuThreads: w.capabilities.cpuThreads, cpuThreadsReason: w.capabilities.cpuThreadsReason };
  } finally {
    w.terminate();
  }
}

// ms/step of `kind` on the page's thread: the median of `count` steps after `warmup`.
export async function stepMs(build, cpuThreads, kind, warmup, count) {
  const gl = await load(build);
  const ctx = new gl.Context({ backend: 'cpu', cpuThreads });
  try {
    const m = model(gl, ctx, kind);
    const { x, y } = rows();
    m.beginFit(x, y, { epochs: 1000, batchSize: MODELS[kind].batch, lossEvery: 1 });
    for (let i = 0; i < warmup; i++) m.stepOnce();
    const t = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      m.stepOnce();
      t.push(performance.now() - t0);
      m.takeEvents();
    }
    t.sort((a, b) => a - b);
    return { ms: t[Math.floor(t.length / 2)], cpuThreads: ctx.capabilities.cpuThreads };
  } finally {
    ctx.delete();
  }
}
