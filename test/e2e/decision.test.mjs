// A fine-tuned checkpoint's decision in the real UI. The bundled pair classifier (default-pairs) reads "A [SEP] B"
// typed in one selection, and two separate selections, as Hugging Face's sentence pair: the decision card above
// the strip lists every label with what `deberta-lens predict --pair` prints (scores to 3 decimals), the predicted
// one marked, and the editor shows the label after the text. A token classifier (a fixture checkpoint) marks its
// entities on the strip in their colours with the label over each span; a QA head outlines its answer.
// Screenshots: test-results/e2e/decision-{light,dark}-*.png (E2E_THEMES=light,dark; CI runs light).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, openMore, startLens, stopWithScreenshot, waitReady } from './lib/lens.mjs';
import { FIXTURES, REPO_ROOT } from './lib/paths.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { editorDecorationClasses, openFile, runCommand, screenshot, selectAll, waitUntil } from './lib/workbench.mjs';

const A = 'A company of pioneers had arrived during the day.';
const B = 'Canolles ordered the construction of works, which were instantly begun.';
const PROSE = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8');
const cut = (chars) => PROSE.slice(0, PROSE.lastIndexOf(' ', chars)).replace(/\s+/g, ' ');
// ~130 and ~500 tokens in all: a long first text, the same second text.
const MID = `${cut(560)} [SEP] ${B}`;
const LONG = `${cut(1900)} [SEP] ${B}`;
const VIEWPORT = { width: 1400, height: 1000 };
const skip = extensionMissing();

function cliPredict(model, text, pair, verb = 'predict', extra = []) {
  const args = [path.join(REPO_ROOT, 'dist', 'cli.js'), verb, '--model', model, '--text', text, ...extra];
  if (pair !== undefined) args.push('--pair', pair);
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `deberta-lens predict failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function explainSelection(page, frame) {
  const before = await frame
    .locator('#app')
    .getAttribute('data-result', { timeout: 1_000 })
    .catch(() => null);
  await runCommand(page, 'DeBERTa Lens: Explain Attention');
  await waitReady(frame, 120_000);
  await waitUntil(
    async () =>
      (await frame.locator('#tokens .tok').count()) > 0 &&
      (await frame
        .locator('#app')
        .getAttribute('data-result')
        .catch(() => null)) !== before,
    {
      timeout: 120_000,
      message: 'a new result in the panel',
    },
  ).catch(() => undefined);
}

/** The decision card's label rows: name, score as shown, predicted or not. */
const labelRows = (frame) =>
  frame
    .locator('#decision .decision-row')
    .evaluateAll((rows) =>
      rows.map((r) => ({ label: r.dataset.label, score: r.dataset.score, predicted: r.classList.contains('predicted') })),
    );

for (const theme of (process.env.E2E_THEMES ?? 'light').split(',').filter(Boolean)) {
  describe(`The decision of a fine-tuned checkpoint, ${theme} theme`, { skip: skip ?? false }, () => {
    let lens, frame, page, vsix;

    before(async () => {
      if (theme === 'dark') vsix = packageVsix();
      lens = await startLens({
        name: `decision-${theme}`,
        model: 'default-pairs',
        viewport: VIEWPORT,
        vsix,
        settings: { 'workbench.colorTheme': theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern' },
        files: {
          'pair.txt': `${A} [SEP] ${B}\n`,
          'two.txt': `${A}\n\nSomething else between them.\n\n${B}\n`,
          'mid.txt': MID,
          'long.txt': LONG,
        },
      });
      ({ frame, page } = lens);
    });
    after(async () => {
      await stopWithScreenshot(lens, `decision-${theme}`);
      if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
    });

    test('a pair typed with [SEP]: the card lists every label as `predict --pair` scores it, the editor shows the label', async () => {
      await openFile(page, 'pair.txt');
      await selectAll(page);
      const decorationsBefore = await editorDecorationClasses(page);
      await explainSelection(page, frame);
      await frame.locator('#decision .decision-row').first().waitFor({ timeout: 60_000 });
      const want = cliPredict('default-pairs', A, B);
      assert.equal(want.task, 'sequence-classification');
      const rows = await labelRows(frame);
      assert.deepEqual(
        rows.map((r) => r.label),
        want.classification.labels.map((l) => l.label),
      );
      assert.deepEqual(
        rows.map((r) => r.score),
        want.classification.labels.map((l) => `${(l.score * 100).toFixed(1)}%`),
      );
      assert.deepEqual(
        rows.filter((r) => r.predicted).map((r) => r.label),
        [want.classification.predicted.label],
      );
      assert.equal(await frame.locator('#tokens .tok').count(), want.input_ids.length, 'the strip holds [CLS] A [SEP] B [SEP]');
      const specials = await frame.locator('#tokens .tok.special').allTextContents();
      assert.deepEqual(specials, ['[CLS]', '[SEP]', '[SEP]']);
      await waitUntil(async () => (await editorDecorationClasses(page)).length > decorationsBefore.length, {
        message: 'the label after the text in the editor',
      });
      await screenshot(page, `decision-${theme}-30`);
    });

    test('Words: the predicted label’s occlusion shades the strip with what `deberta-lens attribute` prints', async () => {
      const want = cliPredict('default-pairs', A, B);
      const label = want.classification.predicted;
      await frame.locator('#decision .decision-row.predicted button', { hasText: 'Words' }).click();
      await frame.locator('#attribution[data-state="ready"]').waitFor({ timeout: 120_000 });
      const cli = cliPredict('default-pairs', A, B, 'attribute', ['--target', `label:${label.id}`, '--method', 'mask']);
      const scores = cli.methods.mask.scores;
      const max = Math.max(...scores.filter((x) => x !== null).map(Math.abs));
      const shaded = await frame
        .locator('#tokens .tok[data-attr]')
        .evaluateAll((cs) => cs.map((c) => [Number(c.dataset.i), Number(c.dataset.attr)]));
      assert.deepEqual(
        shaded.map(([i]) => i),
        scores.flatMap((x, i) => (x !== null && Math.abs(x) >= 0.05 * max ? [i] : [])),
        'the tokens that move the label by ≥ 5% of the most are shaded',
      );
      for (const [i, x] of shaded) assert.ok(Math.abs(x - scores[i]) < 1e-3, `#${i}: ${x} vs ${scores[i]}`);
      assert.match(await frame.locator('#attribution-line').innerText(), /^for: |against: /);
      await screenshot(page, `decision-${theme}-words`);
      await frame.locator('#attribution button', { hasText: 'Clear' }).click();
      assert.equal(await frame.locator('#tokens .tok[data-attr]').count(), 0, 'Clear takes the shade away');
      // With the strip merged into words, each word is taken out whole: as `attribute --words` prints it.
      await openMore(frame);
      await frame.locator('#merge-words').check();
      await frame.locator('#decision .decision-row.predicted button', { hasText: 'Words' }).click();
      await frame.locator('#attribution[data-state="ready"]').waitFor({ timeout: 120_000 });
      assert.match(await frame.locator('#attribution .attribution-title').innerText(), /each word/);
      const byWord = cliPredict('default-pairs', A, B, 'attribute', ['--target', `label:${label.id}`, '--method', 'mask', '--words']);
      const wordScore = new Map(byWord.groups.map((g) => [g[0], byWord.methods.mask.scores[g[0]]]));
      const chips = await frame
        .locator('#tokens .tok[data-attr]')
        .evaluateAll((cs) => cs.map((c) => [c.textContent, Number(c.dataset.attr)]));
      assert.ok(chips.length > 0, 'words are shaded');
      const scoresShown = chips.map(([, x]) => x).sort((a, b) => a - b);
      const scoresWanted = [...wordScore.values()].filter((x) => x !== null).sort((a, b) => a - b);
      for (const x of scoresShown)
        assert.ok(
          scoresWanted.some((w) => Math.abs(w - x) < 1e-3),
          `a shaded word's score ${x} is one of the CLI's word scores`,
        );
      await screenshot(page, `decision-${theme}-words-merged`);
      await frame.locator('#attribution button', { hasText: 'Clear' }).click();
      await frame.locator('#merge-words').uncheck();
      // Why? opens the Head ranking aimed at that label.
      await frame.locator('#decision .decision-row.predicted button', { hasText: 'Why?' }).click();
      await frame.locator('#app[data-view="ranking"]').waitFor({ timeout: 30_000 });
    });

    test('two selections are a pair too, the earlier one first', async () => {
      await openFile(page, 'two.txt');
      // A cursor at the start of line 1 and another (Alt+click) at the start of line 5, then Shift+End: A and B.
      await page.keyboard.press('Control+Home');
      const line5 = page.locator('.editor-group-container.active .monaco-editor .view-lines .view-line').nth(4);
      const box = await line5.boundingBox();
      await page.keyboard.down('Alt');
      await page.mouse.click(box.x + 1, box.y + box.height / 2);
      await page.keyboard.up('Alt');
      await page.keyboard.press('Shift+End');
      await explainSelection(page, frame);
      const want = cliPredict('default-pairs', A, B);
      await waitUntil(async () => (await frame.locator('#tokens .tok').count()) === want.input_ids.length, {
        timeout: 60_000,
        message: `${want.input_ids.length} tokens of the pair`,
      });
      const rows = await labelRows(frame);
      assert.deepEqual(
        rows.map((r) => r.score),
        want.classification.labels.map((l) => `${(l.score * 100).toFixed(1)}%`),
      );
    });

    for (const [file, size] of [
      ['mid.txt', 130],
      ['long.txt', 500],
    ]) {
      test(`~${size} tokens: the card stays one block above the strip, the heatmap on screen`, async () => {
        await openFile(page, file);
        await selectAll(page);
        await explainSelection(page, frame);
        await frame.locator('#decision .decision-row').first().waitFor({ timeout: 120_000 });
        const n = await frame.locator('#tokens .tok').count();
        assert.ok(Math.abs(n - size) < size * 0.35, `${n} tokens`);
        const card = await frame.locator('#decision').boundingBox();
        const strip = await frame.locator('#tokens').boundingBox();
        assert.ok(card.y + card.height <= strip.y + 1, 'the card sits above the strip');
        assert.ok(card.height < 140, `the card is ${card.height}px tall`);
        await screenshot(page, `decision-${theme}-${size}`);
      });
    }
  });
}

/** One lens on a fixture checkpoint (light theme): explains `text` selected whole, and hands the frame over. */
function onFixture(name, text, check) {
  describe(`The decision of a ${name} head on the strip`, { skip: skip ?? false }, () => {
    let lens;
    before(async () => {
      lens = await startLens({
        name: `decision-${name}`,
        model: path.join(FIXTURES, 'task-heads', name),
        viewport: VIEWPORT,
        files: { 'in.txt': `${text}\n` },
      });
    });
    after(async () => stopWithScreenshot(lens, `decision-${name}`));
    test(`${name}: what the strip marks is what \`deberta-lens predict\` says`, async () => {
      await openFile(lens.page, 'in.txt');
      await selectAll(lens.page);
      await explainSelection(lens.page, lens.frame);
      await check(lens.frame, lens.page);
      await screenshot(lens.page, `decision-light-${name}`);
    });
  });
}

const NER = 'the cat sat on the mat and the dog ran to the door';
onFixture('v3_tokcls', NER, async (frame) => {
  await frame.locator('#decision[data-task="token-classification"]').waitFor({ timeout: 60_000 });
  const want = cliPredict(path.join(FIXTURES, 'task-heads', 'v3_tokcls'), NER);
  const last = want.input_ids.length - 1;
  const labelled = want.token_classification.filter((t) => t.position > 0 && t.position < last && t.predicted.label !== 'O');
  const marked = await frame.locator('#tokens .tok.ent').evaluateAll((cs) => cs.map((c) => Number(c.dataset.i)));
  assert.deepEqual(
    marked,
    labelled.map((t) => t.position),
    'every token with a label other than O is marked, nothing else',
  );
  assert.ok(labelled.length > 0, 'the fixture labels some tokens');
  assert.ok((await frame.locator('#tokens .tok[data-tag]').count()) > 0, 'labels over the spans');
});

const Q = 'who sat on the mat?';
const CONTEXT = 'the cat sat on the mat and the dog ran.';
onFixture('v3_qa', `${Q} [SEP] ${CONTEXT}`, async (frame) => {
  await frame.locator('#decision[data-task="question-answering"]').waitFor({ timeout: 60_000 });
  const a = cliPredict(path.join(FIXTURES, 'task-heads', 'v3_qa'), Q, CONTEXT).question_answering.answer;
  const outlined = await frame.locator('#tokens .tok.answer').evaluateAll((cs) => cs.map((c) => Number(c.dataset.i)));
  assert.deepEqual(
    outlined,
    Array.from({ length: a.end_token - a.start_token + 1 }, (_, k) => a.start_token + k),
  );
  assert.ok((await frame.locator('#decision-answer').innerText()).includes(`“${a.text.trim()}”`), 'the card quotes the answer');
});

const PROMPT = 'the cat sat on the';
const CHOICES = ['mat.', 'dog in the park.', 'tree.'];
onFixture('v3_mc', `${PROMPT} [SEP] ${CHOICES.join(' [SEP] ')}`, async (frame, page) => {
  await frame.locator('#decision[data-task="multiple-choice"]').waitFor({ timeout: 60_000 });
  const want = cliPredict(path.join(FIXTURES, 'task-heads', 'v3_mc'), PROMPT, undefined, 'predict', ['--choices', CHOICES.join('|')]);
  const mc = want.multiple_choice;
  const rows = await labelRows(frame);
  assert.deepEqual(
    rows.map((r) => r.score),
    mc.choices.map((c) => `${(c.score * 100).toFixed(1)}%`),
    'every choice scored as `predict --choices` scores it',
  );
  assert.deepEqual(
    rows.filter((r) => r.predicted).map((r) => r.label),
    [`${mc.predicted + 1}. ${CHOICES[mc.predicted]}`],
  );
  const shownTokens = async () => frame.locator('#tokens .tok').count();
  assert.equal(
    await frame.locator('#decision .decision-row.shown').getAttribute('data-id'),
    String(mc.predicted),
    'the predicted choice is on screen',
  );
  assert.equal(await shownTokens(), mc.choices[mc.predicted].input_ids.length, '[CLS] prompt [SEP] choice [SEP]');
  // Show another choice: the panel explains the prompt with it.
  const other = (mc.predicted + 1) % CHOICES.length;
  await frame.locator(`#decision .decision-row[data-id="${other}"] button`, { hasText: 'Show' }).click();
  await waitUntil(
    async () =>
      (await frame
        .locator('#decision .decision-row.shown')
        .getAttribute('data-id')
        .catch(() => null)) === String(other),
    {
      timeout: 60_000,
      message: `choice ${other + 1} on screen`,
    },
  );
  assert.equal(await shownTokens(), mc.choices[other].input_ids.length, 'the strip holds the other choice');
  // Patching follows the choice on screen: corrupt that choice into a third one and trace where its score lives.
  await frame.locator('#view-patching').click();
  const corruptPair = frame.locator('#pt-corrupt-pair');
  await waitUntil(async () => (await corruptPair.inputValue().catch(() => '')) === CHOICES[other], {
    timeout: 15_000,
    message: 'the corrupted choice starts as the one on screen',
  });
  assert.equal(await frame.locator('#pt-corrupt').inputValue(), PROMPT);
  await waitUntil(async () => /score of the choice on screen/.test(await frame.locator('#pt-target').innerText()), {
    timeout: 15_000,
    message: 'the target says the choice on screen',
  });
  await corruptPair.fill(CHOICES[(other + 1) % CHOICES.length]);
  await frame.locator('#pt-run').click();
  await frame.locator('#pt-grid-resid').waitFor({ timeout: 120_000 });
  assert.match(await frame.locator('#pt-status').innerText(), new RegExp(`score of the choice “${CHOICES[other].replace('.', '\\.')}”`));
  await screenshot(page, 'decision-mc-patching');
});
