// A static server on 127.0.0.1 (a random port) for the Chromium side of the
// bench: the repository root (dist/, build-wasm/bench/, node_modules/ for
// transformers.js and onnxruntime-web) and the bench rows under /rows/. It
// sends COOP/COEP so the page is cross-origin isolated (performance.now()
// keeps its fine resolution); onnxruntime-web is still told to use 1 thread.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const types = {
  '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript',
  '.json': 'application/json', '.wasm': 'application/wasm',
};

export function startServer(rowsDir) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.includes('..')) { res.writeHead(403).end(); return; }
    const file = path.startsWith('/rows/') ? join(rowsDir, path.slice(6)) : join(root, path);
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': types[extname(path)] ?? 'application/octet-stream',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
      });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` }));
  });
}
