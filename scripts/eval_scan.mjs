// Finds string evaluation in shipped JS (dist/): `new Function(...)`,
// `Function("...")`, `eval(...)`, and string timers. The package runs under
// `script-src 'self' 'wasm-unsafe-eval'` (docs/api.md, "Content Security
// Policy") only while none of these is in what it ships. Used by prepack
// (scripts/check-dist.mjs) and tests/js/csp_scan.test.mjs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const PATTERNS = [
  /\bnew\s+Function\s*\(/,
  /(?<![\w$.])Function\s*\(\s*['"`]/,
  /(?<![\w$.])eval\s*\(/,
  /\bset(?:Timeout|Interval)\s*\(\s*['"`]/,
];

/** Lines of the .js/.mjs/.cjs files under `dir` that evaluate strings. */
export function stringEvaluations(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    if (!/\.(m|c)?js$/.test(name)) continue;
    const lines = readFileSync(join(dir, name), 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const re of PATTERNS) {
        const m = re.exec(line);
        if (m) found.push(`${name}:${i + 1}: ${line.slice(Math.max(0, m.index - 30), m.index + 50)}`);
      }
    });
  }
  return found;
}
