// `deberta-lens`: the engine headless, for scripts, papers and benchmarks (DESIGN.md §4).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inputFlags, intList, parseArgs } from './cli-args';
import { runBench } from './bench';
import { type EngineOptions, EXECUTION_PROVIDERS, type ExecutionProviderSetting, inspectModel, isLensError, LensError, openModel } from './engine';
import { predictCommand } from './cli-predict';
import { jsonChunks } from './analysis/export/json';
import { writeNpzFile } from './analysis/export/npz';
import { writeChunks } from './analysis/export/write-chunks';

const ENGINE_FLAGS = ['model', 'ep', 'threads', 'cache-dir', 'max-tokens'];
const COMMANDS = {
  explain: { switches: ['verbose'], values: [...ENGINE_FLAGS, 'text', 'file', 'pair', 'ids', 'layers', 'format', 'out'] },
  predict: { switches: ['verbose'], values: [...ENGINE_FLAGS, 'text', 'file', 'ids', 'positions', 'top'] },
  info: { switches: ['json', 'verbose'], values: ['model'] },
  bench: { switches: ['json', 'verbose', 'forward-only'], values: [...ENGINE_FLAGS, 'lengths', 'runs'] },
};

const HELP = `deberta-lens — DeBERTa's disentangled attention (c2c, c2p, p2c) per layer and head

  deberta-lens explain --model DIR|default (--text STR | --file PATH | --ids 1,2,3) [--pair STR]
                       [--layers all|0,3,5] [--format json|npz] [--out FILE]
  deberta-lens predict --model DIR|default (--text STR | --file PATH | --ids 1,2,3)
                       [--positions 3,7] [--top 5]
  deberta-lens info    --model DIR|default [--json]
  deberta-lens bench   --model DIR|default [--lengths 32,128,512] [--runs 5] [--json]

Engine flags: --ep auto|cuda|dml|coreml|webgpu|cpu  --threads N  --cache-dir DIR  --max-tokens N  --verbose
DIR is a Hugging Face DeBERTa or BERT folder (config.json, model.safetensors or pytorch_model.bin, and the
tokenizer: spm.model | tokenizer.json | vocab.json + merges.txt for DeBERTa, vocab.txt | tokenizer.json for BERT).
--pair STR makes a sentence pair [CLS] text [SEP] pair [SEP] (token types 0, then 1).
"default" is the small demo model shipped with DeBERTa Lens; for real analyses pass a real checkpoint such as
microsoft/deberta-v3-base.`;

function engineOptions(flags: Map<string, string>): EngineOptions {
  const ep = (flags.get('ep') ?? 'auto') as ExecutionProviderSetting;
  if (!EXECUTION_PROVIDERS.includes(ep)) throw new LensError(`--ep must be one of ${EXECUTION_PROVIDERS.join(', ')}, got "${ep}"`);
  const positive = (name: string) => {
    const v = flags.get(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new LensError(`--${name} takes a positive integer, got "${v}"`);
    return n;
  };
  return {
    executionProvider: ep,
    threads: positive('threads'),
    maxTokens: positive('max-tokens'),
    maxTokensName: '--max-tokens',
    cacheDir: flags.get('cache-dir'),
    log: flags.has('verbose') ? (line) => process.stderr.write(`deberta-lens: ${line}\n`) : undefined,
  };
}

function requireModel(flags: Map<string, string>): string {
  const m = flags.get('model');
  if (!m) throw new LensError('--model is required: a DeBERTa folder, or "default" for the bundled demo model');
  return m;
}

async function explainCommand(flags: Map<string, string>): Promise<void> {
  const { text, ids } = inputFlags(flags);
  const format = flags.get('format') ?? 'json';
  if (format !== 'json' && format !== 'npz') throw new LensError(`--format must be json or npz, got "${format}"`);
  const out = flags.get('out');
  if (format === 'npz' && !out) throw new LensError('--format npz writes binary data: give --out FILE.npz');
  if (ids && flags.has('pair')) throw new LensError('--pair goes with --text or --file: ids are fed as given');
  const pair = flags.get('pair');
  const layersFlag = flags.get('layers') ?? 'all';
  const layers = layersFlag === 'all' ? undefined : intList(layersFlag, 'layers');

  const model = await openModel(requireModel(flags), engineOptions(flags));
  try {
    const result = await model.explain(ids ? { ids, layers } : { text, pair, layers });
    // Written layer by layer: each layer is computed, written and dropped (the layer cache bounds what stays).
    if (format === 'npz') await writeNpzFile(result, out!);
    else await writeChunks(out ?? 1, withNewline(jsonChunks(result)));
    result.release();
  } finally {
    await model.dispose();
  }
}

async function* withNewline(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  yield* chunks;
  yield '\n';
}

async function infoCommand(flags: Map<string, string>): Promise<void> {
  const s = await inspectModel(requireModel(flags));
  if (flags.has('json')) {
    process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
    return;
  }
  const lines = [
    `model        ${s.name}${s.is_default ? ' (bundled demo model: small, trained from scratch; pass --model DIR for a real checkpoint)' : ''}`,
    `path         ${s.path}`,
    `type         ${s.type}`,
    `layers       ${s.layers} × ${s.heads} heads of ${s.head_dim} (hidden ${s.hidden_size}, FFN ${s.intermediate_size})`,
    `parameters   ${s.parameters.toLocaleString('en-US')} (encoder)`,
    `vocabulary   ${s.vocab_size} (tokenizer: ${s.tokenizer})`,
    ...(s.architecture === 'bert'
      ? [`attention    entangled: absolute positions (max ${s.max_relative_positions}) added to the word embeddings`]
      : [`terms        ${s.terms.join(', ')}`,
        `positions    relative, ${s.position_buckets > 0 ? `${s.position_buckets} log buckets` : 'no buckets'}, max ${s.max_relative_positions}`]),
    `predicts     ${s.prediction_heads.length ? s.prediction_heads.map((h) => (h === 'mask_predictions' ? `replaced-token detection (${h}.*)` : `masked LM (${h}.*)`)).join(', ') : 'none: a bare encoder (predict has nothing to run)'}`,
    `weights      ${s.weights.join(', ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

export async function main(argv: string[]): Promise<number> {
  const verbose = argv.includes('--verbose');
  try {
    const { command, flags } = parseArgs(argv, COMMANDS);
    if (command === 'help') process.stdout.write(`${HELP}\n`);
    else if (command === 'version') process.stdout.write(`${packageVersion()}\n`);
    else if (command === 'explain') await explainCommand(flags);
    else if (command === 'predict') await predictCommand(flags, engineOptions(flags), requireModel(flags));
    else if (command === 'info') await infoCommand(flags);
    else if (command === 'bench') {
      const opts = engineOptions(flags);
      const report = await runBench(requireModel(flags), {
        engine: opts,
        lengths: intList(flags.get('lengths') ?? '32,128,512', 'lengths'),
        runs: Number(flags.get('runs') ?? 5),
      });
      process.stdout.write(flags.has('json') ? `${JSON.stringify(report)}\n` : `${JSON.stringify(report, null, 2)}\n`);
    }
    return 0;
  } catch (e) {
    if (isLensError(e)) process.stderr.write(`deberta-lens: ${e.message}\n`);
    else process.stderr.write(`deberta-lens: internal error: ${(e as Error)?.message ?? e}${verbose ? `\n${(e as Error)?.stack}` : ' (--verbose shows details)'}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}

function packageVersion(): string {
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')).version;
  }
  return 'unknown';
}
