// What the analysis tabs say for a BERT model: captions without DeBERTa's relative-term words where they would be
// wrong, one line for the tabs that cannot apply, the plain statement for layers without a split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BERT_SHARE_COLUMNS, bertOtherLayersText, bertShareText, sharePercent } from '../../webview/lens/views/shares-model';
import { BERT_NOT_APPLICABLE, bertNoSplitText, viewCaption, VIEW_CAPTIONS } from '../../webview/lens/views/view-captions';
import { ANALYSIS_VIEWS, isBertModel } from '../../src/shared/protocol/lens';

test('BERT captions: Distance and Term shares name the layer-0 split and absolute positions; DeBERTa keeps its own', () => {
  assert.match(viewCaption('distance', true), /layer 0/);
  assert.match(viewCaption('distance', true), /absolute position/);
  assert.match(viewCaption('distance', true), /exact in layer 0 only/);
  assert.match(viewCaption('shares', true), /p2p and rest/);
  for (const v of ANALYSIS_VIEWS) assert.equal(viewCaption(v, false), VIEW_CAPTIONS[v], v);
  // Rollout for BERT offers no presets, so its caption does not offer "an ablation".
  assert.doesNotMatch(viewCaption('rollout', true), /ablation/);
});

test('tabs that cannot apply to BERT say so in one line naming BERT', () => {
  assert.deepEqual(Object.keys(BERT_NOT_APPLICABLE).sort(), ['ablation', 'buckets']);
  for (const line of Object.values(BERT_NOT_APPLICABLE)) {
    assert.match(line, /BERT/);
    assert.doesNotMatch(line, /\n/);
  }
});

test("layers after 0: a plain statement, and the table's line for the other layers", () => {
  assert.match(bertNoSplitText(3, 'distance'), /^BERT has no separable terms in layer 3:/);
  assert.equal(bertOtherLayersText([0, 1]), 'Layer 1: no term shares — BERT’s score has no separable terms after layer 0.');
  assert.match(bertOtherLayersText([0, 1, 2, 11]), /^Layers 1–11:/);
  assert.equal(bertOtherLayersText([0]), '');
});

test('a share row reads as percentages and adds up the position terms', () => {
  assert.deepEqual(
    BERT_SHARE_COLUMNS.map((c) => c.term),
    ['c2c', 'c2p', 'p2c', 'p2p', 'rest'],
  );
  assert.equal(sharePercent(0.1234), '12.3%');
  assert.equal(sharePercent(NaN), '–');
  assert.equal(
    bertShareText(2, { c2c: 0.3, c2p: 0.1, p2c: 0.2, p2p: 0.05, rest: 0.35 }),
    'Layer 0, head 2: c2c 30.0%, c2p 10.0%, p2c 20.0%, p2p 5.0%, rest 35.0%; position (c2p + p2c + p2p) 35.0%',
  );
  assert.equal(isBertModel({ type: 'bert' }), true);
  assert.equal(isBertModel({ type: 'deberta-v2' }), false);
});
