// The CPU backend's ms/step in headless Chromium: the single-threaded build and
// the threaded build on 1 and 2 threads (ContextOptions.cpuThreads), on the W1
// MLP (784-256-128-10, Adam, batch 128) and the W2 CNN (bench/compare's TF.js
// CNN, batch 64), in rounds that interleave the three; the machine's load
// average is printed before and after (other work on the machine slows it,
// and a second thread most: the best round is printed beside the median).
//   node bench/cpu_threads_web.mjs [--rounds N] [--steps N] [--out FILE]
// Needs web/dist built by gltrain_build_js (both builds).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium, ISOLATION_HEADERS } from '../scripts/browser.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? def : process.argv[i + 1];
};
const rounds = Number(arg('--rounds', 5)), steps = Number(arg('--steps', 30)), out = arg('--out', null);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const server = await startServer({ '/tests/': path.join(root, 'tests', 'web'), '/': path.join(root, 'web') }, 0, ISOLATION_HEADERS);
const { context, close } = await launchChromium();
const chromiumVersion = () => {
  try {
    return execFileSync(process.env.CHROMIUM || '/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'Chromium';
  }
};
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const loadBefore = load();
const contestants = [['single-threaded build', 'single', 1], ['threaded build, 1 thread', 'threaded', 1],
                     ['threaded build, 2 threads', 'threaded', 2]];
// CPU seconds of Chromium's renderer processes (the page's thread and its Web
// Workers run there): CPU time over wall time says how much of a second core the
// second thread got (on a loaded machine, little).
const TICK = 100;  // USER_HZ
const rendererCpuSeconds = () => {
  let s = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      s += (Number(f[11]) + Number(f[12])) / TICK;
    } catch { /* gone */ }
  }
  return s;
};
const ms = {};  // kind -> contestant -> [ms per round]
const cpuShare = {};  // kind -> contestant -> [renderer CPU / wall per round]
try {
  const page = await context.newPage();
  await page.goto(`${server.url}/tests/threads.html`);
  await page.waitForFunction(() => window.threads !== undefined);
  const hardware = await page.evaluate(() => navigator.hardwareConcurrency);
  for (let r = 0; r < rounds; r++) {
    for (const kind of ['mlp', 'cnn']) {
      // Each round in another order, so that a slow spell of the machine falls on each in turn.
      const order = contestants.map((c, i) => contestants[(i + r) % contestants.length]);
      for (const [label, build, threads] of order) {
        const cpu0 = rendererCpuSeconds(), wall0 = performance.now();
        const t = await page.evaluate(([b, th, k, s]) => window.threads.stepMs(b, th, k, 5, s), [build, threads, kind, steps]);
        const share = (rendererCpuSeconds() - cpu0) / ((performance.now() - wall0) / 1000);
        if (t.cpuThreads !== threads) throw new Error(`${label}: ran on ${t.cpuThreads} threads`);
        ((ms[kind] ??= {})[label] ??= []).push(t.ms);
        ((cpuShare[kind] ??= {})[label] ??= []).push(share);
        console.log(`round ${r + 1} ${kind} ${label}: ${t.ms.toFixed(2)} ms/step, renderer CPU ${(share * 100).toFixed(0)} %`);
      }
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const lines = [
    `${chromiumVersion()} headless, ${os.cpus().length} cores (${os.cpus()[0].model.trim()}), ` +
    `navigator.hardwareConcurrency ${hardware}; ${rounds} interleaved rounds, each the median of ${steps} steps after 5; ` +
    `load average before/after: ${loadBefore} / ${load()}.`, '',
    '| workload | build | ms/step: median of rounds | best round | rounds | vs single-threaded (median; best) | renderer CPU (median) |',
    '|---|---|---|---|---|---|---|'];
  const names = { mlp: 'W1 MLP 784-256-128-10, Adam, batch 128', cnn: 'W2 CNN (TF.js), Adam, batch 64' };
  for (const kind of ['mlp', 'cnn']) {
    const base = median(ms[kind][contestants[0][0]]), baseBest = Math.min(...ms[kind][contestants[0][0]]);
    for (const [label] of contestants) {
      const m = median(ms[kind][label]), best = Math.min(...ms[kind][label]);
      lines.push(`| ${names[kind]} | ${label} | ${m.toFixed(2)} | ${best.toFixed(2)} | ` +
                 `${ms[kind][label].map((v) => v.toFixed(1)).join(', ')} | ${(base / m).toFixed(2)}x; ${(baseBest / best).toFixed(2)}x | ` +
                 `${(median(cpuShare[kind][label]) * 100).toFixed(0)} % |`);
    }
  }
  const text = lines.join('\n') + '\n';
  console.log('\n' + text);
  if (out) fs.writeFileSync(out, text);
} finally {
  await close();
  await server.close();
}
