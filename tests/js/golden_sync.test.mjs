// tests/golden/bregman_golden.json is a copy of the spec's golden vectors (so
// the repository builds on its own); it must stay identical to the spec's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

test('the vendored golden vectors equal shared/spec/golden', () => {
  const ours = readFileSync(new URL('../golden/bregman_golden.json', import.meta.url));
  const spec = readFileSync(new URL('../../../shared/spec/golden/bregman_golden.json', import.meta.url));
  assert.ok(ours.equals(spec), 'tests/golden/bregman_golden.json differs from ../shared/spec/golden: copy it over');
});
