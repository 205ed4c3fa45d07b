// The worker side of TrainingWorker (gltrain.js): a module worker that owns a
// gltrain Context on an OffscreenCanvas, datasets by name and one model, and
// answers {id, op, ...} requests with {id, result} or {id, error: {kind, message}};
// fit posts {id, progress} messages while it trains. Start it through
// TrainingWorker.create(), which speaks this protocol.
import createGltrain, { GltrainError } from './gltrain-core.js';

let gl = null;
let ctx = null;
let model = null;
const datasets = new Map();
let abort = null;

const argError = (m) => new GltrainError('ArgumentError', m);

function dataset(name, where) {
  const d = datasets.get(name);
  if (!d) throw argError(`${where}: no dataset named '${name}' (load it first)`);
  return d;
}
function needModel(where) {
  if (!model) throw argError(`${where}: no model (build one first)`);
  return model;
}

async function loadSource(source) {
  if (!source || typeof source !== 'object') throw argError('load: source must be {x, y}, {images, labels} or {dataset}');
  if (source.dataset !== undefined) {  // rows of a dataset loaded before: no second fetch
    const from = dataset(source.dataset, 'load');
    return from.slice(source.start ?? 0, source.count ?? from.count - (source.start ?? 0));
  }
  if (Array.isArray(source.x)) {  // several inputs (and outputs): packed as the model reads them
    if (source.features !== undefined) throw argError('load: with an array of inputs, the model says the features (no features)');
    return needModel('load (several inputs)').dataset(source.x, source.y);
  }
  if (source.x !== undefined) {
    const features = source.features;
    if (typeof features !== 'number') throw argError('load: {x, y} needs features (values per row)');
    return gl.Dataset.fromArrays(source.x, source.y, features);
  }
  if (source.text !== undefined) return loadText(source);
  if (typeof source.images !== 'string' || typeof source.labels !== 'string') {
    throw argError('load: give {x, y, features} arrays, {images, labels} IDX file URLs, {text, ...} or {dataset, start, count}');
  }
  // TrainingWorker.load made relative URLs absolute against the page.
  const full = await gl.Dataset.fetchIdx(new URL(source.images, self.location.href).href,
                                         new URL(source.labels, self.location.href).href);
  if (source.start === undefined && source.count === undefined) return full;
  try {
    return full.slice(source.start ?? 0, source.count);
  } finally {
    full.delete();
  }
}

// {text, context?, heldOut?, seed?, windows?, validation?}: a text (a URL or its bytes) as byte
// windows (Dataset.fromText): its training windows, or with validation: true its held-out tail.
// A URL's bytes are fetched once and kept, so the two parts cost one download.
const texts = new Map();
async function loadText({ text, validation = false, ...options }) {
  let bytes = text;
  if (typeof text === 'string') {
    if (!texts.has(text)) {
      const r = await fetch(new URL(text, self.location.href).href);
      if (!r.ok) throw new GltrainError('IoError', `load: fetching ${text}: HTTP ${r.status}`);
      texts.set(text, new Uint8Array(await r.arrayBuffer()));
    }
    bytes = texts.get(text);
  }
  if (typeof validation !== 'boolean') throw argError('load: {text} validation must be true or false');
  const parts = gl.Dataset.fromText(bytes, options);
  const [keep, drop] = validation ? [parts.validation, parts.train] : [parts.train, parts.validation];
  drop?.delete();
  if (!keep) throw argError('load: {text, validation: true} needs heldOut > 0');
  return keep;
}

const ops = {
  async init({ context, wasmUrl }) {
    gl = await createGltrain(wasmUrl !== undefined ? { wasmUrl } : {});
    ctx = new gl.Context(context);
    return { capabilities: ctx.capabilities, layerTypes: gl.layerTypes, version: gl.version };
  },
  async load({ name, source }) {
    const d = await loadSource(source);
    datasets.get(name)?.delete();
    datasets.set(name, d);
    return { count: d.count, features: d.features, imageRows: d.imageRows, imageCols: d.imageCols };
  },
  build({ model: spec, compile }) {
    if (!spec || typeof spec !== 'object' || !Array.isArray(spec.layers) || !('input' in spec || 'inputs' in spec)) {
      throw argError('build: the model is {input, layers: [...]} (input: a flat size or [height, width, channels]) ' +
                     'or {inputs, layers, outputs}');
    }
    const { input, inputs, layers, outputs, ...rest } = spec;
    const extra = Object.keys(rest);
    if (extra.length) throw argError(`build: unknown key '${extra[0]}' in the model (valid: input, inputs, layers, outputs)`);
    // A functional model's layers name their "inputs" or share a layer (as model.layerSpecs() and save() write them).
    const functional = inputs !== undefined || outputs !== undefined ||
                       layers.some((l) => l && typeof l === 'object' && ('inputs' in l || 'shares' in l));
    const m = functional ? gl.Model.fromConfig(ctx, spec) : new gl.Sequential(ctx, input);
    try {
      if (!functional) for (const l of layers) m.add(l);
      m.compile(compile);
    } catch (e) {
      m.delete();
      throw e;
    }
    model?.delete();
    model = m;
    return model.summary();
  },
  buildFromTfjs({ modelJson, weightData, compile }) {
    const m = gl.Sequential.fromTfjs(ctx, modelJson, weightData, compile);
    model?.delete();
    model = m;
    return model.summary();
  },
  async fit({ id, train, options }) {
    const m = needModel('fit');
    const { evaluateEvery, validationData, ...rest } = options ?? {};
    const data = dataset(train, 'fit');
    if (validationData !== undefined) rest.validationData = dataset(validationData, 'fit (validationData)');
    let every = null;
    if (evaluateEvery !== undefined) {
      if (!evaluateEvery || typeof evaluateEvery.steps !== 'number' || !(evaluateEvery.steps >= 1)) {
        throw argError('fit: evaluateEvery is {dataset, steps >= 1}');
      }
      every = { data: dataset(evaluateEvery.dataset, 'fit (evaluateEvery)'), steps: evaluateEvery.steps };
    }
    abort = new AbortController();
    // Progress goes out in one message per training slice, not one per step: the page's
    // thread then handles tens of messages a second, not hundreds.
    let pending = [];
    const flush = () => {
      if (pending.length) self.postMessage({ id, progress: pending });
      pending = [];
    };
    const progress = (p) => {
      if (!pending.length) queueMicrotask(flush);
      pending.push(p);
    };
    const evaluate = (step) => {
      const t0 = performance.now();
      const e = m.evaluate(every.data);
      progress({ type: 'evaluate', step, loss: e.loss, accuracy: e.accuracy, ms: performance.now() - t0 });
    };
    try {
      const r = await m.fit(data, {
        ...rest,
        signal: abort.signal,
        onStep: (s) => {
          progress(s);
          if (every && s.step % every.steps === 0) evaluate(s.step);
        },
        onEpoch: (e) => progress(e),
        onContextLost: (e) => progress({ type: 'contextLost', ...e }),
        // The restored context may be another device: its capabilities go with the event.
        onContextRestored: (e) => progress({ type: 'contextRestored', ...e, capabilities: ctx.capabilities }),
      });
      return r;
    } finally {
      flush();
      abort = null;
    }
  },
  stop() {
    abort?.abort();
  },
  // dataset: a name, or {dataset, start?, count?} (some of its rows).
  evaluate({ dataset: name, options }) {
    const m = needModel('evaluate');
    if (typeof name === 'string') return m.evaluate(dataset(name, 'evaluate'), options);
    return withRows(name, 'evaluate', (part) => m.evaluate(part, options));
  },
  profileStep({ dataset: name, options }) {
    return needModel('profileStep').profileStep(dataset(name, 'profileStep'), options);
  },
  predict({ data, options }) {
    return predictWith(needModel('predict'), data, options, false);
  },
  predictClasses({ data, options }) {
    return predictWith(needModel('predictClasses'), data, options, true);
  },
  generate({ prompt, options }) {
    return needModel('generate').generate(prompt, options);
  },
  saveCheckpoint() {
    return needModel('saveCheckpoint').saveCheckpoint();
  },
  snapshotCheckpoint() {
    return needModel('snapshotCheckpoint').snapshotCheckpoint();
  },
  exportTfjs() {
    return needModel('exportTfjs').exportTfjs();
  },
  loadCheckpoint({ bytes, options }) {
    needModel('loadCheckpoint').loadCheckpoint(bytes, options);
    return true;
  },
  x({ dataset: name, start, count }) {
    return dataset(name, 'x').x(start, count);
  },
  targets({ dataset: name }) {
    return dataset(name, 'targets').targets();
  },
  poolStats() {
    return ctx.poolStats();
  },
  loseContext() {
    ctx.loseContext();
    return true;
  },
  restoreContext() {
    ctx.restoreContext();
    return true;
  },
  summary() {
    return needModel('summary').summary();
  },
};

// fn(rows [start, start + count) of a loaded dataset), for {dataset, start?, count?}.
function withRows(spec, where, fn) {
  if (!spec || typeof spec.dataset !== 'string') throw argError(`${where}: give a dataset name or {dataset, start?, count?}`);
  const d = dataset(spec.dataset, where);
  const part = spec.start === undefined && spec.count === undefined ? d : d.slice(spec.start ?? 0, spec.count ?? d.count - (spec.start ?? 0));
  try {
    return fn(part);
  } finally {
    if (part !== d) part.delete();
  }
}
// data: a Float32Array, an array of them (several inputs), or {dataset, start?, count?}.
function predictWith(m, data, options, classes) {
  if (data instanceof Float32Array || Array.isArray(data)) return classes ? m.predictClasses(data, options) : m.predict(data, options);
  if (!data || typeof data.dataset !== 'string') throw argError('predict: data is a Float32Array or {dataset, start?, count?}');
  return withRows(data, 'predict', (part) => (classes ? m.predictClasses(part, options) : m.predict(part, options)));
}

// Requests run one at a time, in order, except those that must reach a running
// fit: stop, losing / restoring the context (which the fit then notices), the
// model's snapshot (host bytes, read between the fit's slices: what to keep
// while the fit waits for a lost context), and, during a fit, saveCheckpoint
// (the weights of the last completed step, read between slices) and generate
// (a sample from them, as a text page shows one every few hundred steps).
let queue = Promise.resolve();
const immediate = new Set(['loseContext', 'restoreContext', 'snapshotCheckpoint']);
self.onmessage = (e) => {
  const msg = e.data;
  if (msg.op === 'stop') { ops.stop(); return; }
  const run = async () => {
    try {
      if (!ops[msg.op]) throw argError(`gltrain worker: unknown request '${msg.op}'`);
      if (msg.op !== 'init' && !gl) throw argError(`${msg.op}: the worker is not initialised`);
      const result = await ops[msg.op](msg);
      const transfer = result instanceof ArrayBuffer ? [result] : ArrayBuffer.isView(result) ? [result.buffer] : [];
      self.postMessage({ id: msg.id, result }, transfer);
    } catch (err) {
      self.postMessage({ id: msg.id, error: { kind: err.kind || err.name || 'Error', message: String(err.message || err) } });
    }
  };
  if (immediate.has(msg.op) || ((msg.op === 'saveCheckpoint' || msg.op === 'generate') && abort)) run();
  else queue = queue.then(run);
};
