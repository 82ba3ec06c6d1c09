// The extension's vscode-free pieces: settings, the HF cache scan, the paragraph rule and the model host.
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EngineOptions, LensModel } from '../../src/engine/api';
import { hfHubDir, listHfCacheModels, MAX_LISTED_CONFIG_BYTES } from '../../src/extension/model/hf-cache';
import { ModelHost } from '../../src/extension/model/model-host';
import { DEFAULTS, MAX_PREDICTION_TOP_K, modelKey, readSettings, type LensSettings } from '../../src/extension/common/settings';
import { paragraphAround } from '../../src/extension/common/text-range';
import { FIXTURES, at, field } from './helpers';

test('readSettings sanitises every value and falls back to defaults', () => {
  assert.deepEqual(
    readSettings(() => undefined),
    DEFAULTS,
  );
  const raw: Record<string, unknown> = {
    modelPath: '  /models/x  ',
    executionProvider: 'cuda',
    maxTokens: 128,
    defaultTerm: 'c2p',
    defaultView: 'heads',
    colorScale: 'viridis',
    cacheMaxGB: 0.5,
    predictionTopK: 8,
  };
  assert.deepEqual(
    readSettings((k) => raw[k]),
    {
      modelPath: '/models/x',
      executionProvider: 'cuda',
      maxTokens: 128,
      defaultTerm: 'c2p',
      defaultView: 'heads',
      colorScale: 'viridis',
      cacheMaxGB: 0.5,
      predictionTopK: 8,
    },
  );
  const bad: Record<string, unknown> = {
    executionProvider: 'tpu',
    maxTokens: 1.5,
    defaultTerm: 'qk',
    modelPath: 3,
    cacheMaxGB: -1,
    predictionTopK: 0,
  };
  const s = readSettings((k) => bad[k]);
  assert.equal(s.executionProvider, 'auto');
  assert.equal(s.maxTokens, 4096);
  assert.equal(s.defaultTerm, 'probs');
  assert.equal(s.modelPath, '');
  assert.equal(s.cacheMaxGB, 4);
  assert.equal(s.predictionTopK, 5);
  assert.equal(
    readSettings((k) => (k === 'predictionTopK' ? MAX_PREDICTION_TOP_K + 1 : undefined)).predictionTopK,
    5,
    'over the largest top-k',
  );
});

test('package.json declares exactly the settings settings.ts reads, with the same defaults', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const props = pkg.contributes.configuration.properties as Record<string, { default: unknown; markdownDescription?: string }>;
  assert.deepEqual(
    Object.keys(props).sort(),
    Object.keys(DEFAULTS)
      .map((k) => `debertaLens.${k}`)
      .sort(),
  );
  for (const [k, v] of Object.entries(DEFAULTS)) {
    const prop = field(props, `debertaLens.${k}`);
    assert.deepEqual(prop.default, v, k);
    assert.ok(prop.markdownDescription, `${k} has a markdownDescription`);
  }
  assert.equal((props['debertaLens.predictionTopK'] as { maximum?: number }).maximum, MAX_PREDICTION_TOP_K);
});

test('hfHubDir follows HF_HUB_CACHE, then HF_HOME, then ~/.cache', () => {
  assert.equal(hfHubDir({ HF_HUB_CACHE: '/a' }), '/a');
  assert.equal(hfHubDir({ HF_HOME: '/h' }), path.join('/h', 'hub'));
  assert.equal(hfHubDir({ XDG_CACHE_HOME: '/x' }), path.join('/x', 'huggingface', 'hub'));
});

test('listHfCacheModels finds DeBERTa and BERT snapshots only, and tolerates junk', async () => {
  const hub = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-hub-'));
  try {
    const snap = (repo: string, rev: string, config?: string) => {
      const d = path.join(hub, repo, 'snapshots', rev);
      fs.mkdirSync(d, { recursive: true });
      if (config !== undefined) fs.writeFileSync(path.join(d, 'config.json'), config);
      return d;
    };
    const v3 = snap(
      'models--microsoft--deberta-v3-base',
      'abc123',
      fs.readFileSync(path.join(FIXTURES, 'deberta', 'v3_tiny', 'config.json'), 'utf8'),
    );
    const v1 = snap('models--microsoft--deberta-base', 'def456', '{"model_type":"deberta"}');
    snap('models--bert-base-uncased', 'x1', '{"model_type":"bert"}');
    snap('models--roberta-base', 'x4', '{"model_type":"roberta"}');
    snap('models--broken--thing', 'x2', '{not json');
    snap('models--empty--thing', 'x3');
    fs.mkdirSync(path.join(hub, 'datasets--foo--bar', 'snapshots', 'r'), { recursive: true });
    // A config.json that is a FIFO (a read would wait forever), /dev/zero (endless) or oversized is not offered.
    const fifo = snap('models--hostile--fifo', 'f1');
    spawnSync('mkfifo', [path.join(fifo, 'config.json')]);
    fs.symlinkSync('/dev/zero', path.join(snap('models--hostile--zero', 'z1'), 'config.json'));
    snap('models--hostile--huge', 'h1', `{"model_type":"bert","pad":"${'x'.repeat(MAX_LISTED_CONFIG_BYTES)}"}`);
    const found = await listHfCacheModels(hub);
    assert.deepEqual(found.map((m) => m.name).sort(), ['bert-base-uncased', 'microsoft/deberta-base', 'microsoft/deberta-v3-base']);
    assert.equal(found.find((m) => m.name === 'microsoft/deberta-v3-base')?.path, v3);
    assert.equal(found.find((m) => m.name === 'microsoft/deberta-base')?.path, v1);
    assert.equal(found.find((m) => m.path === v3)?.modelType, 'deberta-v2');
    assert.deepEqual(await listHfCacheModels(path.join(hub, 'missing')), []);
  } finally {
    fs.rmSync(hub, { recursive: true, force: true });
  }
});

test('paragraphAround takes the lines between blank lines, or one line when too long', () => {
  const lines = ['a', 'b', '', 'c', 'd', 'e', '  ', 'f'];
  assert.deepEqual(paragraphAround(lines, 0), { start: 0, end: 1 });
  assert.deepEqual(paragraphAround(lines, 4), { start: 3, end: 5 });
  assert.deepEqual(paragraphAround(lines, 7), { start: 7, end: 7 });
  assert.deepEqual(paragraphAround(lines, 2), { start: 2, end: 2 }, 'a blank line gives itself');
  assert.deepEqual(paragraphAround(lines, 4, 3), { start: 4, end: 4 });
});

/** A stand-in LensModel that records disposal: ModelHost's job is when to open and close, not the model. */
function fakeModel(name: string, disposed: string[]): LensModel {
  return {
    info: { path: name } as LensModel['info'],
    summary: {} as LensModel['summary'],
    explain: () => Promise.reject(new Error('not used')),
    predict: () => Promise.reject(new Error('not used')),
    predictExplained: () => Promise.reject(new Error('not used')),
    emdPasses: () => Promise.reject(new Error('not used')),
    ablate: () => Promise.reject(new Error('not used')),
    sweep: () => Promise.reject(new Error('not used')),
    explainAblated: () => Promise.reject(new Error('not used')),
    occlude: () => Promise.reject(new Error('not used')),
    estimate: () => Promise.reject(new Error('not used')),
    patch: () => Promise.reject(new Error('not used')),
    dispose: async () => {
      disposed.push(name);
    },
  };
}

test('ModelHost opens once per settings key, reopens on change, and does not cache failures', async () => {
  const opened: { dir: string; opts: EngineOptions }[] = [];
  const disposed: string[] = [];
  let fail = false;
  const host = new ModelHost(
    async (dir, opts) => {
      opened.push({ dir, opts });
      if (fail) throw new Error('bad folder');
      return fakeModel(`${dir}#${opened.length}`, disposed);
    },
    '/ext/models/default',
    () => {},
  );
  const s: LensSettings = { ...DEFAULTS };
  const [a, b] = await Promise.all([host.get(s), host.get(s)]);
  assert.equal(a, b, 'concurrent explains share one open');
  assert.equal(opened.length, 1);
  const first = at(opened, 0);
  assert.equal(first.dir, '/ext/models/default');
  assert.equal(first.opts.maxTokens, 4096);
  assert.match(String(first.opts.maxTokensName), /debertaLens\.maxTokens/);
  assert.equal(first.opts.cacheMaxGB, 4);
  assert.equal(await host.get({ ...s, defaultTerm: 'c2c' }), a, 'view settings do not reopen');
  const c = await host.get({ ...s, executionProvider: 'cpu' });
  assert.notEqual(c, a);
  assert.deepEqual(disposed, ['/ext/models/default#1']);
  fail = true;
  await assert.rejects(host.get({ ...s, modelPath: '/nope' }), /bad folder/);
  fail = false;
  await host.get({ ...s, modelPath: '/nope' });
  assert.equal(opened.length, 4, 'a failed open is retried');
  assert.notEqual(modelKey(s), modelKey({ ...s, maxTokens: 64 }));
  await host.dispose();
  assert.equal(host.loaded, undefined);
});

test('engine errors gain the name of the setting to change', async () => {
  const { LensError } = await import('../../src/engine/errors');
  const { explainError, modelOpenError } = await import('../../src/extension/common/messages');
  const tooLong = explainError(new LensError('the input is 162 tokens, over the limit of 16 (maxTokens)', 'too-long'), 16) as Error;
  assert.match(tooLong.message, /debertaLens\.maxTokens = 16/);
  const other = new LensError('x', 'runtime');
  assert.equal(explainError(other, 16), other);
  const missing = modelOpenError(new LensError('/m: model folder not found', 'not-found'), '/m') as Error & { code: string };
  assert.match(missing.message, /debertaLens\.modelPath/);
  assert.equal(missing.code, 'not-found');
  assert.match((modelOpenError(new LensError('gone', 'not-found'), '') as Error).message, /default model/);
  const plain = modelOpenError(new Error('boom'), '/m') as Error;
  assert.match(plain.message, /^boom \(check the setting debertaLens\.modelPath/, 'any failure to open the model names the setting');
});

test('error notifications offer only the actions that can fix the error', async () => {
  const { LensError } = await import('../../src/engine/errors');
  const { errorActions, explainError, modelOpenError } = await import('../../src/extension/common/messages');
  assert.deepEqual(errorActions(modelOpenError(new LensError('/m: not found', 'not-found'), '/m')), [
    'Select Model…',
    'Open Model Setting',
    'Show Log',
  ]);
  assert.deepEqual(errorActions(explainError(new LensError('162 tokens, over 16', 'too-long'), 16)), ['Open Max Tokens Setting']);
  assert.deepEqual(errorActions(new LensError('Nothing to explain: select some text.')), []);
  assert.deepEqual(errorActions(new LensError('runtime process exited', 'runtime')), ['Show Log']);
  assert.deepEqual(errorActions(new Error('unexpected')), ['Show Log']);
});

test('ModelHost: an empty model path is the bundled default, a bundled name its folder, anything else a folder', () => {
  const host = new ModelHost(
    async () => {
      throw new Error('not opened');
    },
    '/ext/models/default',
    () => {},
    new Map([['bert-twin', '/ext/models/bert-twin']]),
  );
  assert.equal(host.modelDir({ ...DEFAULTS, modelPath: '' }), '/ext/models/default');
  assert.equal(host.modelDir({ ...DEFAULTS, modelPath: 'bert-twin' }), '/ext/models/bert-twin');
  assert.equal(host.modelDir({ ...DEFAULTS, modelPath: '/data/bert-base-uncased' }), '/data/bert-base-uncased');
});
