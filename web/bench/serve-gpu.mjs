// npm run bench:gpu: serves the repository on http://127.0.0.1 (a secure
// context, so navigator.gpu exists) and prints the bench page's address.
import { startServer } from '../../tests/browser/server.mjs';

const { url } = await startServer(Number(process.env.PORT ?? 8090));
console.log(`open ${url}/web/bench/gpu.html in a WebGPU browser (npm run build first); Ctrl-C to stop`);
