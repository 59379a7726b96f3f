// The Bregman golden vectors (tests/golden/) are the spec's (spec/bregman.md
// §10): 40-digit solutions, cross-checked there against a brute force. The
// native, wasm, Node and browser tests all read bregman_golden.json, so an
// edit to it would silently move every oracle at once. Two guards:
//  - its SHA-256 is the one recorded here when it was copied from the spec;
//  - the spec's readable rendering (bregman_golden.txt, written by the same
//    generator) agrees with it value by value: p, D(k), k*, q, objective.
// To change the vectors on purpose, regenerate both files and update the hash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const JSON_SHA256 = '733bafb84464bfd1a94d8f72595b69086da58bd311c170a925176a62257e9c09';
const jsonBytes = readFileSync(new URL('../golden/bregman_golden.json', import.meta.url));
const golden = JSON.parse(jsonBytes.toString('utf8'));
const txt = readFileSync(new URL('../golden/bregman_golden.txt', import.meta.url), 'utf8');

const list = (s) => s.split(',').map((x) => (x.trim() === 'None' ? null : Number(x)));

/** The readable file as [{ p, name, mode, alpha, d_k, solutions: [{ lambda, k, q, objective }] }]. */
function parseTxt(text) {
  const configs = [];
  for (const line of text.split('\n')) {
    let m;
    if ((m = line.match(/^p=\[([^\]]*)\] \((\w+)\)\s+mode=(\w+) alpha=([\d.]+)/))) {
      configs.push({ p: list(m[1]), name: m[2], mode: m[3], alpha: Number(m[4]), solutions: [] });
    } else if ((m = line.match(/^\s+D\(k\)\s+= \[([^\]]*)\]/))) {
      configs.at(-1).d_k = list(m[1]);
    } else if ((m = line.match(/^\s+lam=(\S+)\s+k\*=(\d+) q=\[([^\]]*)\] obj=(\S+)/))) {
      configs.at(-1).solutions.push({ lambda: Number(m[1]), k: Number(m[2]), q: list(m[3]), objective: Number(m[4]) });
    }
  }
  return configs;
}

const close = (a, b, tol) => (a === null || b === null ? a === b : Math.abs(a - b) <= tol);

test('the golden vectors are the spec\'s (SHA-256 recorded when copied)', () => {
  assert.equal(createHash('sha256').update(jsonBytes).digest('hex'), JSON_SHA256,
    'tests/golden/bregman_golden.json changed: regenerate it with bregman_golden.txt and update JSON_SHA256');
});

test('the readable golden table agrees with the JSON on every configuration and lambda', () => {
  const t = parseTxt(txt);
  assert.equal(golden.length, 50);
  assert.equal(t.length, golden.length);
  let solutions = 0;
  golden.forEach((g, i) => {
    const r = t[i];
    const where = `${g.p_name} ${g.mode} alpha=${g.alpha}`;
    assert.equal(r.name, g.p_name, where);
    assert.equal(r.mode, g.mode, where);
    assert.equal(r.alpha, g.alpha, where);
    assert.equal(r.p.length, g.p.length, where);
    r.p.forEach((v, j) => assert.ok(close(v, g.p[j], 5e-7), `${where}: p[${j}]`));
    // The table prints D(k) to 8 significant digits; null (None) is +inf.
    r.d_k.forEach((v, j) => assert.ok(close(v, g.D_k[j], 1e-7 * (1 + Math.abs(g.D_k[j] ?? 0))), `${where}: D(${j + 1})`));
    assert.equal(r.solutions.length, g.solutions.length, where);
    g.solutions.forEach((s, j) => {
      const rs = r.solutions[j];
      assert.equal(rs.lambda, s.lambda, where);
      assert.equal(rs.k, s.k, `${where} lambda=${s.lambda}: k*`);
      assert.equal(rs.q.length, s.q.length);
      rs.q.forEach((v, z) => assert.ok(close(v, s.q[z], 5e-7), `${where} lambda=${s.lambda}: q[${z}]`));
      assert.ok(close(rs.objective, s.objective, 5e-9), `${where} lambda=${s.lambda}: objective`);
      // k* is the support size of q.
      assert.equal(s.q.filter((v) => v > 0).length <= s.k, true, `${where} lambda=${s.lambda}: |supp q| <= k*`);
      solutions++;
    });
  });
  assert.equal(solutions, 350);
});
