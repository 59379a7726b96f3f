// Serves the in-browser demo on http://127.0.0.1:PORT/web/demo/ (default
// port 8080): the repository root, with /model/ mapped to the austen-kjv-2m
// model in models/austen-kjv-2m/ (or --model DIR). The page runs from source
// (web/index.browser.mjs and web/src/, web/gpu/) over the wasm build in
// build-wasm/web/: build it first (npm run build).
//   node scripts/serve-demo.mjs [--port 8080] [--model DIR]
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({ options: { port: { type: 'string', default: '8080' }, model: { type: 'string' } } });
const root = fileURLToPath(new URL('..', import.meta.url));
const modelDir = a.model ?? fileURLToPath(new URL('../models/austen-kjv-2m/', import.meta.url));
const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.svg': 'image/svg+xml' };

export function startDemoServer(port = 0) {
  const server = createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.endsWith('/')) path += 'index.html';
    if (path.includes('..')) { res.writeHead(403).end(); return; }
    const file = path.startsWith('/model/') ? join(modelDir, path.slice('/model/'.length)) : join(root, path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () =>
    resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await startDemoServer(Number(a.port));
  console.log(`demo: ${url}/web/demo/  (Ctrl-C to stop)`);
}
