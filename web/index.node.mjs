// Entry for Node's import: the same instance code as require(), loaded once.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cjs = require('./index.cjs');

export const load = cjs.load;
export default load;
