// The plain heads run in the encoder's runtime process (no process of their own): a prediction after that process
// was killed (a cancel does that) starts a fresh one with the heads loaded again, and still matches Hugging Face.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import type { PredictResult } from '../../src/engine/api';
import { assertClose } from './head-asserts';
import { FIXTURES, at } from './helpers';

interface FixtureCase {
  name: string;
  text: string;
  expected: { mlm: { position: number; top5_ids: number[]; top5_logits: number[] }[] };
}

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-heads-one-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const dir = path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls');
const c = at((JSON.parse(fs.readFileSync(path.join(dir, 'expected_outputs.json'), 'utf8')) as { cases: FixtureCase[] }).cases, 0);

function checkAgainstHf(r: PredictResult, what: string): void {
  assert.deepEqual(
    r.predictions.map((p) => p.position),
    c.expected.mlm.map((m) => m.position),
    `${what}: positions`,
  );
  r.predictions.forEach((p, k) => {
    const want = at(c.expected.mlm, k);
    assert.deepEqual(
      p.top.map((t) => t.id),
      want.top5_ids,
      `${what}: top-5 ids`,
    );
    assertClose(
      p.top.map((t) => t.logit),
      want.top5_logits,
      `${what}: top-5 logits`,
    );
  });
}

describe("prediction heads in the encoder's process", () => {
  it('no second process; after the process is killed, predict and predictExplained start a fresh one and match HF', async () => {
    const model = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
    try {
      checkAgainstHf(await model.predict({ text: c.text }), 'first');
      assert.deepEqual(model.heads.pids, [], 'the plain heads started no process of their own');
      const first = model.session.pid;
      await model.session.terminate();
      checkAgainstHf(await model.predict({ text: c.text }), 'after a kill');
      assert.notEqual(model.session.pid, first, 'a fresh encoder process');
      const explained = await model.explain({ text: c.text });
      try {
        await model.session.terminate();
        const r = await model.predictExplained(explained, {});
        assert.ok(r.timings.forward_reused, 'the kept hidden state was used');
        checkAgainstHf(r, 'explained, after a kill');
      } finally {
        explained.release();
      }
    } finally {
      await model.dispose();
    }
  });

  it('a cancelled prediction leaves the model usable', async () => {
    const model = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
    try {
      const ac = new AbortController();
      const cancelled = model.predict({ text: c.text }, ac.signal);
      ac.abort();
      await assert.rejects(cancelled, /cancelled/);
      checkAgainstHf(await model.predict({ text: c.text }), 'after a cancel');
    } finally {
      await model.dispose();
    }
  });
});
