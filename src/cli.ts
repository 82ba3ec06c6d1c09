// `deberta-lens`: the engine headless, for scripts, papers and benchmarks (DESIGN.md §4).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { intList, parseArgs } from './cli-args';
import { runBench } from './bench';
import type { EngineOptions } from './engine/api';
import { isLensError, LensError } from './engine/errors';
import { inspectModel, openModel } from './engine/model';
import { EXECUTION_PROVIDERS } from './engine/runtime/execution-providers';
import type { ExecutionProviderSetting } from './engine/types';
import { jsonChunks } from './analysis/export/json';
import { toNpz } from './analysis/export/npz';

const ENGINE_FLAGS = ['model', 'ep', 'threads', 'cache-dir', 'max-tokens'];
const COMMANDS = {
  explain: { switches: ['verbose'], values: [...ENGINE_FLAGS, 'text', 'file', 'ids', 'layers', 'format', 'out'] },
  info: { switches: ['json', 'verbose'], values: ['model'] },
  bench: { switches: ['json', 'verbose', 'forward-only'], values: [...ENGINE_FLAGS, 'lengths', 'runs'] },
};

const HELP = `deberta-lens — DeBERTa's disentangled attention (c2c, c2p, p2c) per layer and head

  deberta-lens explain --model DIR|default (--text STR | --file PATH | --ids 1,2,3)
                       [--layers all|0,3,5] [--format json|npz] [--out FILE]
  deberta-lens info    --model DIR|default [--json]
  deberta-lens bench   --model DIR|default [--lengths 32,128,512] [--runs 5] [--json]

Engine flags: --ep auto|cuda|dml|coreml|webgpu|cpu  --threads N  --cache-dir DIR  --max-tokens N  --verbose
DIR is a Hugging Face DeBERTa folder (config.json, model.safetensors or pytorch_model.bin, spm.model |
tokenizer.json | vocab.json + merges.txt). "default" is the small demo model shipped with DeBERTa Lens;
for real analyses pass a real checkpoint such as microsoft/deberta-v3-base.`;

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
    cacheDir: flags.get('cache-dir'),
    log: flags.has('verbose') ? (line) => process.stderr.write(`deberta-lens: ${line}\n`) : undefined,
  };
}

function requireModel(flags: Map<string, string>): string {
  const m = flags.get('model');
  if (!m) throw new LensError('--model is required: a DeBERTa folder, or "default" for the bundled demo model');
  return m;
}

/** Buffered writes to a file descriptor (stdout included), so huge JSON streams out without one giant string. */
function fdWriter(fd: number): { write: (s: string) => void; end: () => void } {
  let buf: string[] = [];
  let size = 0;
  const flush = () => {
    const data = Buffer.from(buf.join(''));
    buf = [];
    size = 0;
    for (let off = 0; off < data.length; ) {
      try {
        off += fs.writeSync(fd, data, off);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      }
    }
  };
  return {
    write: (s) => {
      buf.push(s);
      size += s.length;
      if (size > 1 << 20) flush();
    },
    end: flush,
  };
}

async function explainCommand(flags: Map<string, string>): Promise<void> {
  const sources = ['text', 'file', 'ids'].filter((f) => flags.has(f));
  if (sources.length !== 1) throw new LensError('give exactly one of --text, --file or --ids');
  const format = flags.get('format') ?? 'json';
  if (format !== 'json' && format !== 'npz') throw new LensError(`--format must be json or npz, got "${format}"`);
  const out = flags.get('out');
  if (format === 'npz' && !out) throw new LensError('--format npz writes binary data: give --out FILE.npz');
  let text: string | undefined;
  if (flags.has('file')) {
    const file = flags.get('file')!;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new LensError(`cannot read --file ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, 'not-found');
    }
  } else text = flags.get('text');
  const ids = flags.has('ids') ? intList(flags.get('ids')!, 'ids') : undefined;
  const layersFlag = flags.get('layers') ?? 'all';
  const layers = layersFlag === 'all' ? undefined : intList(layersFlag, 'layers');

  const model = await openModel(requireModel(flags), engineOptions(flags));
  try {
    const result = await model.explain(ids ? { ids, layers } : { text, layers });
    if (format === 'npz') {
      fs.writeFileSync(out!, toNpz(result));
      return;
    }
    const fd = out ? fs.openSync(out, 'w') : 1;
    const w = fdWriter(fd);
    for (const chunk of jsonChunks(result)) w.write(chunk);
    w.write('\n');
    w.end();
    if (out) fs.closeSync(fd);
  } finally {
    await model.dispose();
  }
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
    `terms        ${s.terms.join(', ')}`,
    `positions    relative, ${s.position_buckets > 0 ? `${s.position_buckets} log buckets` : 'no buckets'}, max ${s.max_relative_positions}`,
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
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}

function packageVersion(): string {
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}
