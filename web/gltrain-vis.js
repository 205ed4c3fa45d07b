// gltrain/vis: live training charts (on uPlot), a confusion matrix and a model summary
// table, for pages that train with gltrain. The charts are fit callbacks:
//
//   import { lossChart, metricChart, fitCallbacks, confusionMatrix, modelSummary } from 'gltrain/vis';
//   const loss = lossChart(document.querySelector('#loss'));
//   const acc = metricChart(document.querySelector('#accuracy'));
//   await model.fit(train, { epochs: 2, ...fitCallbacks(loss, acc) });   // or TrainingWorker.fit
//   confusionMatrix(document.querySelector('#confusion'), predicted, labels, classNames);
//   modelSummary(document.querySelector('#summary'), model.summary());
//
// uPlot is imported by its bare name 'uplot' (a peer dependency: `npm install uplot`, or an
// import map entry). Charts redraw at most 10 times a second, in an animation frame, so a
// page keeps painting however fast the steps come.
import uPlot from 'uplot';

const REDRAW_MS = 100;

// A uPlot chart whose setData is coalesced into animation frames.
function liveChart(el, options, data) {
  const width = () => Math.max(160, el.clientWidth || 320);
  const chart = new uPlot({ width: width(), height: options.height ?? 220, ...options.uplot }, data, el);
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(() => chart.setSize({ width: width(), height: options.height ?? 220 })).observe(el);
  }
  let asked = false, last = -Infinity;
  const frame = (now) => {
    asked = false;
    if (now - last < REDRAW_MS) { ask(); return; }
    last = now;
    chart.setData(data);
  };
  const ask = () => {
    if (asked) return;
    asked = true;
    requestAnimationFrame(frame);
  };
  return { chart, redraw: ask, now: () => chart.setData(data) };
}

// Log-scale tick labels that read right at any magnitude (not "0 0 0" below 1e-3).
export const logLabel = (v) => (v == null ? '' : v >= 0.01 && v < 1000 ? String(+v.toPrecision(2)) : v.toExponential(0));

// The loss per step (faint), its moving average, and optionally a second loss (e.g. a test
// loss, added with addPoint; shown when options.secondLabel names it).
// options: {log: false, smoothing: 0.9, height, legend: true, secondLabel}.
// A zero loss on a log scale is drawn at 1e-9 instead of breaking the curve.
export function lossChart(el, options = {}) {
  const log = !!options.log;
  const floor = (v) => (v === null || v === undefined ? null : log ? Math.max(1e-9, v) : v);
  const second = !!options.secondLabel;
  const data = second ? [[], [], [], []] : [[], [], []];  // step, loss, moving average (, second series)
  const series = [{ label: 'step' },
    { label: 'loss', stroke: '#9db8ea', width: 1, points: { show: false }, spanGaps: true },
    { label: 'average', stroke: '#2f6fde', width: 2, points: { show: false }, spanGaps: true },
    ...(second ? [{ label: options.secondLabel, stroke: '#e8842f', width: 1.5, points: { show: false }, spanGaps: true }] : [])];
  const view = {
    labels: [],
  };
  const live = liveChart(el, {
    height: options.height,
    uplot: {
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: [{ label: 'step', size: 36 },
             { size: 52, ...(log ? { values: (u, splits) => (view.labels = splits.map(logLabel)) } : {}) }],
      legend: { live: false, show: options.legend ?? true },
      series,
    },
  }, data);
  const smoothing = options.smoothing ?? 0.9;
  let avg = null;
  const push = (step, loss, secondValue = null) => {
    data[0].push(step);
    data[1].push(floor(loss));
    if (loss !== null && loss !== undefined) avg = avg === null ? loss : smoothing * avg + (1 - smoothing) * loss;
    data[2].push(loss === null || loss === undefined ? null : floor(avg));
    if (second) data[3].push(floor(secondValue));
    live.redraw();
  };
  return {
    chart: live.chart,
    data,
    /** The y axis's labels as last drawn (log scale). */
    get axisLabels() { return view.labels; },
    /** fit's onStep: plots the loss of the steps that read one. */
    onStep(s) { if (s.loss !== null && s.loss !== undefined) push(s.lossStep ?? s.step, s.loss, null); },
    /** A point of your own: step, loss (or null), second series (or null). */
    addPoint: push,
    /** Shows or hides the raw loss (the moving average stays). */
    showRaw(show) { live.chart.setSeries(1, { show }); },
    reset() { for (const a of data) a.length = 0; avg = null; live.now(); },
    redrawNow: live.now,
  };
}

// Accuracy (or another metric in [0, 1]): validation points (onEvaluate) and training per
// epoch (onEpoch). options: {height, min: the lowest value the axis shows (0.5)}.
export function metricChart(el, options = {}) {
  const data = [[], [], []];  // step, validation, training (per epoch)
  const min = options.min ?? 0.5;
  const live = liveChart(el, {
    height: options.height,
    uplot: {
      scales: { x: { time: false }, y: { range: (u, lo) => [Math.min(min, lo ?? min), 1] } },
      axes: [{ label: 'step', size: 36 }, { size: 50 }],
      legend: { live: false },
      series: [{ label: 'step' },
        { label: options.validationLabel ?? 'validation', stroke: '#2f6fde', width: 2, spanGaps: true, points: { show: true, size: 5 } },
        { label: options.trainingLabel ?? 'training (epoch)', stroke: '#e8842f', width: 2, spanGaps: true, points: { show: true, size: 7 } }],
    },
  }, data);
  const point = (step, series, value) => {
    if (value === null || value === undefined) return;
    if (data[0].at(-1) !== step) {
      data[0].push(step);
      data[1].push(null);
      data[2].push(null);
    }
    data[series][data[0].length - 1] = value;
    live.redraw();
  };
  return {
    chart: live.chart,
    data,
    onEvaluate(e) { point(e.step, 1, e.accuracy); },
    onEpoch(e) { point(e.step, 2, e.accuracy); if (e.valAccuracy != null) point(e.step, 1, e.valAccuracy); },
    reset() { for (const a of data) a.length = 0; live.now(); },
    redrawNow: live.now,
  };
}

// One set of fit callbacks from several charts (and plain callback objects): each
// callback calls every part's, in order.
export function fitCallbacks(...parts) {
  const out = {};
  for (const name of ['onStep', 'onEpoch', 'onEvaluate']) {
    const fns = parts.map((p) => p?.[name]?.bind(p)).filter(Boolean);
    if (fns.length) out[name] = (e) => { for (const f of fns) f(e); };
  }
  return out;
}

function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}

// A confusion matrix as a table (rows: true class, columns: predicted), each cell shaded
// by its share of the row; returns the counts (matrix[true][predicted]).
export function confusionMatrix(el, predicted, labels, classNames) {
  const k = classNames?.length ?? 1 + Math.max(...labels, ...predicted);
  const m = Array.from({ length: k }, () => new Array(k).fill(0));
  const n = Math.min(predicted.length, labels.length);
  for (let i = 0; i < n; i++) m[labels[i]][predicted[i]]++;
  const names = classNames ?? m.map((_, i) => String(i));
  const table = document.createElement('table');
  table.className = 'gltrain-confusion';
  const head = document.createElement('tr');
  head.append(cell('th', 'true \\ predicted'), ...names.map((c, j) => {
    const th = cell('th', String(j));
    th.title = c;
    return th;
  }));
  table.append(head);
  m.forEach((row, i) => {
    const tr = document.createElement('tr');
    const total = row.reduce((a, b) => a + b, 0) || 1;
    tr.append(cell('th', `${i} ${names[i]}`));
    row.forEach((v, j) => {
      const td = cell('td', String(v), i === j ? 'hit' : v ? 'miss' : '');
      const share = v / total;
      td.style.background = i === j ? `rgba(47, 111, 222, ${(0.1 + 0.6 * share).toFixed(2)})`
                                    : v ? `rgba(232, 132, 47, ${(0.08 + 0.9 * share).toFixed(2)})` : '';
      td.title = `true ${names[i]}, predicted ${names[j]}: ${v} (${(100 * share).toFixed(1)} % of the row)`;
      tr.append(td);
    });
    table.append(tr);
  });
  el.replaceChildren(table);
  return m;
}

// A model's layers as a table (Sequential.summary() or TrainingWorker.summary()): name,
// output shape, parameters, and the total.
export function modelSummary(el, summary) {
  const table = document.createElement('table');
  table.className = 'gltrain-summary';
  const head = document.createElement('tr');
  head.append(cell('th', 'layer'), cell('th', 'output'), cell('th', 'parameters', 'num'));
  table.append(head);
  let total = 0;
  for (const l of summary) {
    total += l.params;
    const tr = document.createElement('tr');
    const shape = Array.isArray(l.outputShape) ? l.outputShape.filter((d, i, a) => !(d === 1 && i < a.length - 1)).join('×') : String(l.outputSize);
    tr.append(cell('td', l.name), cell('td', shape), cell('td', l.params.toLocaleString('en'), 'num'));
    table.append(tr);
  }
  const foot = document.createElement('tr');
  foot.append(cell('th', 'total'), cell('th', ''), cell('th', total.toLocaleString('en'), 'num'));
  table.append(foot);
  el.replaceChildren(table);
  return total;
}
