// The main job's web part: serves web/ on 127.0.0.1, opens the Fashion-MNIST page in
// headless Chromium with auto=1 and relays what the page prints (data, model, loss and
// accuracy per epoch, samples/s, test_accuracy=); exits non-zero if the page fails.
//   node scripts/web_train.mjs [--epochs N] [--model mlp|cnn] [--train N] [--batch B] [--backend auto|webgl|cpu]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from './browser.mjs';

const opts = { epochs: '1', model: 'mlp', train: '58000', batch: '128', backend: 'auto' };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const k = argv[i].replace(/^--/, '');
  if (!(k in opts) || argv[i + 1] === undefined) {
    console.error(`web_train: unknown or incomplete argument '${argv[i]}' (--epochs N, --model mlp|cnn, --train N, --batch B, --backend auto|webgl|cpu)`);
    process.exit(2);
  }
  opts[k] = argv[i + 1];
}
const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web');
const server = await startServer({ '/': web });
const { context, close } = await launchChromium();
let ok = false;
try {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  const q = new URLSearchParams({ ...opts, auto: '1' });
  await page.goto(`${server.url}/fashion-mnist.html?${q}`);
  await page.waitForFunction(() => window.fashion?.capabilities || window.fashion?.error, null, { timeout: 120000 });
  const caps = await page.evaluate(() => window.fashion.capabilities);
  if (caps) {
    console.log(`renderer: ${caps.renderer}${caps.softwareRenderer ? ' (software renderer)' : ''}`);
    console.log(`backend: ${caps.backend} (${caps.backendReason})`);
  }
  let printed = 0;
  for (;;) {
    const s = await page.evaluate(() => ({ lines: window.fashion.lines, phase: window.fashion.phase }));
    for (const l of s.lines.slice(printed)) console.log(l);
    printed = s.lines.length;
    if (s.phase === 'done' || s.phase === 'error') { ok = s.phase === 'done'; break; }
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const p of problems) console.log(`web_train: ${p}`);
  if (problems.length) ok = false;
} finally {
  await close();
  await server.close();
}
process.exit(ok ? 0 : 1);
