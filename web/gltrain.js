// gltrain for JavaScript: the API (gltrain-core.js) and TrainingWorker, which trains in a
// Web Worker (gltrain-worker.js) on an OffscreenCanvas. See gltrain-core.js and gltrain.d.ts.
//
//   import createGltrain, { TrainingWorker } from 'gltrain';
//
// Every URL here is written the way bundlers follow (`new URL('…', import.meta.url)`,
// `new Worker(new URL('…', import.meta.url), { type: 'module' })`), so the package works
// from a plain page with an import map, under Vite's dev server and in a production build.
import createGltrain, { GltrainError } from './gltrain-core.js';

export * from './gltrain-core.js';
export default createGltrain;

// Relative URLs given to the worker (IDX files) are the page's, not the worker script's
// (which sits in node_modules or a bundler's assets folder).
function pageUrl(url) {
  const base = typeof document !== 'undefined' ? document.baseURI : globalThis.location?.href;
  return base ? new URL(url, base).href : String(url);
}

const WORKER_FILE = './gltrain-worker.js';

// A module worker that fails to load fires a bare 'error' event (no message, no file):
// find out what the browser would not say.
async function startupError(url) {
  let why = 'it failed to load or to evaluate (a module it imports is missing, or does not parse: the browser console names it)';
  try {
    const r = await fetch(url, { cache: 'no-store' });
    const type = r.headers.get('content-type') || '';
    if (!r.ok) why = `HTTP ${r.status}`;
    else if (!/javascript|ecmascript/.test(type)) why = `served as '${type}', not JavaScript`;
  } catch (e) {
    why = `fetching it failed: ${e.message}`;
  }
  return new GltrainError('WorkerError', `gltrain worker: ${url}: ${why}`);
}

// The main-thread side of gltrain-worker.js: every method posts a request and
// resolves with the worker's answer; fit() relays progress as it arrives.
export class TrainingWorker {
  #worker;
  #next = 1;
  #pending = new Map();
  #capabilities = null;
  #layerTypes = [];
  #version = '';

  #url;
  #started = false;

  // options: {workerUrl?, wasmUrl?, context?: ContextOptions without canvas (backend, maxTextureSize, debugChecks, ...)};
  // rejects with the reason a worker could not start (its script's HTTP status, the module's own error).
  static async create(options = {}) {
    if (options === null || typeof options !== 'object') throw new GltrainError('ArgumentError', 'TrainingWorker.create: options must be an object');
    let worker;
    if (options.workerUrl !== undefined) worker = new Worker(pageUrl(options.workerUrl), { type: 'module' });
    else worker = new Worker(new URL('./gltrain-worker.js', import.meta.url), { type: 'module' });  // the form bundlers follow
    // (For error messages only; a name in a variable, which bundlers do not rewrite.)
    const w = new TrainingWorker(worker, options.workerUrl !== undefined ? pageUrl(options.workerUrl)
                                                                         : new URL(WORKER_FILE, import.meta.url).href);
    const wasmUrl = options.wasmUrl !== undefined ? pageUrl(options.wasmUrl) : undefined;
    const info = await w.#request('init', { context: options.context ?? {}, wasmUrl }).catch((e) => { w.terminate(); throw e; });
    w.#started = true;
    w.#capabilities = info.capabilities;
    w.#layerTypes = info.layerTypes;
    w.#version = info.version;
    return w;
  }
  constructor(worker, url) {
    this.#worker = worker;
    this.#url = url;
    worker.onmessage = (e) => this.#receive(e.data);
    worker.onerror = async (e) => {
      e.preventDefault?.();
      const err = e.message ? new GltrainError('WorkerError', `gltrain worker: ${e.message}` +
                                                (e.filename ? ` (${e.filename}:${e.lineno})` : ''))
                            : this.#started ? new GltrainError('WorkerError', 'gltrain worker: an uncaught error (see the console)')
                                            : await startupError(this.#url);
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    };
  }
  get capabilities() { return this.#capabilities; }
  // The layer types the worker's module supports, and its version.
  get layerTypes() { return this.#layerTypes; }
  get version() { return this.#version; }

  #receive(msg) {
    const p = this.#pending.get(msg.id);
    if (!p) return;
    if (msg.progress) { for (const ev of msg.progress) p.onProgress?.(ev); return; }
    this.#pending.delete(msg.id);
    if (msg.error) p.reject(new GltrainError(msg.error.kind, msg.error.message));
    else p.resolve(msg.result);
  }
  #request(op, args, onProgress, transfer = []) {
    if (!this.#worker) return Promise.reject(new GltrainError('DeletedError', 'TrainingWorker: terminated'));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress });
      this.#worker.postMessage({ id, op, ...args }, transfer);
    });
  }

  // Loads a dataset into the worker under `name`: {x, y} arrays (transferred
  // when transfer is true; arrays of them for a model of several inputs and
  // outputs, built first), IDX files {images: url, labels: url, start?, count?}, or a
  // text's byte windows {text: url or bytes, context?, heldOut?, seed?, windows?,
  // validation?} (Dataset.fromText's; validation: true loads the held-out tail).
  // Relative file URLs are resolved against the page (document.baseURI).
  load(name, source, { transfer = false } = {}) {
    const arrays = source?.x === undefined ? [] : [source.x, source.y].flat().filter((a) => ArrayBuffer.isView(a));
    const t = transfer ? [...new Set(arrays.map((a) => a.buffer))] : [];
    if (source && typeof source === 'object' && source.x === undefined) {
      source = { ...source };
      for (const k of ['images', 'labels', 'text']) if (typeof source[k] === 'string') source[k] = pageUrl(source[k]);
    }
    return this.#request('load', { name, source }, undefined, t);
  }
  // Replaces the worker's model: {input, layers: [...]} as in a model file, compile options.
  build(model, compile = {}) { return this.#request('build', { model, compile }); }
  // Replaces the worker's model with a TF.js Layers model (Sequential.fromTfjs).
  buildFromTfjs(modelJson, weightData, compile = {}) {
    return this.#request('buildFromTfjs', { modelJson, weightData, compile });
  }
  // Trains on dataset `train`; options as Sequential.fit (validationData: a dataset name) plus
  // evaluateEvery: {dataset, steps} which evaluates during training (onEvaluate).
  fit(train, options = {}) {
    const { onStep, onEpoch, onEvaluate, onContextLost, onContextRestored, ...rest } = options;
    return this.#request('fit', { train, options: rest }, ({ type, ...p }) => {
      if (type === 'step') onStep?.({ type, ...p });
      else if (type === 'epoch') onEpoch?.({ type, ...p });
      else if (type === 'evaluate') onEvaluate?.({ type, ...p });
      else if (type === 'contextLost') onContextLost?.(p);
      else if (type === 'contextRestored') {
        this.#capabilities = p.capabilities;  // the restored device's (restoresChecked)
        const { capabilities, ...event } = p;
        onContextRestored?.(event);
      }
    });
  }
  // The worker's WebGL context lost / restored through WEBGL_lose_context (Context.loseContext):
  // to test an application's recovery; a fit in the worker pauses and resumes.
  loseContext() { return this.#request('loseContext', {}); }
  restoreContext() { return this.#request('restoreContext', {}); }
  stop() { this.#worker?.postMessage({ op: 'stop' }); }
  evaluate(dataset, options = {}) { return this.#request('evaluate', { dataset, options }); }
  profileStep(dataset, options = {}) { return this.#request('profileStep', { dataset, options }); }
  // Predictions for rows [start, start + count) of a loaded dataset, or for a Float32Array.
  predict(data, options = {}) { return this.#request('predict', { data, options }); }
  predictClasses(data, options = {}) { return this.#request('predictClasses', { data, options }); }
  // Sequential.generate in the worker; during a fit, from the weights of the last completed step.
  generate(prompt, options = {}) { return this.#request('generate', { prompt, options }); }
  // A copy of rows [start, start + count) of a loaded dataset's x, and of its targets.
  x(dataset, start, count) { return this.#request('x', { dataset, start, count }); }
  targets(dataset) { return this.#request('targets', { dataset }); }
  saveCheckpoint() { return this.#request('saveCheckpoint', {}); }
  snapshotCheckpoint() { return this.#request('snapshotCheckpoint', {}); }
  exportTfjs() { return this.#request('exportTfjs', {}); }
  loadCheckpoint(bytes, options = {}) { return this.#request('loadCheckpoint', { bytes, options }); }
  poolStats() { return this.#request('poolStats', {}); }
  summary() { return this.#request('summary', {}); }
  terminate() {
    if (!this.#worker) return;
    this.#worker.terminate();
    this.#worker = null;
    const err = new GltrainError('DeletedError', 'TrainingWorker: terminated');
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}
