// The atlas panel's pure parts: scatter scales and ticks, the table's sort, the dominant term, and the pairing of
// two atlases head by head, the exported figure's layout. Expected values are written out by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AtlasHeadView, AtlasView } from '../../src/shared/atlas';
import {
  dominantTerm,
  linearScale,
  metricsPresent,
  nearestPoint,
  niceStep,
  pairAtlases,
  sortRows,
  formatMetric,
} from '../../webview/atlas/atlas-model';
import { ATLAS_METRICS, parseAtlasMessage } from '../../src/shared/atlas';
import { atlasFigureName, atlasFigureSvg, hexColour, layoutAtlasFigure } from '../../webview/atlas/atlas-figure';

const head = (layer: number, head: number, metrics: AtlasHeadView['metrics']): AtlasHeadView => ({ layer, head, metrics, top: [] });
const atlas = (layers: number, heads: number, rows: AtlasHeadView[]): AtlasView => ({
  file: 'a.json',
  name: 'm · c',
  model: 'm',
  corpus: 'c',
  texts: 1,
  tokens: 10,
  layers,
  heads,
  rows,
});

test('dominant term: the largest share; ties to the earlier term; none without shares (BERT)', () => {
  assert.equal(dominantTerm({ c2c_share: 0.2, c2p_share: 0.5, p2c_share: 0.3 }), 'c2p');
  assert.equal(dominantTerm({ c2c_share: 0.6, c2p_share: 0.2, p2c_share: 0.2 }), 'c2c');
  assert.equal(dominantTerm({ c2c_share: 0.1, c2p_share: 0.1, p2c_share: 0.8 }), 'p2c');
  assert.equal(dominantTerm({ c2c_share: 0.4, c2p_share: 0.4, p2c_share: 0.2 }), 'c2c');
  assert.equal(dominantTerm({ entropy: 1 }), undefined);
  assert.equal(dominantTerm({ c2c_share: 1 }), 'c2c');
});

test('linear scale: widened to round ticks, maps min and max to the pixel ends; a single value gets a span', () => {
  assert.equal(niceStep(1, 5), 0.2);
  assert.equal(niceStep(37, 5), 10);
  assert.equal(niceStep(0.03, 5), 0.01);
  const s = linearScale([0.13, 0.87], 50, 450);
  assert.deepEqual(s.ticks, [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.equal(s.at(0), 50);
  assert.equal(s.at(1), 450);
  assert.equal(s.at(0.5), 250);
  // y axes run upwards: from > to
  const y = linearScale([2, 7], 300, 10);
  assert.deepEqual([y.min, y.max], [2, 7]);
  assert.equal(y.at(2), 300);
  assert.equal(y.at(7), 10);
  const one = linearScale([3, 3], 0, 100);
  assert.ok(one.min < 3 && one.max > 3, `${one.min}..${one.max}`);
  assert.ok(Number.isFinite(one.at(3)));
  const none = linearScale([NaN], 0, 100);
  assert.deepEqual([none.min, none.max], [0, 1]);
});

test('pairing: heads matched by layer and head, difference second − first; another geometry pairs nothing', () => {
  const a = atlas(1, 2, [head(0, 0, { entropy: 1, c2c_share: 0.5 }), head(0, 1, { entropy: 2 })]);
  const b = atlas(1, 2, [head(0, 1, { entropy: 2.5 }), head(0, 0, { entropy: 0.25 })]);
  const { rows, paired } = pairAtlases(a, b);
  assert.equal(paired, true);
  assert.deepEqual(
    rows.map((r) => [r.layer, r.head, r.delta.entropy, r.delta.c2c_share]),
    [
      [0, 0, -0.75, undefined],
      [0, 1, 0.5, undefined],
    ],
  );
  const other = pairAtlases(a, atlas(2, 2, b.rows));
  assert.equal(other.paired, false);
  assert.ok(other.rows.every((r) => r.b === undefined && Object.keys(r.delta).length === 0));
  assert.equal(pairAtlases(a).paired, false);
});

test('sorting: by a metric either way, missing values last, ties by layer and head; paired sorts by size of the change', () => {
  const a = atlas(2, 2, [head(0, 0, { entropy: 1 }), head(0, 1, { entropy: 3 }), head(1, 0, {}), head(1, 1, { entropy: 1 })]);
  const order = (rows: { layer: number; head: number }[]) => rows.map((r) => `${r.layer}.${r.head}`);
  const { rows } = pairAtlases(a);
  assert.deepEqual(order(sortRows(rows, { key: 'entropy', descending: true }, false)), ['0.1', '0.0', '1.1', '1.0']);
  assert.deepEqual(order(sortRows(rows, { key: 'entropy', descending: false }, false)), ['0.0', '1.1', '0.1', '1.0']);
  assert.deepEqual(order(sortRows(rows, { key: 'head', descending: true }, false)), ['0.1', '1.1', '0.0', '1.0']);
  const b = atlas(2, 2, [head(0, 0, { entropy: 0 }), head(0, 1, { entropy: 3.5 }), head(1, 0, {}), head(1, 1, { entropy: 1 })]);
  const p = pairAtlases(a, b);
  // changes: 0.0 −1, 0.1 +0.5, 1.1 0: the largest move first whatever its sign
  assert.deepEqual(order(sortRows(p.rows, { key: 'entropy', descending: true }, true)), ['0.0', '0.1', '1.1', '1.0']);
});

test('metrics present, nearest point, number format and message checks', () => {
  const a = atlas(1, 1, [head(0, 0, { entropy: 1, max_prob: 0.5 })]);
  assert.deepEqual(metricsPresent([a], ATLAS_METRICS), ['entropy', 'max_prob']);
  assert.equal(
    nearestPoint(
      [
        { x: 0, y: 0 },
        { x: 10, y: 10 },
      ],
      9,
      9,
      5,
    ),
    1,
  );
  assert.equal(nearestPoint([{ x: 0, y: 0 }], 50, 50, 5), -1);
  assert.equal(formatMetric(0.12345), '0.123');
  assert.equal(formatMetric(0.5, true), '+0.500');
  assert.equal(formatMetric(undefined), '–');
  assert.deepEqual(parseAtlasMessage({ type: 'open', atlas: 0, layer: 1, head: 2, index: 3 }), {
    type: 'open',
    atlas: 0,
    layer: 1,
    head: 2,
    index: 3,
  });
  assert.equal(parseAtlasMessage({ type: 'open', atlas: 0, layer: '1', head: 2, index: 3 }), undefined);
  assert.equal(parseAtlasMessage({ type: 'nope' }), undefined);
});

test('the atlas figure: every head a point inside the axes, ticks and titles, legend, caption, arrows for a pair', () => {
  const points = [
    { x: 1, y: 0.5, colour: '#d95f02' },
    { x: 3, y: 2.5, colour: 'hsl(260, 70%, 42%)' },
    { x: 2, y: 1.5, bx: 2.5, by: 1, colour: undefined },
    { x: NaN, y: 1 },
  ];
  const spec = {
    title: 'Head atlas: default · corpus (4 × 8 heads, 5 texts, 120 tokens)',
    caption: 'Each point is one attention head. Colour: layer.',
    xLabel: 'mean distance (tokens)',
    yLabel: 'entropy (nats)',
    points,
    legendTitle: 'layer',
    legend: [
      { colour: 'hsl(0, 100%, 50%)', label: '0' },
      { colour: '#1b9e77', label: '3' },
    ],
    widthCm: 12,
    dpi: 300,
    theme: 'light' as const,
  };
  const L = layoutAtlasFigure(spec);
  assert.equal(Math.round(L.width), Math.round((12 * 72) / 2.54));
  assert.equal(L.dots.length, 3, 'a head without both metrics is not drawn');
  for (const d of L.dots) {
    assert.ok(d.x >= L.plot.x && d.x <= L.plot.x + L.plot.w && d.y >= L.plot.y && d.y <= L.plot.y + L.plot.h, `inside: ${d.x}, ${d.y}`);
  }
  // Larger values lie right and up.
  assert.ok(L.dots[1]!.x > L.dots[0]!.x && L.dots[1]!.y < L.dots[0]!.y);
  assert.deepEqual(
    L.dots.map((d) => d.colour),
    ['#d95f02', '#5220b6', '#1e1e1e'],
    'hsl as hex; no colour: the foreground',
  );
  assert.equal(L.arrows.length, 1);
  assert.deepEqual(L.arrows[0]!.from, [L.dots[2]!.x, L.dots[2]!.y]);
  const texts = L.texts.map((t) => t.text);
  for (const want of [spec.title, 'mean distance (tokens)', 'entropy (nats)', 'layer:', '0', '3', spec.caption, '1', '3']) {
    assert.ok(texts.includes(want), `"${want}" in ${JSON.stringify(texts)}`);
  }
  assert.equal(L.texts.find((t) => t.text === 'entropy (nats)')!.rotate, -90);
  assert.deepEqual(
    L.chips.map((c) => c.colour),
    ['#ff0000', '#1b9e77'],
  );
  const last = Math.max(...L.texts.map((t) => t.y));
  assert.ok(L.height > last, 'the caption is inside the figure');
  assert.ok(
    L.texts.every((t) => t.size >= 7),
    'no text under 7 pt',
  );
  const svg = atlasFigureSvg(spec);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="12cm"/);
  assert.match(svg, /<\/svg>$/);
  assert.equal((svg.match(/<circle /g) ?? []).length, 3 + 2, 'the heads and the legend chips');
  assert.match(svg, /<title>Head atlas: default · corpus/);
  assert.equal(layoutAtlasFigure({ ...spec, theme: 'dark' }).background, '#1e1e1e');
  assert.equal(
    atlasFigureName('default · my corpus', 'mean_distance', 'entropy', 'png'),
    'atlas-default-my-corpus-mean_distance-vs-entropy.png',
  );
  assert.equal(hexColour('hsl(120, 100%, 25%)'), '#008000');
});

test('the atlas export message: validated like the other panels', () => {
  assert.deepEqual(parseAtlasMessage({ type: 'export', format: 'svg', name: 'atlas-a.svg', svg: '<svg/>' }), {
    type: 'export',
    format: 'svg',
    name: 'atlas-a.svg',
    svg: '<svg/>',
  });
  assert.equal(parseAtlasMessage({ type: 'export', format: 'png', name: '../x.png', dataUrl: 'data:' }), undefined, 'a path is refused');
  assert.equal(parseAtlasMessage({ type: 'export', format: 'gif', name: 'a.gif', dataUrl: 'data:' }), undefined);
  assert.equal(parseAtlasMessage({ type: 'export', format: 'png', name: 'a.png' }), undefined, 'no image');
});
