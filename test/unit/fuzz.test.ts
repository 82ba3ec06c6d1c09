// Fuzz: seeded, mutated model folders of six file kinds (safetensors, config.json, spm.model, tokenizer.json,
// vocab.json + merges.txt, pytorch_model.bin), each explained by the real CLI in a child process. Every case must
// end in one clear error line or a well-formed result, within a time limit, under a memory limit.
//   FUZZ_CASES=3000   cases in all (default 240, split evenly across the kinds)
//   FUZZ_SEED=11      base seed; case i of a run uses seed + i
//   FUZZ_JOBS=2       cases run at once
//   FUZZ_REPORT=FILE  writes the per-kind figures as JSON (and each case, as it ends, to FILE.jsonl)
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { KINDS, type Kind, makeBases, makeCase, textFor } from './fuzz/cases';
import { Rng } from './fuzz/mutate';
import { type CaseResult, type Outcome, runCase } from './fuzz/run-case';
import { REPO_ROOT, at } from './helpers';

const CASES = Number(process.env.FUZZ_CASES ?? 240);
const SEED = Number(process.env.FUZZ_SEED ?? 11);
const JOBS = Number(process.env.FUZZ_JOBS ?? 2);
const LIMITS = { ms: 30_000, rssBytes: 1.5 * 2 ** 30 };
const OUTCOMES: Outcome[] = ['clear error', 'correct result', 'wrong', 'hang', 'crash', 'over memory'];

interface Row {
  kind: Kind;
  index: number;
  what: string;
  result: CaseResult;
}

test(`fuzz: ${CASES} mutated model folders through the CLI end in a clear line or a correct result`, { timeout: 3_600_000 }, async (t) => {
  const cli = path.join(REPO_ROOT, 'dist', 'cli.js');
  assert.ok(fs.existsSync(cli), 'dist/cli.js is missing: run npm run build first');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-fuzz-'));
  const cache = path.join(root, 'cache');
  const rows: Row[] = [];
  try {
    const bases = await makeBases(path.join(root, 'bases'));
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < CASES; i = next++) {
        const kind = at(KINDS, i % KINDS.length);
        const rng = new Rng(SEED + i);
        const dir = path.join(root, `case-${i}`);
        let what: string;
        try {
          what = makeCase(kind, bases, rng, dir);
        } catch (e) {
          throw new Error(`making case ${i} (${kind}) failed: ${(e as Error).stack}`, { cause: e });
        }
        const text = textFor(kind);
        const result = await runCase(
          cli,
          ['explain', '--model', dir, '--text', text, '--cache-dir', cache, '--threads', '1'],
          text,
          LIMITS,
        );
        rows.push({ kind, index: i, what, result });
        // A long run can be read while it goes: one line per case.
        if (process.env.FUZZ_REPORT) fs.appendFileSync(`${process.env.FUZZ_REPORT}.jsonl`, `${JSON.stringify(rows[rows.length - 1])}\n`);
        if (result.outcome === 'clear error' || result.outcome === 'correct result') fs.rmSync(dir, { recursive: true, force: true });
      }
    };
    await Promise.all(Array.from({ length: JOBS }, worker));
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }

  const summary = KINDS.map((kind) => {
    const mine = rows.filter((r) => r.kind === kind);
    const counts = Object.fromEntries(OUTCOMES.map((o) => [o, mine.filter((r) => r.result.outcome === o).length]));
    const worstRss = Math.max(0, ...mine.map((r) => r.result.peakRss));
    const worstMs = Math.max(0, ...mine.map((r) => r.result.ms));
    return { kind, cases: mine.length, ...counts, worst_peak_rss_mb: Math.round(worstRss / 2 ** 20), worst_ms: Math.round(worstMs) };
  });
  for (const s of summary) t.diagnostic(JSON.stringify(s));
  if (process.env.FUZZ_REPORT)
    fs.writeFileSync(process.env.FUZZ_REPORT, JSON.stringify({ seed: SEED, cases: CASES, limits: LIMITS, summary }, null, 2));

  const bad = rows.filter((r) => r.result.outcome !== 'clear error' && r.result.outcome !== 'correct result');
  const report = bad
    .slice(0, 20)
    .map((r) => `case ${r.index} (${r.kind}, seed ${SEED + r.index}) ${r.what} → ${r.result.outcome}: ${r.result.detail}`);
  if (bad.length === 0) fs.rmSync(root, { recursive: true, force: true });
  assert.equal(bad.length, 0, `${bad.length} cases failed (folders kept in ${root}):\n${report.join('\n')}`);
  // Both outcomes must occur for every kind, or the mutations are not reaching the code they aim at.
  if (CASES >= 60) {
    for (const s of summary)
      assert.ok(((s as unknown as Record<string, number>)['clear error'] ?? 0) > 0, `${s.kind}: no case was refused`);
  }
});
