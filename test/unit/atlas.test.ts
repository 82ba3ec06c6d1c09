// The head atlas against the same metrics computed here from `deberta-lens explain --format json` of each window;
// shards merged equal one run; a cancelled run resumes from its checkpoint to the same numbers; bad input, one line.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { buildAtlas, type AtlasJson } from '../../src/analysis/atlas/atlas';
import { paragraphs } from '../../src/analysis/atlas/corpus';
import { buildAtlasInThread } from '../../src/analysis/atlas/threaded-atlas';
import { openModel } from '../../src/engine/model/open-model';
import { assertOneLineError } from './head-asserts';
import { REPO_ROOT } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-atlas-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') };
const cli = (...args: string[]) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, maxBuffer: 256 * 2 ** 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const WINDOW = 12;

// Two files in a folder and a sub-folder, a paragraph long enough for three windows, a binary file skipped.
const corpus = path.join(tmp, 'corpus');
const FILES: Record<string, string> = {
  'a.md':
    'The cat sat on the mat.\nIt was warm.\n\nA second paragraph, long enough to be cut into more than one window of twelve tokens by the atlas here.\n',
  'sub/b.txt': '\n\nDeep in the folder lies text.\n\n   \nAnother one.',
};
for (const [name, text] of Object.entries(FILES)) {
  fs.mkdirSync(path.dirname(path.join(corpus, name)), { recursive: true });
  fs.writeFileSync(path.join(corpus, name), text);
}
fs.writeFileSync(path.join(corpus, 'c.txt'), Buffer.from([0, 1, 2, 0x62]));

interface ExplainJson {
  tokens: { id: number; start: number; end: number; special: boolean }[];
  layers: { layer: number; c2c: number[][][]; c2p: number[][][]; p2c: number[][][]; probs: number[][][] }[];
}
const explain = (...args: string[]) => {
  const r = cli('explain', '--model', 'default', '--threads', '2', ...args);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as ExplainJson;
};

/** The metrics of every head, computed directly from explain's matrices of each window (float64). */
function expected(): { metrics: Record<string, number>[]; top: { file: string; query: number[]; key: number[]; prob: number }[] } {
  type Acc = Record<string, number>;
  let accs: Acc[] | undefined;
  const tops: { file: string; query: number[]; key: number[]; prob: number }[][] = [];
  for (const file of Object.keys(FILES).sort()) {
    for (const p of paragraphs(file, FILES[file]!)) {
      const whole = explain('--text', p.text);
      const inner = whole.tokens.slice(1, -1);
      const [cls, sep] = [whole.tokens[0]!, whole.tokens[whole.tokens.length - 1]!];
      for (let w0 = 0; w0 < inner.length; w0 += WINDOW - 2) {
        const part = inner.slice(w0, w0 + WINDOW - 2);
        const one = part.length === inner.length;
        const x = one ? whole : explain('--ids', [cls.id, ...part.map((t) => t.id), sep.id].join(','));
        const special = [true, ...part.map((t) => t.special), true];
        const at = (k: number) => (k === 0 ? part[0]!.start : k > part.length ? part[part.length - 1]!.end : part[k - 1]!.start);
        const atEnd = (k: number) => (k === 0 ? part[0]!.start : k > part.length ? part[part.length - 1]!.end : part[k - 1]!.end);
        const n = part.length + 2;
        const H = x.layers[0]!.probs.length;
        accs ??= Array.from({ length: x.layers.length * H }, () => ({}));
        x.layers.forEach((L, l) => {
          for (let h = 0; h < H; h++) {
            const a = accs![l * H + h]!;
            const add = (k: string, v: number) => (a[k] = (a[k] ?? 0) + v);
            const P = L.probs[h]!;
            for (let i = 0; i < n; i++) {
              for (let j = 0; j < n; j++) {
                const m = [Math.abs(L.c2c[h]![i]![j]!), Math.abs(L.c2p[h]![i]![j]!), Math.abs(L.p2c[h]![i]![j]!)];
                const sum = m[0]! + m[1]! + m[2]!;
                ['c2c', 'c2p', 'p2c'].forEach((t, k) => add(t, sum > 0 ? m[k]! / sum : 1 / 3));
                if (!special[i] && !special[j])
                  (tops[l * H + h] ??= []).push({
                    file,
                    query: [p.offset + at(i), p.offset + atEnd(i)],
                    key: [p.offset + at(j), p.offset + atEnd(j)],
                    prob: P[i]![j]!,
                  });
              }
              const row = P[i]!;
              add('cells', n);
              add('rows', 1);
              add(
                'dist',
                row.reduce((s, v, j) => s + v * Math.abs(i - j), 0),
              );
              add(
                'ent',
                row.reduce((s, v) => s - (v > 0 ? v * Math.log(v) : 0), 0),
              );
              add(
                'special',
                row.reduce((s, v, j) => s + (special[j] ? v : 0), 0),
              );
              add('max', Math.max(...row));
              if (i >= 1) {
                add('prev', row[i - 1]!);
                add('prevRows', 1);
              }
              if (i <= n - 2) {
                add('next', row[i + 1]!);
                add('nextRows', 1);
              }
            }
          }
        });
      }
    }
  }
  const metrics = accs!.map((a) => ({
    c2c_share: a.c2c! / a.cells!,
    c2p_share: a.c2p! / a.cells!,
    p2c_share: a.p2c! / a.cells!,
    mean_distance: a.dist! / a.rows!,
    entropy: a.ent! / a.rows!,
    special_mass: a.special! / a.rows!,
    max_prob: a.max! / a.rows!,
    prev_token: a.prev! / a.prevRows!,
    next_token: a.next! / a.nextRows!,
  }));
  return { metrics, top: tops.map((t) => t.sort((x, y) => y.prob - x.prob)[0]!) };
}

const close = (got: number, want: number, what: string, rel = 1e-5) =>
  assert.ok(Math.abs(got - want) <= rel * Math.max(1e-3, Math.abs(want)), `${what}: ${got} vs ${want}`);

describe('head atlas', () => {
  const whole = path.join(tmp, 'whole.json');
  it('every metric of every head equals the same metric computed from explain --format json of each window', () => {
    const r = cli('atlas', '--model', 'default', '--threads', '2', '--corpus', corpus, '--window', String(WINDOW), '--out', whole);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /skipped c\.txt: binary/);
    const atlas = JSON.parse(fs.readFileSync(whole, 'utf8')) as AtlasJson;
    assert.equal(fs.existsSync(`${whole}.partial`), false, 'the checkpoint goes once the atlas is written');
    assert.equal(atlas.texts, 4);
    assert.ok(atlas.windows >= 6, `a long paragraph is cut into windows: ${atlas.windows}`);
    const want = expected();
    assert.equal(atlas.heads.length, want.metrics.length);
    atlas.heads.forEach((h, k) => {
      for (const [name, v] of Object.entries(want.metrics[k]!)) close(h.metrics[name as 'entropy'], v, `${h.layer}.${h.head} ${name}`);
      assert.ok(h.top.length >= 5 && h.top.every((p, i) => i === 0 || p.prob <= h.top[i - 1]!.prob), 'top: best first');
      const best = want.top[k]!;
      close(h.top[0]!.prob, best.prob, `${h.layer}.${h.head} top prob`);
      assert.deepEqual(
        [h.top[0]!.file, h.top[0]!.query, h.top[0]!.key],
        [best.file, best.query, best.key],
        `${h.layer}.${h.head} top place`,
      );
    });
  });

  it('shards merged equal one run; a shard twice is refused', () => {
    const whole1 = JSON.parse(fs.readFileSync(whole, 'utf8')) as AtlasJson;
    const parts = [1, 2].map((i) => {
      const out = path.join(tmp, `shard${i}.json`);
      const r = cli(
        'atlas',
        '--model',
        'default',
        '--threads',
        '2',
        '--corpus',
        corpus,
        '--window',
        String(WINDOW),
        '--shard',
        `${i}/2`,
        '--out',
        out,
      );
      assert.equal(r.code, 0, r.stderr);
      return out;
    });
    const merged = path.join(tmp, 'merged.json');
    const r = cli('atlas', 'merge', ...parts, '--out', merged);
    assert.equal(r.code, 0, r.stderr);
    const m = JSON.parse(fs.readFileSync(merged, 'utf8')) as AtlasJson;
    assert.deepEqual(
      [m.texts, m.windows, m.tokens, m.shards],
      [
        whole1.texts,
        whole1.windows,
        whole1.tokens,
        [
          [1, 2],
          [2, 2],
        ],
      ],
    );
    m.heads.forEach((h, k) => {
      for (const [name, v] of Object.entries(whole1.heads[k]!.metrics)) close(h.metrics[name as 'entropy'], v, name, 1e-9);
      assert.deepEqual(
        h.top.map((p) => p.prob),
        whole1.heads[k]!.top.map((p) => p.prob),
      );
    });
    assertOneLineError(cli('atlas', 'merge', parts[0]!, parts[0]!), /shard 1\/2 is in the merge twice/);
  });

  it('a cancelled run keeps what it did in its checkpoint and resumes from there to the same atlas', async () => {
    const want = JSON.parse(fs.readFileSync(whole, 'utf8')) as AtlasJson;
    const checkpoint = path.join(tmp, 'run.partial');
    const model = await openModel('default', { cacheDir: path.join(tmp, 'cache2'), threads: 2, executionProvider: 'cpu' });
    try {
      const stop = new AbortController();
      await assert.rejects(
        buildAtlas(model, {
          corpus,
          window: WINDOW,
          checkpoint,
          signal: stop.signal,
          onProgress: ({ texts }) => texts === 2 && stop.abort(),
        }),
        /cancel/,
      );
      assert.equal((JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { next: number }).next, 2);
      const done = JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { windows: number };
      const ran = new Set<number>();
      const got = await buildAtlas(model, { corpus, window: WINDOW, checkpoint, onProgress: ({ windows }) => ran.add(windows) });
      assert.equal(ran.size, want.windows - done.windows, 'only the windows not done run again');
      assert.deepEqual([got.texts, got.windows, got.tokens], [want.texts, want.windows, want.tokens]);
      got.heads.forEach((h, k) => {
        for (const [name, v] of Object.entries(want.heads[k]!.metrics)) close(h.metrics[name as 'entropy'], v, name, 1e-9);
      });
    } finally {
      await model.dispose();
    }
  });

  it('a run cancelled inside a long paragraph resumes at the next window to the same atlas, bit for bit', async () => {
    const model = await openModel('default', { cacheDir: path.join(tmp, 'cache2'), threads: 2, executionProvider: 'cpu' });
    try {
      const ref = await buildAtlas(model, { corpus, window: WINDOW });
      const checkpoint = path.join(tmp, 'mid.partial');
      const stop = new AbortController();
      // a.md's second paragraph is three windows or more: stop after its first.
      let base = -1;
      await assert.rejects(
        buildAtlas(model, {
          corpus,
          window: WINDOW,
          checkpoint,
          signal: stop.signal,
          onProgress: ({ texts, windows }) => {
            if (texts === 1 && base < 0) base = windows;
            if (texts === 1 && windows === base + 1) stop.abort();
          },
        }),
        /cancel/,
      );
      const p = JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { next: number; piece: number; file: string; windows: number };
      assert.deepEqual([p.next, p.piece, p.file, p.windows], [1, WINDOW - 2, 'a.md', base + 1], 'the checkpoint is inside the paragraph');
      const got = await buildAtlas(model, { corpus, window: WINDOW, checkpoint });
      assert.deepEqual(got, ref);
    } finally {
      await model.dispose();
    }
  });

  it('a long paragraph tokenized in pieces (cut at white space) gives the atlas of the whole paragraph tokenized at once', async () => {
    const model = await openModel('default', { cacheDir: path.join(tmp, 'cache2'), threads: 2, executionProvider: 'cpu' });
    try {
      const whole = await buildAtlas(model, { corpus, window: WINDOW });
      // a.md's second paragraph is 142 characters: pieces of about 40.
      const pieces = await buildAtlas(model, { corpus, window: WINDOW, chunkChars: 40 });
      assert.deepEqual(pieces, whole);
      // And resumed inside it, from a checkpoint written by a run in pieces.
      const checkpoint = path.join(tmp, 'chunks.partial');
      const stop = new AbortController();
      await assert.rejects(
        buildAtlas(model, {
          corpus,
          window: WINDOW,
          chunkChars: 40,
          checkpoint,
          signal: stop.signal,
          onProgress: ({ windows }) => windows === 4 && stop.abort(),
        }),
        /cancel/,
      );
      assert.deepEqual(await buildAtlas(model, { corpus, window: WINDOW, chunkChars: 40, checkpoint }), whole);
    } finally {
      await model.dispose();
    }
  });

  it('kill -9 of the CLI mid-run, then the same command: it resumes and writes the atlas an uninterrupted run writes', async () => {
    // 24 files of two paragraphs: a run of a few seconds, a checkpoint after every window (--checkpoint-every 0).
    const big = path.join(tmp, 'big');
    fs.mkdirSync(big);
    const words = 'the river rose after rain and the village moved its boats up the bank while the miller kept grain'.split(' ');
    for (let f = 0; f < 24; f++) {
      const para = (k: number) =>
        Array.from({ length: 20 + ((f * 7 + k) % 15) }, (_, w) => words[(f + k + w * 3) % words.length]).join(' ');
      fs.writeFileSync(path.join(big, `f${String(f).padStart(2, '0')}.txt`), `${para(0)}.\n\n${para(1)}.\n`, { flag: 'w' });
    }
    const args = ['atlas', '--model', 'default', '--threads', '2', '--corpus', big, '--window', String(WINDOW), '--checkpoint-every', '0'];
    const whole2 = path.join(tmp, 'big-whole.json');
    assert.equal(cli(...args, '--out', whole2).code, 0);
    const out = path.join(tmp, 'big-killed.json');
    const child = spawn(process.execPath, [CLI, ...args, '--out', out], { env, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const progress = () => {
      try {
        return JSON.parse(fs.readFileSync(`${out}.partial`, 'utf8')) as { texts: number; file: string };
      } catch {
        return undefined;
      }
    };
    const t0 = Date.now();
    while (!((progress()?.texts ?? 0) >= 6) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGKILL');
    await exited;
    const kept = progress();
    assert.ok(kept && kept.texts >= 6 && kept.texts < 48, `killed mid-run: ${JSON.stringify(kept && kept.texts)} paragraphs kept`);
    assert.equal(fs.existsSync(out), false, 'no atlas yet');
    // The files before the checkpoint's are not read again: one made binary now would be skipped with a line.
    assert.ok(kept.file > 'f00.txt');
    fs.writeFileSync(path.join(big, 'f00.txt'), Buffer.from([0, 1, 2]));
    const r = cli(...args, '--out', out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /resuming from .*big-killed\.json\.partial/);
    assert.doesNotMatch(r.stderr, /skipped/);
    assert.equal(fs.existsSync(`${out}.partial`), false);
    assert.deepEqual(JSON.parse(fs.readFileSync(out, 'utf8')), JSON.parse(fs.readFileSync(whole2, 'utf8')));
  });

  it('Ctrl+C (SIGINT) stops the CLI with one line saying where its progress is; the same command goes on from there', async () => {
    const big = path.join(tmp, 'big');
    const out = path.join(tmp, 'big-interrupted.json');
    const args = ['atlas', '--model', 'default', '--threads', '2', '--corpus', big, '--window', String(WINDOW), '--out', out];
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Once it has listed the files it is running windows.
    const t0 = Date.now();
    while (!/files listed/.test(stderr) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    assertOneLineError(
      { code: await code, stdout, stderr: stderr.replace(/^atlas: .*\n/gm, '') },
      /atlas stopped; its progress is in .*big-interrupted\.json\.partial: run the same command again to resume/,
    );
    assert.ok(fs.existsSync(`${out}.partial`), 'the checkpoint is kept');
    const r = cli(...args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /resuming from/);
    // The folder as it is now (f00.txt made binary above): the same command without interruption.
    const whole = path.join(tmp, 'big-whole-now.json');
    assert.equal(cli(...args.slice(0, -1), whole).code, 0);
    assert.deepEqual(JSON.parse(fs.readFileSync(out, 'utf8')), JSON.parse(fs.readFileSync(whole, 'utf8')));
  });

  it('in a worker thread (the extension): the same atlas; a cancel keeps the checkpoint and the next run resumes it', async () => {
    const engine = { cacheDir: path.join(tmp, 'cache2'), threads: 2, executionProvider: 'cpu' as const };
    const model = await openModel('default', engine);
    let ref: AtlasJson;
    try {
      ref = await buildAtlas(model, { corpus, window: WINDOW });
    } finally {
      await model.dispose();
    }
    const checkpoint = path.join(tmp, 'thread.partial');
    const data = { modelDir: 'default', engine, options: { corpus, window: WINDOW, checkpoint } };
    const stages: string[] = [];
    const stop = new AbortController();
    await assert.rejects(
      buildAtlasInThread(data, {
        signal: stop.signal,
        onStage: (l) => stages.push(l),
        onProgress: ({ windows }) => windows === 3 && stop.abort(),
      }),
      (e: Error) => e.name === 'LensError' && /cancelled/.test(e.message),
    );
    assert.deepEqual(stages.slice(0, 2), ['loading the model…', `listing the .txt and .md files of ${corpus}…`]);
    assert.match(stages[2]!, /^3 files listed in \d+\.\d s$/);
    assert.equal((JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { windows: number }).windows, 3, 'the checkpoint holds what was done');
    const skips: string[] = [];
    const got = await buildAtlasInThread(data, { onSkip: (l) => skips.push(l) });
    assert.deepEqual(got, ref);
    assert.deepEqual(skips, ['skipped c.txt: binary (a NUL byte)'], 'said as the thread meets it');
    await assert.rejects(
      buildAtlasInThread({ ...data, options: { corpus: path.join(tmp, 'nope') } }),
      (e: Error) => e.name === 'LensError' && /--corpus .*nope: ENOENT/.test(e.message),
    );
  });

  it('bad input: one line each', () => {
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    assertOneLineError(cli('atlas', '--model', 'default', '--corpus', empty), /no \.txt or \.md file in it/);
    assertOneLineError(cli('atlas', '--model', 'default', '--corpus', path.join(tmp, 'nope')), /--corpus .*nope: ENOENT/);
    assertOneLineError(cli('atlas', '--model', 'default', '--corpus', corpus, '--shard', '3/2'), /--shard must be i\/N with 1 ≤ i ≤ N/);
    assertOneLineError(cli('atlas', '--model', 'default'), /atlas needs a corpus/);
    assertOneLineError(
      cli('atlas', '--model', 'default', '--corpus', corpus, '--checkpoint-every', 'x'),
      /--checkpoint-every takes seconds ≥ 0/,
    );
    assertOneLineError(cli('atlas', 'merge', whole), /at least two atlas files/);
  });
});
