// The CSP page's module: loads the package, runs the work on the page and in
// a module worker (served under the same policy), and exposes the answers as
// window.cspResult for the test.
import { load } from '/dist/index.mjs';
import { cspWork, evalAllowed } from './work.mjs';

async function inWorker() {
  const worker = new Worker('worker.mjs', { type: 'module' });
  const answer = new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
  });
  worker.postMessage('go');
  const out = await answer;
  worker.terminate();
  return out;
}

window.cspResult = (async () => {
  try {
    const bd = await load();
    const page = { ...cspWork(bd), evalAllowed: evalAllowed() };
    bd.dispose();
    return { page, worker: await inWorker() };
  } catch (e) {
    return { loadError: String(e?.message ?? e) };
  }
})();
