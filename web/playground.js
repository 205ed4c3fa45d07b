// Playground: a small MLP learns a 2-D toy dataset on this page's thread (gltrain's
// non-blocking beginFit / trainFor, yielding to the event loop between slices) while
// its decision boundary is redrawn; test points from the same distribution measure
// what it learned.
// The settings live in the address (dataset, layers, activation, optimizer, lr, batch,
// backend: auto, webgl or cpu), so a setup can be shared; learning rate, optimizer and
// batch size apply to the model as it is (its weights kept), the others start anew.
// Further URL parameters (used by the tests): seed, autostart=1, maxSteps=N (pause
// there), stopAtAccuracy=A (pause once reached; checked every 10th step).
import createGltrain, { yieldToEventLoop } from './gltrain.js';
import { lossChart } from './gltrain-vis.js';  // uPlot through the page's import map

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const N = 400;       // training points
const N_TEST = 200;  // test points: the same distribution, another seed
const GRID = 56;  // decision boundary resolution (GRID x GRID predictions)
const VIEW = 1.1;  // the canvas shows [-VIEW, VIEW]^2; the data lie in [-1, 1]^2

const status = {
  ready: false, running: false, step: 0, loss: null, accuracy: null, samplesPerSecond: 0,
  error: null, redraws: 0, maxSteps: Number(params.get('maxSteps') || 0), testLoss: null, testAccuracy: null,
  capabilities: null, resets: 0, applied: 0,
  stopAtAccuracy: params.has('stopAtAccuracy') ? Number(params.get('stopAtAccuracy')) : null,
};
window.playground = status;

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// n points in [-1, 1]^2 with labels 0/1.
function makeData(kind, seed, N) {
  const rnd = mulberry32(seed);
  const x = new Float32Array(N * 2);
  const y = new Int32Array(N);
  for (let i = 0; i < N; i++) {
    let u, v, c;
    if (kind === 'xor') {
      do { u = rnd() * 2 - 1; v = rnd() * 2 - 1; } while (Math.abs(u) < 0.08 || Math.abs(v) < 0.08);
      c = u * v > 0 ? 0 : 1;
    } else if (kind === 'circles') {
      c = i % 2;
      const r = c === 0 ? rnd() * 0.42 : 0.62 + rnd() * 0.33;
      const a = rnd() * 2 * Math.PI;
      u = r * Math.cos(a); v = r * Math.sin(a);
    } else {  // two interleaved spirals
      c = i % 2;
      const t = (kind === 'spirals' && N === N_TEST ? rnd() : Math.floor(i / 2) / (N / 2)) * 2.6 * Math.PI + 0.4;
      const r = 0.08 + 0.85 * (t / (2.6 * Math.PI + 0.4));
      const s = c === 0 ? 1 : -1;
      u = s * r * Math.cos(t) + (rnd() - 0.5) * 0.04;
      v = s * r * Math.sin(t) + (rnd() - 0.5) * 0.04;
    }
    x[2 * i] = u; x[2 * i + 1] = v; y[i] = c;
  }
  return { x, y };
}

const grid = new Float32Array(GRID * GRID * 2);
for (let r = 0; r < GRID; r++) {
  for (let c = 0; c < GRID; c++) {
    grid[2 * (r * GRID + c)] = (((c + 0.5) / GRID) * 2 - 1) * VIEW;
    grid[2 * (r * GRID + c) + 1] = (1 - ((r + 0.5) / GRID) * 2) * VIEW;
  }
}

// ---- controls, from the address
const gl = await createGltrain();
for (const a of gl.activations) $('activation').add(new Option(a, a));
for (const o of gl.optimizers) $('optimizer').add(new Option(o, o));
const FIELDS = [['dataset', 'xor'], ['layers', '8, 8'], ['activation', 'tanh'], ['optimizer', 'adam'],
                ['lr', '0.03'], ['batch', '32'], ['backend', 'auto']];
for (const [id, def] of FIELDS) $(id).value = params.get(id) ?? def;
// The settings, written to the address as they change (replaceState: no history entries).
function writeUrl() {
  const q = new URLSearchParams(location.search);
  for (const [id] of FIELDS) q.set(id, $(id).value.trim());
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

let ctx = null;
function makeContext() {
  model?.delete();  // reset() then makes a new one on the new context
  model = null;
  ctx?.delete();
  ctx = new gl.Context({ backend: $('backend').value });
  const caps = ctx.capabilities;
  status.capabilities = caps;
  $('device').textContent = caps.backend === 'cpu'
    ? `Training on the CPU (WebAssembly SIMD): ${caps.backendReason}`
    : `WebGL2 on ${caps.renderer}` + (caps.softwareRenderer ? ' (software renderer: slow)' : '');
}

let model = null;
let data = null;
let testData = null;
let points = null;
let testPoints = null;
let stepBase = 0;  // steps before the optimizer last started afresh (a changed optimizer type)

// The loss chart (gltrain/vis): log scale, whose labels read right at any magnitude and
// which draws a zero loss at 1e-9 instead of breaking the curve; the test loss beside it.
const chart = lossChart($('chart'), { log: true, height: 180, legend: false, secondLabel: 'test loss' });
Object.defineProperty(status, 'lossAxisLabels', { enumerable: true, get: () => chart.axisLabels });

function showError(e) {
  status.error = e ? e.message : null;
  $('error').textContent = e ? e.message : '';
}

function readLayers() {
  const text = $('layers').value.trim();
  if (!text) return [];
  return text.split(',').map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`Hidden layers: '${s.trim()}' is not a whole number from 1 to 256`);
    return n;
  });
}
function readTraining() {
  const lr = Number($('lr').value);
  if (!(lr > 0 && Number.isFinite(lr))) throw new Error(`Learning rate: expected a positive number, got '${$('lr').value}'`);
  const batch = Number($('batch').value);
  if (!Number.isInteger(batch) || batch < 1) throw new Error(`Batch size: expected a whole number >= 1, got '${$('batch').value}'`);
  return { compile: { optimizer: { type: $('optimizer').value, lr }, seed: 7 },
           fit: { epochs: 1_000_000, batchSize: Math.min(N, batch), lossEvery: 5 } };
}

// A new model (and data): the layers, activation, dataset or engine changed, or Reset.
function reset() {
  pause();
  showError(null);
  status.resets++;
  model?.delete();
  model = null;
  data?.delete();
  data = null;
  testData?.delete();
  testData = null;
  const seed = Number(params.get('seed') || 1);
  points = makeData($('dataset').value, seed, N);
  testPoints = makeData($('dataset').value, seed + 1000, N_TEST);
  Object.assign(status, { step: 0, loss: null, accuracy: null, samplesPerSecond: 0, testLoss: null, testAccuracy: null });
  shownRate = 0;
  stepBase = 0;
  chart.reset();
  try {
    const hidden = readLayers();
    const { compile, fit } = readTraining();
    const m = new gl.Sequential(ctx, 2);
    try {
      for (const units of hidden) m.add({ type: 'dense', units, activation: $('activation').value });
      m.add({ type: 'dense', units: 2 });
      m.compile(compile);
      optimizerType = compile.optimizer.type;
      data = gl.Dataset.fromArrays(points.x, points.y, 2);
      testData = gl.Dataset.fromArrays(testPoints.x, testPoints.y, 2);
      m.beginFit(data, fit);
      batchSize = fit.batchSize;
    } catch (e) {
      m.delete();
      throw e;
    }
    model = m;
  } catch (e) {
    showError(e);
  }
  draw();
  updateStats();
}

// Learning rate, optimizer or batch size: the same model trains on with them. Its
// weights (and, for the same optimizer, its optimizer state and step) are kept through
// a checkpoint; a new optimizer type starts its state afresh.
let optimizerType = null;
let batchSize = 1;  // the batch size the fit in progress uses
function applyTraining() {
  showError(null);
  if (!model) { reset(); return; }
  try {
    const { compile, fit } = readTraining();
    const bytes = model.saveCheckpoint();
    const newOptimizer = compile.optimizer.type !== optimizerType;
    const before = model.step;
    model.endFit();
    model.compile(compile);
    model.loadCheckpoint(bytes, { resetOptimizer: newOptimizer });
    if (newOptimizer) stepBase += before;
    model.beginFit(data, fit);
    batchSize = fit.batchSize;
    optimizerType = compile.optimizer.type;
    status.applied++;
  } catch (e) {
    showError(e);
  }
  draw();
  updateStats();
}

const totalStep = () => stepBase + (model ? model.step : 0);
// samples/s: the samples of each training slice over its time, smoothed (a moving average
// over slices; the per-step figure of a 400-point epoch jumps at every epoch's start).
let shownRate = 0;
function countRate(steps, ms, batch) {
  if (!(ms > 0) || !steps) return;
  const rate = (steps * batch * 1000) / ms;
  shownRate = shownRate ? 0.9 * shownRate + 0.1 * rate : rate;
  status.samplesPerSecond = shownRate;
}
function updateStats() {
  status.step = totalStep();
  $('step').textContent = String(status.step);
  $('loss').textContent = status.loss === null ? '–' : status.loss.toPrecision(4);
  $('accuracy').textContent = status.accuracy === null ? '–' : (100 * status.accuracy).toFixed(1) + ' %';
  $('test-loss').textContent = status.testLoss === null ? '–' : status.testLoss.toPrecision(4);
  $('test-accuracy').textContent = status.testAccuracy === null ? '–' : (100 * status.testAccuracy).toFixed(1) + ' %';
  $('rate').textContent = status.samplesPerSecond ? Math.round(status.samplesPerSecond).toLocaleString('en') : '–';
  $('run').textContent = status.running ? 'Pause' : status.step ? 'Resume' : 'Train';
  $('step-once').disabled = status.running || !model;
}

// The model's accuracy on the training points, and loss and accuracy on the test points.
function measure() {
  if (!model) return;
  status.accuracy = model.evaluate(data, { batchSize: N }).accuracy;
  const t = model.evaluate(testData, { batchSize: N_TEST });
  status.testLoss = t.loss;
  status.testAccuracy = t.accuracy;
  chart.addPoint(totalStep(), null, t.loss);
}
// One step's events: the loss (every lossEvery steps) and samples/s.
function takeEvents() {
  for (const ev of model.takeEvents()) {
    if (ev.type !== 'step') continue;
    if (ev.loss !== null) {
      status.loss = ev.loss;
      chart.addPoint(stepBase + ev.lossStep, ev.loss, null);
    }
  }
}

function draw() {
  const canvas = $('boundary');
  const g = canvas.getContext('2d');
  const W = canvas.width;
  g.clearRect(0, 0, W, W);
  if (model) {
    const p = model.predict(grid, { batchSize: GRID * GRID });  // one batch: one read back
    const img = new ImageData(GRID, GRID);
    for (let i = 0; i < GRID * GRID; i++) {
      const s = 1 / (1 + Math.exp(-(p[2 * i + 1] - p[2 * i])));  // softmax probability of class 1
      img.data[4 * i] = Math.round(47 + (232 - 47) * s);
      img.data[4 * i + 1] = Math.round(111 + (132 - 111) * s);
      img.data[4 * i + 2] = Math.round(222 + (47 - 222) * s);
      img.data[4 * i + 3] = Math.round(60 + 80 * Math.abs(s - 0.5) * 2);
    }
    const tmp = new OffscreenCanvas(GRID, GRID);
    tmp.getContext('2d').putImageData(img, 0, 0);
    g.imageSmoothingEnabled = true;
    g.drawImage(tmp, 0, 0, W, W);
    status.redraws++;
  }
  const dot = (x, y, c, test) => {
    const px = ((x / VIEW + 1) / 2) * W;
    const py = ((1 - y / VIEW) / 2) * W;
    g.beginPath();
    g.arc(px, py, test ? 3.2 : 4.2, 0, 2 * Math.PI);
    if (test) {  // test points: rings
      g.lineWidth = 2;
      g.strokeStyle = c ? '#e8842f' : '#2f6fde';
      g.stroke();
      return;
    }
    g.fillStyle = c ? '#e8842f' : '#2f6fde';
    g.fill();
    g.lineWidth = 1.2;
    g.strokeStyle = '#fff';
    g.stroke();
  };
  for (let i = 0; i < N; i++) dot(points.x[2 * i], points.x[2 * i + 1], points.y[i], false);
  for (let i = 0; i < N_TEST; i++) dot(testPoints.x[2 * i], testPoints.x[2 * i + 1], testPoints.y[i], true);
}

// With stopAtAccuracy, the accuracy is checked at every CHECK_EVERY-th step, and maxSteps
// ends a slice: where a run stops depends on the steps alone, not on the machine's speed
// (the 150 ms redraws alone would look at the model every ~1000 steps on a fast CPU).
const CHECK_EVERY = 10;
// The page keeps painting: training slices of SLICE_MS, each followed by a yield, and the
// redraw (which reads the GPU back) at most every REDRAW_MS, in a frame of its own.
const SLICE_MS = 8;
const REDRAW_MS = 150;

let loopRunning = false;
async function loop() {
  if (loopRunning) return;
  loopRunning = true;
  let lastDraw = 0;
  try {
    while (status.running && model) {
      let slice = status.maxSteps ? Math.max(1, status.maxSteps - totalStep()) : undefined;
      if (status.stopAtAccuracy !== null) {
        slice = Math.min(slice ?? CHECK_EVERY, CHECK_EVERY - (totalStep() % CHECK_EVERY));
      }
      const t0 = performance.now();
      const steps = model.trainFor(SLICE_MS, slice);
      countRate(steps, performance.now() - t0, batchSize);
      takeEvents();
      status.step = totalStep();
      const now = performance.now();
      const limitReached = status.maxSteps && status.step >= status.maxSteps;
      const checked = status.stopAtAccuracy !== null && status.step % CHECK_EVERY === 0;
      if (checked) status.accuracy = model.evaluate(data, { batchSize: N }).accuracy;
      const accurate = checked && status.accuracy >= status.stopAtAccuracy;
      const stop = limitReached || accurate || !model.fitting;
      if (now - lastDraw > REDRAW_MS || stop) {
        await nextFrame();  // input and painting first; the redraw reads back from the GPU
        if (!status.running || !model) break;
        lastDraw = performance.now();
        const accuracy = status.accuracy;
        measure();
        if (checked) status.accuracy = accuracy;
        draw();
        updateStats();
        if (stop) pause();
      }
      await yieldToEventLoop();
    }
  } catch (e) {
    showError(e);
    pause();
  } finally {
    loopRunning = false;
  }
}
// The next animation frame (or 100 ms, where the page is hidden and frames stop).
const nextFrame = () => new Promise((resolve) => {
  const t = setTimeout(resolve, 100);
  requestAnimationFrame(() => { clearTimeout(t); resolve(); });
});

function start() {
  if (!model || status.running) return;
  status.running = true;
  updateStats();
  loop();
}
function pause() {
  status.running = false;
  updateStats();
}
// One step, then the model as it is now.
function stepOnce() {
  if (!model || status.running) return;
  try {
    model.trainFor(0, 1);
    takeEvents();
    measure();
    draw();
  } catch (e) {
    showError(e);
  }
  updateStats();
}

// The run button reacts at once (the tests measure it): the loop yields after every ~8 ms
// of training and before every redraw.
$('run').addEventListener('click', (e) => {
  status.lastClickDelayMs = performance.now() - e.timeStamp;
  if (status.running) pause(); else start();
});
$('step-once').addEventListener('click', stepOnce);
$('reset').addEventListener('click', reset);
for (const id of ['dataset', 'layers', 'activation']) $(id).addEventListener('change', () => { writeUrl(); reset(); });
for (const id of ['optimizer', 'lr', 'batch']) $(id).addEventListener('change', () => { writeUrl(); applyTraining(); });
$('backend').addEventListener('change', () => {
  writeUrl();
  pause();
  try {
    makeContext();
  } catch (e) {
    showError(e);
    return;
  }
  reset();
});

makeContext();
reset();
status.ready = true;
if (params.get('autostart') === '1') start();
