// The panel's layout arithmetic (webview/common/axis-ticks.ts, webview/lens/components/list-label.ts): axis
// labels at word starts of real prose tokenized by the bundled model, the map's side from the free room, how many
// maps share a row, and readout titles that count what they show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildModelInput, loadTokenizer } from '../../src/engine/tokenizer';
import { parseWebviewMessage } from '../../src/shared/protocol/lens';
import type { ProtocolToken } from '../../src/shared/protocol/token';
import { axisTicks, columnsFor, mapSide } from '../../webview/common/axis-ticks';
import { wordLabels } from '../../webview/common/figure-labels';
import { labelStride } from '../../webview/common/viewport';
import { listLabel } from '../../webview/lens/components/list-label';
import { REPO_ROOT } from './helpers';

const PROSE = fs.readFileSync(path.join(REPO_ROOT, 'test', 'e2e', 'data', 'prose.txt'), 'utf8');

async function proseTokens(chars: number): Promise<{ text: string; tokens: ProtocolToken[] }> {
  const text = PROSE.slice(0, PROSE.lastIndexOf(' ', chars));
  const tok = await loadTokenizer(path.join(REPO_ROOT, 'models', 'default'));
  const tokens = buildModelInput(tok, text).tokens.map((t, i) => ({ i, text: t.text, start: t.start, end: t.end, special: t.special }));
  return { text, tokens };
}

/** Whether token k starts a word of the text: a special, the first token, or whitespace (or a special) before it. */
function startsWord(text: string, tokens: ProtocolToken[], k: number): boolean {
  const t = tokens[k];
  const prev = tokens[k - 1];
  if (!t || !prev || t.special || prev.special) return true;
  return t.start > prev.end || /\s/u.test(text.charAt(t.start - 1)) || /\s/u.test(text.charAt(t.start));
}

test('at 500 tokens of prose, thinned axis labels sit on word starts only, are whole words and never a lone space', async () => {
  const { text, tokens } = await proseTokens(1850);
  assert.ok(tokens.length > 400, `${tokens.length} tokens`);
  const words = wordLabels(text, tokens);
  // The sub-word pieces the old axes showed exist in this text: a thinned axis could land on one.
  const inner = tokens.filter((_, k) => !startsWord(text, tokens, k));
  assert.ok(inner.length > 10, `${inner.length} word-inner pieces`);
  // The map at 340 px: cells of 0.7 px, a label every 18 rows or more.
  const stride = labelStride(340 / tokens.length, 12);
  assert.ok(stride > 10);
  const ticks = axisTicks(words, 0, tokens.length, stride);
  assert.ok(ticks.length >= 15, `${ticks.length} labels`);
  for (const k of ticks) {
    assert.ok(startsWord(text, tokens, k), `label at #${k} "${tokens[k]?.text}" starts a word`);
    assert.notEqual(words[k], '␣');
    assert.ok((words[k] ?? '').trim().length > 0);
  }
  for (let a = 1; a < ticks.length; a++) assert.ok((ticks[a] ?? 0) - (ticks[a - 1] ?? 0) >= stride, 'labels a stride apart');
  // No long gaps either: a label at least every 3 strides.
  for (let a = 1; a < ticks.length; a++) assert.ok((ticks[a] ?? 0) - (ticks[a - 1] ?? 0) <= 3 * stride, `gap after #${ticks[a - 1]}`);
  // A zoomed window labels every row; without words, every stride-th row as before.
  assert.deepEqual(axisTicks(words, 100, 5, 1), [100, 101, 102, 103, 104]);
  assert.deepEqual(axisTicks(undefined, 3, 40, 20), [20, 40]);
});

test('the map takes the smaller of the free width and height, never below its minimum, with whole px per cell when cells are large', () => {
  // 500 tokens in a 460 px panel: the width rules (not the old cap of 760 or a fixed 280).
  assert.equal(mapSide({ width: 360, height: 520, n: 500 }), 360);
  assert.equal(mapSide({ width: 900, height: 430, n: 500 }), 430);
  assert.equal(mapSide({ width: 40, height: 30, n: 500 }), 200);
  // Capped at 1,600 px, then 3 px a cell.
  assert.equal(mapSide({ width: 5000, height: 5000, n: 500, max: 1600 }), 1500);
  // 30 tokens in 340 px: 11 px a cell, 330 px.
  assert.equal(mapSide({ width: 340, height: 900, n: 30 }), 330);
  assert.equal(mapSide({ width: 340.9, height: 900, n: 0 }), 340);
});

test('maps share a row while each keeps its minimum: two compared heads fit beside each other in a 430 px panel', () => {
  const pane = { each: 64 + 18, gap: 14, min: 120 };
  assert.equal(columnsFor(430, 2, pane), 2);
  assert.equal(columnsFor(430, 5, pane), 2);
  assert.equal(columnsFor(1200, 5, pane), 5);
  assert.equal(columnsFor(150, 3, pane), 1);
});

test('a readout list title counts the items on screen and says how many more the hover lists', () => {
  assert.equal(listLabel('top', 'probs', 8, 8), 'Top 8 by probs:');
  assert.equal(listLabel('top', 'probs', 5, 8), 'Top 5 by probs (+3 on hover):');
  assert.equal(listLabel('raises', 'c2p', 3, 6), 'Raises the score (top 3, c2p) (+3 on hover):');
  assert.equal(listLabel('lowers', 'c2p', 2, 2), 'Lowers it (top 2):');
  assert.equal(listLabel('lowers', 'c2p', 0, 0), 'Lowers it (top):');
});

test('"Compare models…" carries the main panel\'s layer and head; bad numbers are dropped', () => {
  assert.deepEqual(parseWebviewMessage({ type: 'compareModels', layer: 3, head: 5 }), { type: 'compareModels', layer: 3, head: 5 });
  assert.deepEqual(parseWebviewMessage({ type: 'compareModels', layer: -1, head: 1.5 }), { type: 'compareModels' });
  assert.deepEqual(parseWebviewMessage({ type: 'compareModels' }), { type: 'compareModels' });
});
