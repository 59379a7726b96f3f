// The CSP page's module worker: the same work in a worker realm.
import { load } from '/dist/index.mjs';
import { cspWork, evalAllowed } from './work.mjs';

onmessage = async () => {
  try {
    const bd = await load();
    postMessage({ ...cspWork(bd), evalAllowed: evalAllowed() });
    bd.dispose();
  } catch (e) {
    postMessage({ loadError: String(e?.message ?? e) });
  }
};
