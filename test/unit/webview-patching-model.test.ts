// The Patching tab's pure parts: restored fractions to colours on one scale centred at 0, the hover line, the flow
// graph's layout and SVG, the figure of each grid, the run messages' validation and the grids' CSV with named axes;
// and the host's shaping of a real patch result (models/default, a causal trace) into what the tab draws.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { patchView } from '../../src/extension/lens/patching-view';
import { parseRunMessage } from '../../src/shared/interventions';
import { patchCsv, type PatchView } from '../../src/shared/patching';
import { colorOf, cssRgb, makeLut } from '../../webview/common/colors';
import { flowSvg } from '../../webview/lens/views/patching-flow';
import {
  cellColours,
  cellReadout,
  edgeReadout,
  flowLayout,
  gridFigure,
  residRowLabels,
  restoredRange,
  restoredText,
  restoredValues,
  TERM_RGB,
} from '../../webview/lens/views/patching-model';
import { REPO_ROOT } from './helpers';

const MODELS = path.join(REPO_ROOT, 'models');

const base = (grid: PatchView['grid'], trace: PatchView['trace']): PatchView => ({
  trace,
  layers: 2,
  heads: 2,
  terms: ['c2c', 'c2p', 'p2c'],
  tokens: ['[CLS]', 'the', 'cat', '[SEP]'],
  corruptTokens: ['[CLS]', 'the', 'dog', '[SEP]'],
  differing: [2],
  target: 'logit of “next”',
  targetPosition: 0,
  unit: 'logit',
  clean: 2,
  corrupt: -1,
  predictions: { clean: 'next 90.0%', corrupt: 'next 20.0%' },
  grid,
  reruns: 12,
  ms: 5,
});

const resid = base(
  {
    kind: 'resid',
    axes: ['layer', 'position'],
    restored: [
      [0, 0, 1, 0],
      [0.1, -0.5, 0.75, null],
      [1, 1, 1, 1],
    ],
    value: [
      [-1, -1, 2, -1],
      [-0.7, -2.5, 1.25, -1],
      [2, 2, 2, 2],
    ],
  },
  'resid',
);

const flow = base(
  {
    kind: 'flow',
    axes: ['layer', 'to', 'from'],
    threshold: 0.1,
    targetRows: [0],
    edges: [
      { layer: 1, to: 0, from: 2, change: -0.8, term: 'c2p' },
      { layer: 1, to: 0, from: 0, change: 0.2, term: 'c2c' },
      { layer: 0, to: 2, from: 1, change: -0.4, term: 'p2c', shares: { c2c: 0.2, c2p: 0.3, p2c: 0.5 } },
    ],
    knockouts: 24,
  },
  'flow',
);

describe('Patching grid → cells', () => {
  it('puts nulls in as NaN and shares one scale centred at 0, at least ±1', () => {
    const v = restoredValues((resid.grid as { restored: (number | null)[][] }).restored);
    assert.equal(v.length, 12);
    assert.ok(Number.isNaN(v[7]!));
    assert.equal(v[5], -0.5);
    assert.deepEqual(restoredRange([v]), { min: -1, max: 1, signed: true });
    assert.deepEqual(restoredRange([v, Float32Array.of(-1.25)]), { min: -1.25, max: 1.25, signed: true });
  });

  it('colours a cell from the diverging ramp, 0 in the middle, and picks readable text; null shows the page', () => {
    const lut = makeLut('diverging', true, 'light');
    const range = { min: -1, max: 1, signed: true };
    const one = cellColours(1, range, lut);
    assert.equal(one.bg, cssRgb(colorOf(1, range, lut)));
    assert.notEqual(one.bg, cellColours(-1, range, lut).bg);
    assert.equal(cellColours(0, range, lut).fg, '#000', 'the pale middle takes dark text');
    assert.deepEqual(cellColours(null, range, lut), { bg: 'transparent', fg: 'inherit' });
    assert.equal(restoredText(-0.104), '−0.10');
    assert.equal(restoredText(null), '–');
    assert.equal(restoredText(-0.001), '0.00', 'no sign on a value that rounds to 0');
  });

  it('says a cell’s place, token, raw value and restored fraction on hover', () => {
    assert.equal(
      cellReadout(resid, 'state entering layer 1, position 2', 'cat', 1.25, 0.75),
      'state entering layer 1, position 2 “cat”: logit 1.250 (clean 2.000, corrupt −1.000) · restored 0.750',
    );
    assert.deepEqual(residRowLabels(2), ['L0', 'L1', 'L2 (out)']);
  });

  it('lays the heads grids side by side in one figure, a blank column between terms', () => {
    const heads = base(
      {
        kind: 'heads',
        axes: ['term', 'layer', 'head'],
        terms: ['c2c', 'c2p'],
        restored: {
          c2c: [
            [0.1, 0.2],
            [0.3, null],
          ],
          c2p: [
            [-0.1, 0],
            [0, 0.9],
          ],
        },
        value: {
          c2c: [
            [0, 0],
            [0, 0],
          ],
          c2p: [
            [0, 0],
            [0, 0],
          ],
        },
      },
      'heads',
    );
    const f = gridFigure(heads)!;
    assert.equal(f.cols, 5);
    assert.equal(f.rows, 2);
    assert.deepEqual(f.colLabels, ['c2c h0', 'h1', '', 'c2p h0', 'h1']);
    assert.ok(Number.isNaN(f.values[2]!), 'the gap');
    assert.ok(Math.abs(f.values[5 + 4]! - 0.9) < 1e-6, 'c2p layer 1 head 1');
    assert.ok(Number.isNaN(f.values[5 + 1]!), 'a null cell');
    const r = gridFigure(resid)!;
    assert.deepEqual([r.rows, r.cols, r.colLabels[1], r.colLabels[2]], [3, 4, 'the', 'cat*'], 'the swapped token marked');
  });
});

describe('Patching flow layout', () => {
  it('rows only the tokens with edges (and the target), edges from column l to l + 1, strongest drawn last', () => {
    const g = flow.grid as Extract<PatchView['grid'], { kind: 'flow' }>;
    const f = flowLayout(g, 2);
    assert.deepEqual(f.rows, [0, 1, 2], 'token 3 has no edge');
    assert.equal(f.maxChange, 0.8);
    assert.deepEqual(
      f.edges.map((e) => [e.layer, e.fromRow, e.toRow, e.weight]),
      [
        [1, 0, 0, 0.25],
        [0, 1, 2, 0.5],
        [1, 2, 0, 1],
      ],
    );
    const strong = flowLayout(g, 2, 0.3);
    assert.deepEqual(
      strong.edges.map((e) => [e.layer, e.to, e.from]),
      [
        [0, 2, 1],
        [1, 0, 2],
      ],
      'the 0.2 edge (25% of the strongest) is left out',
    );
    assert.deepEqual(flowLayout(g, 2, 0.6).rows, [0, 2], 'token 1 goes with its only edge');
    const { svg, height } = flowSvg(f, { labels: flow.tokens, theme: 'light', width: 400, title: 'Flow <of> “next”' });
    assert.equal((svg.match(/class="pt-edge"/g) ?? []).length, 3);
    assert.match(svg, /data-edge="1:0:2"[^>]*stroke="rgb\(117, 112, 179\)"/, 'c2p edge in its colour');
    assert.deepEqual(TERM_RGB.c2p, [117, 112, 179]);
    assert.match(svg, /Flow &#60;of&#62;/, 'the title escaped');
    assert.ok(!/\[SEP\]/.test(svg), 'no row for a token without edges');
    assert.ok(height > 3 * 18);
    assert.match(edgeReadout(flow, g.edges[2]!), /layer 0: 1 “the” → 2 “cat” .* by −0\.4000 .* p2c \(c2c 20%, c2p 30%, p2c 50%\)/);
  });
});

describe('Patching messages and CSV', () => {
  it('accepts the tab’s runs and rejects malformed ones', () => {
    const ok = { type: 'patch', id: 1, resultId: 2, trace: 'resid', corrupt: 'a dog', position: null };
    assert.deepEqual(parseRunMessage(ok), ok);
    assert.deepEqual(parseRunMessage({ ...ok, label: 1, corruptPair: 'b' }), { ...ok, label: 1, corruptPair: 'b' });
    assert.deepEqual(parseRunMessage({ ...ok, threshold: 0.05 }), { ...ok, threshold: 0.05 });
    for (const bad of [
      { trace: 'edges' },
      { corrupt: '' },
      { label: -1 },
      { position: 1.5 },
      { corruptPair: 3 },
      { threshold: -1 },
      { threshold: 'x' },
    ])
      assert.equal(parseRunMessage({ ...ok, ...bad }), undefined, JSON.stringify(bad));
    assert.deepEqual(parseRunMessage({ type: 'exportPatch', format: 'csv', trace: 'flow' }), {
      type: 'exportPatch',
      format: 'csv',
      trace: 'flow',
    });
    assert.equal(parseRunMessage({ type: 'exportPatch', format: 'png', trace: 'flow' }), undefined);
    assert.deepEqual(parseRunMessage({ type: 'patchSetup', id: 3, resultId: 4 }), { type: 'patchSetup', id: 3, resultId: 4 });
  });

  it('writes each grid with its axes named, one row per cell or edge', () => {
    const lines = patchCsv(resid).trim().split('\n');
    assert.equal(lines[0], 'layer,position,token,restored,value,target,clean,corrupt');
    assert.equal(lines.length, 1 + 12);
    assert.equal(lines[1 + 4 + 2], '1,2,"cat",0.75,1.25,"logit of “next”",2,-1');
    assert.equal(lines[1 + 4 + 3], '1,3,"[SEP]",,-1,"logit of “next”",2,-1', 'a null restored is empty');
    const f = patchCsv(flow).trim().split('\n');
    assert.equal(f[0], 'layer,to,to_token,from,from_token,change,term,c2c_share,c2p_share,p2c_share,target,clean,corrupt');
    assert.equal(f[3], '0,2,"cat",1,"the",-0.4,p2c,0.2,0.3,0.5,"logit of “next”",2,-1');
  });
});

describe('Patching view of a real run (models/default)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-patchview-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  it('shapes a causal trace: L + 1 rows × n positions; at layer 0 only the swapped token brings the clean run back', async () => {
    const model = await openModel(path.join(MODELS, 'default'), {
      cacheDir: path.join(tmp, 'cache'),
      executionProvider: 'cpu',
      threads: 2,
    });
    try {
      const r = await model.patch({
        text: 'The quick brown fox jumps over the lazy [MASK].',
        corrupt: 'The quick brown cat jumps over the lazy [MASK].',
        trace: 'resid',
      });
      const v = patchView(r, 1);
      assert.equal(v.trace, 'resid');
      assert.equal(v.unit, 'log p');
      assert.deepEqual(v.differing, [4]);
      assert.equal(v.tokens[4], 'fox');
      assert.equal(v.corruptTokens[4], 'cat');
      assert.match(v.predictions.clean, /^at 10: “/);
      const g = v.grid as Extract<PatchView['grid'], { kind: 'resid' }>;
      assert.equal(g.restored.length, 5);
      assert.ok(g.restored.every((row) => row.length === v.tokens.length));
      g.restored[0]!.forEach((x, i) => assert.ok(Math.abs((x ?? NaN) - (i === 4 ? 1 : 0)) < 1e-4, `layer 0, position ${i}: ${x}`));
      assert.equal(patchCsv(v).trim().split('\n').length, 1 + 5 * v.tokens.length);
    } finally {
      await model.dispose();
    }
  });
  it('traces the BERT twin too: its only term is c2c, and the flow’s legend says so', async () => {
    const model = await openModel(path.join(MODELS, 'bert-twin'), {
      cacheDir: path.join(tmp, 'cache'),
      executionProvider: 'cpu',
      threads: 2,
    });
    try {
      const r = await model.patch({ text: 'The quick brown fox jumps over the lazy [MASK].', trace: 'flow', threshold: 0 });
      const v = patchView(r, 1);
      assert.deepEqual(v.terms, ['c2c']);
      const g = v.grid as Extract<PatchView['grid'], { kind: 'flow' }>;
      assert.ok(g.edges.length > 0, 'with threshold 0 every edge that moves the target is kept');
      assert.ok(g.edges.every((e) => e.term === 'c2c'));
      const { svg } = flowSvg(flowLayout(g, v.layers), { labels: v.tokens, terms: v.terms, theme: 'dark', width: 500 });
      assert.match(svg, />c2c</);
      assert.ok(!/>c2p<|>p2c</.test(svg), 'no legend entry for a term BERT lacks');
    } finally {
      await model.dispose();
    }
  });
});
