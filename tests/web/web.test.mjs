// The JavaScript module and the pages in headless Chromium (WebGL2 on SwiftShader):
// the TypeScript declarations, every API test of api_tests.js, and
// the Playground and Fashion-MNIST pages (bounded training, no console errors,
// responsiveness, laptop and phone screenshots saved under $GLTRAIN_ARTIFACTS,
// default build-js/artifacts). Run: node --test tests/web/ (scripts/test.sh does).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from '../../scripts/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const web = path.join(root, 'web');
const artifacts = process.env.GLTRAIN_ARTIFACTS || path.join(root, 'build-js', 'artifacts');
fs.mkdirSync(artifacts, { recursive: true });
for (const f of ['dist/gltrain_wasm.js', 'dist/gltrain_wasm.wasm', 'dist/vendor/uPlot.esm.js', 'data/t10k-images-idx3-ubyte']) {
  if (!fs.existsSync(path.join(web, f))) throw new Error(`web/${f} is missing: run scripts/setup.sh and build the module (gltrain_build_js)`);
}

const server = await startServer({ '/tests/': path.join(root, 'tests', 'web'), '/': web });
const { context, close } = await launchChromium();
after(async () => {
  await close();
  await server.close();
});

const LAPTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

// Collects console errors and uncaught exceptions of a page (and its workers), and
// Chromium's warning that a pixel-pack buffer was read over before its last read was
// taken (asynchronous reads must not cost the shadow copy that makes them free).
const readOverWarning = /READ-usage buffer was written, then fenced, but written again/;
function watch(page, allowed = () => false) {
  const errors = [];
  const check = (where, m) => {
    if (m.type() === 'error' && !allowed(m)) errors.push(`${where}console.error: ${m.text()} (${m.location().url})`);
    else if (readOverWarning.test(m.text())) errors.push(`${where}console.warn: ${m.text()}`);
  };
  page.on('console', (m) => check('', m));
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('worker', (w) => w.on('console', (m) => check('worker ', m)));
  return errors;
}
async function screenshots(page, name) {
  for (const [label, size] of [['laptop', LAPTOP], ['phone', PHONE]]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(300);  // charts resize on a ResizeObserver
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name} at ${label} width scrolls sideways by ${overflow}px`);
    await page.screenshot({ path: path.join(artifacts, `${name}-${label}.png`), fullPage: true });
  }
}

test('TypeScript: tsc --noEmit accepts tests/web/usage.ts against web/gltrain.d.ts', () => {
  const r = spawnSync(path.join(web, 'node_modules/.bin/tsc'), ['--noEmit', '-p', path.join(root, 'tests/web')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

// ---- API tests: one page, each test a subtest (the names come from the page).
test('api', { timeout: 900000 }, async (t) => {
  const page = await context.newPage();
  const errors = watch(page, (m) => m.location().url.includes('/data/missing'));  // the 404 one test asks for
  await page.goto(`${server.url}/tests/api.html`);
  // A page that fails to load (a syntax error in api_tests.js) says why, not only that it timed out.
  await page.waitForFunction(() => window.apiTestsReady === true, null, { timeout: 60000 }).catch((e) => {
    throw new Error(`the API test page did not load: ${errors.join('; ') || e.message}`);
  });
  const names = await page.evaluate(() => window.apiTests.names);
  assert.ok(names.length >= 10, 'the API tests loaded');
  for (const name of names) {
    await t.test(name, { timeout: 180000 }, async () => {
      const r = await page.evaluate((n) => window.apiTests.run(n).then(() => 'ok', (e) => `FAILED: ${e.stack || e}`), name);
      assert.equal(r, 'ok');
    });
  }
  await t.test('no console errors on the API page', async () => {
    await page.close();
    assert.deepEqual(errors, []);
  });
});

test('index page loads without console errors', async () => {
  const page = await context.newPage();
  const errors = watch(page);
  await page.goto(`${server.url}/index.html`);
  await page.waitForLoadState('networkidle');
  await screenshots(page, 'index');
  await page.close();
  assert.deepEqual(errors, []);
});

test('playground: XOR reaches 100 % training accuracy within 2000 steps; no console errors', { timeout: 300000 }, async () => {
  const page = await context.newPage();
  const errors = watch(page);
  await page.setViewportSize(LAPTOP);
  await page.goto(`${server.url}/playground.html?dataset=xor&autostart=1&maxSteps=2000&stopAtAccuracy=1`);
  await page.waitForFunction(() => window.playground?.ready && !window.playground.running && window.playground.step > 0,
                             null, { timeout: 240000 });
  const s = await page.evaluate(() => ({ ...window.playground }));
  console.log(`playground XOR: accuracy ${s.accuracy} after ${s.step} steps, loss ${s.loss}`);
  assert.equal(s.error, null);
  assert.equal(s.accuracy, 1, `accuracy ${s.accuracy} after ${s.step} steps`);
  assert.ok(s.step <= 2000);
  assert.equal(s.step % 10, 0, 'the page stops at a step where it checks the accuracy (every 10th)');
  assert.ok(s.redraws >= 1, 'the decision boundary was drawn');
  await screenshots(page, 'playground');
  await page.close();
  assert.deepEqual(errors, []);
});

test('playground: the page answers a click within 100 ms while training on its own thread', { timeout: 300000 }, async () => {
  const page = await context.newPage();
  const errors = watch(page);
  await page.goto(`${server.url}/playground.html?dataset=spirals&layers=16,16&autostart=1&maxSteps=1000000`);
  await page.waitForFunction(() => window.playground?.step > 30, null, { timeout: 120000 });
  const t0 = Date.now();
  await page.click('#run');  // pauses
  await page.waitForFunction(() => !window.playground.running, null, { timeout: 5000 });
  const roundTrip = Date.now() - t0;
  const s = await page.evaluate(() => ({ ...window.playground }));
  console.log(`playground click during training: handler ${s.lastClickDelayMs.toFixed(1)} ms after the input event, ${roundTrip} ms round trip`);
  assert.ok(s.lastClickDelayMs < 100, `the click waited ${s.lastClickDelayMs} ms`);
  assert.equal(await page.textContent('#run'), 'Resume');
  await page.close();
  assert.deepEqual(errors, []);
});

// 300 steps of batch 128 (38,400 of the 58,000 training images, 1 epoch), Adam 1e-3.
const FASHION_STEPS = 300;
const FASHION_MIN_ACCURACY = 0.75;
test(`fashion-mnist: the MLP trains ${FASHION_STEPS} steps in a worker, test accuracy >= ${FASHION_MIN_ACCURACY}; responsive; no console errors`,
  { timeout: 540000 }, async () => {
    const page = await context.newPage();
    const errors = watch(page);
    await page.setViewportSize(LAPTOP);
    await page.goto(`${server.url}/fashion-mnist.html?model=mlp&train=${FASHION_STEPS * 128}&epochs=1&batch=128&evalEvery=100&auto=1`);
    await page.waitForFunction(() => window.fashion?.phase === 'training' && window.fashion.steps > 20, null, { timeout: 240000 });
    const before = await page.isChecked('#smooth');
    await page.click('#smooth');
    assert.equal(await page.isChecked('#smooth'), !before, 'the checkbox reacted');
    const delays = await page.evaluate(() => window.fashion.inputDelaysMs);
    console.log(`fashion-mnist click during worker training: handler ${delays.at(-1).toFixed(1)} ms after the input event`);
    assert.ok(delays.at(-1) < 100, `the click waited ${delays.at(-1)} ms`);
    // Save checkpoint while training: the worker answers at once with the last snapshot
    // (every 100 steps, and the fit's start) — on the CPU backend, which keeps none, the state now.
    const [during] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
    const savedDuring = await page.evaluate(() => window.fashion.saved.at(-1));
    const onCpu = await page.evaluate(() => window.fashion.capabilities.backend === 'cpu');
    assert.ok(savedDuring.snapshot === !onCpu && savedDuring.step < FASHION_STEPS && (onCpu || savedDuring.step % 100 === 0),
              `saved while training (${onCpu ? 'CPU' : 'GPU'} backend): ${JSON.stringify(savedDuring)}`);
    assert.equal(during.suggestedFilename(), `fashion-mnist-mlp-step-${savedDuring.step}.safetensors`);
    await page.waitForFunction(() => ['done', 'error'].includes(window.fashion.phase), null, { timeout: 480000 });
    const s = await page.evaluate(() => ({ ...window.fashion, capabilities: null }));
    for (const l of s.lines) console.log(`fashion-mnist: ${l}`);
    assert.equal(s.error, null);
    assert.equal(s.steps, FASHION_STEPS);
    assert.equal(s.history.length, 1);
    assert.ok(s.evaluations.length >= 3, 'validation accuracy arrived while training');
    assert.ok(s.testAccuracy >= FASHION_MIN_ACCURACY, `test accuracy ${s.testAccuracy}`);
    assert.equal(s.perClass.length, 10);
    assert.equal(await page.locator('#samples canvas').count(), 24, 'the test image grid');
    assert.equal(await page.locator('#classes tr').count(), 10, 'per-class rows');
    assert.ok((await page.textContent('#report')).includes('RGBA32F renderable'), 'capability report');
    assert.equal(await page.isHidden('#profile-box'), onCpu, 'a step profile where the model trained on the GPU');
    // Save checkpoint: the trained model as a safetensors download, at the fit's last step.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
    assert.equal(download.suggestedFilename(), `fashion-mnist-mlp-step-${FASHION_STEPS}.safetensors`);
    const bytes = fs.readFileSync(await download.path());
    const n = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
    assert.equal(header.__metadata__.step, String(FASHION_STEPS), 'the checkpoint\'s step');
    assert.deepEqual(header['dense_0/kernel'].shape, [784, 256], 'the first layer\'s kernel');
    assert.equal(bytes.length, 8 + n + Math.max(...Object.values(header).filter((t) => t.data_offsets).map((t) => t.data_offsets[1])),
                 'the file holds every tensor\'s data');
    await screenshots(page, 'fashion-mnist');
    await page.close();
    assert.deepEqual(errors, []);
  });

// The same page with the worker's Context on WebGL2 (?backend=webgl; on a software renderer
// 'auto' may pick the CPU backend, as above): 50 steps, then where a step's time goes.
test('fashion-mnist on WebGL2: the MLP trains 50 steps in a worker; the step profile is shown; no console errors',
  { timeout: 300000 }, async () => {
    const page = await context.newPage();
    const errors = watch(page);
    await page.goto(`${server.url}/fashion-mnist.html?model=mlp&train=6400&epochs=1&batch=128&evalEvery=25&backend=webgl&auto=1`);
    await page.waitForFunction(() => ['done', 'error'].includes(window.fashion?.phase), null, { timeout: 240000 });
    const s = await page.evaluate(() => ({ ...window.fashion }));
    for (const l of s.lines) console.log(`fashion-mnist (webgl): ${l}`);
    assert.equal(s.error, null);
    assert.ok(s.capabilities.backend.startsWith('gpu-'), `trained on ${s.capabilities.backend}`);
    assert.equal(s.steps, 50);
    assert.ok(s.testAccuracy >= 0.6, `test accuracy ${s.testAccuracy}`);
    const kernels = s.profile.kernels.map((k) => k.kernel);
    assert.ok(kernels.some((k) => k.startsWith('forward/matmul')) && kernels.includes('update/adam'), `profiled kernels: ${kernels}`);
    assert.ok(s.profile.passes >= 10 && s.profile.totalMs > 0, `profile: ${JSON.stringify(s.profile)}`);
    assert.equal(await page.locator('#profile tr').count(), kernels.length, 'a row per kernel');
    assert.equal(await page.isVisible('#profile-box'), true);
    await page.close();
    assert.deepEqual(errors, []);
  });
