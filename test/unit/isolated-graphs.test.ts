// Issue 26's isolation, for graphs built on first use: with `isolate` the prediction heads, the intervention tails,
// the sweep and patch graphs are built by a load process (engine/model/load-process.ts, a 'build' request with a
// recipe) and the caller only opens the cache entry. The numbers must be those of a model whose graphs are built in
// the caller's process; a budget hit while building is one line naming the model folder.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import type { EngineOptions } from '../../src/engine/api';
import { openModel } from '../../src/engine/model/open-model';
import { rejectsLens, tempDir } from './checkpoint-test-utils';
import { FIXTURES } from './helpers';

const MODEL = path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls');
const MASKED = 'a tiny [MASK] for a tiny random model';
const SWEEP_IDS = [1, 17, 21, 16, 57, 23, 60, 4, 22, 60, 26, 18, 27, 5, 2];
/** A log line of the caller's: a graph built by a load process, and that process's id. */
const BUILT_ELSEWHERE = /^built the (.+) of .+ in a separate process \(pid (\d+), peak \d+ MB\)$/;

/** Every value of a result but its times (which differ from run to run). */
function numbers(x: unknown): unknown {
  return JSON.parse(JSON.stringify(x, (k, v: unknown) => (/(_ms|Ms|timings)$/.test(k) ? undefined : v)));
}

/** A prediction (plain head graph), an ablation (tail graph, compare head graph), a sweep and a patch. */
async function firstUses(opts: EngineOptions): Promise<{ results: unknown[]; log: string[] }> {
  const log: string[] = [];
  const m = await openModel(MODEL, { executionProvider: 'cpu', threads: 1, ...opts, log: (l) => log.push(l) });
  try {
    const results = [
      await m.predict({ text: MASKED }),
      await m.ablate({ text: MASKED, ablate: '1.*:c2p', mode: 'zero' }),
      await m.sweep({ ids: SWEEP_IDS, terms: ['c2p'], position: 9 }),
      await m.patch({ text: 'the cat sat on the [MASK].', corrupt: 'the dog sat on the [MASK].', patch: 'resid:1', position: 15 }),
    ];
    return { results: results.map(numbers), log };
  } finally {
    await m.dispose();
  }
}

test('isolated: heads, tail, sweep and patch graphs are built in a load process, with the numbers of a build in this process', async () => {
  const here = await firstUses({ cacheDir: tempDir('graphs-here') });
  assert.ok(!here.log.some((l) => BUILT_ELSEWHERE.test(l)), 'without isolate every graph is built in this process');
  const cacheDir = tempDir('graphs-there');
  const there = await firstUses({ cacheDir, isolate: true });
  assert.deepEqual(there.results, here.results);
  const builds = there.log.flatMap((l) => {
    const m = BUILT_ELSEWHERE.exec(l);
    return m ? [{ what: m[1]!, pid: Number(m[2]) }] : [];
  });
  for (const b of builds) assert.notEqual(b.pid, process.pid, b.what);
  const what = builds.map((b) => b.what);
  // The open's own load process builds the encoder's graphs; each graph of the first uses comes from one of its own.
  for (const want of [
    /^plain head graph$/,
    /^compare head graph$/,
    /^graph of layers 1…1$/,
    /^sweep graph of layers \d…1$/,
    /^patch graph of layers \d…1$/,
  ])
    assert.ok(
      what.some((w) => want.test(w)),
      `built in a load process: ${want.source} (got ${what.join('; ')})`,
    );
  assert.equal(new Set(builds.map((b) => b.pid)).size, builds.length, 'one process per graph');

  // Opened again on the same cache: every graph is found there, no process is started.
  const again = await firstUses({ cacheDir, isolate: true });
  assert.deepEqual(again.results, here.results);
  assert.deepEqual(
    again.log.filter((l) => BUILT_ELSEWHERE.test(l)),
    [],
  );
});

test('isolated: a graph build over its budget ends in one line naming the model folder, and builds nothing here', async () => {
  for (const [budget, words] of [
    [{ parseMs: 1 }, 'building its plain head graph took longer than 0.001 s'],
    [{ rssMb: 1, watchMs: 5 }, 'building its plain head graph took more than 1 MB of memory'],
  ] as const) {
    const log: string[] = [];
    const m = await openModel(MODEL, {
      cacheDir: tempDir('graphs-budget'),
      executionProvider: 'cpu',
      threads: 1,
      isolate: true,
      graphBuildBudget: budget,
      log: (l) => log.push(l),
    });
    try {
      await rejectsLens(() => m.predict({ text: MASKED }), 'runtime', MODEL, words);
      assert.ok(!log.some((l) => /^built plain head graph/.test(l)), `no head graph was built: ${log.join('\n')}`);
      // The encoder's graphs, which the open's load process built, still run.
      assert.equal((await m.explain({ text: MASKED })).tokens.length > 0, true);
    } finally {
      await m.dispose();
    }
  }
});
