// The matmul sweep's page: for each shape (M x K times K x N, fp32), one warm-up
// product per contestant (shader compiles: TensorFlow.js bakes shapes into its
// shaders), then `rounds` rounds in which each contestant in turn times one
// product plus reading C back (timeOne), so a loaded machine slows every
// contestant alike. Results land in window.sweep
// (read by bench/sweep/run.mjs).
import createGltrain from '/web/gltrain.js';

const params = new URLSearchParams(location.search);
const rounds = Number(params.get('rounds') || 3);
const shapes = params.get('shapes').split(';').map((s) => s.split(',').map(Number));
const state = { lines: [], done: false, error: null, results: [], info: {} };
window.sweep = state;
const log = (s) => { state.lines.push(s); document.getElementById('log').textContent += s + '\n'; };
const now = () => performance.now();
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const yieldNow = () => new Promise((r) => setTimeout(r, 0));
function randomMatrix(n, seed) {
  let s = seed >>> 0;
  const m = new Float32Array(n);
  for (let i = 0; i < n; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; m[i] = (s / 4294967296) * 2 - 1; }
  return m;
}

function gltrainContestant(gl, name, options) {
  const ctx = new gl.Context({ backend: 'webgl', ...options });
  state.info[name] = `${ctx.capabilities.renderer}; feedback ${ctx.capabilities.feedbackKernels ? 'on' : 'off'}`;
  return {
    name,
    setup(m, k, n, a, b) {
      const A = new gl.Tensor(ctx, m, k, a), B = new gl.Tensor(ctx, k, n, b), C = new gl.Tensor(ctx, m, n);
      return { run: () => { gl.matmul(A, B, C); return C.download(); }, free: () => { A.delete(); B.delete(); C.delete(); } };
    },
  };
}
function tfjsContestant() {
  return {
    name: 'tfjs-webgl',
    setup(m, k, n, a, b) {
      const A = tf.tensor2d(a, [m, k]), B = tf.tensor2d(b, [k, n]);
      return {
        run: () => { const C = tf.matMul(A, B); const d = C.dataSync(); C.dispose(); return d; },
        free: () => { A.dispose(); B.dispose(); },
      };
    },
  };
}

// ms of one product + read-back: the median of as many as run in 300 ms (at
// most 25; one where a product takes longer).
function timeOne(run) {
  const t = [];
  const t0 = now();
  do {
    const s = now();
    const out = run();
    t.push(now() - s);
    if (!Number.isFinite(out[out.length - 1])) throw new Error('a non-finite product');
  } while (t.length < 25 && now() - t0 < 300);
  return median(t);
}

try {
  const gl = await createGltrain();
  await tf.setBackend('webgl');
  await tf.ready();
  state.info.tfjs = tf.version.tfjs;
  state.info.userAgent = navigator.userAgent;
  const contestants = [gltrainContestant(gl, 'gltrain', {}), gltrainContestant(gl, 'gltrain-feedback-off', { feedback: 'off' }),
                       tfjsContestant()];
  for (const [m, k, n] of shapes) {
    const a = randomMatrix(m * k, 1), b = randomMatrix(k * n, 2);
    const gflop = (2 * m * k * n) / 1e9;
    const set = contestants.map((c) => c.setup(m, k, n, a, b));
    const ms = contestants.map(() => []);
    set.forEach((s) => s.run());  // warm-up: compiles
    for (let r = 0; r < rounds; r++) {
      set.forEach((s, i) => ms[i].push(timeOne(s.run)));
      await yieldNow();
    }
    set.forEach((s) => s.free());
    const res = { m, k, n, gflop, ms: Object.fromEntries(contestants.map((c, i) => [c.name, ms[i]])) };
    state.results.push(res);
    log(`${m}x${k}x${n}: ` + contestants.map((c, i) => `${c.name} ${(gflop / (median(ms[i]) / 1000)).toFixed(2)}`).join(', ') + ' GFLOP/s');
  }
} catch (e) {
  state.error = String(e && e.stack || e);
  log('error: ' + state.error);
}
state.done = true;
