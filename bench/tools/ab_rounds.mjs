// The A/B's cases and rounds, shared by bench/tools/ab_builds.mjs in Node and in
// its Chromium page (served from the repository root), each with its own
// copy of the rows.

// spec: [name, row index, options, decode?]; rows: the rows made. Returns
// the cases timeRounds takes.
export function casesWithRows(spec, rows) {
  return spec.map(([name, r, o, decode]) => [name, rows[r], o, decode]);
}

// Every case on every build in turn, round after round, so machine noise
// hits the builds alike. cases: [name, row, options, decode?]; returns
// times[case][build] (ms per call, one entry per round).
export function timeRounds(bds, cases, rounds, calls = 5) {
  const times = cases.map(() => bds.map(() => []));
  for (let r = 0; r < rounds; ++r) {
    cases.forEach(([, row, o, decode], c) => bds.forEach((bd, b) => {
      const t0 = performance.now();
      for (let i = 0; i < calls; ++i) decode ? bd.decode(row, o) : bd.sample(row, { ...o, seed: 1, step: i });
      times[c][b].push((performance.now() - t0) / calls);
    }));
  }
  return times;
}
