// Serves a built page on 127.0.0.1 for a real browser, until Ctrl-C.
//   node scripts/serve.mjs <dir> [page.html] [port]
import path from 'node:path';
import { startServer, ISOLATION_HEADERS } from './browser.mjs';

const dir = path.resolve(process.argv[2] || 'build-web/examples');
const page = process.argv[3] || 'index.html';
// Cross-origin isolated (COOP + COEP): the page gets SharedArrayBuffer, and
// gltrain loads its threaded build (the CPU backend on Web Workers).
const server = await startServer({ '/': dir }, Number(process.argv[4] || 8080), ISOLATION_HEADERS);
console.log(`serving ${dir} — open ${server.url}/${page} (Ctrl-C to stop)`);
