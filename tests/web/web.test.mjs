// The JavaScript module and the pages in headless Chromium (WebGL2 on SwiftShader):
// the TypeScript declarations, every API test of api_tests.js, and
// the Playground and Fashion-MNIST pages (bounded training, no console errors,
// responsiveness, laptop and phone screenshots saved under $GLTRAIN_ARTIFACTS,
// default build-js/artifacts). Run: node --test tests/web/ (scripts/test.sh does).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
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

// Frames per second while `busy` holds on the page: requestAnimationFrame callbacks
// over up to `ms` (a page that cannot paint runs none), and the longest gap between two.
async function framesPerSecond(page, ms, busy) {
  const r = await page.evaluate(({ ms, busy }) => new Promise((resolve) => {
    const still = new Function(`return ${busy}`);
    let frames = 0, last = null, first = null, worst = 0;
    const frame = (t) => {
      if (first === null) first = t;
      else { frames++; worst = Math.max(worst, t - last); }
      last = t;
      if (t - first < ms && still()) requestAnimationFrame(frame);
      else resolve({ fps: frames / ((t - first) / 1000), windowMs: t - first, worstGapMs: worst });
    };
    requestAnimationFrame(frame);
  }), { ms, busy });
  assert.ok(r.windowMs >= 500, `the page trained for ${r.windowMs.toFixed(0)} ms of the window only: too short to count frames`);
  return r;
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
  const stepsBefore = await page.evaluate(() => window.playground.step);
  const f = await framesPerSecond(page, 2000, 'window.playground.running');
  const s0 = await page.evaluate(() => ({ ...window.playground }));
  console.log(`playground while training on the page's thread (${s0.capabilities.backend}): ${f.fps.toFixed(1)} frames/s, ` +
              `longest gap ${f.worstGapMs.toFixed(0)} ms, ${s0.step - stepsBefore} steps`);
  assert.ok(f.fps >= 20, `the Playground painted ${f.fps.toFixed(1)} frames/s while training (target >= 20)`);
  assert.ok(s0.step > stepsBefore, 'it trained meanwhile');
  assert.ok(s0.samplesPerSecond > 0 && s0.samplesPerSecond < 5e7, `samples/s shown: ${s0.samplesPerSecond}`);
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

// 2 epochs of 300 steps of batch 128 (38,400 of the 58,000 training images), Adam 1e-3.
// Two epochs, and the save while training clicked first: on the CPU engine one epoch
// takes about 2 s, so a click after the frame count could land after the fit's end.
const FASHION_EPOCHS = 2;
const FASHION_STEPS = 300 * FASHION_EPOCHS;
const FASHION_MIN_ACCURACY = 0.75;
test(`fashion-mnist: the MLP trains ${FASHION_STEPS} steps in a worker, test accuracy >= ${FASHION_MIN_ACCURACY}; responsive; no console errors`,
  { timeout: 540000 }, async () => {
    const page = await context.newPage();
    const errors = watch(page);
    await page.setViewportSize(LAPTOP);
    await page.goto(`${server.url}/fashion-mnist.html?model=mlp&train=${300 * 128}&epochs=${FASHION_EPOCHS}&batch=128&evalEvery=100&auto=1`);
    await page.waitForFunction(() => window.fashion?.phase === 'training' && window.fashion.steps > 20, null, { timeout: 240000 });
    // Save checkpoint while training: the weights of the step the worker has reached
    // (read between two slices), named by that step.
    const stepAtClick = await page.evaluate(() => window.fashion.steps);
    const [during] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
    const savedDuring = await page.evaluate(() => window.fashion.saved.at(-1));
    const onCpu = await page.evaluate(() => window.fashion.capabilities.backend === 'cpu');
    assert.ok(savedDuring.during && !savedDuring.snapshot && savedDuring.step >= stepAtClick && savedDuring.step < FASHION_STEPS,
              `saved while training (${onCpu ? 'CPU' : 'GPU'} backend) at step ${stepAtClick}: ${JSON.stringify(savedDuring)}`);
    assert.equal(during.suggestedFilename(), `fashion-mnist-mlp-step-${savedDuring.step}.safetensors`);
    const f = await framesPerSecond(page, 1500, "window.fashion.phase === 'training'");
    console.log(`fashion-mnist while the worker trains (${await page.evaluate(() => window.fashion.capabilities.backend)}): ` +
                `${f.fps.toFixed(1)} frames/s, longest gap ${f.worstGapMs.toFixed(0)} ms`);
    assert.ok(f.fps >= 30, `the page painted ${f.fps.toFixed(1)} frames/s while the worker trained (target >= 30)`);
    const before = await page.isChecked('#smooth');
    await page.click('#smooth');
    assert.equal(await page.isChecked('#smooth'), !before, 'the checkbox reacted');
    const delays = await page.evaluate(() => window.fashion.inputDelaysMs);
    console.log(`fashion-mnist click during worker training: handler ${delays.at(-1).toFixed(1)} ms after the input event`);
    assert.ok(delays.at(-1) < 100, `the click waited ${delays.at(-1)} ms`);
    await page.waitForFunction(() => ['done', 'error'].includes(window.fashion.phase), null, { timeout: 480000 });
    const s = await page.evaluate(() => ({ ...window.fashion, capabilities: null }));
    for (const l of s.lines) console.log(`fashion-mnist: ${l}`);
    assert.equal(s.error, null);
    assert.equal(s.steps, FASHION_STEPS);
    assert.equal(s.history.length, FASHION_EPOCHS);
    assert.ok(s.evaluations.length >= 3, 'validation accuracy arrived while training');
    assert.ok(s.testAccuracy >= FASHION_MIN_ACCURACY, `test accuracy ${s.testAccuracy}`);
    assert.equal(s.perClass.length, 10);
    assert.equal(await page.locator('#samples canvas').count(), 24, 'the test image grid');
    assert.equal(await page.locator('#classes tr').count(), 10, 'per-class rows');
    // gltrain/vis: the confusion matrix (a header and a row per class) and the model summary.
    assert.equal(await page.locator('#confusion table tr').count(), 11, 'confusion matrix rows');
    const diagonal = s.confusion.reduce((sum, row, i) => sum + row[i], 0);
    assert.ok(Math.abs(diagonal / 10000 - s.testAccuracy) < 1e-6, `the matrix's diagonal is the accuracy: ${diagonal}`);
    assert.equal(await page.locator('#summary tr').count(), 5, 'model summary: header, 3 layers, total');
    assert.match(await page.textContent('#summary'), /total235,146/);
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
    await page.waitForFunction(() => window.fashion?.phase === 'training' && window.fashion.steps >= 5, null, { timeout: 240000 });
    // Save while training on the GPU: the weights of the step reached, not the last snapshot's.
    const stepAtClick = await page.evaluate(() => window.fashion.steps);
    const [during] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
    const savedDuring = await page.evaluate(() => window.fashion.saved.at(-1));
    assert.ok(savedDuring.during && !savedDuring.snapshot && savedDuring.step >= stepAtClick && savedDuring.step > 0 && savedDuring.step < 50,
              `saved while training on WebGL2 at step ${stepAtClick}: ${JSON.stringify(savedDuring)}`);
    assert.equal(during.suggestedFilename(), `fashion-mnist-mlp-step-${savedDuring.step}.safetensors`);
    const bytes = fs.readFileSync(await during.path());
    const n = Number(bytes.readBigUInt64LE(0));
    assert.equal(JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')).__metadata__.step, String(savedDuring.step));
    const f = await framesPerSecond(page, 2000, "window.fashion.phase === 'training'");
    console.log(`fashion-mnist while the worker trains on WebGL2: ${f.fps.toFixed(1)} frames/s, longest gap ${f.worstGapMs.toFixed(0)} ms`);
    assert.ok(f.fps >= 30, `the page painted ${f.fps.toFixed(1)} frames/s while the worker trained on WebGL2 (target >= 30)`);
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

// Issue 40, the Fashion-MNIST page: the form is checked before anything is fetched, the
// IDX files are fetched once per page, validation runs at least once an epoch however
// few the images, a new run clears the last one's results, and Stop also ends the test
// evaluation that follows the fit.
test('fashion-mnist: form checked first; data fetched once; validation every epoch; results reset; Stop skips the evaluation',
  { timeout: 300000 }, async () => {
    const page = await context.newPage();
    const errors = watch(page);
    await page.goto(`${server.url}/fashion-mnist.html?model=mlp&train=5000&epochs=2&batch=128&evalEvery=100`);
    await page.waitForFunction(() => window.fashion?.phase === 'idle', null, { timeout: 120000 });
    const state = () => page.evaluate(() => ({ ...window.fashion, capabilities: null }));
    for (const [value, message] of [['0', 'Epochs: expected a whole number from 1 to 50, got 0'],
                                    ['', 'Epochs: empty or not a number (give a whole number from 1 to 50)'],
                                    ['1.5', 'Epochs: expected a whole number from 1 to 50, got 1.5']]) {
      await page.fill('#epochs', value);
      await page.click('#start');
      const s = await state();
      assert.equal(s.error, message);
      assert.equal(await page.textContent('#error'), message);
      assert.equal(s.idxFetches, 0, 'nothing fetched for a bad form');
      assert.equal(s.runs, 0);
    }
    await page.fill('#epochs', '2');
    await page.click('#start');
    await page.waitForFunction(() => ['done', 'error'].includes(window.fashion.phase), null, { timeout: 120000 });
    let s = await state();
    assert.equal(s.error, null);
    const perEpoch = Math.ceil(5000 / 128);
    assert.equal(s.steps, 2 * perEpoch);
    assert.deepEqual(s.evaluations.map((e) => e.step), [perEpoch, 2 * perEpoch], 'validation once an epoch (5,000 images, evalEvery 100)');
    assert.ok(s.testAccuracy > 0.5 && s.testEvaluated === 10000, `tested: ${s.testAccuracy} on ${s.testEvaluated}`);
    assert.equal(await page.locator('#samples canvas').count(), 24);
    // Run 2: 50 epochs, stopped during the fit. The first run's results are gone at once,
    // the files are not fetched again, and the test evaluation is skipped.
    await page.fill('#epochs', '50');
    await page.click('#start');
    await page.waitForFunction(() => window.fashion.phase === 'training' && window.fashion.steps > 5, null, { timeout: 120000 });
    assert.equal(await page.textContent('#test'), '–', 'the last run\'s test accuracy is cleared');
    assert.equal(await page.locator('#samples canvas').count(), 0, 'the last run\'s test images are cleared');
    assert.equal(await page.locator('#classes tr').count(), 1, 'the last run\'s per-class table is cleared');
    assert.equal((await state()).testAccuracy, null);
    await page.click('#stop');
    await page.waitForFunction(() => ['done', 'error'].includes(window.fashion.phase), null, { timeout: 60000 });
    s = await state();
    assert.equal(s.error, null);
    assert.ok(s.steps < 50 * perEpoch, `stopped at step ${s.steps}`);
    assert.equal(s.testEvaluated, 0, 'Stop ended the evaluation too');
    assert.equal(s.testAccuracy, null);
    assert.equal(s.idxFetches, 1, 'the IDX files were fetched once for two runs');
    assert.equal(s.runs, 2);
    assert.match(await page.textContent('#phase'), /^Stopped: \d+ steps/);
    // The backend note speaks JavaScript (the page's ?backend= and the option), not C++.
    const why = await page.textContent('#caps');
    assert.ok(!why.includes('ContextOptions') && /\?backend=(webgl|cpu)/.test(why), why);
    await page.close();
    assert.deepEqual(errors, []);
  });

// The ResNet is a functional model (its residual adds name their "inputs"): it trains in
// the worker on the engine auto chose, validates and is tested.
test('fashion-mnist: the ResNet (a functional model) trains in the worker and is tested', { timeout: 300000 }, async () => {
  const page = await context.newPage();
  const errors = watch(page);
  await page.goto(`${server.url}/fashion-mnist.html?model=resnet&train=2000&epochs=1&batch=64&evalEvery=100&auto=1`);
  await page.waitForFunction(() => ['done', 'error'].includes(window.fashion?.phase), null, { timeout: 240000 });
  const s = await page.evaluate(() => ({ ...window.fashion, capabilities: null }));
  assert.equal(s.error, null);
  assert.equal(s.steps, Math.ceil(2000 / 64));
  assert.ok(s.testAccuracy > 0.3 && s.testEvaluated === 10000, `tested: ${s.testAccuracy} on ${s.testEvaluated}`);
  console.log(`fashion-mnist ResNet: test accuracy ${s.testAccuracy} after ${s.steps} steps on 2,000 images`);
  await page.close();
  assert.deepEqual(errors, []);
});

// model.save('downloads://name') downloads a model file and its checkpoint; served, the
// two load back by URL (Sequential.load) with the same predictions.
test('save: downloads:// gives name.json and name.safetensors; Sequential.load(url) reads them back', { timeout: 120000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gltrain-saved-'));
  const files = await startServer({ '/': dir }, 0, { 'Access-Control-Allow-Origin': '*' });
  const page = await context.newPage();
  const errors = watch(page);
  try {
    await page.goto(`${server.url}/tests/api.html`);
    await page.waitForFunction(() => window.apiTestsReady === true, null, { timeout: 60000 });
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    const before = await page.evaluate(async () => {
      const { default: createGltrain } = await import('/gltrain.js');
      const gl = await createGltrain();
      const ctx = new gl.Context({ backend: 'cpu' });
      const x = new Float32Array([0, 0, 0, 1, 1, 0, 1, 1]), y = new Int32Array([0, 1, 1, 0]);
      const m = new gl.Sequential(ctx, 2).add({ type: 'dense', units: 8, activation: 'tanh' }).add({ type: 'dense', units: 2 })
        .compile({ optimizer: { type: 'adam', lr: 0.05 }, seed: 2 });
      await m.fit(x, y, { epochs: 50, batchSize: 4 });
      await m.save('downloads://xor');
      window.savedModel = { gl, ctx, x };
      return Array.from(m.predict(x));
    });
    await page.waitForFunction(() => true);
    for (let i = 0; i < 50 && downloads.length < 2; i++) await page.waitForTimeout(100);
    assert.deepEqual(downloads.map((d) => d.suggestedFilename()).sort(), ['xor.json', 'xor.safetensors']);
    for (const d of downloads) await d.saveAs(path.join(dir, d.suggestedFilename()));
    const file = JSON.parse(fs.readFileSync(path.join(dir, 'xor.json'), 'utf8'));
    assert.equal(file.input, 2);
    assert.deepEqual(file.layers.map((l) => l.type), ['dense', 'dense']);
    assert.deepEqual(file.compile.optimizer, { type: 'adam', lr: 0.05 });
    const after = await page.evaluate(async (url) => {
      const { gl, ctx, x } = window.savedModel;
      const m = await gl.Sequential.load(ctx, url);
      return { p: Array.from(m.predict(x)), step: m.step };
    }, `${files.url}/xor.json`);
    assert.deepEqual(after.p, before, 'the same predictions from the served files');
    assert.equal(after.step, 50);
  } finally {
    await page.close();
    await files.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(errors, []);
});

// A form field changed as a user's edit ends (a 'change' event), without moving the focus.
const setField = (page, id, value) => page.evaluate(([id, value]) => {
  const el = document.getElementById(id);
  el.value = value;
  el.dispatchEvent(new Event('change'));
}, [id, value]);

// Issue 40, the Playground: settings in the address; learning rate, optimizer and batch
// size applied to the model as it is; Step; a test split with its loss; log-scale labels
// that read right below 1e-3; the engine switch.
test('playground: settings in the URL, applied without a reset; Step; test loss; log axis labels; engine switch',
  { timeout: 300000 }, async () => {
    const page = await context.newPage();
    const errors = watch(page);
    await page.setViewportSize(LAPTOP);
    await page.goto(`${server.url}/playground.html?dataset=xor&lr=0.1&autostart=1&maxSteps=4000`);
    await page.waitForFunction(() => window.playground?.ready && !window.playground.running && window.playground.step >= 4000,
                               null, { timeout: 240000 });
    const state = () => page.evaluate(() => ({ ...window.playground, capabilities: window.playground.capabilities.backend }));
    let s = await state();
    assert.equal(s.error, null);
    assert.ok(s.testLoss !== null && s.testAccuracy >= 0.9, `test split: loss ${s.testLoss}, accuracy ${s.testAccuracy}`);
    assert.ok(s.loss < 1e-3, `XOR's loss fell below 1e-3: ${s.loss}`);
    const labels = (await page.evaluate(() => window.playground.lossAxisLabels)).filter(Boolean).join(' ');
    console.log(`playground: loss ${s.loss.toExponential(2)} after ${s.step} steps; loss axis labels: ${labels}`);
    assert.match(labels, /e-\d/, 'labels below 1e-2 in exponent form');
    const values = labels.split(' ').map(Number);
    assert.ok(values.every((v) => v > 0) && new Set(values).size === values.length, `each label a distinct positive number: ${labels}`);
    // gltrain/vis's log-scale loss chart keeps its curve through a zero loss (drawn at the
    // 1e-9 floor) and labels small values in exponent form.
    const zero = await page.evaluate(async () => {
      const vis = await import('/gltrain-vis.js');
      const el = document.createElement('div');
      document.body.append(el);
      const c = vis.lossChart(el, { log: true });
      for (const [step, loss] of [[1, 0.5], [2, 0], [3, 1e-5]]) c.addPoint(step, loss);
      c.redrawNow();
      el.remove();
      return { loss: c.data[1], labels: [vis.logLabel(1e-4), vis.logLabel(0.5), vis.logLabel(1e-9)] };
    });
    assert.deepEqual(zero, { loss: [0.5, 1e-9, 1e-5], labels: ['1e-4', '0.5', '1e-9'] });
    // Learning rate: the same model goes on (step and weights kept).
    const resets = s.resets;
    await setField(page, 'lr', '0.01');
    s = await state();
    assert.equal(s.resets, resets, 'no reset for a learning rate');
    assert.equal(s.applied, 1);
    assert.ok(s.step >= 4000 && s.accuracy === 1, `kept: step ${s.step}, accuracy ${s.accuracy}`);
    assert.match(await page.evaluate(() => location.search), /lr=0\.01/, 'the address holds the learning rate');
    // Step: one step at a time while paused.
    await page.click('#step-once');
    assert.equal((await state()).step, s.step + 1, 'Step ran one step');
    // Another optimizer and batch size: weights kept, its state afresh, the step count goes on.
    await page.selectOption('#optimizer', 'sgd');
    await setField(page, 'batch', '8');
    s = await state();
    assert.equal(s.resets, resets);
    assert.equal(s.applied, 3);
    assert.ok(s.step >= 4001 && s.accuracy === 1, `kept: step ${s.step}, accuracy ${s.accuracy}`);
    await page.click('#step-once');
    assert.equal((await state()).step, s.step + 1, 'the step count continues after a new optimizer');
    assert.match(await page.evaluate(() => location.search), /optimizer=sgd.*batch=8|batch=8.*optimizer=sgd/);
    // Layers: a new model.
    await setField(page, 'layers', '4');
    s = await state();
    assert.equal(s.resets, resets + 1);
    assert.equal(s.step, 0);
    // The engine switch: WebGL2 on the page, a new model on it, in the address.
    await page.selectOption('#backend', 'webgl');
    s = await state();
    assert.ok(s.capabilities.startsWith('gpu-'), `engine: ${s.capabilities}`);
    assert.equal(s.error, null);
    await page.click('#step-once');
    const afterStep = await state();
    assert.equal(afterStep.step, 1, `a step on WebGL2 (error: ${afterStep.error})`);
    // Training on WebGL2 on the page's own thread: it still paints.
    await page.click('#run');
    await page.waitForFunction(() => window.playground.step > 20, null, { timeout: 60000 });
    const f = await framesPerSecond(page, 1500, 'window.playground.running');
    console.log(`playground while training on WebGL2 on the page's thread: ${f.fps.toFixed(1)} frames/s, longest gap ${f.worstGapMs.toFixed(0)} ms`);
    assert.ok(f.fps >= 20, `the Playground painted ${f.fps.toFixed(1)} frames/s while training on WebGL2 (target >= 20)`);
    await page.click('#run');
    const search = await page.evaluate(() => location.search);
    assert.match(search, /backend=webgl/);
    // The shared address reproduces the setup.
    const shared = await context.newPage();
    await shared.goto(`${server.url}/playground.html${search}`);
    await shared.waitForFunction(() => window.playground?.ready, null, { timeout: 60000 });
    const got = await shared.evaluate(() => ['dataset', 'layers', 'optimizer', 'lr', 'batch', 'backend'].map((id) => document.getElementById(id).value));
    assert.deepEqual(got, ['xor', '4', 'sgd', '0.01', '8', 'webgl']);
    await shared.close();
    await page.close();
    assert.deepEqual(errors, []);
  });

// The text page on a small transformer (tests/web/tiny-char-model.json) and the fortunes corpus
// (web/data/fortunes.txt, setup.sh): 300 steps learn more than byte frequencies, a sample every
// 100 steps, Save, Load (a greedy sample of the loaded model is the trained one's), Stop.
const TEXT_STEPS = 300;
test(`text: a small transformer trains ${TEXT_STEPS} steps on the fortunes in a worker, samples as it learns; Save, Load, Stop`,
  { timeout: 420000 }, async () => {
    const page = await context.newPage();
    const errors = watch(page);
    await page.setViewportSize(LAPTOP);
    await page.goto(`${server.url}/text.html?model=/tests/tiny-char-model.json&steps=${TEXT_STEPS}&batch=16&evalEvery=50` +
                    '&valWindows=128&sampleEvery=100&sampleLength=48&auto=1');
    await page.waitForFunction(() => ['done', 'error'].includes(window.textPage?.phase), null, { timeout: 360000 });
    const s = await page.evaluate(() => ({ ...window.textPage, capabilities: null }));
    for (const l of s.lines) console.log(`text: ${l}`);
    assert.equal(s.error, null);
    assert.equal(s.steps, TEXT_STEPS);
    assert.ok(s.msPerStep > 0, `ms/step shown: ${s.msPerStep}`);
    // Uniform guessing is ln 256 = 5.55 nats a byte, English's byte frequencies alone ~3.4.
    const first = s.evaluations[0].loss, last = s.evaluations.at(-1).loss;
    console.log(`text: validation loss ${first.toFixed(3)} at step ${s.evaluations[0].step} -> ${last.toFixed(3)}; ` +
                `${s.samples.length} samples, last: ${JSON.stringify(s.samples.at(-1).text)}`);
    assert.ok(s.evaluations.length >= TEXT_STEPS / 50, `evaluations: ${s.evaluations.length}`);
    assert.ok(last < first - 0.2 && last < 3.0, `the validation loss fell: ${first} -> ${last}`);
    assert.ok(s.samples.length >= 3, `samples at steps ${s.samples.map((x) => x.step)}`);
    for (const x of s.samples) assert.ok(x.text.length > 0, `an empty sample at step ${x.step}`);
    assert.equal(await page.locator('#samples pre').count(), s.samples.length);
    // Temperature 0 is the arg-max at every byte: the same text twice.
    await page.fill('#temperature', '0');
    await page.dispatchEvent('#temperature', 'input');
    await page.click('#sample');
    await page.waitForFunction((n) => window.textPage.samples.length === n + 1, s.samples.length);
    await page.click('#sample');
    await page.waitForFunction((n) => window.textPage.samples.length === n + 2, s.samples.length);
    const greedy = await page.evaluate(() => window.textPage.samples.slice(-2).map((x) => x.text));
    assert.equal(greedy[0], greedy[1], 'greedy samples agree');
    // Save, then Load into a freshly built model: its greedy sample is the trained model's.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
    assert.equal(download.suggestedFilename(), `char-model-step-${TEXT_STEPS}.safetensors`);
    const file = await download.path();
    const bytes = fs.readFileSync(file);
    const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8'));
    assert.deepEqual(header['tokens/embeddings'].shape, [256, 24], 'the embedding table');
    const before = await page.evaluate(() => window.textPage.samples.length);
    await page.setInputFiles('#load-file', { name: 'trained.safetensors', mimeType: 'application/octet-stream', buffer: bytes });
    await page.waitForFunction((n) => window.textPage.samples.length === n + 1, before, { timeout: 60000 });
    const loaded = await page.evaluate(() => window.textPage.samples.at(-1).text);
    assert.equal(loaded, greedy[0], 'the loaded model writes what the trained one wrote');
    // Train again and Stop it early.
    await page.click('#start');
    await page.waitForFunction(() => window.textPage.phase === 'training' && window.textPage.steps >= 10, null, { timeout: 120000 });
    await page.click('#stop');
    await page.waitForFunction(() => ['done', 'error'].includes(window.textPage.phase), null, { timeout: 120000 });
    const stopped = await page.evaluate(() => ({ error: window.textPage.error, steps: window.textPage.steps }));
    assert.equal(stopped.error, null);
    assert.ok(stopped.steps < TEXT_STEPS, `stopped after ${stopped.steps} steps`);
    await screenshots(page, 'text');
    await page.close();
    assert.deepEqual(errors, []);
  });
