// gltrain for JavaScript: train neural networks on the GPU through WebGL2.
//
//   import createGltrain from 'gltrain';                // or './gltrain.js' (see README: import map, bundler)
//   const gl = await createGltrain();
//   const ctx = new gl.Context();                        // WebGL2 on an OffscreenCanvas
//   const model = new gl.Sequential(ctx, 784)
//     .add({ type: 'dense', units: 128, activation: 'relu' })
//     .add({ type: 'dense', units: 10 })
//     .compile({ optimizer: { type: 'adam', lr: 1e-3 } });
//   await model.fit(x, labels, { epochs: 1, batchSize: 128, onEpoch: (e) => console.log(e) });
//   const probabilities = model.predict(xTest);
//   model.delete(); ctx.delete();                       // or gl.scope(() => { ... })
//
// This file is the API without TrainingWorker (gltrain.js adds it): the worker imports
// it, so a bundler that follows `new Worker(new URL(...))` does not meet the worker again.
// The classes wrap the embind classes of src/bindings/ (web/dist/gltrain_wasm.js).
// Every C++ error arrives as a GltrainError (an Error whose name and kind are the C++
// error's kind and whose message is the C++ message). Types: gltrain.d.ts.

// Both builds' glue, imported statically (a few hundred kB of JavaScript; only one is
// instantiated): a dynamic import() would make bundlers split the worker's bundle, which
// Vite's default worker format (iife) refuses. The threaded glue evaluates nothing at import.
import createGltrainWasm from './dist/gltrain_wasm.js';
import createGltrainWasmThreaded from './dist/gltrain_wasm_mt.js';

export class GltrainError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = kind;
    this.kind = kind;
  }
}

const argError = (message) => new GltrainError('ArgumentError', message);

// A custom loss, (yTrue, yPred) => an expression of their methods (Keras's and
// TF.js's names), e.g. yPred.sub(yTrue).abs().mean(-1): compile() records it
// once as JSON, a model file's {type: 'expression'} loss, which the library
// turns into graph ops (include/gltrain/loss_expression.hpp) — both engines
// run it, autodiff gives its gradient, and no JavaScript runs per step.
export class LossTensor {
  constructor(expression) { this.expression = expression; }
  #unary(op, extra = {}) { return new LossTensor({ op, x: this.expression, ...extra }); }
  #binary(op, other) { return new LossTensor({ op, a: this.expression, b: lossOperand(op, other) }); }
  add(other) { return this.#binary('add', other); }
  sub(other) { return this.#binary('sub', other); }
  mul(other) { return this.#binary('mul', other); }
  div(other) { return this.#binary('div', other); }
  maximum(other) { return this.#binary('maximum', other); }
  abs() { return this.#unary('abs'); }
  square() { return this.#unary('square'); }
  sqrt() { return this.#unary('sqrt'); }
  log() { return this.#unary('log'); }
  exp() { return this.#unary('exp'); }
  neg() { return this.#unary('neg'); }
  relu() { return this.#unary('relu'); }
  clip(min, max) { return this.#unary('clip', { min, max }); }
  clipByValue(min, max) { return this.clip(min, max); }
  mean(axis = -1) { return this.#unary('mean', { axis }); }
  sum(axis = -1) { return this.#unary('sum', { axis }); }
  max(axis = -1) { return this.#unary('max', { axis }); }
}
function lossOperand(op, v) {
  if (v instanceof LossTensor) return v.expression;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw argError(`a loss's ${op}: expected a tensor or a finite number, got ${v}`);
}
// compile()'s options with loss and metric functions recorded as expressions
// (a metric's is its rows' mean, reported by the function's name).
function recordedLoss(options) {
  const record = (what) => (fn) => {
    if (typeof fn !== 'function') return fn;
    const name = fn.name || 'custom';
    const out = fn(new LossTensor('yTrue'), new LossTensor('yPred'));
    if (!(out instanceof LossTensor))
      throw argError(`compile: ${what} ${name} must return an expression of yTrue and yPred (their methods: sub, ` +
                     `abs, mean, ...), got ${typeof out}`);
    return { type: 'expression', name, expression: out.expression };
  };
  const { loss, metrics } = options ?? {};
  const out = { ...options };
  if (typeof loss === 'function' || Array.isArray(loss))
    out.loss = Array.isArray(loss) ? loss.map(record('loss')) : record('loss')(loss);
  if (Array.isArray(metrics)) out.metrics = metrics.map(record('metric'));
  return out;
}
const INT_MAX = 2 ** 31 - 1;  // the largest count the module's int arguments take
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Lets the browser run other tasks (input, rendering, messages) between training slices.
// (A MessageChannel task: no 4 ms timer clamp, and unlike scheduler.yield() it does not
// jump ahead of the page's other tasks.)
export function yieldToEventLoop() {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => { ch.port1.close(); resolve(); };
    ch.port2.postMessage(0);
  });
}

const INTEGER_ARRAYS = [Int32Array, Uint8Array, Uint8ClampedArray, Int8Array, Uint16Array, Int16Array, Uint32Array];
const isIntegerArray = (a) => INTEGER_ARRAYS.some((T) => a instanceof T);
const isTypedArray = (a) => ArrayBuffer.isView(a) && !(a instanceof DataView);

// The module's WebAssembly, next to its glue: written as `new URL('…', import.meta.url)`
// so that bundlers (Vite, webpack, Rollup, esbuild) copy the file and rewrite the URL.
const WASM_URL = new URL('./dist/gltrain_wasm.wasm', import.meta.url);
// The threaded build (Emscripten pthreads: the CPU backend on Web Workers) needs
// SharedArrayBuffer, which a browser gives only to a cross-origin isolated page
// (served with Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp). Its Web Workers run
// dist/gltrain_wasm_mt.worker.js, which Emscripten's glue finds next to itself.
const WASM_MT_URL = new URL('./dist/gltrain_wasm_mt.wasm', import.meta.url);
const ISOLATION_HEADERS = 'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';
const IN_NODE = typeof process === 'object' && typeof process.versions?.node === 'string' &&
                typeof window === 'undefined' && typeof importScripts === 'undefined';

// What a page should hear when the URL above answers with something else than the
// module's WebAssembly (a dev server's index.html, a 404 page).
function wasmHint(url) {
  if (String(import.meta.url).includes('/.vite/deps/')) {
    return ' (Vite pre-bundled gltrain into node_modules/.vite/deps, away from its dist/ folder: ' +
           "add optimizeDeps: { exclude: ['gltrain'] } to vite.config.js)";
  }
  return ` (serve gltrain's dist/ folder next to gltrain-core.js, or pass createGltrain({ wasmUrl }) or { wasmBinary })`;
}
async function fetchWasm(url) {
  let r;
  try {
    r = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new GltrainError('IoError', `createGltrain: fetching ${url} failed: ${e.message}${wasmHint(url)}`);
  }
  if (!r.ok) throw new GltrainError('IoError', `createGltrain: fetching ${url}: HTTP ${r.status}${wasmHint(url)}`);
  const bytes = await r.arrayBuffer();
  const head = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
  if (!(head.length === 4 && head[0] === 0 && head[1] === 0x61 && head[2] === 0x73 && head[3] === 0x6d)) {
    const start = new TextDecoder().decode(new Uint8Array(bytes, 0, Math.min(40, bytes.byteLength))).replace(/\s+/g, ' ');
    throw new GltrainError('IoError', `createGltrain: ${url} is not WebAssembly (${r.headers.get('content-type') || 'no type'}, ` +
                                      `starts with '${start}')${wasmHint(url)}`);
  }
  return bytes;
}
// Node >= 18: the file next to this module, read from the file system (fetch() takes no
// file: URLs). The module name is not a literal, so that bundlers leave it alone.
async function readWasmFile(url) {
  const fsName = 'node:fs/promises';
  try {
    const fs = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName);
    const b = await fs.readFile(url);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  } catch (e) {
    throw new GltrainError('IoError', `createGltrain: reading ${url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url}: ` +
                                      `${e.message} (pass createGltrain({ wasmBinary }) with the bytes of gltrain's dist/gltrain_wasm.wasm)`);
  }
}

// ---- model.save / Sequential.load helpers
function splitStoreUrl(where, url) {
  const m = /^(downloads|indexeddb):\/\/(.+)$/.exec(url);
  if (m) {
    if (/[\/\\]/.test(m[2])) throw argError(`${where}: '${url}': the name may not hold / or \\`);
    return [m[1], m[2]];
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^(https?|file|blob):/i.test(url)) {
    throw argError(`${where}: '${url}': expected downloads://name, indexeddb://name or an http(s) URL`);
  }
  return ['http', url];
}
async function fetchBytes(url, where) {
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw new GltrainError('IoError', `${where}: fetching ${url} failed: ${e.message}`);
  }
  if (!r.ok) throw new GltrainError('IoError', `${where}: fetching ${url}: HTTP ${r.status}`);
  return r.arrayBuffer();
}
function download(name, blob) {
  if (typeof document === 'undefined') throw argError('save: downloads:// needs a page (document)');
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
// One request on the 'models' store of this origin's 'gltrain' database.
function idb(mode, request) {
  if (typeof indexedDB === 'undefined') return Promise.reject(argError('indexeddb://: this environment has no IndexedDB'));
  return new Promise((resolve, reject) => {
    const open = indexedDB.open('gltrain', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('models');
    open.onerror = () => reject(new GltrainError('IoError', `IndexedDB: ${open.error?.message}`));
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction('models', mode);
      const req = request(tx.objectStore('models'));
      tx.oncomplete = () => { db.close(); resolve(req.result); };
      tx.onerror = tx.onabort = () => { db.close(); reject(new GltrainError('IoError', `IndexedDB: ${tx.error?.message}`)); };
    };
  });
}

// Which build to load: the threaded one where the page can run it (and the caller
// named no single-threaded module file), else the single-threaded one; `why` is
// what the capability report says of the CPU backend's threads in the latter.
function chooseBuild(threads, options) {
  const named = ['wasmUrl', 'wasmBinary', 'locateFile'].filter((k) => options[k] !== undefined);
  const isolated = !IN_NODE && globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
  const cannot = IN_NODE ? 'Node loads the single-threaded build'
               : isolated ? ''
               : `the page is not cross-origin isolated (serve it with ${ISOLATION_HEADERS})`;
  if (threads === true) {
    if (cannot) throw new GltrainError('UnsupportedError', `createGltrain: threads: true, but ${cannot}`);
    if (named.length) throw argError(`createGltrain: threads: true loads gltrain's own threaded build: drop ${named.join(', ')}`);
    return { threaded: true, why: '' };
  }
  if (threads === false) return { threaded: false, why: 'the single-threaded build (createGltrain({ threads: false }))' };
  if (cannot) return { threaded: false, why: `the single-threaded build: ${cannot}` };
  if (named.length) return { threaded: false, why: `the single-threaded build (createGltrain was given ${named.join(', ')})` };
  return { threaded: true, why: '' };
}

// options: {wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | Uint8Array, locateFile?, threads?: boolean}
export async function createGltrain(options = {}) {
  if (options === null || typeof options !== 'object') throw argError('createGltrain: options must be an object');
  const known = ['wasmUrl', 'wasmBinary', 'locateFile', 'threads'];
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) throw argError(`createGltrain: unknown option '${k}' (valid: ${known.join(', ')})`);
  }
  const { wasmUrl, threads, ...rest } = options;
  if (wasmUrl !== undefined && !(typeof wasmUrl === 'string' || wasmUrl instanceof URL)) {
    throw argError('createGltrain: wasmUrl must be a string or a URL');
  }
  if (threads !== undefined && typeof threads !== 'boolean') {
    throw argError('createGltrain: threads must be true, false or left out (threaded where the page is cross-origin isolated)');
  }
  const build = chooseBuild(threads, options);
  const opts = { ...rest };
  if (opts.wasmBinary === undefined && opts.locateFile === undefined) {
    const base = typeof document !== 'undefined' ? document.baseURI : (globalThis.location?.href ?? WASM_URL);
    const url = wasmUrl !== undefined ? new URL(wasmUrl, base) : build.threaded ? WASM_MT_URL : WASM_URL;
    opts.wasmBinary = IN_NODE && url.protocol === 'file:' ? await readWasmFile(url) : await fetchWasm(url);
  }
  if (IN_NODE && opts.wasmBinary === undefined) {
    throw argError('createGltrain: in Node, pass { wasmBinary } (the bytes of dist/gltrain_wasm.wasm) or leave the options empty');
  }
  const M = await (build.threaded ? createGltrainWasmThreaded : createGltrainWasm)(opts);
  return makeApi(M, build);
}
export default createGltrain;

function makeApi(M, build) {
  // Runs a raw binding; a C++ error left by it becomes a thrown GltrainError.
  function call(fn) {
    const result = fn();
    const e = M.takeError();
    if (e) {
      if (result && typeof result.delete === 'function') result.delete();
      throw new GltrainError(e.kind, e.message);
    }
    return result;
  }

  // ---- scopes: objects made while a scope's function runs are deleted when it returns.
  const scopes = [];
  function track(obj) {
    if (scopes.length) scopes[scopes.length - 1].add(obj);
  }
  function keep(obj) {
    for (const s of scopes) s.delete(obj);
    return obj;
  }
  function collectReturned(value, out) {
    if (value instanceof Handle) out.add(value);
    else if (Array.isArray(value)) value.forEach((v) => collectReturned(v, out));
    else if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      Object.values(value).forEach((v) => collectReturned(v, out));
    }
    return out;
  }
  function scope(fn) {
    if (typeof fn !== 'function') throw argError('scope: expected a function');
    const owned = new Set();
    const s = { track: (obj) => { owned.add(obj); return obj; }, keep };
    const cleanup = (result) => {
      const returned = collectReturned(result, new Set());
      // Newest first: models before their contexts.
      for (const obj of [...owned].reverse()) if (!returned.has(obj)) obj.delete();
    };
    scopes.push(owned);
    let result;
    try {
      result = fn(s);
    } catch (e) {
      scopes.splice(scopes.indexOf(owned), 1);
      cleanup(undefined);
      throw e;
    }
    scopes.splice(scopes.indexOf(owned), 1);
    if (result && typeof result.then === 'function') {
      return result.then((v) => { cleanup(v); return v; }, (e) => { cleanup(undefined); throw e; });
    }
    cleanup(result);
    return result;
  }

  class Handle {
    #raw;
    constructor(raw) {
      this.#raw = raw;
      track(this);
    }
    get _raw() {
      if (!this.#raw) throw new GltrainError('DeletedError', `${this.constructor.name}: the object was deleted`);
      return this.#raw;
    }
    isDeleted() {
      return !this.#raw;
    }
    delete() {
      if (!this.#raw) return;
      this._beforeDelete();
      this.#raw.delete();
      this.#raw = null;
      for (const s of scopes) s.delete(this);
    }
    _beforeDelete() {}
  }

  class Context extends Handle {
    #dependents = new Set();
    constructor(options = {}) {
      const sel = options?.canvas;
      if (typeof sel === 'string' && sel && typeof document !== 'undefined') {
        try {
          document.querySelector(sel);
        } catch {
          throw argError(`Context: canvas '${sel}' is not a valid CSS selector`);
        }
      }
      super(call(() => M.ContextImpl.create(options)));
    }
    // Read afresh each time: a restored context may be another device (restoresChecked).
    get capabilities() {
      const caps = forJs(call(() => this._raw.capabilities()));
      if (!build.threaded) {  // the C++ side knows only that its build has no threads: say why it was loaded
        caps.cpuThreadsReason = build.why;
        caps.report = caps.report.replace(/^(CPU threads: +1: ).*$/m, `$1${build.why}`);
      }
      return Object.freeze(caps);
    }
    // Whether the WebGL context is lost now (calls that need the GPU throw ContextLostError
    // until the browser restores it; fit() waits and resumes from the model's snapshot).
    get lost() { return this._raw.lost(); }
    // Loses / restores the WebGL context through WEBGL_lose_context, as a GPU reset
    // would: to test an application's recovery. The restore arrives asynchronously
    // (asked for in the tick of the loss, after the browser's webglcontextlost event).
    loseContext() { call(() => this._raw.loseContext()); }
    restoreContext() { call(() => this._raw.restoreContext()); }
    poolStats() {
      return call(() => this._raw.poolStats());
    }
    _adopt(obj) {
      this.#dependents.add(obj);
    }
    _forget(obj) {
      this.#dependents.delete(obj);
    }
    // Deleting a context deletes every model and tensor made on it first.
    _beforeDelete() {
      for (const d of [...this.#dependents]) d.delete();
    }
  }

  // The C++ library's words for choosing a backend, in this API's.
  function forJs(caps) {
    const say = (t) => (typeof t === 'string'
      ? t.replaceAll('ContextOptions::backend = gpu', "new Context({backend: 'webgl'})")
         .replaceAll('ContextOptions::backend = cpu', "new Context({backend: 'cpu'})")
         .replaceAll('ContextOptions::cpuThreads', 'new Context({cpuThreads})')
      : t);
    return { ...caps, backendReason: say(caps.backendReason), cpuThreadsReason: say(caps.cpuThreadsReason),
             report: say(caps.report) };
  }

  const contextOf = (ctx, where) => {
    if (!(ctx instanceof Context)) throw argError(`${where}: the first argument must be a Context`);
    ctx._raw;  // throws if deleted
    return ctx;
  };

  class Tensor extends Handle {
    #ctx;
    constructor(ctx, rows, cols, data) {
      contextOf(ctx, 'Tensor');
      super(call(() => M.TensorImpl.create(ctx._raw, rows, cols, data)));
      this.#ctx = ctx;
      ctx._adopt(this);
    }
    get rows() { return this._raw.rows(); }
    get cols() { return this._raw.cols(); }
    upload(data) { call(() => this._raw.upload(data)); return this; }
    download() { return call(() => this._raw.download()); }
    _beforeDelete() { this.#ctx._forget(this); }
  }

  class Dataset extends Handle {
    // A fit keeps its datasets pinned: after a lost WebGL context the model uploads them
    // again, so delete() during a fit takes effect when the fit ends.
    #pins = 0;
    #deleteWhenUnpinned = false;
    _pin() { this.#pins++; }
    _unpin() {
      if (--this.#pins === 0 && this.#deleteWhenUnpinned) super.delete();
    }
    delete() {
      if (this.#pins > 0) this.#deleteWhenUnpinned = true;
      else super.delete();
    }
    // x: Float32Array (rows * features); y: integer typed array of labels or Float32Array of values.
    static fromArrays(x, y, features) {
      return new Dataset(call(() => M.DatasetImpl.fromArrays(x, y, features, 'Dataset.fromArrays')));
    }
    // IDX files (as ArrayBuffer or Uint8Array): images N x rows x cols bytes, labels N integers.
    static fromIdx(images, labels, options = {}) {
      if (options === null || typeof options !== 'object') throw argError('Dataset.fromIdx: options must be an object');
      for (const k of Object.keys(options)) {
        if (k !== 'numClasses') throw argError(`Dataset.fromIdx: unknown option '${k}' (valid: numClasses)`);
      }
      return new Dataset(call(() => M.DatasetImpl.fromIdx(images, labels, options.numClasses)));
    }
    // A UTF-8 text's bytes (ArrayBuffer or Uint8Array) as byte tokens for a model of input
    // [context] trained with 'sequence_softmax_cross_entropy': {train, validation}, each a
    // Dataset of windows of `context` bytes whose targets are the next bytes. train: one
    // epoch's windows drawn from `seed`; validation: the held-out tail (heldOut, default
    // 0.1: from byte floor(0.9 N)) cut into windows, null when heldOut is 0.
    static fromText(bytes, options = {}) {
      if (options === null || typeof options !== 'object') throw argError('Dataset.fromText: options must be an object');
      for (const k of Object.keys(options)) {
        if (!['context', 'heldOut', 'seed', 'windows'].includes(k)) {
          throw argError(`Dataset.fromText: unknown option '${k}' (valid: context, heldOut, seed, windows)`);
        }
      }
      const { context = 64, heldOut = 0.1, seed = 1, windows = 0 } = options;
      if (!Number.isInteger(context) || context < 1) {
        throw argError(`Dataset.fromText: context must be a positive integer, got ${describe(context)}`);
      }
      if (!Number.isInteger(windows) || windows < 0 || windows > 0x7fffffff) {
        throw argError(`Dataset.fromText: windows must be an integer >= 0 (0: one epoch's), got ${describe(windows)}`);
      }
      if (typeof heldOut !== 'number') throw argError(`Dataset.fromText: heldOut must be a number, got ${describe(heldOut)}`);
      if (typeof seed !== 'number') throw argError(`Dataset.fromText: seed must be a number, got ${describe(seed)}`);
      const part = (validation) => new Dataset(call(() => M.DatasetImpl.fromText(bytes, context, heldOut, seed, windows, validation)));
      const train = part(false);
      return { train, validation: heldOut > 0 ? part(true) : null };
    }
    // Fetches and parses two IDX files.
    static async fetchIdx(imagesUrl, labelsUrl, options = {}) {
      const get = async (url) => {
        const r = await fetch(url);
        if (!r.ok) throw new GltrainError('IoError', `fetching ${url}: HTTP ${r.status}`);
        return r.arrayBuffer();
      };
      const [images, labels] = await Promise.all([get(imagesUrl), get(labelsUrl)]);
      return Dataset.fromIdx(images, labels, options);
    }
    constructor(raw) {
      if (!raw || raw.constructor !== M.DatasetImpl) {
        throw argError('Dataset: use Dataset.fromArrays, Dataset.fromIdx or Dataset.fetchIdx');
      }
      super(raw);
    }
    get count() { return this._raw.count(); }
    get features() { return this._raw.features(); }
    get imageRows() { return this._raw.imageRows(); }
    get imageCols() { return this._raw.imageCols(); }
    get hasLabels() { return this._raw.hasLabels(); }
    x(start, count) { return call(() => this._raw.rowsCopy(start, count)); }
    view() { return this._raw.view(); }
    targets() { return call(() => this._raw.targets()); }
    slice(start, count) { return new Dataset(call(() => this._raw.slice(start, count))); }
  }

  // out = op(a)·op(b) on the GPU ({transA, transB} transpose an operand in place); returns out.
  function matmul(a, b, out, options = {}) {
    for (const [name, t] of [['a', a], ['b', b], ['out', out]]) {
      if (!(t instanceof Tensor)) throw argError(`matmul: ${name} must be a Tensor, got ${describe(t)}`);
    }
    plainOptions('matmul', options);
    call(() => M.TensorImpl.matmul(a._raw, b._raw, out._raw, options));
    return out;
  }

  // (x, y, options) or (dataset, options) -> {data, options, temp}
  function dataArgs(where, model, a, b, c, needTargets) {
    if (isInputList(a)) {  // several inputs or outputs: their rows side by side (model.io)
      if (needTargets && !Array.isArray(b)) throw argError(`${where}: with an array of inputs, y must be an array of targets (one per output)`);
      const x = packInputs(where, model, a);
      const y = needTargets ? packTargets(where, model, b, x.length / model.inputSize) : undefined;
      const temp = new Dataset(call(() => M.DatasetImpl.fromArrays(x, y, model.inputSize, where)));
      keep(temp);
      return { data: temp, options: c ?? {}, temp };
    }
    if (a instanceof Dataset) {
      if (c !== undefined) throw argError(`${where}: with a Dataset, the second argument is the options`);
      a._raw;
      return { data: a, options: b ?? {}, temp: null };
    }
    if (!(a instanceof Float32Array)) {
      throw argError(`${where}: x must be a Float32Array or a Dataset, got ${describe(a)}`);
    }
    if (needTargets && (b === undefined || b === null)) throw argError(`${where}: y (the targets) is required`);
    const temp = new Dataset(call(() => M.DatasetImpl.fromArrays(a, b, model.inputSize, where)));
    keep(temp);
    return { data: temp, options: c ?? {}, temp };
  }
  // An array of each input's rows (not an array of numbers, which is a mistaken x).
  const isInputList = (a) => Array.isArray(a) && a.length > 0 && a.every((v) => ArrayBuffer.isView(v));
  // Each input's rows (Float32Array of rows x its size) side by side, as the model reads them.
  function packInputs(where, model, xs) {
    const io = model.io;
    if (xs.length !== io.inputs.length) throw argError(`${where}: ${xs.length} inputs given, the model has ${io.inputs.length}`);
    let rows = -1;
    xs.forEach((x, k) => {
      const { name, size } = io.inputs[k];
      if (!(x instanceof Float32Array)) throw argError(`${where}: inputs[${k}] (${name}) must be a Float32Array, got ${describe(x)}`);
      if (x.length % size !== 0 || x.length === 0) {
        throw argError(`${where}: inputs[${k}] (${name}) has ${x.length} values, not whole rows of ${size}`);
      }
      const n = x.length / size;
      if (rows >= 0 && n !== rows) throw argError(`${where}: inputs[${k}] (${name}) has ${n} rows, inputs[0] has ${rows}`);
      rows = n;
    });
    const out = new Float32Array(rows * model.inputSize);
    let at = 0;
    xs.forEach((x, k) => {
      const size = io.inputs[k].size;
      for (let r = 0; r < rows; r++) out.set(x.subarray(r * size, (r + 1) * size), r * model.inputSize + at);
      at += size;
    });
    return out;
  }
  // Each output's targets side by side (a class label as one column: labels as an Int32Array,
  // values as a Float32Array of rows x its size), checked further by the model.
  function packTargets(where, model, ys, rows) {
    const outs = model.io.outputs;
    if (ys.length !== outs.length) throw argError(`${where}: ${ys.length} targets given, the model has ${outs.length} outputs`);
    const cols = outs.reduce((n, o) => n + o.targetColumns, 0);
    const out = new Float32Array(rows * cols);
    let at = 0;
    ys.forEach((y, k) => {
      const { name, targetColumns } = outs[k];
      if (!(y instanceof Float32Array || y instanceof Int32Array)) {
        throw argError(`${where}: targets[${k}] (${name}) must be an Int32Array of labels or a Float32Array, got ${describe(y)}`);
      }
      if (y.length !== rows * targetColumns) {
        throw argError(`${where}: targets[${k}] (${name}) has ${y.length} values, expected ${rows} rows x ${targetColumns}`);
      }
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < targetColumns; c++) out[r * cols + at + c] = y[r * targetColumns + c];
      }
      at += targetColumns;
    });
    return out;
  }
  function describe(v) {
    if (v === null) return 'null';
    if (Array.isArray(v)) return 'an array';
    if (typeof v === 'object') return 'a ' + (v.constructor?.name || 'object');
    return 'a ' + typeof v;
  }
  function plainOptions(where, o) {
    if (o === null || typeof o !== 'object' || Array.isArray(o) || isTypedArray(o)) {
      throw argError(`${where}: options must be an object, got ${describe(o)}`);
    }
    return o;
  }

  // A model made by the module itself (an import), for Sequential's constructor to wrap.
  class Imported { constructor(raw, input) { this.raw = raw; this.input = input; } }
  // A TF.js model's input as a model file's: [h, w, c], or the number of features
  // (`name`: the InputLayer of that name; none: the first layer's).
  function tfjsInput(text, name) {
    try {
      const j = JSON.parse(text);
      const layers = (j.modelTopology?.model_config ?? j.modelTopology)?.config?.layers ?? [];
      const layer = name === undefined ? layers[0] : layers.find((l) => l?.config?.name === name);
      const shape = layer?.config?.batch_input_shape?.slice(1);
      if (!shape || shape.some((v) => !Number.isInteger(v))) return undefined;
      return shape.length === 1 ? shape[0] : shape;
    } catch {
      return undefined;
    }
  }

  // ---- the functional API: values of a model being built (tfjs-layers' SymbolicTensor)
  class SymbolicTensor {
    constructor(layer, inbound, shape, call = null) {
      this.layer = layer;      // the layer's spec ({type, ...}); null for a model input
      this.inbound = inbound;  // the values it reads
      this.shape = shape;      // a model input's shape (a flat size, [steps], [steps, features] or [h, w, c])
      this.call = call;        // the LayerCall applied: applied twice, one layer with shared weights
    }
  }
  // A model input: {shape: n} (rows of n features), {shape: [steps]} (token ids),
  // {shape: [steps, features]} (sequences) or {shape: [h, w, c]} (NHWC images).
  function input(options) {
    if (!options || typeof options !== 'object' || !('shape' in options)) {
      throw argError(`input: expected {shape: n or [height, width, channels], name?}, got ${describe(options)}`);
    }
    const { shape, name } = options;
    if (name !== undefined && (typeof name !== 'string' || name === '')) {
      throw argError(`input: name must be a non-empty string, got ${describe(name)}`);
    }
    const ok = (Number.isInteger(shape) && shape > 0) ||
               (Array.isArray(shape) && shape.length >= 1 && shape.length <= 3 &&
                shape.every((v) => Number.isInteger(v) && v > 0));
    if (!ok) {
      throw argError('input: shape must be a positive integer, [steps], [steps, features] or [height, width, channels], ' +
                     `got ${describe(shape)}`);
    }
    const v = new SymbolicTensor(null, [], shape);
    v.name = name;
    return v;
  }
  // A layer to apply: gl.layers.dense({units: 10}).apply(x); a merge layer's
  // apply takes an array (gl.layers.add().apply([a, b])). Applied again (to
  // other values), it is the same layer, its weights shared (tfjs-layers'
  // semantics): the model file's {shares: name} call, named "<name>@<k>".
  class LayerCall {
    constructor(spec) { this.spec = spec; }
    apply(x) {
      const xs = Array.isArray(x) ? x : [x];
      xs.forEach((v, i) => {
        if (!(v instanceof SymbolicTensor)) {
          throw argError(`${this.spec.type}.apply: input ${i} is ${describe(v)}, not a value from gl.input() or a layer's apply()`);
        }
      });
      if (xs.length === 0) throw argError(`${this.spec.type}.apply: no inputs`);
      return new SymbolicTensor(this.spec, xs, null, this);
    }
  }
  // gl.layers.<type>(config): one factory per layer type (gl.layerTypes).
  const layers = Object.freeze(Object.fromEntries(M.layerTypes().map((type) => [type, (config = {}) => {
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      throw argError(`layers.${type}: expected a config object, got ${describe(config)}`);
    }
    if ('type' in config) throw argError(`layers.${type}: the config has no 'type' (the factory is the type)`);
    return new LayerCall({ type, ...config });
  }])));
  const values = (what, v) => {
    const list = Array.isArray(v) ? v : [v];
    if (list.length === 0) throw argError(`Model: ${what} is empty`);
    list.forEach((x, i) => {
      if (!(x instanceof SymbolicTensor)) {
        throw argError(`Model: ${what}[${i}] must be a value from gl.input() or a layer's apply(), got ${describe(x)}`);
      }
    });
    return list;
  };
  // {inputs, outputs} as a model file's head and layers: every layer between
  // them, each after what it reads, naming its "inputs" ({input} for one input
  // and output; {inputs: [{name, shape}], outputs: [names]} for several).
  function functionalConfig({ inputs, outputs }) {
    const xs = values('inputs', inputs), ys = values('outputs', outputs);
    const several = xs.length > 1 || ys.length > 1;
    const names = new Map();
    xs.forEach((x, k) => {
      if (x.layer) throw argError(`Model: inputs[${k}] must be made by gl.input(), not be a layer's output`);
      if (names.has(x)) throw argError(`Model: inputs[${k}] is given twice`);
      names.set(x, several ? (x.name ?? `input_${k}`) : 'input');
    });
    const list = [];
    const calls = new Map();  // a LayerCall placed -> {name, count}: its later applies share its weights
    const visit = (v) => {
      if (names.has(v)) return names.get(v);
      if (!v.layer) throw argError('Model: a layer reads a gl.input() that is not the model\'s inputs');
      const reads = v.inbound.map(visit);
      const first = calls.get(v.call);
      let name;
      if (first) {
        name = `${first.name}@${++first.count}`;
        list.push({ shares: first.name, inputs: reads });
      } else {
        name = v.layer.name ?? call(() => M.defaultLayerName(v.layer, list.length));
        list.push({ ...v.layer, inputs: reads });
        calls.set(v.call, { name, count: 0 });
      }
      names.set(v, name);
      return name;
    };
    const outNames = ys.map((y, k) => {
      if (!y.layer) throw argError(`Model: outputs[${k}] is an input: a model's outputs are layers' values`);
      return visit(y);
    });
    if (!several) return { head: { input: xs[0].shape }, layers: list };
    return { head: { inputs: xs.map((x) => ({ name: names.get(x), shape: x.shape })), outputs: outNames }, layers: list };
  }

  class Model extends Handle {
    #ctx;
    #fitActive = false;
    #head;              // what save() writes before the layers: {input}, or {inputs, outputs}
    #compileOptions;    // the last compile()'s options, for save()
    // new gl.Model(ctx, {inputs, outputs}): a functional model (gl.input, gl.layers).
    constructor(ctx, arg) {
      contextOf(ctx, new.target === Model ? 'Model' : 'Sequential');
      let raw, head;
      if (arg instanceof Imported) {
        raw = arg.raw;
        head = arg.input === undefined ? undefined : { input: arg.input };
      } else if (new.target === Model) {
        if (!arg || typeof arg !== 'object' || !('inputs' in arg) || !('outputs' in arg)) {
          throw argError(`Model: expected {inputs, outputs} (values from gl.input() and layers' apply()), got ${describe(arg)}`);
        }
        const { head: h, layers } = functionalConfig(arg);
        raw = call(() => M.SequentialImpl.fromConfig(ctx._raw, { ...h, layers }));
        head = h;
      } else {
        raw = call(() => M.SequentialImpl.create(ctx._raw, arg));
        head = { input: arg };
      }
      super(raw);
      this.#ctx = ctx;
      this.#head = head;
      ctx._adopt(this);
    }
    // A compiled model from TF.js's Layers format: model.json's text (or its
    // parsed object) and the bytes of its one weights shard, as exportTfjs()
    // gives them; options as compile() takes them.
    // A model from a model file's {input, layers}, not compiled yet: layers that
    // name their "inputs" make a functional model (as layerSpecs() and save() write it).
    static fromConfig(ctx, config) {
      contextOf(ctx, 'fromConfig');
      if (!config || typeof config !== 'object' || !Array.isArray(config.layers) || !('input' in config || 'inputs' in config)) {
        throw argError(`fromConfig: expected {input, layers: [...]} or {inputs, layers, outputs}, got ${describe(config)}`);
      }
      const m = new Model(ctx, new Imported(call(() => M.SequentialImpl.fromConfig(ctx._raw, config)), config.input));
      if ('inputs' in config) m.#head = { inputs: config.inputs, ...('outputs' in config ? { outputs: config.outputs } : {}) };
      else if ('outputs' in config) m.#head = { input: config.input, outputs: config.outputs };
      return m;
    }
    static fromTfjs(ctx, modelJson, weightData, options = {}) {
      contextOf(ctx, 'fromTfjs');
      const text = modelJson !== null && typeof modelJson === 'object' ? JSON.stringify(modelJson) : modelJson;
      // A TF.js Sequential imports as a gl.Sequential, a functional model as a gl.Model.
      const imported = new Imported(call(() => M.SequentialImpl.fromTfjs(ctx._raw, text, weightData, options)), tfjsInput(text));
      const m = imported.raw.isSequential() ? new Sequential(ctx, imported) : new Model(ctx, imported);
      m.#compileOptions = options;
      // Several inputs or outputs: save() names them, as fromConfig() reads them back.
      const { inputs, outputs } = m.io;
      if (inputs.length > 1) {
        m.#head = { inputs: inputs.map(({ name }) => ({ name, shape: tfjsInput(text, name) })), outputs: outputs.map((o) => o.name) };
      } else if (outputs.length > 1 && m.#head) {
        m.#head = { ...m.#head, outputs: outputs.map((o) => o.name) };
      }
      return m;
    }

    // ---- saving and loading in TF.js's convention: 'downloads://name' (two files: name.json,
    // a model file as the CLI reads it, and name.safetensors, the checkpoint), 'indexeddb://name'
    // (both in this origin's IndexedDB); load() also takes the URL of such a name.json.
    async save(url) {
      if (typeof url !== 'string') throw argError(`save: expected 'downloads://name' or 'indexeddb://name', got ${describe(url)}`);
      const [scheme, name] = splitStoreUrl('save', url);
      if (scheme === 'http') throw argError(`save: '${url}': only downloads:// and indexeddb:// are written (load() reads URLs)`);
      if (this.#head === undefined) throw argError('save: the model\'s input shape is not known (a model made by fromTfjs without batch_input_shape)');
      const checkpoint = this.saveCheckpoint();
      const file = {
        description: `gltrain model saved by model.save('${url}'); weights, optimizer state and step: ${name}.safetensors`,
        ...this.#head,
        layers: this.layerSpecs(),
        ...(this.#compileOptions ? { compile: this.#compileOptions } : {}),
      };
      const json = JSON.stringify(file, null, 2);
      if (scheme === 'downloads') {
        download(`${name}.json`, new Blob([json], { type: 'application/json' }));
        download(`${name}.safetensors`, new Blob([checkpoint], { type: 'application/octet-stream' }));
      } else {
        await idb('readwrite', (store) => store.put({ model: json, checkpoint, savedAt: new Date().toISOString() }, name));
      }
      return { url, modelBytes: json.length, checkpointBytes: checkpoint.byteLength, step: this.step };
    }
    // A compiled model with the saved weights, optimizer state and step: from 'indexeddb://name', or
    // from the URL of a model file whose checkpoint is next to it (name.json, name.safetensors).
    static async load(ctx, url) {
      contextOf(ctx, 'load');
      if (typeof url !== 'string' && !(url instanceof URL)) throw argError(`load: expected 'indexeddb://name' or a URL, got ${describe(url)}`);
      const [scheme, name] = splitStoreUrl('load', String(url));
      let file, checkpoint;
      if (scheme === 'indexeddb') {
        const rec = await idb('readonly', (store) => store.get(name));
        if (!rec) throw new GltrainError('IoError', `load: no model saved as '${url}'`);
        file = JSON.parse(rec.model);
        checkpoint = rec.checkpoint;
      } else if (scheme === 'downloads') {
        throw argError(`load: '${url}': downloads:// is write-only (serve the two files and load the .json's URL)`);
      } else {
        const base = typeof document !== 'undefined' ? document.baseURI : globalThis.location?.href;
        const jsonUrl = new URL(String(url), base);
        file = JSON.parse(new TextDecoder().decode(await fetchBytes(jsonUrl.href, 'load')));
        const ckUrl = new URL(jsonUrl.pathname.replace(/(\.json)?$/, '.safetensors').split('/').pop(), jsonUrl);
        checkpoint = await fetchBytes(ckUrl.href, 'load');
      }
      if (!file || typeof file !== 'object' || !Array.isArray(file.layers) || (file.input === undefined && file.inputs === undefined)) {
        throw new GltrainError('FormatError', `load: ${url}: not a gltrain model file ({input, layers, compile})`);
      }
      // A functional model's file names each layer's "inputs" (or shares a layer).
      const functional = file.inputs !== undefined || file.layers.some((l) => l && typeof l === 'object' && ('inputs' in l || 'shares' in l));
      const { compile: _c, fit: _f, description: _d, ...config } = file;
      const m = functional ? Model.fromConfig(ctx, config) : new Sequential(ctx, file.input);
      try {
        if (!functional) for (const l of file.layers) m.add(l);
        m.compile(file.compile ?? {});
        m.loadCheckpoint(checkpoint);
      } catch (e) {
        m.delete();
        throw e;
      }
      return m;
    }
    get context() { return this.#ctx; }
    get inputSize() { return this._raw.inputSize(); }
    get outputSize() { return this._raw.outputSize(); }
    // {inputs: [{name, size}], outputs: [{name, size, targetColumns}]}: what fit([x...], [y...]) packs (after compile).
    get io() { return this._raw.io(); }
    get step() { return this._raw.step(); }
    get compiled() { return this._raw.compiled(); }
    get fitting() { return this._raw.fitting(); }
    get history() { return this._raw.history(); }
    summary() { return this._raw.layers(); }
    layerSpecs() { return M.layerSpecs(this._raw); }
    // A Dataset of several inputs' rows and outputs' targets (arrays, one per input and output), side by side as
    // this model reads them (io; after compile): what fit([x...], [y...]) makes for one call, kept for many.
    dataset(xs, ys) {
      if (!isInputList(xs)) throw argError(`dataset: x must be an array of each input's rows, got ${describe(xs)}`);
      if (ys !== undefined && !Array.isArray(ys)) throw argError(`dataset: y must be an array of targets (one per output), got ${describe(ys)}`);
      const x = packInputs('dataset', this, xs);
      const y = ys === undefined ? undefined : packTargets('dataset', this, ys, x.length / this.inputSize);
      return new Dataset(call(() => M.DatasetImpl.fromArrays(x, y, this.inputSize, 'dataset')));
    }

    add(layer) {
      this.#idle('add');
      call(() => this._raw.add(layer));
      return this;
    }
    compile(options = {}) {
      this.#idle('compile');
      options = recordedLoss(options);
      call(() => this._raw.compile(options));
      try {
        this.#compileOptions = JSON.parse(JSON.stringify(options));
      } catch {
        this.#compileOptions = undefined;
      }
      return this;
    }

    // The non-blocking pieces fit() is made of: beginFit() uploads the data and
    // plans the step; stepOnce() runs one step; trainFor(ms) runs steps for about ms.
    beginFit(a, b, c) {
      this.#idle('beginFit');
      this.#begin('beginFit', a, b, c, ['onStep', 'onEpoch', 'onContextLost', 'onContextRestored', 'signal', 'sliceMs']);
    }
    stepOnce() { return this.#afterStep(call(() => this._raw.stepOnce())); }
    trainFor(ms, maxSteps = INT_MAX) {
      if (typeof ms !== 'number') throw argError(`trainFor: ms must be a number, got ${describe(ms)}`);
      if (!Number.isInteger(maxSteps) || maxSteps < 1 || maxSteps > INT_MAX) {
        throw argError(`trainFor: maxSteps must be a whole number from 1 to ${INT_MAX}, got ${describe(maxSteps)}`);
      }
      return this.#afterStep(call(() => this._raw.trainFor(ms, maxSteps)));
    }
    // After the WebGL context was lost and restored: rebuilds the model from its last
    // snapshot (weights, optimizer state, step; every call that needs the GPU does this
    // itself) and returns the step it resumed from. A fit then replays the steps since.
    restore() { return call(() => this._raw.restore()); }
    #afterStep(result) {
      if (!this._raw.fitting()) this.#unpin();
      return result;
    }
    takeEvents() { return this._raw.takeEvents(); }
    // Ends a fit begun with beginFit() early; the model keeps its last completed step.
    endFit() {
      this.#idle('endFit');
      this._raw.endFit();
      this.#unpin();
    }

    // Trains until the epochs are done (counted from step 0, as Keras's
    // initialEpoch: a model at step s continues from there), yielding to the
    // event loop between slices of about sliceMs. Resolves with the history.
    async fit(a, b, c) {
      this.#idle('fit');
      const options = this.#begin('fit', a, b, c, []);
      const { onStep, onEpoch, onContextLost, onContextRestored, signal } = options;
      const sliceMs = options.sliceMs ?? 16;
      this.#fitActive = true;
      let steps = 0;
      let stopped = false;
      const report = () => {
        for (const ev of this._raw.takeEvents()) {
          if (ev.type === 'step') onStep?.(ev);
          else onEpoch?.(ev);
        }
      };
      try {
        while (this._raw.fitting()) {
          if (signal?.aborted) { stopped = true; break; }
          if (this.#ctx.lost) {
            // Lost WebGL context: no GPU work until the browser restores it; then the model
            // rebuilds from its snapshot and replays the steps since (not reported again).
            const lostAtStep = this.step;
            onContextLost?.({ step: lostAtStep });
            while (this.#ctx.lost && !signal?.aborted && !this.isDeleted()) await sleep(50);
            if (this.isDeleted()) throw new GltrainError('DeletedError', 'fit: the model was deleted while training');
            if (signal?.aborted) { stopped = true; break; }
            const resumedFrom = call(() => this._raw.restore());
            onContextRestored?.({ step: resumedFrom, lostAtStep });
            continue;
          }
          try {
            steps += call(() => this._raw.trainFor(sliceMs, INT_MAX));
          } catch (e) {
            if (!(e instanceof GltrainError && e.kind === 'ContextLostError' && this.#ctx.lost)) throw e;
          }
          report();
          await yieldToEventLoop();
          if (this.isDeleted()) throw new GltrainError('DeletedError', 'fit: the model was deleted while training');
        }
      } finally {
        this.#fitActive = false;
        // Aborted or failed: drop the fit's uploaded data and plan now, not at the next fit.
        if (!this.isDeleted() && this._raw.fitting()) this._raw.endFit();
        if (!this.isDeleted()) this.#unpin();
      }
      return { history: this._raw.history(), steps, stopped };
    }

    // The datasets the fit in progress reads (see Dataset._pin).
    #pinned = [];
    #unpin() {
      for (const d of this.#pinned) d._unpin();
      this.#pinned = [];
    }
    #idle(where) {
      this._raw;
      if (this.#fitActive) throw argError(`${where}: the model is training (await fit() or abort it first)`);
    }
    #begin(where, a, b, c, rejected) {
      const { data, options, temp } = dataArgs(where, this, a, b, c, true);
      try {
        return this.#beginWith(where, data, options, rejected);
      } finally {
        temp?.delete();  // beginFit uploaded the data (or failed): the host copy can go
      }
    }
    #beginWith(where, data, options, rejected) {
      plainOptions(where, options);
      const { onStep, onEpoch, onContextLost, onContextRestored, signal, sliceMs, validationData, ...rest } = options;
      for (const k of rejected) {
        if (options[k] !== undefined) throw argError(`${where}: ${k} is an option of fit() (beginFit reports through takeEvents)`);
      }
      for (const [k, f] of [['onStep', onStep], ['onEpoch', onEpoch], ['onContextLost', onContextLost],
                            ['onContextRestored', onContextRestored]]) {
        if (f !== undefined && typeof f !== 'function') throw argError(`${where}: ${k} must be a function, got ${describe(f)}`);
      }
      if (signal !== undefined && !(signal instanceof AbortSignal)) throw argError(`${where}: signal must be an AbortSignal`);
      if (sliceMs !== undefined && !(typeof sliceMs === 'number' && sliceMs >= 0 && Number.isFinite(sliceMs))) {
        throw argError(`${where}: sliceMs must be a finite number >= 0, got ${String(sliceMs)}`);
      }
      let validation = null;
      let validationTemp = null;
      try {
        if (validationData !== undefined) {
          if (validationData instanceof Dataset) validation = validationData;
          else if (validationData && typeof validationData === 'object' && validationData.x !== undefined) {
            const extra = Object.keys(validationData).filter((k) => k !== 'x' && k !== 'y');
            if (extra.length) throw argError(`${where}: validationData has unknown key '${extra[0]}' (give {x, y} or a Dataset)`);
            validationTemp = keep(new Dataset(call(() =>
              M.DatasetImpl.fromArrays(validationData.x, validationData.y, this.inputSize, `${where} (validationData)`))));
            validation = validationTemp;
          } else {
            throw argError(`${where}: validationData must be {x, y} or a Dataset`);
          }
        }
        call(() => this._raw.beginFit(data._raw, validation ? validation._raw : null, rest));
        this.#unpin();
        this.#pinned = [data, validation].filter(Boolean);
        for (const d of this.#pinned) d._pin();
        if (!this._raw.fitting()) this.#unpin();  // nothing to train
      } finally {
        validationTemp?.delete();  // pinned: freed when the fit ends
      }
      return { onStep, onEpoch, onContextLost, onContextRestored, signal, sliceMs };
    }

    evaluate(a, b, c) { return this.#onData('evaluate', a, b, c); }
    // Where a training step's time goes: every pass of one step at this batch size on the
    // first rows of the data, timed (GPU timer queries where the context has them, else each
    // pass waited for); nothing is updated.
    profileStep(a, b, c) { return this.#onData('profileStep', a, b, c); }
    // The raw method `where` on a Dataset, or on (x, y) in a temporary one.
    #onData(where, a, b, c) {
      const { data, options, temp } = dataArgs(where, this, a, b, c, true);
      try {
        return call(() => this._raw[where](data._raw, plainOptions(where, options)));
      } finally {
        temp?.delete();
      }
    }
    // rows x outputSize values (probabilities after a final softmax layer).
    // Several inputs: an array of each input's rows; several outputs: an array of each output's predictions.
    predict(x, options = {}) {
      plainOptions('predict', options);
      if (x instanceof Dataset) return call(() => this._raw.predictDataset(x._raw, options));
      if (!isInputList(x)) return call(() => this._raw.predict(x, options));
      const all = call(() => this._raw.predict(packInputs('predict', this, x), options));
      const outs = this.io.outputs;
      if (outs.length === 1) return [all];
      const rows = all.length / this.outputSize;
      let at = 0;
      return outs.map(({ size }) => {
        const p = new Float32Array(rows * size);
        for (let r = 0; r < rows; r++) p.set(all.subarray(r * this.outputSize + at, r * this.outputSize + at + size), r * size);
        at += size;
        return p;
      });
    }
    // `prompt` (a string's UTF-8 bytes, or bytes) continued by a byte-level language model:
    // the continuation's bytes, a Uint8Array (model/generate.hpp says how).
    generate(prompt, options = {}) {
      plainOptions('generate', options);
      for (const k of Object.keys(options)) {
        if (!['length', 'temperature', 'topK', 'seed'].includes(k)) {
          throw argError(`generate: unknown option '${k}' (valid: length, temperature, topK, seed)`);
        }
      }
      const { length = 100, temperature = 1, topK = 0, seed = 1 } = options;
      for (const [name, v] of [['length', length], ['topK', topK]]) {  // (embind would wrap a larger one)
        if (!Number.isInteger(v) || Math.abs(v) > 0x7fffffff) {
          throw argError(`generate: ${name} must be a 32-bit integer, got ${describe(v)}`);
        }
      }
      if (typeof temperature !== 'number') throw argError(`generate: temperature must be a number, got ${describe(temperature)}`);
      if (typeof seed !== 'number') throw argError(`generate: seed must be a number, got ${describe(seed)}`);
      const bytes = typeof prompt === 'string' ? new TextEncoder().encode(prompt) : prompt;
      return call(() => this._raw.generate(bytes, length, temperature, topK, seed));
    }
    // The arg-max class of each row.
    predictClasses(x, options = {}) {
      const p = this.predict(x, options);
      const k = this.outputSize;
      const out = new Int32Array(p.length / k);
      for (let r = 0; r < out.length; r++) {
        let best = 0;
        for (let j = 1; j < k; j++) if (p[r * k + j] > p[r * k + best]) best = j;
        out[r] = best;
      }
      return out;
    }
    saveCheckpoint() { return call(() => this._raw.saveCheckpoint()); }
    // The last snapshot as a checkpoint; reads nothing from the GPU (see gltrain.d.ts).
    snapshotCheckpoint() { return call(() => this._raw.snapshotCheckpoint()); }
    // keepBest: the best epoch's checkpoint (null: none) and that epoch (-1: none).
    bestCheckpoint() { return call(() => this._raw.bestCheckpoint()); }
    get bestEpoch() { return this._raw.bestEpoch(); }
    get snapshotStep() { return this._raw.snapshotStep(); }
    exportTfjs() { return call(() => this._raw.exportTfjs()); }
    // options: {resetOptimizer}: weights and statistics only; the optimizer starts afresh (step 0).
    loadCheckpoint(bytes, options = {}) {
      this.#idle('loadCheckpoint');
      call(() => this._raw.loadCheckpoint(bytes, options));
      return this;
    }
    getWeight(layer, which) {
      if (typeof layer !== 'string' || typeof which !== 'string') throw argError('getWeight: layer and which must be strings');
      return call(() => this._raw.getWeight(layer, which));
    }
    setWeight(layer, which, data) {
      if (typeof layer !== 'string' || typeof which !== 'string') throw argError('setWeight: layer and which must be strings');
      call(() => this._raw.setWeight(layer, which, data));
      return this;
    }
    // Freezes (false) or unfreezes a layer; a compiled model recompiles, keeping its state.
    setTrainable(layer, trainable) {
      if (typeof layer !== 'string' || typeof trainable !== 'boolean')
        throw argError('setTrainable: layer must be a string and trainable true or false');
      this.#idle('setTrainable');
      call(() => this._raw.setTrainable(layer, trainable));
      return this;
    }
    _beforeDelete() {
      this.#unpin();
      this.#ctx._forget(this);
    }
  }

  // A stack of layers, each reading the one before: new gl.Sequential(ctx, input), then add().
  class Sequential extends Model {
    // input: as a model file's "input": the number of input features, or images as [h, w, c].
    constructor(ctx, input) { super(ctx, input); }
  }

  return Object.freeze({
    version: M.version(),
    // Whether this is the threaded build (the CPU backend on Web Workers; ContextOptions.cpuThreads).
    threaded: build.threaded,
    Context,
    Tensor,
    Dataset,
    Sequential,
    Model,
    input,
    layers,
    matmul,
    scope,
    keep,
    activations: Object.freeze(M.activationNames()),
    optimizers: Object.freeze(M.optimizerNames()),
    losses: Object.freeze(M.lossNames()),
    layerTypes: Object.freeze(M.layerTypes()),
    layerFields: Object.freeze(M.layerFields()),
    GltrainError,
  });
}
