// The Predictions section's pure parts (webview/lens/components/predictions-model.ts): its one-line summary, the strip's
// context-menu data, and the piece ↔ strip row maps used when pieces are merged into words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProtocolToken, WordGroupInfo } from '../../src/shared/protocol/lens';
import type { FillMask, PositionPredictions, TokenPrediction } from '../../src/shared/predictions';
import { pieceOfRow, rowOfPiece, stripContext, summaryLine, tokenName } from '../../webview/lens/components/predictions-model';

const tokens: ProtocolToken[] = ['[CLS]', '▁She', '▁opened', '▁the', '[MASK]', '[SEP]'].map((text, i) => ({
  i,
  text,
  start: 0,
  end: 0,
  special: text.startsWith('['),
}));
const at = (position: number, source: 'input' | 'masked', token: string, prob: number): PositionPredictions => ({
  position,
  source,
  top: [{ id: 9, token, logit: 1, prob }],
});
const groups: WordGroupInfo[] = [
  { pieces: [0], start: 0, end: 0, text: '[CLS]', special: true },
  { pieces: [1, 2], start: 0, end: 9, text: 'Sheopened', special: false },
  { pieces: [3], start: 10, end: 13, text: 'the', special: false },
];

test('summary: first choice at each [MASK] and each token asked about, then the last failure', () => {
  const fm: FillMask = { state: 'ready', k: 5, mlmHead: 'cls.predictions', masks: [at(4, 'input', '▁door', 0.4776)] };
  const asked: TokenPrediction[] = [
    { position: 2, state: 'ready', prediction: at(2, 'masked', '▁took', 0.113) },
    { position: 4, state: 'ready', prediction: at(4, 'input', '▁door', 0.4776) },
  ];
  assert.equal(summaryLine(fm, asked, tokens), '1 [MASK] · top 5: #4 → door 47.8% · #2 “opened” → took 11.3%');
  const failed: TokenPrediction = { position: 0, state: 'error', message: 'a special token' };
  assert.match(summaryLine(fm, asked, tokens, failed), / · #0 “\[CLS\]”: a special token$/);
});

test('summary: no [MASK], RTD only, no head, pending', () => {
  assert.match(summaryLine({ state: 'ready', k: 5, mlmHead: 'cls.predictions', masks: [] }, [], tokens), /^no \[MASK\] in the selection/);
  // [CLS] scores highest but is the model's own token: the most "replaced" text token is named.
  const rtd: FillMask = { state: 'ready', k: 5, mlmHead: null, masks: [], rtd: [0.99, 0.2, 0.7, 0.1, 0.3, 0.95] };
  assert.equal(
    summaryLine(rtd, [], tokens),
    'replaced? highest 70.0% at #2 “opened” · no masked-LM head in this checkpoint, so no fill-mask',
  );
  assert.equal(summaryLine({ state: 'none', message: 'no head here' }, [], tokens), 'no head here');
  assert.equal(summaryLine({ state: 'pending' }, [], tokens), 'computing…');
  const after: FillMask = { state: 'ready', k: 5, mlmHead: 'cls.predictions', masks: [at(4, 'input', ',', 0.4452)], intervened: true };
  assert.equal(summaryLine(after, [], tokens), 'after the intervention · 1 [MASK] · top 5: #4 → , 44.5%');
});

test('token names, and the strip context menu offers the question on single pieces only', () => {
  assert.equal(tokenName(tokens, 2), '#2 “opened”');
  assert.equal(tokenName(tokens, 4), '#4 “[MASK]”');
  assert.equal(tokenName(tokens, 9), '#9');
  assert.deepEqual(JSON.parse(stripContext(3, undefined)), {
    webviewSection: 'token',
    tokenIndex: 3,
    preventDefaultContextMenuItems: true,
  });
  assert.deepEqual(JSON.parse(stripContext(2, groups)), { webviewSection: 'token', tokenIndex: 3, preventDefaultContextMenuItems: true });
  assert.deepEqual(JSON.parse(stripContext(1, groups)), { webviewSection: 'word' }, 'a word of two pieces');
});

test('pieces and strip rows map both ways when pieces are merged', () => {
  assert.equal(rowOfPiece(2, groups), 1);
  assert.equal(rowOfPiece(7, groups), null);
  assert.equal(rowOfPiece(2, undefined), 2);
  assert.equal(rowOfPiece(null, groups), null);
  assert.equal(pieceOfRow(2, groups), 3);
  assert.equal(pieceOfRow(1, groups), null);
  assert.equal(pieceOfRow(4, undefined), 4);
});
