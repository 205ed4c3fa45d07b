// Shared by the browser test runner, the smoke example and the benchmarks:
// a static file server on 127.0.0.1 and Debian's Chromium, headless, driven
// by playwright-core (never a downloaded browser).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.gz': 'application/octet-stream', '.ts': 'text/plain',
};

// The headers that make a page cross-origin isolated: SharedArrayBuffer, so
// WebAssembly threads (gltrain's threaded build) and high-resolution timers.
export const ISOLATION_HEADERS = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
});

// Serves `roots` (URL prefix -> directory) on 127.0.0.1 at a free port; `headers`
// go on every file (e.g. cross-origin isolation, which WebAssembly threads need).
export async function startServer(roots, port = 0, headers = {}) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    for (const [prefix, dir] of Object.entries(roots)) {
      if (!url.startsWith(prefix)) continue;
      let file = path.join(dir, url.slice(prefix.length));
      if (!file.startsWith(path.resolve(dir))) break;  // no escaping the root
      if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
      if (!fs.existsSync(file)) continue;
      res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] || 'application/octet-stream',
                           'Cache-Control': 'no-store', ...headers });
      fs.createReadStream(file).pipe(res);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found: ' + url);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

// Headless Chromium with WebGL2 on SwiftShader; flags that work as root here.
// webgpu: WebGPU too (--enable-unsafe-webgpu; the comparison's WebGPU contestants).
export async function launchChromium({ headless = true, webgpu = false } = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gltrain-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader',
           '--use-angle=swiftshader', '--ignore-gpu-blocklist', ...(webgpu ? ['--enable-unsafe-webgpu'] : [])],
  });
  const close = async () => { await context.close(); fs.rmSync(userDataDir, { recursive: true, force: true }); };
  return { context, close };
}
