// Serves a built page on 127.0.0.1 for a real browser, until Ctrl-C.
//   node scripts/serve.mjs <dir> [page.html] [port]
import path from 'node:path';
import { startServer } from './browser.mjs';

const dir = path.resolve(process.argv[2] || 'build-web/examples');
const page = process.argv[3] || 'index.html';
const server = await startServer({ '/': dir }, Number(process.argv[4] || 8080));
console.log(`serving ${dir} — open ${server.url}/${page} (Ctrl-C to stop)`);
