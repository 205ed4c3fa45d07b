// Text: trains a byte-level language model (by default issue 39's reference character
// transformer, examples/models/char-transformer.json, which setup copies to data/) on
// Debian's fortunes (data/fortunes.txt, scripts/fortunes_corpus.sh) in a Web Worker; plots
// the training loss and the loss on the held-out tail, and every few hundred steps shows
// the model continuing a prompt (TrainingWorker.generate, answered between two training
// slices), at the temperature the slider says.
// URL parameters (used by the tests): model (a model file's URL), corpus, steps, batch,
// evalEvery, valWindows, sampleEvery, sampleLength, backend (auto, webgl or cpu), auto=1.
import { TrainingWorker } from './gltrain.js';
import { lossChart, modelSummary } from './gltrain-vis.js';  // uPlot through the import map

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const MODEL_URL = params.get('model') || 'data/char-transformer.json';
const CORPUS_URL = params.get('corpus') || 'data/fortunes.txt';
const HELD_OUT = 0.1;  // the corpus's last 10 %: from byte floor(0.9 N)
const evalEvery = Number(params.get('evalEvery') || 100);
const valWindows = Number(params.get('valWindows') || 256);
const sampleEvery = Number(params.get('sampleEvery') || 200);
const sampleLength = Number(params.get('sampleLength') || 160);

const status = {
  phase: 'starting', lines: [], steps: 0, losses: [], evaluations: [], samples: [], saved: [], loaded: [],
  error: null, capabilities: null, msPerStep: 0,
};
window.textPage = status;

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
function showError(where, e) {
  status.error = `${where}${e.message}`;
  $('error').textContent = status.error;
  log(`error: ${status.error}`);
}

$('every').textContent = String(evalEvery);
$('val-windows').textContent = String(valWindows);
$('sample-every').textContent = String(sampleEvery);
for (const id of ['steps', 'batch']) if (params.has(id)) $(id).value = params.get(id);
const temperature = () => Number($('temperature').value);
$('temperature').addEventListener('input', () => { $('temperature-value').textContent = temperature().toFixed(2); });

const lossView = lossChart($('loss-chart'), { secondLabel: 'validation' });

// ---- the model file: its layers build the model, its compile section compiles it
let modelFile = null;
async function fetchModelFile() {
  if (modelFile) return modelFile;
  const r = await fetch(MODEL_URL);
  if (!r.ok) throw new Error(`fetching the model file ${MODEL_URL}: HTTP ${r.status}`);
  const file = await r.json();
  const context = Array.isArray(file.input) && file.input.length === 1 ? file.input[0] : null;
  if (!Number.isInteger(context)) {
    throw new Error(`${MODEL_URL}: "input" must be [context], the window of byte ids a language model reads`);
  }
  modelFile = { ...file, context };
  if (!params.has('batch') && file.fit?.batchSize) $('batch').value = String(file.fit.batchSize);
  if (!params.has('steps') && file.compile?.schedule?.totalSteps) $('steps').value = String(file.compile.schedule.totalSteps);
  return modelFile;
}

// ---- the worker
let worker = null;
const ready = (async () => {
  worker = await TrainingWorker.create({ context: { backend: params.get('backend') || 'auto' } });
  const caps = worker.capabilities;
  status.capabilities = caps;
  const cells = [
    ['training on', caps.backend === 'cpu' ? 'the CPU (WebAssembly SIMD)' : `the GPU (${caps.backend})`],
    ['renderer', caps.renderer], ['max texture size', String(caps.maxTextureSize)], ['why', caps.backendReason],
  ];
  $('caps').replaceChildren(...cells.map(([k, v]) => {
    const d = document.createElement('div');
    d.className = 'stat';
    d.innerHTML = '<span class="label"></span><span class="value" style="font-size:0.9rem;overflow-wrap:anywhere"></span>';
    d.children[0].textContent = k;
    d.children[1].textContent = v;
    if (k === 'why') d.style.gridColumn = '1 / -1';
    return d;
  }));
  if (caps.softwareRenderer && caps.backend !== 'cpu') {
    $('sw-name').textContent = caps.renderer;
    $('sw-warning').hidden = false;
  }
  await fetchModelFile();
  $('load').disabled = false;
  setPhase('idle', 'Ready.');
})().catch((e) => { showError('', e); setPhase('error', 'Stopped by an error.'); });

// Builds (or rebuilds) the model of the model file, fresh from its initializers.
async function buildModel() {
  const { input, layers, inputs, outputs, compile = {} } = await fetchModelFile();
  const summary = await worker.build(inputs ? { inputs, layers, outputs } : { input, layers }, compile);
  const parameters = modelSummary($('summary'), summary);
  log(`model: ${MODEL_URL}, ${summary.length} layers, ${parameters.toLocaleString('en')} parameters`);
  $('sample').disabled = $('save').disabled = false;
  return summary;
}

// ---- samples: the model continues the prompt; one request at a time
let sampling = false;
async function sample(step) {
  if (sampling) return;
  sampling = true;
  try {
    const prompt = $('prompt').value;
    const t0 = performance.now();
    const bytes = await worker.generate(prompt, { length: sampleLength, temperature: temperature(), seed: step + 1 });
    const text = new TextDecoder().decode(bytes);  // a byte cut mid-character shows as U+FFFD
    status.samples.push({ step, temperature: temperature(), text, ms: performance.now() - t0 });
    const div = document.createElement('div');
    const head = document.createElement('span');
    head.className = 'note';
    head.textContent = `step ${step}, temperature ${temperature().toFixed(2)}`;
    const pre = document.createElement('pre');
    const b = document.createElement('b');
    b.textContent = prompt;
    pre.append(b, text);
    div.append(head, pre);
    if (status.samples.length === 1) $('samples').replaceChildren();
    $('samples').prepend(div);
  } catch (e) {
    showError('Sample: ', e);
  } finally {
    sampling = false;
  }
}

// ---- training
let training = false;
async function train() {
  await ready;
  if (!worker || training) return;
  $('error').textContent = '';
  status.error = null;
  const steps = Number($('steps').value), batchSize = Number($('batch').value);
  if (!Number.isInteger(steps) || steps < 1 || !Number.isInteger(batchSize) || batchSize < 1) {
    showError('', new Error('Steps and Batch must be whole numbers >= 1'));
    return;
  }
  training = true;
  $('start').disabled = $('load').disabled = true;
  lossView.reset();
  Object.assign(status, { steps: 0, losses: [], evaluations: [], samples: [] });
  $('samples').replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: 'During training.' }));
  try {
    const { context } = await fetchModelFile();
    setPhase('loading', 'Loading the text…');
    // Every step's windows drawn at once: fresh random windows for each step, from the seed.
    const train = await worker.load('train', { text: CORPUS_URL, context, heldOut: HELD_OUT, seed: 1, windows: steps * batchSize });
    const held = await worker.load('heldout', { text: CORPUS_URL, context, heldOut: HELD_OUT, validation: true });
    await worker.load('val', { dataset: 'heldout', start: 0, count: Math.min(valWindows, held.count) });
    log(`text: ${CORPUS_URL}, ${train.count.toLocaleString('en')} training windows of ${context} bytes, ` +
        `${held.count.toLocaleString('en')} held-out windows (the first ${Math.min(valWindows, held.count)} evaluated)`);
    await buildModel();
    setPhase('training', 'Training in a Web Worker…');
    $('stop').disabled = false;
    const result = await worker.fit('train', {
      epochs: 1, batchSize, shuffle: false, lossEvery: 10,
      evaluateEvery: { dataset: 'val', steps: evalEvery },
      onStep: (s) => {
        // Steps arrive a slice at a time: the rate is the fit's, not the gap between two messages.
        if (s.samplesPerSecond > 0) status.msPerStep = (1000 * batchSize) / s.samplesPerSecond;
        status.steps = s.step;
        $('step').textContent = String(s.step);
        $('rate').textContent = status.msPerStep ? status.msPerStep.toFixed(1) : '–';
        if (s.loss !== null && s.loss !== undefined) {
          status.losses.push({ step: s.step, loss: s.loss });
          $('train-loss').textContent = s.loss.toFixed(3);
        }
        lossView.onStep(s);
        if (s.step % sampleEvery === 0) sample(s.step);
      },
      onEvaluate: (e) => {
        status.evaluations.push(e);
        $('val-loss').textContent = e.loss.toFixed(3);
        lossView.addPoint(e.step, null, e.loss);
      },
    });
    log(result.stopped ? `stopped after ${result.steps} steps` : `trained ${result.steps} steps`);
    const last = await worker.evaluate('val');
    status.evaluations.push({ step: status.steps, loss: last.loss, final: true });
    $('val-loss').textContent = last.loss.toFixed(3);
    log(`validation loss=${last.loss.toFixed(4)} nats/byte`);
    await sample(status.steps);
    setPhase('done', `${result.stopped ? 'Stopped' : 'Done'}: ${status.steps} steps, validation loss ${last.loss.toFixed(3)} nats/byte.`);
  } catch (e) {
    showError('', e);
    setPhase('error', 'Stopped by an error.');
  } finally {
    training = false;
    $('start').disabled = $('load').disabled = false;
    $('stop').disabled = true;
  }
}

// ---- checkpoints: safetensors named by their step; Load puts one into a freshly built model
function checkpointStep(bytes) {
  const n = Number(new DataView(bytes).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 8, n))).__metadata__?.step ?? '0';
}
async function save() {
  const bytes = await worker.saveCheckpoint();
  const name = `char-model-step-${checkpointStep(bytes)}.safetensors`;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  status.saved.push({ name, bytes: bytes.byteLength });
  log(`saved ${name} (${bytes.byteLength.toLocaleString('en')} bytes)`);
}
async function load(file) {
  const bytes = await file.arrayBuffer();
  await buildModel();
  await worker.loadCheckpoint(bytes);
  status.loaded.push({ name: file.name, bytes: bytes.byteLength });
  log(`loaded ${file.name}: step ${checkpointStep(bytes)}`);
  setPhase('idle', `Loaded ${file.name}. Sample to hear it, or Train to start over.`);
  await sample(Number(checkpointStep(bytes)));
}

$('start').addEventListener('click', () => train());
$('stop').addEventListener('click', () => { worker?.stop(); $('stop').disabled = true; });
$('sample').addEventListener('click', () => sample(status.steps));
$('save').addEventListener('click', () => save().catch((e) => showError('Save: ', e)));
$('load').addEventListener('click', () => $('load-file').click());
$('load-file').addEventListener('change', () => {
  const f = $('load-file').files[0];
  if (f) load(f).catch((e) => showError('Load: ', e)).finally(() => { $('load-file').value = ''; });
});
if (params.get('auto') === '1') train();
