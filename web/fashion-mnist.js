// Fashion-MNIST: trains an MLP (or, where the module has the convolution layers, a
// CNN) on the real IDX files in data/ inside a Web Worker on an OffscreenCanvas, so
// the page stays responsive; live loss and accuracy curves (uPlot), test predictions,
// per-class accuracy and the device's capability report.
// The page's thread only draws: progress from the worker marks what changed, and one
// requestAnimationFrame callback a frame writes it to the page (the charts of gltrain/vis
// redraw at most 10 times a second), so the page keeps painting while the worker trains.
// URL parameters (used by scripts/run.sh and the tests): model, train, epochs, batch, lr,
// evalEvery, backend (auto, webgl or cpu: the worker's Context), auto=1 (train at once).
import { TrainingWorker } from './gltrain.js';
import { lossChart, metricChart, confusionMatrix, modelSummary } from './gltrain-vis.js';  // uPlot through the import map

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];
const TRAIN_FILES = { images: 'data/train-images-idx3-ubyte', labels: 'data/train-labels-idx1-ubyte' };
const TEST_FILES = { images: 'data/t10k-images-idx3-ubyte', labels: 'data/t10k-labels-idx1-ubyte' };
const HELD_OUT = 2000;  // the last training images: validation during training
const SAMPLES = 24;

const TEST_CHUNK = 1000;  // test images per evaluation request: Stop is heard between chunks

const status = {
  phase: 'starting', lines: [], steps: 0, history: [], evaluations: [], testLoss: null, testAccuracy: null,
  perClass: null, samplesPerSecond: 0, error: null, inputDelaysMs: [], capabilities: null, saved: [], profile: null,
  idxFetches: 0, renders: 0, testEvaluated: 0, runs: 0,
};
window.fashion = status;

function log(line) {
  status.lines.push(line);
  console.log(line);
  const el = $('log');
  el.textContent += line + '\n';
  el.scrollTop = el.scrollHeight;
}
function setPhase(p, text) {
  status.phase = p;
  $('phase').textContent = text;
}
function fail(e) {
  status.error = e.message;
  $('error').textContent = e.message;
  log(`error: ${e.message}`);
  setPhase('error', 'Stopped by an error.');
  $('start').disabled = false;
  $('stop').disabled = true;
  training = false;
}

// ---- drawing: what changed is marked, one animation frame writes it
const view = { step: 0, rate: 0 };
let frameAsked = false;
function invalidate() {
  if (frameAsked) return;
  frameAsked = true;
  requestAnimationFrame(render);
}
function render() {
  frameAsked = false;
  status.renders++;
  $('step').textContent = String(view.step);
  $('rate').textContent = view.rate ? Math.round(view.rate).toLocaleString('en') : '–';
}

for (const [id, def] of [['model', 'mlp'], ['train', '58000'], ['epochs', '1'], ['batch', '128'], ['lr', '0.001']]) {
  const v = params.get(id) ?? def;
  if (id === 'train' && ![...$('train').options].some((o) => o.value === v)) $('train').add(new Option(`${Number(v).toLocaleString('en')}`, v));
  $(id).value = v;
}
const evalEvery = Number(params.get('evalEvery') || 100);
$('every').textContent = String(evalEvery);

// ---- charts (gltrain/vis): loss per step with its moving average; validation accuracy
// during training and training accuracy per epoch
const smooth = $('smooth');
const lossView = lossChart($('loss-chart'));
const accView = metricChart($('acc-chart'));
smooth.addEventListener('change', (e) => {
  status.inputDelaysMs.push(performance.now() - e.timeStamp);
  lossView.showRaw(!smooth.checked);
});
lossView.showRaw(!smooth.checked);

// ---- the worker
let worker = null;
const ready = (async () => {
  worker = await TrainingWorker.create({ context: { backend: params.get('backend') || 'auto' } });
  const caps = worker.capabilities;
  status.capabilities = caps;
  const other = caps.backend === 'cpu' ? 'webgl' : 'cpu';
  const cells = [
    ['training on', caps.backend === 'cpu' ? 'the CPU (WebAssembly SIMD)' : `the GPU (${caps.backend})`],
    ['renderer', caps.renderer], ['vendor', caps.vendor],
    ['float32 render targets', caps.float32Renderable ? 'yes (measured)' : 'no'],
    ['EXT_color_buffer_float', caps.colorBufferFloat ? 'yes' : 'no'],
    ['measured precision', `${caps.measuredMantissaBits}-bit mantissa`],
    ['max texture size', String(caps.maxTextureSize)],
    ['why', `${caps.backendReason}. On this page: ?backend=${other} in the address ({backend: '${other}'} in TrainingWorker.create's context).`],
  ];
  $('caps').replaceChildren(...cells.map(([k, v]) => {
    const d = document.createElement('div');
    d.className = 'stat';
    d.innerHTML = '<span class="label"></span><span class="value" style="font-size:0.9rem;overflow-wrap:anywhere"></span>';
    d.children[0].textContent = k;
    d.children[1].textContent = v;
    if (k === 'why') d.style.gridColumn = '1 / -1';  // a sentence: the whole row
    return d;
  }));
  $('report').textContent = caps.report;
  if (caps.softwareRenderer && caps.backend !== 'cpu') {  // on the CPU backend the renderer does not matter
    $('sw-name').textContent = caps.renderer;
    $('sw-warning').hidden = false;
  }
  const conv = worker.layerTypes.includes('conv2d');
  $('model').options[1].disabled = $('model').options[2].disabled = !conv;
  if (!conv) {
    $('model-note').textContent = 'The CNN needs the Conv2D and pooling layers, which this build of the module does not have yet.';
    if ($('model').value !== 'mlp') $('model').value = 'mlp';
  }
  setPhase('idle', 'Ready.');
})().catch(fail);

function modelSpec(kind) {
  if (kind === 'resnet') {
    // A functional model: each residual block's add reads the block's input and its
    // last batch normalization (layers name their "inputs"; the others read the layer before).
    const block = (n, from) => [
      { type: 'conv2d', filters: 16, kernelSize: 3, padding: 'same', kernelInitializer: 'he_uniform', name: `block${n}_conv1`, inputs: [from] },
      { type: 'batchnormalization', momentum: 0.9, name: `block${n}_bn1` },
      { type: 'activation', activation: 'relu', name: `block${n}_relu1` },
      { type: 'conv2d', filters: 16, kernelSize: 3, padding: 'same', kernelInitializer: 'he_uniform', name: `block${n}_conv2` },
      { type: 'batchnormalization', momentum: 0.9, name: `block${n}_bn2` },
      { type: 'add', name: `block${n}_add`, inputs: [from, `block${n}_bn2`] },
      { type: 'activation', activation: 'relu', name: `block${n}_out` },
    ];
    return {
      input: [28, 28, 1],
      layers: [
        { type: 'conv2d', filters: 16, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: 'he_uniform', name: 'stem' },
        { type: 'maxpool2d', poolSize: 2, name: 'stem_pool' },
        ...block(1, 'stem_pool'),
        { type: 'maxpool2d', poolSize: 2, name: 'block1_pool' },
        ...block(2, 'block1_pool'),
        { type: 'globalaveragepooling2d', name: 'pool' },
        { type: 'dense', units: 10, name: 'logits' },
      ],
    };
  }
  if (kind === 'cnn') {
    return {
      input: [28, 28, 1],
      layers: [
        { type: 'conv2d', filters: 8, kernelSize: 5, activation: 'relu' },
        { type: 'maxpool2d', poolSize: 2 },
        { type: 'conv2d', filters: 16, kernelSize: 5, activation: 'relu' },
        { type: 'maxpool2d', poolSize: 2 },
        { type: 'flatten' },
        { type: 'dense', units: 10 },
      ],
    };
  }
  return {
    input: 784,
    layers: [
      { type: 'dense', units: 256, activation: 'relu' },
      { type: 'dense', units: 128, activation: 'relu' },
      { type: 'dense', units: 10 },
    ],
  };
}

function drawSamples(images, predicted, labels) {
  const items = [];
  for (let i = 0; i < SAMPLES; i++) {
    const div = document.createElement('div');
    div.className = 'sample';
    const c = document.createElement('canvas');
    c.width = 28; c.height = 28;
    const img = new ImageData(28, 28);
    for (let p = 0; p < 784; p++) {
      const v = 255 - Math.round(255 * images[i * 784 + p]);
      img.data[4 * p] = img.data[4 * p + 1] = img.data[4 * p + 2] = v;
      img.data[4 * p + 3] = 255;
    }
    c.getContext('2d').putImageData(img, 0, 0);
    const ok = predicted[i] === labels[i];
    const t = document.createElement('div');
    t.className = ok ? 'ok' : 'wrong';
    t.textContent = CLASSES[predicted[i]];
    const u = document.createElement('div');
    u.className = 'note';
    u.textContent = `(${CLASSES[labels[i]]})`;
    div.title = `predicted ${CLASSES[predicted[i]]}, true ${CLASSES[labels[i]]}`;
    div.append(c, t, u);
    items.push(div);
  }
  $('samples').replaceChildren(...items);
}

// A table row: a label, a bar `fraction` of the cell wide, and a figure.
function barRow(label, fraction, figure) {
  const tr = document.createElement('tr');
  tr.innerHTML = '<td></td><td class="barcell"><div class="bar"></div></td><td class="num"></td>';
  tr.children[0].textContent = label;
  tr.children[1].firstChild.style.width = `${(100 * fraction).toFixed(1)}%`;
  tr.children[2].textContent = figure;
  return tr;
}

// A new run starts from a clean page: nothing of the last run's results is left next to this one's.
function resetResults() {
  lossView.reset();
  accView.reset();
  $('confusion').replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: 'After training.' }));
  view.step = 0; view.rate = 0;
  for (const id of ['val', 'test']) $(id).textContent = '–';
  $('samples').replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: 'After training.' }));
  const row = document.createElement('tr');
  row.innerHTML = '<td class="note">After training.</td>';
  $('classes').tBodies[0].replaceChildren(row);
  $('profile-box').hidden = true;
  Object.assign(status, { steps: 0, history: [], evaluations: [], testLoss: null, testAccuracy: null, perClass: null,
                          samplesPerSecond: 0, profile: null, testEvaluated: 0 });
  invalidate();
}

function drawClasses(perClass) {
  $('classes').tBodies[0].replaceChildren(...perClass.map((a, k) => barRow(CLASSES[k], a, `${(100 * a).toFixed(1)} %`)));
}

// The form, checked before anything is fetched or built: each field's name and range.
function readForm() {
  const num = (id, label, min, max, integer) => {
    const raw = $(id).value.trim();
    const want = `${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`;
    if (raw === '') throw new Error(`${label}: empty or not a number (give ${want})`);
    const v = Number(raw);
    if (!Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) throw new Error(`${label}: expected ${want}, got ${raw}`);
    return v;
  };
  return {
    kind: $('model').value,
    trainCount: Math.min(Number($('train').value), 60000 - HELD_OUT),
    epochs: num('epochs', 'Epochs', 1, 50, true),
    batchSize: num('batch', 'Batch size', 1, 1024, true),
    lr: num('lr', 'Learning rate', 1e-6, 10, false),
  };
}

// The IDX files: fetched and parsed once per page (the worker keeps them); each run
// takes its rows from them.
let dataLoaded = null;
function loadData() {
  dataLoaded ??= (async () => {
    const t0 = performance.now();
    status.idxFetches++;
    const all = await worker.load('fashion', TRAIN_FILES);
    const test = await worker.load('test', TEST_FILES);
    log(`data: ${all.count} training and ${test.count} test images of ${all.imageRows}x${all.imageCols} ` +
        `(${((performance.now() - t0) / 1000).toFixed(1)} s, once per page)`);
  })().catch((e) => { dataLoaded = null; throw e; });
  return dataLoaded;
}

let stopRequested = false;
async function train() {
  await ready;
  if (!worker || training) return;
  $('error').textContent = '';
  status.error = null;
  let form;
  try {
    form = readForm();
  } catch (e) {
    status.error = e.message;
    $('error').textContent = e.message;
    setPhase('idle', 'Not started: check the form.');
    return;
  }
  const { kind, trainCount, epochs, batchSize, lr } = form;
  $('start').disabled = true;
  training = true;
  stopRequested = false;
  status.runs++;
  resetResults();
  try {
    setPhase('loading', 'Loading the IDX files…');
    await loadData();
    await worker.load('train', { dataset: 'fashion', start: 0, count: trainCount });
    await worker.load('val', { dataset: 'fashion', start: 60000 - HELD_OUT, count: HELD_OUT });
    // Validation at least once an epoch, however few the images.
    const stepsPerEpoch = Math.ceil(trainCount / batchSize);
    const every = Math.min(evalEvery, stepsPerEpoch);
    $('every').textContent = String(every);
    log(`run ${status.runs}: ${trainCount} training and ${HELD_OUT} validation images, validation every ${every} steps`);
    const summary = await worker.build(modelSpec(kind), { optimizer: { type: 'adam', lr } });
    built = kind;
    $('save').disabled = false;
    const params = modelSummary($('summary'), summary);
    log(`model: ${kind}, ${summary.map((l) => l.name).join(' → ')}, ${params.toLocaleString('en')} parameters`);
    setPhase('training', 'Training in a Web Worker…');
    $('stop').disabled = false;
    fitting = true;
    const result = await worker.fit('train', {
      epochs, batchSize, lossEvery: 10,
      evaluateEvery: { dataset: 'val', steps: every },
      onStep: (s) => {
        status.steps = s.step;
        status.samplesPerSecond = s.samplesPerSecond;
        view.step = s.step;
        view.rate = s.samplesPerSecond;
        lossView.onStep(s);
        invalidate();
      },
      onEvaluate: (e) => {
        status.evaluations.push(e);
        $('val').textContent = `${(100 * e.accuracy).toFixed(1)} %`;
        accView.onEvaluate(e);
      },
      onEpoch: (e) => {
        status.history.push(e);
        log(`epoch ${e.epoch + 1}: loss=${e.loss.toFixed(4)} accuracy=${e.accuracy.toFixed(4)} time=${e.seconds.toFixed(1)}s samples/s=${Math.round(e.samplesPerSecond)}`);
        accView.onEpoch(e);
      },
      // The browser may take the WebGL context away (GPU reset, too many contexts):
      // the fit waits, and resumes from the model's last snapshot when it is back.
      onContextLost: (e) => log(`WebGL context lost at step ${e.step}: training waits for it (Save keeps the last snapshot)`),
      onContextRestored: (e) => log(`WebGL context restored: resuming from the snapshot of step ${e.step}`),
    }).finally(() => { fitting = false; });
    if (result.stopped) log(`stopped after ${result.steps} steps`);
    // The test images, a chunk at a time: Stop is heard between chunks.
    setPhase('evaluating', 'Evaluating on the 10,000 test images…');
    const labels = await worker.targets('test');
    const predicted = new Int32Array(labels.length);
    let lossSum = 0, hits = 0, done = 0;
    for (let start = 0; start < labels.length && !stopRequested; start += TEST_CHUNK) {
      const count = Math.min(TEST_CHUNK, labels.length - start);
      const ev = await worker.evaluate({ dataset: 'test', start, count });
      predicted.set(await worker.predictClasses({ dataset: 'test', start, count }), start);
      lossSum += ev.loss * count;
      hits += ev.accuracy * count;
      done += count;
      status.testEvaluated = done;
      setPhase('evaluating', `Evaluating on the test images… ${done.toLocaleString('en')} of ${labels.length.toLocaleString('en')}`);
    }
    $('stop').disabled = true;
    if (done < labels.length) {
      log(`evaluation stopped after ${done} of ${labels.length} test images`);
      setPhase('done', `Stopped: ${status.steps} steps; ${done.toLocaleString('en')} test images evaluated.`);
      if (done === 0) return;
    }
    status.testLoss = lossSum / done;
    status.testAccuracy = hits / done;
    $('test').textContent = `${(100 * status.testAccuracy).toFixed(1)} %`;
    const hit = new Array(10).fill(0);
    const seen = new Array(10).fill(0);
    for (let i = 0; i < done; i++) {
      seen[labels[i]]++;
      if (predicted[i] === labels[i]) hit[labels[i]]++;
    }
    status.perClass = hit.map((h, k) => h / Math.max(1, seen[k]));
    drawClasses(status.perClass);
    status.confusion = confusionMatrix($('confusion'), predicted.subarray(0, done), labels.subarray(0, done), CLASSES);
    drawSamples(await worker.x('test', 0, SAMPLES), predicted, labels);
    if (worker.capabilities.backend !== 'cpu' && !stopRequested) await showProfile(batchSize);
    log(`test_loss=${status.testLoss.toFixed(4)}`);
    log(`test_accuracy=${status.testAccuracy.toFixed(4)}`);
    if (done === labels.length) setPhase('done', `Done: ${status.steps} steps, test accuracy ${(100 * status.testAccuracy).toFixed(2)} %.`);
  } catch (e) {
    fail(e);
  } finally {
    training = false;
    $('start').disabled = false;
    $('stop').disabled = true;
  }
}

// ---- where a step's time goes: the trained model's passes (profileStep, which changes
// nothing), summed by kernel, the most expensive first. GPU backends only: the CPU
// backend runs no passes.
async function showProfile(batchSize) {
  const passes = await worker.profileStep('train', { batchSize, reps: 3 });
  const byKernel = new Map();
  for (const p of passes) {
    const k = byKernel.get(p.kernel) ?? { kernel: p.kernel, passes: 0, ms: 0 };
    k.passes++;
    k.ms += p.ms;
    byKernel.set(p.kernel, k);
  }
  const kernels = [...byKernel.values()].sort((a, b) => b.ms - a.ms);
  const totalMs = kernels.reduce((s, k) => s + k.ms, 0);
  const clock = passes[0]?.gpuTimer ? 'GPU timer queries' : 'host clock, each pass waited for';
  status.profile = { passes: passes.length, totalMs, clock, kernels };
  $('profile').tBodies[0].replaceChildren(...kernels.map((k) =>
    barRow(`${k.kernel} (${k.passes})`, k.ms / totalMs, `${k.ms.toFixed(2)}\u00a0ms`)));
  $('profile-note').textContent = `One step of batch ${batchSize}: ${passes.length} passes, ${totalMs.toFixed(1)} ms (${clock}).`;
  $('profile-box').hidden = false;
  const top = kernels[0];
  log(`step profile: ${passes.length} passes, ${totalMs.toFixed(1)} ms (${clock}); most: ${top.kernel} ` +
      `x${top.passes} ${(100 * top.ms / totalMs).toFixed(0)} %`);
}

// ---- checkpoints: the model as a safetensors file named by its step. During a fit the
// worker answers between two slices with the weights of the last completed step; while
// the WebGL context is lost (no GPU to read), with the model's last snapshot.
let built = null;
let training = false;  // a run: loading, fitting or evaluating
let fitting = false;
// The 'step' in a safetensors file's metadata (8 bytes of header length, then the JSON header).
function checkpointStep(bytes) {
  const n = Number(new DataView(bytes).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 8, n))).__metadata__?.step ?? '0';
}
async function saveCheckpoint() {
  let bytes;
  let snapshot = false;
  try {
    bytes = await worker.saveCheckpoint();
  } catch (e) {
    if (e.kind !== 'ContextLostError') throw e;
    bytes = await worker.snapshotCheckpoint();
    snapshot = true;
  }
  const step = checkpointStep(bytes);
  const name = `fashion-mnist-${built}-step-${step}.safetensors`;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  status.saved.push({ name, step: Number(step), bytes: bytes.byteLength, snapshot, during: fitting });
  log(`saved ${name} (${bytes.byteLength.toLocaleString('en')} bytes${snapshot ? ', the last snapshot: the WebGL context is lost' : ''})`);
}

$('save').addEventListener('click', (e) => {
  status.inputDelaysMs.push(performance.now() - e.timeStamp);
  saveCheckpoint().catch((err) => {  // training goes on: say so, change nothing else
    $('error').textContent = `Save checkpoint: ${err.message}`;
    log(`error: Save checkpoint: ${err.message}`);
  });
});
$('start').addEventListener('click', (e) => {
  status.inputDelaysMs.push(performance.now() - e.timeStamp);
  train();
});
// Stop ends the fit and the test evaluation after it (between two chunks).
$('stop').addEventListener('click', (e) => {
  status.inputDelaysMs.push(performance.now() - e.timeStamp);
  stopRequested = true;
  worker?.stop();
  $('stop').disabled = true;
});
if (params.get('auto') === '1') train();
