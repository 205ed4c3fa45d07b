// The npm package as a user meets it (issue 40): `npm pack` in web/, the tarball
// installed into a fresh app, and README's JavaScript quick start (both of its
// JavaScript blocks, the import map and the Vite config, all copied out of README.md
// here so that README and this test cannot drift) run verbatim in headless Chromium:
// as a plain page with the import map, under Vite's dev server, and from a Vite
// production build. Also: the package's files and exports, and createGltrain() in Node.
// The IDX files the snippets fetch are the first 1,024 Fashion-MNIST training images
// (the same format, a smaller count: the code is README's, the data a fixture).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startServer, launchChromium } from '../../scripts/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const web = path.join(root, 'web');
const ROWS = 1024;

// README's "JavaScript quick start" section: its fenced blocks, in order.
function readmeBlocks() {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## JavaScript quick start');
  assert.ok(start >= 0, 'README has a JavaScript quick start');
  const end = readme.indexOf('\n## ', start + 5);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));
}
const blocks = readmeBlocks();
const quickstart = blocks.find((b) => b.lang === 'js' && b.code.includes('createGltrain'))?.code;
const workerSnippet = blocks.find((b) => b.lang === 'js' && b.code.includes('TrainingWorker.create'))?.code;
const importMap = blocks.find((b) => b.lang === 'html' && b.code.includes('importmap'))?.code;
const viteConfig = blocks.find((b) => b.lang === 'js' && b.code.includes('optimizeDeps'))?.code;

let tmp, app, viteApp, tarball, browser;
before(() => {
  for (const [what, v] of [['the quick start', quickstart], ['the worker snippet', workerSnippet],
                           ['the import map', importMap], ['the Vite config', viteConfig]]) {
    assert.ok(v, `README's JavaScript quick start shows ${what}`);
  }
  assert.match(quickstart, /from 'gltrain'/, 'the quick start imports the package by name');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gltrain-package-'));
  const r = spawnSync('npm', ['pack', '--pack-destination', tmp, '--loglevel=error'], { cwd: web, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  tarball = path.join(tmp, r.stdout.trim().split('\n').at(-1));
  // A fresh app with the tarball installed (no registry: gltrain has no dependencies).
  app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'quickstart-app', private: true, type: 'module' }));
  const i = spawnSync('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, encoding: 'utf8' });
  assert.equal(i.status, 0, i.stdout + i.stderr);
  // The pages: README's blocks verbatim; main.js runs them in order, then says so.
  const main = "await import('./quickstart.js');\nawait import('./worker.js');\nwindow.quickstartDone = true;\n";
  const data = path.join(app, 'data');
  fs.mkdirSync(data);
  const src = path.join(web, 'data');
  const idx = (file, headerBytes, rowBytes) => {
    const b = fs.readFileSync(path.join(src, file)).subarray(0, headerBytes + ROWS * rowBytes);
    b.writeUInt32BE(ROWS, 4);  // the item count
    fs.writeFileSync(path.join(data, file), b);
  };
  idx('train-images-idx3-ubyte', 16, 784);
  idx('train-labels-idx1-ubyte', 8, 1);
  fs.writeFileSync(path.join(app, 'quickstart.js'), quickstart);
  fs.writeFileSync(path.join(app, 'worker.js'), workerSnippet);
  fs.writeFileSync(path.join(app, 'main.js'), main);
  fs.writeFileSync(path.join(app, 'index.html'), `<!doctype html>\n<meta charset="utf-8">\n<title>quick start</title>\n<link rel="icon" href="data:,">\n${importMap}`);
  // The Vite app: the same files, README's vite.config.js, the data in public/.
  viteApp = path.join(app, 'vite-app');
  fs.mkdirSync(path.join(viteApp, 'public'), { recursive: true });
  fs.cpSync(data, path.join(viteApp, 'public', 'data'), { recursive: true });
  for (const f of ['quickstart.js', 'worker.js', 'main.js']) fs.copyFileSync(path.join(app, f), path.join(viteApp, f));
  fs.writeFileSync(path.join(viteApp, 'vite.config.js'), viteConfig);
  fs.writeFileSync(path.join(viteApp, 'index.html'),
                   '<!doctype html>\n<meta charset="utf-8">\n<title>quick start</title>\n<link rel="icon" href="data:,">\n<script type="module" src="./main.js"></script>\n');
});
after(async () => {
  await browser?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Opens url, waits for README's blocks to finish; returns what they printed. Fails on
// any uncaught error, console error or failed request.
async function runQuickstart(url, label) {
  browser ??= await launchChromium();
  const page = await browser.context.newPage();
  const logs = [];
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()} (${m.location().url})`);
    else logs.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') errors.push(`worker console.error: ${m.text()}`); }));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.url()}`); });
  const t0 = Date.now();
  await page.goto(url);
  const failed = new Promise((resolve, reject) => page.on('pageerror', reject));  // fail at once, not at the timeout
  await Promise.race([page.waitForFunction(() => window.quickstartDone === true, null, { timeout: 120000 }), failed]).catch((e) => {
    throw new Error(`${label}: README's quick start did not finish: ${errors.join('; ') || e.message}\n${logs.join('\n')}`);
  });
  await page.close();
  console.log(`${label}: README's quick start and worker snippet ran in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  assert.deepEqual(errors, [], label);
  const epochs = logs.filter((l) => /^epoch \d: accuracy/.test(l));
  assert.equal(epochs.length, 2, `${label}: two epochs logged: ${logs.join(' | ')}`);
  assert.ok(logs.some((l) => /^step \d+: loss /.test(l)), `${label}: losses logged`);
  const steps = logs.filter((l) => /^\d+ /.test(l));  // the worker snippet's onStep: "step loss"
  assert.equal(steps.length, ROWS / 128, `${label}: the worker trained an epoch: ${logs.join(' | ')}`);
  return logs;
}

test('npm pack: the package holds the module, its wasm (single-threaded and threaded), the worker, the types, a README and the LICENSE', () => {
  const files = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.trim().split('\n').map((f) => f.replace(/^package\//, '')).sort();
  assert.deepEqual(files, ['LICENSE', 'README.md', 'dist/gltrain_wasm.js', 'dist/gltrain_wasm.wasm', 'dist/gltrain_wasm_mt.js',
                           'dist/gltrain_wasm_mt.wasm', 'dist/gltrain_wasm_mt.worker.js', 'gltrain-core.js',
                           'gltrain-vis.d.ts', 'gltrain-vis.js', 'gltrain-worker.js', 'gltrain.d.ts', 'gltrain.js', 'package.json']);
  assert.equal(fs.readFileSync(path.join(web, 'LICENSE'), 'utf8'), fs.readFileSync(path.join(root, 'LICENSE'), 'utf8'),
               'web/LICENSE is the repository\'s');
  const pkg = JSON.parse(fs.readFileSync(path.join(app, 'node_modules/gltrain/package.json'), 'utf8'));
  assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './dist/*', './package.json', './vis', './worker']);
  assert.equal(pkg.exports['.'].types, './gltrain.d.ts');
  for (const target of [pkg.exports['.'].import, pkg.exports['./worker'], pkg.exports['./vis'].default, pkg.exports['./vis'].types]) {
    assert.ok(fs.existsSync(path.join(app, 'node_modules/gltrain', target)), `${target} is in the package`);
  }
  const readme = fs.readFileSync(path.join(app, 'node_modules/gltrain/README.md'), 'utf8');
  for (const s of ['importmap', 'optimizeDeps', 'TrainingWorker', 'Node']) assert.ok(readme.includes(s), `the package README covers ${s}`);
});

test('Node: createGltrain() from the installed package reads its wasm from the file system and trains on the CPU', () => {
  const script = `
    import createGltrain from 'gltrain';
    const gl = await createGltrain();
    const ctx = new gl.Context({ backend: 'cpu' });
    const x = new Float32Array([0, 0, 0, 1, 1, 0, 1, 1]), y = new Int32Array([0, 1, 1, 0]);
    const m = new gl.Sequential(ctx, 2).add({ type: 'dense', units: 8, activation: 'tanh' }).add({ type: 'dense', units: 2 })
      .compile({ optimizer: { type: 'adam', lr: 0.05 }, seed: 3 });
    await m.fit(x, y, { epochs: 300, batchSize: 4 });
    console.log(JSON.stringify({ backend: ctx.capabilities.backend, accuracy: m.evaluate(x, y).accuracy }));
    // Bytes from elsewhere: the same module.
    const bytes = (await import('node:fs')).readFileSync(new URL('./node_modules/gltrain/dist/gltrain_wasm.wasm', ${JSON.stringify(pathToFileURL(app + '/').href)}));
    console.log((await createGltrain({ wasmBinary: bytes })).version === gl.version);
    await createGltrain({ wasmUrl: 'file:///nonexistent/gltrain_wasm.wasm' }).catch((e) => console.log(e.kind + ': ' + e.message));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const [result, same, missing] = r.stdout.trim().split('\n');
  assert.deepEqual(JSON.parse(result), { backend: 'cpu', accuracy: 1 });
  assert.equal(same, 'true', 'wasmBinary');
  assert.match(missing, /^IoError: createGltrain: reading \/nonexistent\/gltrain_wasm.wasm: .*ENOENT.*pass createGltrain\(\{ wasmBinary \}\)/);
});

test('README quick start, verbatim: a plain page with the import map, from the installed package', { timeout: 180000 }, async () => {
  const server = await startServer({ '/': app });
  try {
    await runQuickstart(`${server.url}/index.html`, 'import map');
  } finally {
    await server.close();
  }
});

test('README quick start, verbatim: Vite dev server with README\'s vite.config.js', { timeout: 180000 }, async () => {
  const vite = await import(pathToFileURL(path.join(web, 'node_modules/vite/dist/node/index.js')).href);
  const server = await vite.createServer({ root: viteApp, configFile: path.join(viteApp, 'vite.config.js'), logLevel: 'error',
                                           server: { host: '127.0.0.1', port: 0, strictPort: false }, clearScreen: false });
  await server.listen();
  try {
    const { port } = server.httpServer.address();
    await runQuickstart(`http://127.0.0.1:${port}/`, 'Vite dev');
  } finally {
    await server.close();
  }
});

test('README quick start, verbatim: a Vite production build with README\'s vite.config.js', { timeout: 180000 }, async () => {
  const vite = await import(pathToFileURL(path.join(web, 'node_modules/vite/dist/node/index.js')).href);
  const outDir = path.join(viteApp, 'dist');
  await vite.build({ root: viteApp, configFile: path.join(viteApp, 'vite.config.js'), logLevel: 'error', clearScreen: false,
                     build: { outDir } });
  const assets = fs.readdirSync(path.join(outDir, 'assets'));
  assert.ok(assets.some((f) => f.endsWith('.wasm')), `the wasm was emitted: ${assets}`);
  assert.ok(assets.some((f) => /gltrain-worker.*\.js$/.test(f)), `the worker was bundled: ${assets}`);
  const server = await startServer({ '/': outDir });
  try {
    await runQuickstart(`${server.url}/`, 'Vite build');
  } finally {
    await server.close();
  }
});
