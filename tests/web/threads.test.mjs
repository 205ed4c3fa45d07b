// The CPU backend's threads in headless Chromium: the threaded build
// (dist/gltrain_wasm_mt.*) on a cross-origin isolated page trains the W1 MLP and
// the W2 CNN to the same bits on 1 and 2 threads, on the page's thread and in a
// TrainingWorker, as the single-threaded build does, and its Tensor products
// give the same bits too; the same page served
// without COOP/COEP loads the single-threaded build and says why.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium, ISOLATION_HEADERS } from '../../scripts/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const web = path.join(root, 'web');
for (const f of ['dist/gltrain_wasm.js', 'dist/gltrain_wasm_mt.js', 'dist/gltrain_wasm_mt.wasm', 'dist/gltrain_wasm_mt.worker.js']) {
  if (!fs.existsSync(path.join(web, f))) throw new Error(`web/${f} is missing: build the module (gltrain_build_js)`);
}
const roots = { '/tests/': path.join(root, 'tests', 'web'), '/': web };
const isolated = await startServer(roots, 0, ISOLATION_HEADERS);
const plain = await startServer(roots);
const { context, close } = await launchChromium();
after(async () => {
  await close();
  await isolated.close();
  await plain.close();
});

async function open(server) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  await page.goto(`${server.url}/tests/threads.html`);
  await page.waitForFunction(() => window.threads !== undefined);
  return { page, errors };
}
const STEPS = 3;

// window.threads[fn](build, cpuThreads, ...args) with the single-threaded build, then the page's (threaded)
// build on 1 and 2 threads; checks what every such comparison checks and returns the three results.
async function onEachBuild(page, what, fn, ...args) {
  const run = (build, threads) => page.evaluate(([f, b, t, a]) => window.threads[f](b, t, ...a), [fn, build, threads, args]);
  const r = { single: await run('single', 1), one: await run('auto', 1), two: await run('auto', 2) };
  assert.equal(r.single.threaded, false);
  assert.equal(r.one.threaded, true, 'an isolated page loads the threaded build');
  assert.equal(r.one.cpuThreads, 1);
  assert.equal(r.two.cpuThreads, 2, r.two.cpuThreadsReason);
  assert.equal(r.one.digest, r.single.digest, `${what}: 1 thread, threaded build = single-threaded build`);
  assert.equal(r.two.digest, r.single.digest, `${what}: 2 threads = 1 thread`);
  return r;
}

test('threaded build: the MLP and the CNN train to the same bits on 1 and 2 threads as the single-threaded build', async () => {
  const { page, errors } = await open(isolated);
  try {
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), true, 'the page is cross-origin isolated');
    for (const kind of ['mlp', 'cnn']) {
      const { single, two } = await onEachBuild(page, kind, 'trainHere', kind, STEPS);
      assert.match(two.cpuThreadsReason, /as asked/);
      assert.match(two.report, /CPU threads: +2: as asked \(new Context\(\{cpuThreads\}\)\)/);
      assert.ok(Number.isFinite(single.lastLoss), `${kind}: a finite loss`);
    }
    // 0: one per hardware thread (navigator.hardwareConcurrency), at most 8.
    const auto = await page.evaluate(async () => {
      const gl = await window.threads.load('auto');
      const ctx = new gl.Context({ backend: 'cpu' });
      const caps = ctx.capabilities;
      ctx.delete();
      return { caps, hardware: navigator.hardwareConcurrency };
    });
    assert.equal(auto.caps.cpuThreads, Math.min(auto.hardware, 8));
    assert.match(auto.caps.cpuThreadsReason, /one per hardware thread \(\d+: navigator.hardwareConcurrency\), at most 8/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('threaded build: Tensor products on the CPU engine give the same bits on 1 and 2 threads as the single-threaded build', async () => {
  const { page, errors } = await open(isolated);
  try {
    // Over 2^20 multiply-adds, so they are split: by rows (M >= N) and by columns, with either operand transposed.
    for (const [shape, transA, transB] of [[[300, 500, 257], false, false], [[128, 784, 256], true, false],
                                           [[257, 300, 129], false, true], [[100, 640, 768], true, true]]) {
      await onEachBuild(page, `${shape.join('x')} transA ${transA} transB ${transB}`, 'productHere', shape, transA, transB);
    }
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('threaded build in a TrainingWorker: 2 threads give the page\'s bits', async () => {
  const { page, errors } = await open(isolated);
  try {
    for (const kind of ['mlp', 'cnn']) {
      const here = await page.evaluate(([k, s]) => window.threads.trainHere('single', 1, k, s), [kind, STEPS]);
      const worker = await page.evaluate(([k, s]) => window.threads.trainInWorker(2, k, s), [kind, STEPS]);
      assert.equal(worker.cpuThreads, 2, worker.cpuThreadsReason);
      assert.equal(worker.digest, here.digest, `${kind}: the worker on 2 threads = the page on 1`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('threaded build: asking for more threads than the page started workers for keeps those there are, and says so', async () => {
  const { page, errors } = await open(isolated);
  try {
    // The report tells the plan until the pool is made (by the first step), then what it got.
    const r = await page.evaluate(async () => ({ caps: await window.threads.trainHere('auto', 64, 'mlp', 1),
                                                 hardware: navigator.hardwareConcurrency }));
    // (The module starts a worker per hardware thread beside the caller's, at most 7, at least 1.)
    assert.equal(r.caps.cpuThreads, Math.max(Math.min(r.hardware, 8) - 1, 1) + 1);
    assert.match(r.caps.cpuThreadsReason, /^only \d of 64 \(as asked \(new Context\(\{cpuThreads\}\)\)\): the page had \d free Web Workers/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('without COOP/COEP the page loads the single-threaded build and the report says why', async () => {
  const { page, errors } = await open(plain);
  try {
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
    const r = await page.evaluate(() => window.threads.trainHere('auto', 2, 'mlp', 1));
    assert.equal(r.threaded, false);
    assert.equal(r.cpuThreads, 1);
    assert.match(r.cpuThreadsReason, /^the single-threaded build: the page is not cross-origin isolated \(serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp\)$/);
    assert.match(r.report, /CPU threads: +1: the single-threaded build: the page is not cross-origin isolated/);
    const refused = await page.evaluate(() => window.threads.load('threaded').then(() => 'loaded', (e) => `${e.kind}: ${e.message}`));
    assert.match(refused, /^UnsupportedError: createGltrain: threads: true, but the page is not cross-origin isolated/);
    const worker = await page.evaluate(() => window.threads.trainInWorker(2, 'mlp', 1));
    assert.equal(worker.cpuThreads, 1);
    assert.match(worker.cpuThreadsReason, /not cross-origin isolated/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
