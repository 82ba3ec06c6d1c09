import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketSummary } from '../../webview/lens/views/buckets-model';
import { meanMax } from '../../webview/lens/views/ablation-model';
import { peakSentence, profileRange } from '../../webview/lens/views/distance-model';
import { shareColor, shareText } from '../../webview/lens/views/shares-model';
import { VIEW_CAPTIONS } from '../../webview/lens/views/view-captions';
import { ANALYSIS_VIEWS } from '../../src/shared/protocol/lens';

test('peak sentences read δ = query − key: positive looks left', () => {
  assert.equal(peakSentence(1), 'peaks at δ = +1: looks one token to the left');
  assert.equal(peakSentence(-3), 'peaks at δ = −3: looks 3 tokens to the right');
  assert.equal(peakSentence(0), 'peaks at δ = 0: looks at the token itself');
  assert.match(peakSentence(NaN), /no data/);
});

test('share colours: content green end, position purple end, pale in the middle', () => {
  const c = shareColor(1);
  const p = shareColor(0);
  const m = shareColor(0.5);
  assert.ok(c[1] > c[0] && c[1] > c[2], `content is green, got ${c.join(',')}`);
  assert.ok(p[2] > p[1], `position is purple/blue, got ${p.join(',')}`);
  assert.ok(
    m.every((x) => x > 220),
    `midpoint is pale, got ${m.join(',')}`,
  );
  assert.deepEqual(shareColor(2), c, 'clamped');
  const dark = shareColor(0.5, 'dark');
  assert.ok(
    dark.every((x) => x < 80),
    `on a dark page the midpoint is dark, got ${dark.join(',')}`,
  );
  assert.deepEqual(shareColor(1, 'dark'), c, 'the ends are the same hues in both themes');
  assert.match(
    shareText(2, 1, 0.25, 'positional', 0.5, 0.25),
    /Layer 2, head 1: positional — content \(c2c\) 25\.0%, c2p 50\.0%, p2c 25\.0%; position share 75\.0%/,
  );
});

test('every analysis view has a one-line caption', () => {
  for (const v of ANALYSIS_VIEWS) {
    assert.ok(VIEW_CAPTIONS[v].length > 40);
    assert.ok(!VIEW_CAPTIONS[v].includes('\n'));
  }
});

test('profile range spans mean ± std over finite entries only', () => {
  const r = profileRange([{ mean: Float32Array.from([NaN, 1, 3]), std: Float32Array.from([NaN, 0.5, 1]) }]);
  assert.deepEqual(r, { min: 0.5, max: 4 });
  assert.deepEqual(profileRange([]), { min: -1, max: 1 });
  assert.deepEqual(profileRange([{ mean: Float32Array.from([2]), std: Float32Array.from([0]) }]), { min: 1, max: 3 });
});

test('meanMax finds the worst row', () => {
  const s = meanMax(Float32Array.from([0.1, 0.7, 0.4]));
  assert.ok(Math.abs(s.mean - 0.4) < 1e-6);
  assert.equal(s.argmax, 1);
});

test('bucket summary counts pairs per zone and names a pooled bucket', () => {
  const lines = bucketSummary(
    [
      { row: 15, zone: 'exact', deltas: [1], pairs: 9 },
      { row: 16, zone: 'exact', deltas: [0], pairs: 10 },
      { row: 24, zone: 'log', deltas: [9, 10, 11], pairs: 3 },
    ],
    8,
  );
  assert.equal(lines.length, 2);
  assert.match(lines[0] ?? '', /19 pairs over 2 rows \(\|δ\| ≤ 8\)/);
  assert.match(lines[1] ?? '', /δ = 9…11 all read row 24/);
});
