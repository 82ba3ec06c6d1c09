// A multiple-choice head in the panel: the prompt and its choices from the editor (typed [SEP]s or one selection
// each), every choice's score on the card (the one on screen marked), Show for another, and the editor's summary.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { decisionOf } from '../../src/extension/common/decision-of';
import { selectionInput, sepParts } from '../../src/extension/common/text-range';
import { PanelPredictions } from '../../src/extension/lens/panel-predictions';
import { decisionLine, parseShowChoiceMessage } from '../../src/shared/decision';
import type { PredictionsToWebview } from '../../src/shared/predictions';
import { parseWebviewMessage } from '../../src/shared/protocol/lens';
import { cardHeading, classificationRows } from '../../webview/lens/components/decision-model';
import { FIXTURES } from './helpers';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-mc-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const MC = path.join(FIXTURES, 'task-heads', 'v3_mc');
interface McCase {
  text: string;
  choices: string[];
  expected: { logits: number[] };
}
const CASE = (JSON.parse(fs.readFileSync(path.join(MC, 'expected_outputs.json'), 'utf8')) as { cases: McCase[] }).cases[0]!;

describe('the prompt and its choices from a selection', () => {
  it('typed [SEP]s: each text with its offset; the choice on screen is the pair', () => {
    const text = 'the cat sat on the [SEP] mat.  [SEP]  dog in the park. [SEP] tree.\n';
    const parts = sepParts(text);
    assert.deepEqual(
      parts.map((p) => p.text),
      ['the cat sat on the', 'mat.', 'dog in the park.', 'tree.'],
    );
    for (const p of parts) assert.equal(text.slice(p.offset, p.offset + p.text.length), p.text);
    const s = selectionInput(parts, 'sep', 'multiple-choice', 1);
    assert.deepEqual(s.input, { text: 'the cat sat on the', pair: 'dog in the park.', pairOffset: parts[2]!.offset });
    assert.deepEqual(s.choices, {
      prompt: 'the cat sat on the',
      list: ['mat.', 'dog in the park.', 'tree.'],
      offsets: parts.slice(1).map((p) => p.offset),
      shown: 1,
    });
    assert.equal(selectionInput(parts, 'sep', 'multiple-choice', 9).choices?.shown, 2, 'a choice past the end: the last');
  });

  it('refuses too few choices, an empty choice, and several texts on a head that is not multiple choice', () => {
    assert.throws(
      () => selectionInput(sepParts('a [SEP] b'), 'sep', 'multiple-choice'),
      /multiple-choice head.*Type \[SEP\].*two choices at least/,
    );
    assert.throws(() => selectionInput(sepParts('a [SEP] b'), 'selections', 'multiple-choice'), /Select the prompt and each choice/);
    assert.throws(() => selectionInput(sepParts('a [SEP] b [SEP]  '), 'sep', 'multiple-choice'), /Text is needed between each \[SEP\]/);
    assert.throws(() => selectionInput(sepParts('a [SEP] b [SEP] c'), 'sep', 'sequence-classification'), /more than one \[SEP\]/);
    const three = [
      { text: 'a', offset: 0 },
      { text: 'b', offset: 2 },
      { text: 'c', offset: 4 },
    ];
    assert.throws(() => selectionInput(three, 'selections', null), /3 selections: select one text, or two/);
    // One text on a multiple-choice checkpoint: the encoder explains it (the card says what is missing).
    assert.deepEqual(selectionInput(sepParts('just a prompt'), 'sep', 'multiple-choice'), { input: { text: 'just a prompt' } });
  });
});

describe('a multiple-choice decision on the card', () => {
  it('every choice scored as Hugging Face scores it; the one on screen marked; Show validated', async () => {
    const model = await openModel(MC, { cacheDir, executionProvider: 'cpu', threads: 2 });
    try {
      assert.equal(model.summary.task_head, 'multiple-choice');
      const predict = await model.predict({ text: CASE.text, choices: CASE.choices });
      const d = decisionOf(predict, 2);
      assert.ok(d?.task === 'multiple-choice');
      d.choices.forEach((c, k) => assert.ok(Math.abs(c.logit - CASE.expected.logits[k]!) < 1e-4, `choice ${k}: ${c.logit}`));
      const best = CASE.expected.logits.indexOf(Math.max(...CASE.expected.logits));
      assert.equal(d.predicted, best);
      assert.equal(d.shown, 2);
      const byDefault = decisionOf(predict);
      assert.equal(byDefault?.task === 'multiple-choice' ? byDefault.shown : null, best, 'default: the predicted one');
      const rows = classificationRows(d);
      assert.deepEqual(
        rows.map((r) => r.name),
        CASE.choices.map((c, k) => `${k + 1}. ${c}`),
      );
      assert.equal(rows.filter((r) => r.predicted).length, 1);
      assert.ok(Math.abs(rows.reduce((s, r) => s + (r.bar ?? 0), 0) - 1) < 1e-6, 'softmax over the choices');
      assert.equal(cardHeading(d), `Multiple choice · softmax over ${CASE.choices.length} choices, one run each`);
      assert.match(decisionLine(d), new RegExp(`^choice ${best + 1} “${CASE.choices[best]!.replace('.', '\\.')}” \\d+\\.\\d%$`));

      // The panel's predictions take the scores already run (no second run of every choice).
      const explained = await model.explain({ text: CASE.text, pair: CASE.choices[2] });
      const posted: PredictionsToWebview[] = [];
      const predictions = new PanelPredictions({ post: (m) => posted.push(m), topK: () => 5, log: () => undefined });
      const shown = await predictions.start(model, explained, 7, undefined, { predict, shown: 2 });
      assert.ok(shown.state === 'ready' && shown.decision?.task === 'multiple-choice' && shown.decision.shown === 2);
      assert.deepEqual(predictions.decisionOf(7), shown.decision);
    } finally {
      await model.dispose();
    }
    assert.deepEqual(parseShowChoiceMessage({ type: 'showChoice', resultId: 3, index: 1 }), { type: 'showChoice', resultId: 3, index: 1 });
    assert.equal(parseShowChoiceMessage({ type: 'showChoice', resultId: 3, index: -1 }), undefined);
    assert.deepEqual(parseWebviewMessage({ type: 'showChoice', resultId: 3, index: 0 }), { type: 'showChoice', resultId: 3, index: 0 });
    assert.equal(parseWebviewMessage({ type: 'showChoice', resultId: 3, index: 'x' }), undefined);
  });
});
