// Drives the side-by-side benchmark: serves bench/compare (the page), web/ (the
// gltrain module and the Fashion-MNIST files), TensorFlow.js 4.22 and jax-js 0.1.25
// from bench/node_modules on 127.0.0.1, runs the page once in headless Chromium
// (scripts/browser.mjs: Debian's Chromium, SwiftShader WebGL2, WebGPU) and writes the
// markdown report: machine, renderers, one table per repetition with medians
// and speed ratios (the sequence workloads W5, W6 in a table of their own, a row
// per contestant), the native column and the step profiles when given.
//   node bench/compare/run.mjs [--quick] [--reps N] [--only name,name] [--workloads W1,W4] [--out FILE]
//        [--native run1.json,run2.json] [--profile-native FILE] [--profile-web FILE]
// Prints the page's progress; the report goes to --out (else stdout).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from '../../scripts/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const args = process.argv.slice(2);
const opt = (name, def = null) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const quick = args.includes('--quick');
const reps = Number(opt('--reps', '2'));
const timeoutMs = Number(process.env.GLTRAIN_COMPARE_TIMEOUT_MS || 40 * 60 * 1000);

const tfjsDir = path.join(root, 'bench/node_modules/@tensorflow');
for (const p of ['tfjs/dist/tf.min.js', 'tfjs-backend-wasm/dist/tf-backend-wasm.min.js', 'tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js']) {
  if (!fs.existsSync(path.join(tfjsDir, p))) throw new Error(`run.mjs: bench/node_modules/@tensorflow/${p} is missing (npm ci in bench/)`);
}
// Cross-origin isolation lets TensorFlow.js's wasm backend use its threaded build
// (SharedArrayBuffer): each contestant runs at its best.
const server = await startServer({
  '/web/': path.join(root, 'web'),
  '/tfjs/': path.join(tfjsDir, 'tfjs/dist'),
  '/tfjs-wasm/': path.join(tfjsDir, 'tfjs-backend-wasm/dist'),
  '/tfjs-webgpu/': path.join(tfjsDir, 'tfjs-backend-webgpu/dist'),
  '/jax/': path.join(root, 'bench/node_modules/@jax-js/jax/dist'),
  '/': here,
}, 0, { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
const { context, close } = await launchChromium({ webgpu: true });
let state;
try {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  const q = new URLSearchParams({ reps: String(reps), ...(quick ? { quick: '1' } : {}), ...(opt('--only') ? { only: opt('--only') } : {}),
                                     ...(opt('--workloads') ? { workloads: opt('--workloads') } : {}) });
  const response = await page.goto(`${server.url}/index.html?${q}`);
  if (!response.ok()) throw new Error(`run.mjs: the page failed to load (HTTP ${response.status()})`);
  const deadline = Date.now() + timeoutMs;
  let printed = 0;
  for (;;) {
    // The page runs long synchronous loops: evaluate() answers between them.
    const s = await page.evaluate((from) => (window.compare ? { ...window.compare, lines: window.compare.lines.slice(from) }
                                                            : { lines: [], done: false }), printed);
    for (const l of s.lines) console.log(l);
    printed += s.lines.length;
    if (s.done) { state = s; break; }
    if (Date.now() > deadline) throw new Error(`run.mjs: timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 1000));
  }
} finally {
  await close();
  await server.close();
}
if (state.error) {
  console.error('run.mjs: the page failed: ' + state.error);
  process.exit(1);
}

// ---- the report ------------------------------------------------------------------

const natives = (opt('--native') || '').split(',').filter(Boolean).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
const readOpt = (name) => (opt(name) && fs.existsSync(opt(name)) ? fs.readFileSync(opt(name), 'utf8').trim() : null);
const cpuModel = (() => {
  try {
    const m = execFileSync('lscpu', { encoding: 'utf8' }).match(/^Model name:\s*(.+)$/m);
    if (m) return m[1].trim();
  } catch { /* no lscpu */ }
  return os.cpus()[0]?.model ?? 'unknown CPU';
})();

// Rows: key, label, unit kind ('ms' lower is better, 's' lower, 'rate' higher, 'acc' no ratio).
const epochSteps = (r) => r['gltrain']?.w1_epoch_steps ?? r['tfjs-webgl']?.w1_epoch_steps;
const rows = (res) => [
  ['w1_step_ms_loss1', 'W1 MLP, ms/step, loss read every step', 'ms'],
  ['w1_step_ms_loss10', 'W1 MLP, ms/step, loss read every 10 steps', 'ms'],
  ['w1_epoch_s', `W1 MLP, one epoch${quick ? ` (quick: ${epochSteps(res)} steps)` : ''}, s`, 's'],
  ['w1_test_accuracy', 'W1 MLP, test accuracy after it', 'acc'],
  ['w2_step_ms_loss1', 'W2 CNN, ms/step (loss every step)', 'ms'],
  ...state.protocol.sizes.map((n) => [`w3_gflops_${n}`, `W3 matmul N=${n}, GFLOP/s`, 'rate']),
  ['w4_step_ms_loss1', 'W4 MLP 2-8-1, ms/step, loss every step', 'ms'],
  ['w4_step_ms_loss10', 'W4 MLP 2-8-1, ms/step, loss every 10 steps', 'ms'],
];
const fmt = (v, kind) => {
  if (v === undefined || v === null) return '—';
  if (kind === 'acc') return v.toFixed(3);
  if (kind === 'rate') return v.toFixed(2);
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 0.1 ? v.toFixed(2) : v.toPrecision(2);
};
// How many times faster gltrain is (> 1: gltrain ahead).
const speedup = (g, t, kind) => {
  if (g == null || t == null || kind === 'acc') return '—';
  const x = kind === 'rate' ? g / t : t / g;
  return `${x.toFixed(2)}×`;
};

// The sequence workloads' keys and row labels (their own table).
const seqKeys = [['w5_step_ms', 'W5 LSTM'], ['w6_step_ms', 'W6 transformer']];
const ranSome = (n, keys) => state.results.some((res) => keys.some((k) => res[n]?.[k] != null));
const allNames = Object.keys(state.results[0] ?? {});
// The W1-W4 table's columns: contestants with a figure there (gltrain-cpu runs W5, W6 only).
const names = allNames.filter((n) => ranSome(n, rows(state.results[0] ?? {}).map((r) => r[0])));
// gltrain's contestants (the WebGL2 backend, and the automatic choice when present) against TensorFlow.js's.
const ours = names.filter((n) => n.startsWith('gltrain'));
const theirs = names.filter((n) => !n.startsWith('gltrain'));
const label = (n) => ({ gltrain: 'gltrain WebGL2', 'gltrain-cpu': 'gltrain CPU', 'gltrain-auto': 'gltrain auto' })[n] ?? n;
const out = [];
const date = new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
out.push('# gltrain vs TensorFlow.js and jax-js, side by side', '');
out.push(`Written by \`bash scripts/bench_compare.sh${quick ? ' --quick' : ''}${reps !== 2 ? ` --reps ${reps}` : ''}\` on ${date}; nothing here is edited by hand.`);
out.push(`Machine: ${cpuModel}, ${os.cpus().length} cores (shared with other work: compare rows of one run). ` +
         `Browser: ${(state.info.userAgent.match(/(Headless)?Chrome\/[\d.]+/) ?? ['Chromium'])[0]} (${state.info.crossOriginIsolated ? 'cross-origin isolated' : 'not isolated'}, WebGPU on), TensorFlow.js ${state.info.tfjsVersion}, jax-js ${state.info.jaxVersion}.`);
out.push('');
out.push('Renderers:');
for (const n of allNames) out.push(`- ${n}: ${state.info[n]?.renderer ?? 'unknown'}`);
if (natives.length) {
  out.push(`- gltrain native (EGL): ${natives[0].renderer} (${natives[0].version})` +
           (natives[0].engine ? `; models train on the ${natives[0].engine}; W3 multiplies GPU tensors` : ''));
}
out.push('');
out.push('Workloads (bench/compare/compare.js, bench/compare_native.cpp): W1 MLP 784-256-128-10 ReLU, softmax cross-entropy, ' +
         'Adam 1e-3, batch 128 on Fashion-MNIST; W2 CNN conv 8@5x5 ReLU, max pool 2, conv 16@5x5 ReLU, max pool 2, dense 10, ' +
         'Adam, batch 64; W3 square fp32 matmul, each product read back; W4 MLP 2-8-1 tanh, MSE, SGD 0.1, batch 4. ' +
         'WebGPU contestants read asynchronously (await data()); jax-js trains with its own loop (valueAndGrad + jit around ' +
         'the whole step, Adam by hand with TensorFlow.js\'s formula, whole batches in its epoch). ' +
         `Medians over ${state.protocol.steps} single steps (loss every step) or ${state.protocol.blocks} blocks of 10 steps ` +
         `(loss every 10) after ${state.protocol.warmup} warm-up steps (W4: 4x as many). The epoch is each library's own fit() ` +
         '(default loss reads; both train the short last batch). ' +
         '"gltrain WebGL2" is the WebGL2 backend (forced); "gltrain auto" is what gltrain picks by itself (renderers above: ' +
         'on a software renderer, the CPU backend where a startup benchmark says it is faster). ' +
         `Sequence workloads (issue 39), batch ${state.protocol.sequence.batch} windows of ${state.protocol.sequence.context} bytes ` +
         'of the fortunes corpus (web/data/fortunes.txt), loss read every step, medians over ' +
         `${state.protocol.sequence.steps} steps after ${state.protocol.sequence.warmup} warm-up` +
         (state.protocol.sequence.budgetMs ? ` (none begun past ${state.protocol.sequence.budgetMs / 1000} s of timed steps, ` +
                                             'at least 2: of 2 the slower)' : '') + ': W5 LSTM character model, ' +
         'byte ids -> Embedding 256x64 -> LSTM 256 (tanh, hard_sigmoid gates, every step\'s output) -> Dense 256 per step, ' +
         'softmax cross-entropy at every step, Adam 1e-3 (TensorFlow.js: the same layers, its LSTM\'s recurrent kernel ' +
         'glorot_uniform as gltrain\'s); W6 the reference transformer, examples/models/char-transformer.json as the text page ' +
         'builds it (AdamW, schedule, clipping), gltrain only (TensorFlow.js has no attention layer). "gltrain CPU" is the CPU ' +
         'backend (forced). ' +
         '"×" columns: how many times faster gltrain in Chromium is than the other (time ratio other/gltrain; GFLOP/s gltrain/other; > 1: gltrain ahead).');
if (state.info['tfjs-webgl']?.kernelsPerMlpStep) out.push(`TensorFlow.js webgl runs ${state.info['tfjs-webgl'].kernelsPerMlpStep} kernels per W1 step (tf.profile).`);
out.push('');
state.results.forEach((res, i) => {
  const nat = natives[i] ?? natives[natives.length - 1];
  out.push(`## Run ${i + 1} of ${state.results.length}`, '');
  const head = ['workload', ...ours.map(label), ...theirs,
                ...ours.flatMap((g) => theirs.map((t) => `${label(g)} × ${t}`)), ...(nat ? ['gltrain native (EGL)'] : [])];
  if (names.length) out.push(`| ${head.join(' | ')} |`, `|${head.map((_, j) => (j ? '---:' : '---')).join('|')}|`);
  for (const [key, text, kind] of names.length ? rows(res) : []) {
    const v = (n) => res[n]?.[key];
    out.push(`| ${[text, ...ours.map((g) => fmt(v(g), kind)), ...theirs.map((t) => fmt(v(t), kind)),
                   ...ours.flatMap((g) => theirs.map((t) => speedup(v(g), v(t), kind))),
                   ...(nat ? [fmt(nat.results[key], kind)] : [])].join(' | ')} |`);
  }
  const errors = allNames.filter((n) => res[n].error).map((n) => `${n}: ${res[n].error}`);
  if (errors.length) out.push('', 'Errors: ' + errors.join('; '));
  out.push('');
  const seq = seqKeys.filter(([k]) => allNames.some((n) => res[n]?.[k] != null));
  if (seq.length) out.push(...sequenceTable(res, seq, i), '');
});
// Run i's sequence workloads: a row per contestant that ran one; W5 also in steps/s and
// as gltrain's speed-up over TensorFlow.js's (steps/s ratio, > 1: gltrain ahead).
function sequenceTable(res, seq, i) {
  const who = allNames.filter((n) => seq.some(([k]) => res[n]?.[k] != null));
  const rivals = who.filter((n) => !n.startsWith('gltrain') && res[n]?.w5_step_ms != null);
  const w5 = seq.some(([k]) => k === 'w5_step_ms');
  const head = ['contestant', ...(w5 ? ['W5 LSTM, steps/s', 'W5 LSTM, ms/step', ...rivals.map((t) => `W5 × ${t}`)] : []),
                ...seq.filter(([k]) => k !== 'w5_step_ms').map(([, text]) => `${text}, ms/step`)];
  const lines = [`### Sequence models, run ${i + 1}`, '', `| ${head.join(' | ')} |`, `|${head.map((_, j) => (j ? '---:' : '---')).join('|')}|`];
  for (const n of who) {
    const ms = res[n]?.w5_step_ms;
    const cells = w5 ? [ms == null ? '—' : (1000 / ms).toFixed(ms > 1000 ? 3 : 2), fmt(ms, 'ms'),
                        ...rivals.map((t) => (n.startsWith('gltrain') ? speedup(ms, res[t].w5_step_ms, 'ms') : '—'))] : [];
    const others = seq.filter(([k]) => k !== 'w5_step_ms').map(([k]) => fmt(res[n]?.[k], 'ms'));
    lines.push(`| ${[label(n), ...cells, ...others].join(' | ')} |`);
  }
  return lines;
}
const profNative = readOpt('--profile-native'), profWeb = readOpt('--profile-web');
if (profNative || profWeb) {
  out.push('## Where a gltrain step\'s time goes', '');
  out.push('Sequential::profileStep: every pass of one training step timed by GPU timer queries where the context has them ' +
           '(natively on a hardware GPU, EXT_disjoint_timer_query), else run and waited for one by one (so the sum exceeds the step time by the ' +
           'waits; each section\'s renderer line says which), medians of 5, summed by kernel; synthetic data of the workloads\' shapes.', '');
  if (profNative) out.push('### Native (EGL)', '', profNative.replace(/^### /gm, '#### '), '');
  if (profWeb) out.push('### Headless Chromium (WebGL2, the em++ build of bench_compare_native)', '', profWeb.replace(/^### /gm, '#### '), '');
}
const text = out.join('\n') + '\n';
if (opt('--out')) {
  fs.writeFileSync(opt('--out'), text);
  console.log(`run.mjs: wrote ${opt('--out')}`);
} else {
  process.stdout.write(text);
}
// TensorFlow.js's failures are figures (a kernel a backend lacks); gltrain's are
// bugs, so the run fails with them after writing the report.
const failures = state.results.flatMap((res) => Object.keys(res).filter((n) => n.startsWith('gltrain') && res[n].error)
  .map((n) => `${n}: ${res[n].error}`));
if (failures.length) {
  console.error('run.mjs: gltrain failed a workload: ' + [...new Set(failures)].join('; '));
  process.exit(1);
}
