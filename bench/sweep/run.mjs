// Drives the WebGL2 matmul sweep (bench/sweep/index.html) in headless Chromium
// (scripts/browser.mjs: SwiftShader) and writes its table:
//   node bench/sweep/run.mjs [--rounds R] [--shapes 'M,K,N;M,K,N'] [--out FILE]
// Fails when gltrain's product (its own kernel choice) is behind TensorFlow.js
// webgl's on a shape, by the median over the rounds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from '../../scripts/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const args = process.argv.slice(2);
const opt = (name, def = null) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
// Square and rectangular, 100 to 4096, powers of two and not; K past 1024 (the
// transform-feedback kernel's slices) and C wider than its staging row allows
// (the block kernel and a copy). N = 4096 square is left out: ~140 GFLOP a
// product, minutes per contestant on SwiftShader's two cores.
const defaultShapes = [
  [100, 100, 100], [128, 128, 128], [256, 256, 256], [384, 384, 384], [500, 500, 500], [512, 512, 512],
  [768, 768, 768], [1000, 1000, 1000], [1024, 1024, 1024], [1040, 1040, 1040], [1536, 1536, 1536], [2048, 2048, 2048],
  [4096, 256, 256], [256, 4096, 256], [256, 256, 4096], [100, 4096, 100], [128, 784, 4096], [4096, 100, 4096],
  [1000, 2000, 300], [300, 3000, 1000], [2048, 1024, 512], [3000, 300, 3000],
].map((s) => s.join(',')).join(';');
const rounds = Number(opt('--rounds', '3'));
const shapes = opt('--shapes', defaultShapes);

const server = await startServer({
  '/web/': path.join(root, 'web'),
  '/tfjs/': path.join(root, 'bench/node_modules/@tensorflow/tfjs/dist'),
  '/': here,
});
const { context, close } = await launchChromium();
let state;
try {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(`${server.url}/index.html?${new URLSearchParams({ rounds: String(rounds), shapes })}`);
  let printed = 0;
  for (;;) {
    const s = await page.evaluate((from) => (window.sweep ? { ...window.sweep, lines: window.sweep.lines.slice(from) }
                                                          : { lines: [], done: false }), printed);
    for (const l of s.lines) console.log(l);
    printed += s.lines.length;
    if (s.done) { state = s; break; }
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

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const names = Object.keys(state.results[0].ms);
const rate = (r, name) => r.gflop / (median(r.ms[name]) / 1000);
const out = [];
const date = new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
out.push('# The WebGL2 matmul sweep: gltrain against TensorFlow.js webgl', '');
out.push(`Written by \`node bench/sweep/run.mjs\` on ${date}; nothing here is edited by hand. ` +
         `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores (shared with other work). ` +
         `Browser: ${(state.info.userAgent.match(/(Headless)?Chrome\/[\d.]+/) ?? ['Chromium'])[0]}, TensorFlow.js ${state.info.tfjs}.`);
out.push('');
for (const n of names.filter((x) => x !== 'tfjs-webgl')) out.push(`- ${n}: ${state.info[n]}`);
out.push('');
out.push(`C = A·B, A M x K, B K x N, fp32 from the host; each product timed with C read back. Per shape one warm-up ` +
         `product each, then ${rounds} rounds in which each contestant times one product (the median of as many as run in 300 ms, ` +
         'at most 25), in turn. GFLOP/s: 2 M K N over the median time. "gltrain" is its own kernel choice; ' +
         '"feedback off" forces the fragment kernels (the tensors then take the block kernel\'s row-interleaved layout). ' +
         '"×": gltrain over tfjs-webgl, median over the rounds (worst round).');
out.push('');
const head = ['M x K x N', ...names.map((n) => `${n} GFLOP/s`), 'gltrain × tfjs-webgl (worst round)'];
out.push(`| ${head.join(' | ')} |`, `|${head.map((_, j) => (j ? '---:' : '---')).join('|')}|`);
const behind = [];
for (const r of state.results) {
  const perRound = r.ms['gltrain'].map((t, i) => r.ms['tfjs-webgl'][i] / t);
  const x = rate(r, 'gltrain') / rate(r, 'tfjs-webgl');
  if (x < 1) behind.push(`${r.m}x${r.k}x${r.n}`);
  out.push(`| ${r.m} x ${r.k} x ${r.n} | ${names.map((n) => rate(r, n).toFixed(2)).join(' | ')} | ` +
           `${x.toFixed(2)}× (${Math.min(...perRound).toFixed(2)}×) |`);
}
const text = out.join('\n') + '\n';
if (opt('--out')) fs.writeFileSync(opt('--out'), text); else process.stdout.write(text);
if (behind.length) {
  console.error('run.mjs: gltrain behind tfjs-webgl at ' + behind.join(', '));
  process.exit(1);
}
