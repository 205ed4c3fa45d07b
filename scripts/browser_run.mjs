// Runs an em++-built program (the GoogleTest suite, the smoke example) on a
// page in headless Chromium and relays its output; exits with the program's
// status (non-zero on a failed test, a crash, or a timeout). The page sets
// window.gltrainTest = {lines, done, status} (see tests/browser/index.html).
//   node scripts/browser_run.mjs <dir> [page.html] [--isolated] [--file path]... [-- program args...]
// --file serves <dir>/path and copies it into the program's file system at /path.
// --isolated serves the page cross-origin isolated (COOP + COEP): a threaded program's workers need it.
// GoogleTest's variables in this process's environment (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX,
// ...) go into the program's (test pages: tests/browser/index.html).
import path from 'node:path';
import { startServer, launchChromium, ISOLATION_HEADERS } from './browser.mjs';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash < 0 ? argv : argv.slice(0, dash);
const args = dash < 0 ? [] : argv.slice(dash + 1);
const files = [];
for (let i = own.indexOf('--file'); i >= 0; i = own.indexOf('--file')) files.push(...own.splice(i, 2).slice(1));
const isolated = own.includes('--isolated');
if (isolated) own.splice(own.indexOf('--isolated'), 1);
const env = Object.entries(process.env).filter(([k]) => k.startsWith('GTEST_')).map(([k, v]) => `${k}=${v}`);
const dir = path.resolve(own[0] || 'build-web/tests');
const pageName = own[1] || 'index.html';
const timeoutMs = Number(process.env.GLTRAIN_BROWSER_TIMEOUT_MS || 20 * 60 * 1000);

const server = await startServer({ '/': dir }, 0, isolated ? ISOLATION_HEADERS : {});
const { context, close } = await launchChromium();
let status = 1;
try {
  const page = await context.newPage();
  let printed = 0;
  const query = [...args.map((a) => 'arg=' + encodeURIComponent(a)), ...files.map((f) => 'file=' + encodeURIComponent(f)),
                 ...env.map((e) => 'env=' + encodeURIComponent(e))].join('&');
  // Wait only for the navigation to commit: the program may start before the
  // page's load event (its wasm compiled first) and then hold the main thread
  // for the whole suite, so 'load' can come minutes late. The poll below waits
  // for the thread instead, however long the program runs.
  const response = await page.goto(`${server.url}/${pageName}${query ? '?' + query : ''}`, { waitUntil: 'commit' });
  if (!response.ok()) throw new Error(`browser_run: ${pageName} not found in ${dir} (HTTP ${response.status()})`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await page.evaluate((from) => (window.gltrainTest ? {
      lines: window.gltrainTest.lines.slice(from), done: window.gltrainTest.done, status: window.gltrainTest.status,
    } : { lines: [], done: false, bare: document.readyState === 'complete' }), printed);
    if (state.bare) throw new Error(`browser_run: ${pageName} loaded without window.gltrainTest (not a test page?)`);
    for (const l of state.lines) console.log(l);
    printed += state.lines.length;
    if (state.done) { status = state.status; break; }
    if (Date.now() > deadline) { console.log(`browser_run: timed out after ${timeoutMs} ms`); break; }
    await new Promise((r) => setTimeout(r, 250));
  }
} finally {
  await close();
  await server.close();
}
console.log(`browser_run: ${pageName} in Chromium exited with status ${status}`);
process.exit(status === 0 ? 0 : 1);
