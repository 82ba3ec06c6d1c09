// Integration tests inside a real VS Code extension host: commands, settings, errors, cancellation, panel,
// and the editor hover. They explain with the tiny random fixture model, so they are fast and offline.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXT_ID = 'deberta-lens.deberta-lens';
type Outcome =
  | { ok: true; tokens: number; layers: number; heads: number; terms: string[]; ms: number; executionProvider: string }
  | { ok: false; error: string; code: string };

const cfg = () => vscode.workspace.getConfiguration('debertaLens');
const set = (key: string, value: unknown) => cfg().update(key, value, vscode.ConfigurationTarget.Global);

async function editorWith(text: string): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument({ content: text, language: 'plaintext' });
  return vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
}

/** Tabs appear after the renderer has created them: poll briefly instead of sleeping. */
async function waitFor(cond: () => boolean, what: string, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const lensTabs = () =>
  vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && t.label === 'DeBERTa Lens');

function explain(args?: object): Thenable<Outcome> {
  return vscode.commands.executeCommand<Outcome>('debertaLens.explain', args);
}

suite('DeBERTa Lens', () => {
  let fixture: string;

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert.ok(ext, `extension ${EXT_ID} is installed`);
    await ext.activate();
    fixture = path.join(ext.extensionPath, 'test', 'data', 'fixtures', 'deberta', 'v3_tiny');
    await set('modelPath', fixture);
    await set('executionProvider', 'cpu');
    await set('maxTokens', 512);
  });

  suiteTeardown(async () => {
    for (const k of ['modelPath', 'executionProvider', 'maxTokens']) await set(k, undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('commands are registered', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const c of ['debertaLens.explain', 'debertaLens.selectModel', 'debertaLens.compareHeads', 'debertaLens.predictToken'])
      assert.ok(all.includes(c), c);
  });

  test('Explain on a selection returns a result and opens the panel', async () => {
    const text = 'The quick brown fox\njumps over the lazy dog.\n\nAnother paragraph.';
    const ed = await editorWith(text);
    ed.selection = new vscode.Selection(0, 4, 1, 5); // "quick brown fox\njumps"
    const r = await explain();
    assert.ok(r.ok, `explain failed: ${!r.ok ? r.error : ''}`);
    assert.equal(r.layers, 2);
    assert.equal(r.heads, 4);
    assert.deepEqual(r.terms, ['c2c', 'c2p', 'p2c']);
    assert.equal(r.executionProvider, 'cpu');
    assert.ok(r.tokens > 4 && r.tokens < 40, `tokens ${r.tokens}`);
    assert.equal(ed.document.getText(), text, 'the document is never modified');
    await waitFor(() => lensTabs().length === 1, 'the panel to open');
  });

  test('with nothing selected, Explain takes the paragraph around the cursor', async () => {
    const ed = await editorWith('one two\nthree\n\nfour five six seven');
    ed.selection = new vscode.Selection(3, 2, 3, 2);
    const para = await explain();
    ed.selection = new vscode.Selection(0, 1, 0, 1);
    const first = await explain();
    assert.ok(para.ok && first.ok);
    assert.notEqual(para.tokens, first.tokens);
  });

  test('a second Explain reuses the one panel', async () => {
    const ed = await editorWith('alpha beta');
    ed.selection = new vscode.Selection(0, 0, 0, 10);
    await explain();
    await explain();
    await waitFor(() => lensTabs().length > 0, 'the panel');
    await new Promise((r) => setTimeout(r, 300)); // a second panel would have appeared by now
    assert.equal(lensTabs().length, 1);
  });

  test('the editor hover shows per-term numbers for an explained token', async () => {
    const ed = await editorWith('hello world again');
    ed.selection = new vscode.Selection(0, 0, 0, 17);
    const r = await explain();
    assert.ok(r.ok);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      ed.document.uri,
      new vscode.Position(0, 7),
    );
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(text, /DeBERTa Lens/);
    for (const k of ['c2c', 'c2p', 'p2c', 'scores', 'probs']) assert.match(text, new RegExp(k));
  });

  test('What Would the Model Put Here? masks a token (by index or under the cursor); the hover on a [MASK] lists the top tokens', async () => {
    type Predicted =
      | {
          ok: true;
          prediction: { position: number; state: string; prediction?: { source: string; top: unknown[]; original?: { rank: number } } };
        }
      | { ok: false; error: string };
    const text = 'a tiny [MASK] for a tiny random model';
    const ed = await editorWith(text);
    ed.selection = new vscode.Selection(0, 0, 0, text.length);
    assert.ok((await explain()).ok);
    const byIndex = await vscode.commands.executeCommand<Predicted>('debertaLens.predictToken', { position: 1 });
    assert.ok(byIndex.ok, `predictToken failed: ${!byIndex.ok ? byIndex.error : ''}`);
    assert.equal(byIndex.prediction.state, 'ready');
    assert.equal(byIndex.prediction.prediction?.source, 'masked');
    assert.equal(byIndex.prediction.prediction?.top.length, 5);
    assert.ok((byIndex.prediction.prediction?.original?.rank ?? 0) >= 1);
    ed.selection = new vscode.Selection(0, text.indexOf('random') + 2, 0, text.indexOf('random') + 2);
    const byCursor = await vscode.commands.executeCommand<Predicted>('debertaLens.predictToken');
    assert.ok(byCursor.ok && byCursor.prediction.position > 1, 'the token under the cursor');
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      ed.document.uri,
      new vscode.Position(0, text.indexOf('[MASK]') + 2),
    );
    const md = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(md, /what the model puts at \\\[MASK\\\] #\d+/);
  });

  test('maxTokens is respected with a clear error naming the setting', async () => {
    await set('maxTokens', 5);
    try {
      const ed = await editorWith('this sentence is certainly longer than five tokens');
      ed.selection = new vscode.Selection(0, 0, 0, 50);
      const r = await explain();
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.code, 'too-long');
      assert.match(r.error, /debertaLens\.maxTokens/);
      assert.doesNotMatch(r.error, /\n/, 'one line');
    } finally {
      await set('maxTokens', 512);
    }
  });

  test('cancellation stops the run without showing a result', async () => {
    const ed = await editorWith('cancel me please');
    ed.selection = new vscode.Selection(0, 0, 0, 16);
    const r = await explain({ cancelAfterMs: 0 });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.code, 'cancelled');
    const again = await explain();
    assert.ok(again.ok, 'the model still works after a cancelled run');
  });

  test('a bad model path gives a clear error naming the folder', async () => {
    const bad = path.join(fixture, 'does-not-exist');
    await set('modelPath', bad);
    try {
      const ed = await editorWith('hello');
      ed.selection = new vscode.Selection(0, 0, 0, 5);
      const r = await explain();
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.match(r.error, /does-not-exist/);
      assert.match(r.error, /debertaLens\.modelPath/);
      assert.doesNotMatch(r.error, /\n\s+at /, 'no stack trace');
    } finally {
      await set('modelPath', fixture);
    }
  });

  test('Compare Heads opens the panel', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor(() => lensTabs().length === 0, 'the panel to close');
    const ed = await editorWith('compare these heads');
    ed.selection = new vscode.Selection(0, 0, 0, 19);
    await vscode.commands.executeCommand('debertaLens.compareHeads');
    await waitFor(() => lensTabs().length === 1, 'the panel to open');
  });

  test('an empty selection on a blank line is refused with a message', async () => {
    const ed = await editorWith('\n\n');
    ed.selection = new vscode.Selection(1, 0, 1, 0);
    const r = await explain();
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /select some text/);
  });
});
