// The `deberta-lens` command line as users run it: the bundled dist/cli.js (built by `npm test`'s pretest).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { readNpz } from '../../src/analysis/export/npz';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const V1 = path.join(FIXTURES, 'deberta', 'v1_tiny');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-cli-'));
const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') };

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000, maxBuffer: 1 << 28 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A failure is one line on stderr that names the problem, a non-zero exit, and no stack trace. */
function assertCleanError(r: ReturnType<typeof cli>, pattern: RegExp) {
  assert.notEqual(r.code, 0, 'exit code');
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(at(lines, 0), /^deberta-lens: /);
  assert.match(at(lines, 0), pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('deberta-lens explain', () => {
  it('prints DESIGN.md §4 JSON for --text with offsets, scale and [H][n][n] terms', () => {
    const r = cli('explain', '--model', V3, '--text', 'the quick brown fox');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.model.type, 'deberta-v2');
    assert.deepEqual(out.model.terms, ['c2c', 'c2p', 'p2c']);
    assert.equal(out.model.execution_provider, 'cpu');
    const n = out.input_ids.length;
    assert.equal(out.tokens.length, n);
    assert.deepEqual(out.tokens[0], { id: 1, text: '[CLS]', start: 0, end: 0, special: true });
    assert.equal(out.tokens[n - 1].special, true);
    for (const t of out.tokens.filter((t: { special: boolean }) => !t.special)) {
      assert.ok('the quick brown fox'.slice(t.start, t.end).length > 0 || t.text === '▁');
    }
    assert.ok(Math.abs(out.scale - Math.sqrt(8 * 3)) < 1e-5);
    assert.equal(out.layers.length, 2);
    for (const kind of ['c2c', 'c2p', 'p2c', 'probs']) {
      assert.equal(out.layers[0][kind].length, 4);
      assert.equal(out.layers[0][kind][0].length, n);
      assert.equal(out.layers[0][kind][0][0].length, n);
    }
    // The identity the contract promises: probs = softmax((c2c + c2p + p2c) / scale).
    const L = out.layers[1],
      h = 2,
      i = 3;
    const s = L.c2c[h][i].map((c: number, j: number) => (c + L.c2p[h][i][j] + L.p2c[h][i][j]) / out.scale);
    const z = s.reduce((a: number, x: number) => a + Math.exp(x), 0);
    s.forEach((x: number, j: number) => assert.ok(Math.abs(Math.exp(x) / z - L.probs[h][i][j]) < 1e-5));
  });

  it('--ids bypasses the tokenizer, --layers selects layers, --file reads text', () => {
    const r = cli('explain', '--model', V3, '--ids', '1,9,17,33,2', '--layers', '1');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.input_ids, [1, 9, 17, 33, 2]);
    assert.deepEqual(
      out.layers.map((l: { layer: number }) => l.layer),
      [1],
    );
    const file = path.join(tmp, 'in.txt');
    fs.writeFileSync(file, 'over the lazy dog');
    const f = JSON.parse(cli('explain', '--model', V3, '--file', file, '--layers', '0').stdout);
    assert.equal(f.text, 'over the lazy dog');
  });

  it('v1 (GPT-2 BPE tokenizer) explains text', () => {
    const r = cli('explain', '--model', V1, '--text', 'the cat sat', '--layers', '0');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).model.type, 'deberta');
  });

  it('--format npz --out writes arrays equal to the JSON output', () => {
    const file = path.join(tmp, 'out.npz');
    assert.equal(cli('explain', '--model', V3, '--ids', '1,9,17,33,2', '--format', 'npz', '--out', file).code, 0);
    const json = JSON.parse(cli('explain', '--model', V3, '--ids', '1,9,17,33,2').stdout);
    const npz = readNpz(new Uint8Array(fs.readFileSync(file)));
    assert.deepEqual([...npz.inputIds], [1, 9, 17, 33, 2]);
    for (const kind of ['c2c', 'c2p', 'p2c', 'probs'] as const) {
      assert.ok(Math.abs(npz.value(1, 2, kind, 3, 1) - json.layers[1][kind][2][3][1]) < 1e-6, kind);
    }
  });
});

describe('deberta-lens info', () => {
  it('summarises config, parameters and tokenizer kind', () => {
    const r = cli('info', '--model', V3, '--json');
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.layers, 2);
    assert.equal(s.heads, 4);
    assert.equal(s.tokenizer, 'spm');
    assert.ok(s.parameters > 10_000);
    assert.match(cli('info', '--model', V1).stdout, /tokenizer: bpe/);
  });

  it('reads a BERT folder: architecture bert, WordPiece tokenizer, entangled absolute positions', () => {
    const bert = path.join(FIXTURES, 'bert', 'bert_tiny');
    const s = JSON.parse(cli('info', '--model', bert, '--json').stdout);
    assert.deepEqual([s.type, s.architecture, s.tokenizer, s.terms], ['bert', 'bert', 'wordpiece', []]);
    assert.match(cli('info', '--model', bert).stdout, /attention {4}entangled: absolute positions \(max 64\)/);
  });
});

describe('deberta-lens bench', () => {
  it('prints one JSON object: cold and warm load, per-length explain and forward medians, overhead and its floor, peak RSS', () => {
    const r = cli('bench', '--model', V3, '--lengths', '8,24', '--runs', '2', '--json');
    assert.equal(r.code, 0, r.stderr);
    const b = JSON.parse(r.stdout);
    assert.ok(b.load_ms.cold > 0 && b.load_ms.warm > 0);
    assert.ok(b.matmul_gflops > 0);
    assert.deepEqual(
      b.lengths.map((l: { tokens: number }) => l.tokens),
      [8, 24],
    );
    for (const l of b.lengths) {
      assert.ok(l.explain_ms_median >= l.explain_run_ms_median, 'explain includes its run');
      assert.ok(l.forward_ms_median > 0 && l.first_layer_ms_median > 0 && l.all_layers_ms > 0 && l.explain_over_forward > 0);
      // one layer: (c2c, c2p, p2c, probs) × [4, n, n] float32; states: 2 layers × [n, 32]
      assert.equal(l.layer_mb, Number(((4 * 4 * l.tokens * l.tokens * 4) / 2 ** 20).toFixed(1)));
      assert.equal(l.states_mb, Number(((2 * l.tokens * 32 * 4) / 2 ** 20).toFixed(1)));
      assert.ok(l.peak_rss_mb > 0 && l.runtime_peak_rss_mb > 0);
    }
  });
});

describe('deberta-lens cache', () => {
  it('list shows each graph (size, model, last used); --cache-max-gb evicts; clear empties it', () => {
    const cacheDir = path.join(tmp, 'cache-cmd');
    const v1 = cli('explain', '--model', V1, '--ids', '1,5,2', '--cache-dir', cacheDir);
    assert.equal(v1.code, 0, v1.stderr);
    assert.equal(cli('explain', '--model', V3, '--ids', '1,5,2', '--cache-dir', cacheDir).code, 0);
    const list = cli('cache', 'list', '--cache-dir', cacheDir);
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trim().split('\n');
    assert.match(at(lines, 0), /2 graphs, [\d.]+ kB on disk \(\+ [\d.]+ kB of weights hard-linked from model folders\)/);
    assert.match(at(lines, 1), /SIZE\s+LAST USED\s+MODEL/);
    assert.match(at(lines, 2), /^[\d.]+ kB\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC\s+v3_tiny {2}/, 'most recently used first');
    assert.ok(at(lines, 2).endsWith(`v3_tiny  ${V3}`), lines[2]);
    assert.match(at(lines, 3), /v1_tiny/);
    const json = JSON.parse(cli('cache', 'list', '--json', '--cache-dir', cacheDir).stdout);
    assert.deepEqual(
      json.graphs.map((g: { model: string }) => g.model),
      ['v3_tiny', 'v1_tiny'],
    );
    assert.ok(json.graphs.every((g: { bytes: number; in_use_by: number[] }) => g.bytes > 0 && g.in_use_by.length === 0));
    // A limit of 0 through the environment: building v2 removes both older graphs.
    const r = spawnSync(
      process.execPath,
      [CLI, 'explain', '--model', path.join(FIXTURES, 'deberta', 'v2_tiny'), '--ids', '1,5,2', '--cache-dir', cacheDir, '--verbose'],
      {
        encoding: 'utf8',
        env: { ...env, DEBERTA_LENS_CACHE_MAX_GB: '0' },
      },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /graph cache over 0 GB: removed v1_tiny/);
    assert.deepEqual(
      JSON.parse(cli('cache', 'list', '--json', '--cache-dir', cacheDir).stdout).graphs.map((g: { model: string }) => g.model),
      ['v2_tiny'],
    );
    const clear = cli('cache', 'clear', '--cache-dir', cacheDir);
    assert.match(clear.stdout, /^removed 1 graph \([\d.]+ kB\) from /);
    assert.match(cli('cache', 'list', '--cache-dir', cacheDir).stdout, /: 0 graphs, 0\.0 kB on disk/);
  });
  it('bad --cache-max-gb', () =>
    assertCleanError(cli('explain', '--model', V3, '--ids', '1', '--cache-max-gb', 'lots'), /--cache-max-gb takes a size in GB/));
  it('a cache folder that cannot be one', () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, '');
    assertCleanError(
      cli('explain', '--model', V3, '--ids', '1,5,2', '--cache-dir', path.join(file, 'cache')),
      /cannot write the graph cache in .*a-file.*ENOTDIR.*--cache-dir/,
    );
  });
  it('unknown cache subcommand', () => assertCleanError(cli('cache', 'purge'), /unknown command "cache purge"/));
});

describe('deberta-lens errors: one clear line, non-zero exit, no stack trace', () => {
  it('missing model folder', () => assertCleanError(cli('explain', '--model', path.join(tmp, 'nope'), '--text', 'x'), /nope.*not found/));
  it('missing --model', () => assertCleanError(cli('explain', '--text', 'x'), /--model is required/));
  it('unknown flag', () => assertCleanError(cli('explain', '--model', V3, '--txt', 'x'), /unknown flag --txt/));
  it('unknown command', () => assertCleanError(cli('explian'), /unknown command/));
  it('two inputs', () => assertCleanError(cli('explain', '--model', V3, '--text', 'a', '--ids', '1'), /exactly one of/));
  it('ids out of vocabulary', () => assertCleanError(cli('explain', '--model', V3, '--ids', '1,99999,2'), /99999.*vocabulary/));
  it('malformed ids', () => assertCleanError(cli('explain', '--model', V3, '--ids', '1,x'), /--ids takes comma-separated integers/));
  it('empty text', () => assertCleanError(cli('explain', '--model', V3, '--text', '   '), /empty/));
  it('text beyond the token limit', () =>
    assertCleanError(cli('explain', '--model', V3, '--text', 'word '.repeat(5000)), /over the limit/));
  it('a length the free memory cannot hold: the length, the estimate and the flag, before any run', () => {
    // 32768 tokens under a raised limit: one layer's attention alone would need ~170 GB, more than any machine frees.
    const ids = ['1', ...new Array<string>(32766).fill('5'), '2'].join(',');
    assertCleanError(
      cli('explain', '--model', V3, '--ids', ids, '--max-tokens', '32768'),
      /32768 tokens: explaining it needs about [\d.]+ GB of memory and [\d.]+ (GB|MB) is free.*--max-tokens/,
    );
  });
  it('layer out of range', () => assertCleanError(cli('explain', '--model', V3, '--text', 'a b', '--layers', '7'), /layer 7/));
  it('missing --file', () => assertCleanError(cli('explain', '--model', V3, '--file', path.join(tmp, 'missing.txt')), /missing\.txt/));
  it('bad --ep', () => assertCleanError(cli('explain', '--model', V3, '--text', 'a', '--ep', 'tpu'), /--ep must be one of/));
  it('npz without --out', () => assertCleanError(cli('explain', '--model', V3, '--text', 'a', '--format', 'npz'), /--out/));
});
