// Named fuzz regressions: each of issue 26's findings (and each later finding) pinned as the exact fuzz case that
// makes it — seed 1, its index — run through the CLI. The case's description is checked too, so a change to a
// family's generator that moves the case shows here instead of silently testing something else.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { editFixture, probsCheck } from './fuzz/families/weight-edits';
import { V3 } from './fuzz/families/family';
import { runFuzz } from './fuzz/fuzz-run';
import type { Outcome } from './fuzz/judge';
import type { CaseRow } from './fuzz/fuzz-run';
import { REPO_ROOT } from './helpers';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

interface Pinned {
  name: string;
  index: number;
  what: RegExp;
  outcome: Outcome;
}

const PINNED: Pinned[] = [
  {
    name: 'a 33 KB .bin of 32 MiB of EMPTY_DICT (V8 heap limit, SIGABRT)',
    index: 966,
    what: /^32 MiB of EMPTY_DICT$/,
    outcome: 'clear error',
  },
  { name: 'a 1 MiB LONG4 integer (> 90 s of BigInt work)', index: 222, what: /^a 1048576-byte LONG4$/, outcome: 'clear error' },
  { name: 'a state-dict value nested 990,000 tuples deep', index: 846, what: /^990000 nested TUPLE1/, outcome: 'clear error' },
  { name: '2,000,000 memo entries', index: 270, what: /^2000000 LONG_BINPUT/, outcome: 'clear error' },
  { name: '16 MiB of MARK', index: 54, what: /^16 MiB of MARK$/, outcome: 'clear error' },
  { name: 'a dict of 1,200,000 entries', index: 402, what: /^1200000 dict entries$/, outcome: 'clear error' },
  { name: '870 views of one deflated storage (2.4 GB of RAM and cache)', index: 356, what: /^870 distinct views/, outcome: 'clear error' },
  {
    name: '1000 tied names on one storage load once, with Hugging Face numbers',
    index: 284,
    what: /^one storage, 1000 tied/,
    outcome: 'correct result',
  },
  {
    name: 'config.json symlinked to /dev/zero (3.1 GB, then OOM)',
    index: 175,
    what: /^config\.json is \/dev\/zero$/,
    outcome: 'clear error',
  },
  { name: 'config.json a FIFO (blocked forever)', index: 583, what: /^config\.json is fifo$/, outcome: 'clear error' },
  { name: 'a weight file that is a folder (EISDIR)', index: 355, what: /^model\.safetensors is folder$/, outcome: 'clear error' },
  { name: 'spm.model a FIFO', index: 19, what: /^spm\.model is fifo$/, outcome: 'clear error' },
  {
    name: 'a shard index symlinked to /dev/zero beside model.safetensors is never opened',
    index: 1375,
    what: /^model\.safetensors\.index\.json is \/dev\/zero$/,
    outcome: 'correct result',
  },
  {
    name: 'a nested v1 memory cgroup with no room refuses the input',
    index: 285,
    what: /^v1 \/session-3\.scope\/docker\/docker\/session-3\.scope .*room 3876$/,
    outcome: 'clear error',
  },
  {
    name: "a container's own v2 mount (hybrid, unified) with no room refuses the input",
    index: 93,
    what: /^v2 \/docker\/process_api \(mount \/docker at \/sys\/fs\/cgroup\/unified\)/,
    outcome: 'clear error',
  },
  {
    name: 'a nested v2 cgroup with room runs',
    index: 501,
    what: /^v2 \/process_api\/0fc517f0e2f3 .*room 2099436510$/,
    outcome: 'correct result',
  },
  { name: '--out /dev/full (tried only after the model ran)', index: 10, what: /^--out \/dev\/full$/, outcome: 'clear error' },
  { name: 'a closed stdout (| head, EPIPE) ends quietly', index: 34, what: /^stdout closed/, outcome: 'correct result' },
  { name: 'stdout on /dev/full is one line', index: 82, what: /^stdout is \/dev\/full$/, outcome: 'clear error' },
  { name: '--out a FIFO nobody reads does not block', index: 358, what: /^--out is a FIFO/, outcome: 'clear error' },
  {
    name: 'a tokenizer.json Replace that makes 4042 tokens is refused by the memory the run allows (went over 1.5 GB)',
    index: 1731,
    what: /^Replace with a long content$/,
    outcome: 'clear error',
  },
  {
    name: 'an unused tensor whose view passes its storage is refused (the fuzz expected it)',
    index: 1340,
    what: /^lm_predictions\.lm_head\.dense\.bias reaches past its storage \(offset 24608, shape \[1057\]\)$/,
    outcome: 'clear error',
  },
  { name: '--file /dev/zero (read until the memory was gone)', index: 2590, what: /^--file \/dev\/zero$/, outcome: 'clear error' },
  { name: '--file over 16 MiB', index: 2698, what: /^--file of 17 MiB$/, outcome: 'clear error' },
  { name: '--cache-dir under /proc (looped)', index: 226, what: /^--cache-dir \/proc\//, outcome: 'clear error' },
  {
    name: 'an edit after the last attention leaves it unchanged (.bin, transposed views)',
    index: 23,
    what: /layer\.1\.attention\.self\.value_proj\.weight set 40 4 \(bin transposed\)$/,
    outcome: 'correct result',
  },
  {
    name: 'a LayerNorm weight edited in a sharded checkpoint changes the attention as in HF',
    index: 11,
    what: /layer\.0\.output\.LayerNorm\.weight set 20 0 \(shards\)$/,
    outcome: 'correct result',
  },
  {
    name: 'a negated relative-table row changes the attention as in HF (.bin)',
    index: 419,
    what: /rel_embeddings\.weight negate_row 20 +\(bin\)$/,
    outcome: 'correct result',
  },
  { name: 'a view at offset 2^31 in a mutated .bin', index: 5, what: /offset 2147483648/, outcome: 'clear error' },
];

test(`fuzz regressions: ${PINNED.length} pinned cases end as they should`, { timeout: 600_000 }, async (t) => {
  assert.ok(fs.existsSync(CLI), 'dist/cli.js is missing: run npm run build first');
  const rows = new Map<number, CaseRow>();
  await runFuzz({ cli: CLI, seed: 1, cases: 0, jobs: 2, only: PINNED.map((p) => p.index), onCase: (r) => rows.set(r.index, r) });
  const problems: string[] = [];
  for (const p of PINNED) {
    const r = rows.get(p.index);
    if (!r) problems.push(`${p.name}: case ${p.index} did not run`);
    else if (!p.what.test(r.what)) problems.push(`${p.name}: case ${p.index} is now "${r.what}" (the generator moved it; pin it again)`);
    else if (r.outcome !== p.outcome) problems.push(`${p.name}: ${r.outcome}, not ${p.outcome}: ${r.detail}`);
    else t.diagnostic(`${p.name}: ${r.outcome} in ${r.ms} ms${r.detail ? `: ${r.detail.slice(0, 160)}` : ''}`);
  }
  assert.deepEqual(problems, []);
});

test('fuzz regressions: the weight-edit check fails the unedited output for every edit that must change it', () => {
  const fx = editFixture();
  const r = spawnSync(process.execPath, [CLI, 'explain', '--model', V3, '--ids', fx.input_ids.join(','), '--threads', '1'], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(probsCheck(fx.input_ids, fx.base)(r.stdout), undefined, "the unedited model gives Hugging Face's base numbers");
  const must = fx.edits.filter((e) => e.must_change);
  assert.ok(must.length >= 20);
  for (const e of must) {
    const problem = probsCheck(fx.input_ids, e.probs!, fx.base)(r.stdout);
    assert.match(problem ?? '', /probs differ from Hugging Face's by/, `${e.tensor} ${e.op}`);
  }
  // An output equal to the edit's numbers but also to the base (an edit too small to see) is caught too.
  assert.equal(probsCheck(fx.input_ids, fx.base, fx.base)(r.stdout), 'the edit did not change the output');
});
