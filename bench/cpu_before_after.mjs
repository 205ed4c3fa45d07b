// Two builds of bench_cpu (before and after a change) in interleaved rounds:
// each round runs `bench_cpu --profile --threads N` of one, then the other
// (alternating which goes first), and keeps the W1 and W2 ms/step on 1 and N
// threads (the median of --steps steps) and the CPU time a step took on the
// calling thread. Prints markdown tables: the median of the rounds, every
// round, and each build's N-thread speed-up over its own 1-thread time, by
// the clock and by the caller's CPU time (1-thread CPU / the caller's CPU on
// N threads: about the speed-up where each thread has a core of its own, which
// a loaded machine hides from the clock), with the load average before and after.
//   node bench/cpu_before_after.mjs BEFORE AFTER [--rounds R] [--threads N] [--steps S]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const [before, after] = args;
const rounds = opt('--rounds', 5), threads = opt('--threads', 2), steps = opt('--steps', 100);
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

// {"W1 1": ms, "W1 N": ms, "W2 1": ms, "W2 N": ms} of one run.
function run(bin) {
  const out = execFileSync(bin, ['--profile', '--threads', String(threads), '--steps', String(steps)], { encoding: 'utf8' });
  const r = {};
  let at = null;
  for (const line of out.split('\n')) {
    const head = line.match(/^(W\d), (\d+) thread/);
    if (head) at = `${head[1]} ${head[2]}`;
    const step = line.match(/ ([\d.]+) ms the step/);
    if (step) r[at] = Number(step[1]);
    const cpu = line.match(/CPU per step: ([\d.]+) ms the caller/);
    if (cpu) r[`${at} cpu`] = Number(cpu[1]);
  }
  return r;
}

const loadBefore = load();
const got = { before: [], after: [] };
for (let i = 0; i < rounds; i++) {
  for (const which of i % 2 ? ['after', 'before'] : ['before', 'after']) got[which].push(run(which === 'before' ? before : after));
}
const loadAfter = load();
console.log(`${rounds} interleaved rounds of \`bench_cpu --profile --threads ${threads} --steps ${steps}\`, ` +
            `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average before/after: ${loadBefore} / ${loadAfter}.\n`);
console.log('| workload | threads | before: ms/step, median (rounds) | after: ms/step, median (rounds) | after vs before |');
console.log('|---|---|---|---|---|');
for (const w of ['W1', 'W2']) {
  for (const t of [1, threads]) {
    const key = `${w} ${t}`;
    const cell = (which) => { const v = got[which].map((r) => r[key]); return `${median(v).toFixed(2)} (${v.map((x) => x.toFixed(2)).join(', ')})`; };
    const b = median(got.before.map((r) => r[key])), a = median(got.after.map((r) => r[key]));
    console.log(`| ${w} | ${t} | ${cell('before')} | ${cell('after')} | ${(b / a).toFixed(2)}x |`);
  }
}
console.log(`\n| workload | ${threads} threads vs 1, before (median of rounds' ratios) | after |`);
console.log('|---|---|---|');
for (const w of ['W1', 'W2']) {
  const ratio = (which) => median(got[which].map((r) => r[`${w} 1`] / r[`${w} ${threads}`])).toFixed(2);
  console.log(`| ${w} | ${ratio('before')}x | ${ratio('after')}x |`);
}
console.log(`\n| workload | CPU ms/step on 1 thread, before / after | the caller's CPU ms/step on ${threads} threads, ` +
            `before / after | ${threads} threads vs 1 by CPU time, before | after |`);
console.log('|---|---|---|---|---|');
for (const w of ['W1', 'W2']) {
  const m = (which, key) => median(got[which].map((r) => r[key]));
  const one = (which) => m(which, `${w} 1 cpu`), many = (which) => m(which, `${w} ${threads} cpu`);
  console.log(`| ${w} | ${one('before').toFixed(2)} / ${one('after').toFixed(2)} | ${many('before').toFixed(2)} / ` +
              `${many('after').toFixed(2)} | ${(one('before') / many('before')).toFixed(2)}x | ${(one('after') / many('after')).toFixed(2)}x |`);
}
