// Playground: a small MLP learns a 2-D toy dataset on this page's thread (gltrain's
// non-blocking beginFit / trainFor, yielding to the event loop between slices) while
// its decision boundary is redrawn.
// URL parameters (used by the tests): dataset, layers, activation, optimizer, lr, batch,
// seed, autostart=1, maxSteps=N (pause there), stopAtAccuracy=A (pause once reached; checked
// every 10th step).
import createGltrain, { yieldToEventLoop } from './gltrain.js';
import uPlot from './dist/vendor/uPlot.esm.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const N = 400;
const GRID = 56;  // decision boundary resolution (GRID x GRID predictions)
const VIEW = 1.1;  // the canvas shows [-VIEW, VIEW]^2; the data lie in [-1, 1]^2

const status = {
  ready: false, running: false, step: 0, loss: null, accuracy: null, samplesPerSecond: 0,
  error: null, redraws: 0, maxSteps: Number(params.get('maxSteps') || 0),
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
function makeData(kind, seed) {
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
      const t = (Math.floor(i / 2) / (N / 2)) * 2.6 * Math.PI + 0.4;
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

// ---- controls
const gl = await createGltrain();
const ctx = new gl.Context();
for (const a of gl.activations) $('activation').add(new Option(a, a));
for (const o of gl.optimizers) $('optimizer').add(new Option(o, o));
for (const [id, def] of [['dataset', 'xor'], ['layers', '8, 8'], ['activation', 'tanh'], ['optimizer', 'adam'],
                         ['lr', '0.03'], ['batch', '32']]) {
  $(id).value = params.get(id) ?? def;
}
const caps = ctx.capabilities;
$('device').textContent = caps.backend === 'cpu'
  ? `Training on the CPU (WebAssembly SIMD): ${caps.backendReason}`
  : `WebGL2 on ${caps.renderer}` + (caps.softwareRenderer ? ' (software renderer: slow)' : '');

let model = null;
let data = null;
let points = null;
let lossSeries = [[], []];

const chart = new uPlot({
  width: 320, height: 180,
  scales: { x: { time: false }, y: { distr: 3 } },
  axes: [{ label: 'step', size: 36 }, { size: 48 }],
  legend: { show: false },
  series: [{}, { label: 'loss', stroke: '#2f6fde', width: 1.5, points: { show: false } }],
}, lossSeries, $('chart'));
new ResizeObserver(() => chart.setSize({ width: $('chart').clientWidth, height: 180 })).observe($('chart'));

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

function reset() {
  pause();
  showError(null);
  model?.delete();
  model = null;
  data?.delete();
  data = null;
  points = makeData($('dataset').value, Number(params.get('seed') || 1));
  status.step = 0; status.loss = null; status.accuracy = null; status.samplesPerSecond = 0;
  lossSeries = [[], []];
  chart.setData(lossSeries);
  try {
    const hidden = readLayers();
    const m = new gl.Sequential(ctx, 2);
    try {
      for (const units of hidden) m.add({ type: 'dense', units, activation: $('activation').value });
      m.add({ type: 'dense', units: 2 });
      m.compile({ optimizer: { type: $('optimizer').value, lr: Number($('lr').value) }, seed: 7 });
      data = gl.Dataset.fromArrays(points.x, points.y, 2);
      m.beginFit(data, { epochs: 1_000_000, batchSize: Math.min(N, Number($('batch').value)), lossEvery: 5 });
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

function updateStats() {
  $('step').textContent = String(status.step);
  $('loss').textContent = status.loss === null ? '–' : status.loss.toFixed(4);
  $('accuracy').textContent = status.accuracy === null ? '–' : (100 * status.accuracy).toFixed(1) + ' %';
  $('rate').textContent = status.samplesPerSecond ? Math.round(status.samplesPerSecond).toLocaleString('en') : '–';
  $('run').textContent = status.running ? 'Pause' : status.step ? 'Resume' : 'Train';
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
  for (let i = 0; i < N; i++) {
    const px = ((points.x[2 * i] / VIEW + 1) / 2) * W;
    const py = ((1 - points.x[2 * i + 1] / VIEW) / 2) * W;
    g.beginPath();
    g.arc(px, py, 4.2, 0, 2 * Math.PI);
    g.fillStyle = points.y[i] ? '#e8842f' : '#2f6fde';
    g.fill();
    g.lineWidth = 1.2;
    g.strokeStyle = '#fff';
    g.stroke();
  }
}

// With stopAtAccuracy, the accuracy is checked at every CHECK_EVERY-th step, and maxSteps
// ends a slice: where a run stops depends on the steps alone, not on the machine's speed
// (the 150 ms redraws alone would look at the model every ~1000 steps on a fast CPU).
const CHECK_EVERY = 10;

let loopRunning = false;
async function loop() {
  if (loopRunning) return;
  loopRunning = true;
  let lastDraw = 0;
  try {
    while (status.running && model) {
      let slice = status.maxSteps ? Math.max(1, status.maxSteps - model.step) : undefined;
      if (status.stopAtAccuracy !== null) {
        slice = Math.min(slice ?? CHECK_EVERY, CHECK_EVERY - (model.step % CHECK_EVERY));
      }
      model.trainFor(10, slice);
      for (const ev of model.takeEvents()) {
        if (ev.type !== 'step') continue;
        status.samplesPerSecond = ev.samplesPerSecond;
        if (ev.loss !== null) {
          status.loss = ev.loss;
          lossSeries[0].push(ev.lossStep);
          lossSeries[1].push(ev.loss);
        }
      }
      status.step = model.step;
      const now = performance.now();
      const limitReached = status.maxSteps && status.step >= status.maxSteps;
      const checked = status.stopAtAccuracy !== null && status.step % CHECK_EVERY === 0;
      if (checked) status.accuracy = model.evaluate(data, { batchSize: N }).accuracy;
      const accurate = checked && status.accuracy >= status.stopAtAccuracy;
      const stop = limitReached || accurate || !model.fitting;
      if (now - lastDraw > 150 || stop) {
        await yieldToEventLoop();  // input first: the redraw below reads back from the GPU
        if (!status.running || !model) break;
        lastDraw = now;
        if (!checked) status.accuracy = model.evaluate(data, { batchSize: N }).accuracy;
        chart.setData(lossSeries);
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

// The run button reacts at once (the tests measure it): the loop yields after every ~10 ms
// of training and before every redraw.
$('run').addEventListener('click', (e) => {
  status.lastClickDelayMs = performance.now() - e.timeStamp;
  if (status.running) pause(); else start();
});
$('reset').addEventListener('click', reset);
for (const id of ['dataset', 'layers', 'activation', 'optimizer', 'lr', 'batch']) $(id).addEventListener('change', reset);

reset();
status.ready = true;
if (params.get('autostart') === '1') start();
