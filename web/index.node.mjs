// Entry for Node's import (and Deno's, which resolves the 'node' condition):
// the same instance code as require(), loaded once, through a static import
// that bundlers follow (a createRequire() call they cannot: an esbuild
// --platform=node bundle looked for ./index.cjs beside itself).
import { load as loadCjs } from './index.cjs';

export const load = loadCjs;
export default load;
