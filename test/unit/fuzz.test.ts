// Fuzz: a fixed-seed slice of every family (fuzz/families/), each case run by the real CLI in a child process.
// Every case must end as its family expects — one clear line, or a result its check accepts (Hugging Face's numbers
// where the family has them) — within a time limit, under a memory limit. Long runs: `npm run fuzz -- --seed S
// --cases N` (tools/fuzz/fuzz-cli.ts). This slice's size and seed can be changed for a local look:
//   FUZZ_CASES=3000 FUZZ_SEED=11 FUZZ_JOBS=2 node --test out/test/unit/fuzz.test.js
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { FAMILIES } from './fuzz/families';
import { runFuzz } from './fuzz/fuzz-run';
import { REPO_ROOT } from './helpers';

/** Sized for CI (2 cores, well under a minute): every family gets the same number of cases. */
const CASES = Number(process.env.FUZZ_CASES ?? 8 * FAMILIES.length);
const SEED = Number(process.env.FUZZ_SEED ?? 11);
const JOBS = Number(process.env.FUZZ_JOBS ?? 2);

test(
  `fuzz: ${CASES} cases of ${FAMILIES.length} families through the CLI end as each family expects`,
  { timeout: 3_600_000 },
  async (t) => {
    const cli = path.join(REPO_ROOT, 'dist', 'cli.js');
    assert.ok(fs.existsSync(cli), 'dist/cli.js is missing: run npm run build first');
    const s = await runFuzz({ cli, seed: SEED, cases: CASES, jobs: JOBS });
    for (const f of s.families) t.diagnostic(JSON.stringify(f));
    const report = s.findings.slice(0, 20).map((r) => `case ${r.index} (${r.family}) ${r.what} → ${r.outcome}: ${r.detail}`);
    assert.equal(s.findings.length, 0, `${s.findings.length} findings (seed ${SEED}; folders kept in ${s.folder}):\n${report.join('\n')}`);
    // A family whose cases all end the same way is not reaching both sides of what it aims at.
    if (CASES >= 5 * FAMILIES.length) {
      for (const f of s.families.filter((f) => f.family.startsWith('mutated')))
        assert.ok(f['clear error'] > 0, `${f.family}: no case was refused`);
    }
  },
);
