// `deberta-lens`: the engine headless, for scripts, papers and benchmarks (DESIGN.md §4).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inputFlags, intList, parseArgs } from './args';
import { runBench } from './bench';
import {
  clearCache,
  DEFAULT_CACHE_MAX_GB,
  defaultCacheDir,
  type EngineOptions,
  type EntryInfo,
  EXECUTION_PROVIDERS,
  type ExecutionProviderSetting,
  inspectModel,
  isLensError,
  LensError,
  listEntries,
  maxThreads,
  oneLine,
  openModel,
} from '../engine';
import { ablateCommand, predictCommand } from './predict';
import { attributeCommand } from './attribute';
import { patchCommand } from './patch';
import { atlasCommand, atlasMergeCommand } from './atlas';
import { jsonChunks } from '../analysis/export/json';
import { writeNpzFile } from '../analysis/export/npz';
import { writeChunks } from '../analysis/export/write-chunks';
import { formatBytes } from '../shared/format';
import { checkOutWritable, isClosedPipe, writeError } from './output';

const ENGINE_FLAGS = ['model', 'ep', 'threads', 'cache-dir', 'cache-max-gb', 'max-tokens'];
const CACHE_MAX_ENV = 'DEBERTA_LENS_CACHE_MAX_GB';
/** 1: read the model in the budgeted load process, as the extension does (the fuzz run exercises it this way). */
const ISOLATE_ENV = 'DEBERTA_LENS_ISOLATE';
const isolate = () => process.env[ISOLATE_ENV] === '1';
const COMMANDS = {
  explain: { switches: ['verbose'], values: [...ENGINE_FLAGS, 'text', 'file', 'pair', 'ids', 'layers', 'format', 'out'] },
  predict: { switches: ['verbose', 'no-emd'], values: [...ENGINE_FLAGS, 'text', 'file', 'pair', 'choices', 'ids', 'positions', 'top'] },
  ablate: {
    switches: ['verbose', 'mean'],
    values: [...ENGINE_FLAGS, 'text', 'file', 'pair', 'choices', 'ids', 'positions', 'top', 'ablate', 'sweep', 'position', 'target'],
  },
  info: { switches: ['json', 'verbose'], values: ['model'] },
  bench: { switches: ['json', 'verbose', 'forward-only'], values: [...ENGINE_FLAGS, 'lengths', 'runs'] },
  'cache list': { switches: ['json'], values: ['cache-dir'] },
  'cache clear': { switches: [], values: ['cache-dir'] },
  attribute: {
    switches: ['verbose', 'no-batch', 'words', 'identifiers'],
    values: [...ENGINE_FLAGS, 'text', 'file', 'pair', 'ids', 'target', 'position', 'method'],
  },
  patch: {
    switches: ['verbose', 'no-batch'],
    values: [...ENGINE_FLAGS, 'text', 'corrupt', 'pair', 'corrupt-pair', 'patch', 'trace', 'target', 'position', 'threshold'],
  },
  atlas: { switches: ['verbose'], values: [...ENGINE_FLAGS, 'corpus', 'window', 'out', 'shard', 'checkpoint-every'] },
  'atlas merge': { switches: [], values: ['out'] },
};

/** Key prefixes of fine-tuned task heads, as ModelSummary.prediction_heads lists them. */
const TASK_PREFIXES = ['pooler.dense', 'classifier', 'qa_outputs'];

const HELP = `deberta-lens — DeBERTa's disentangled attention (c2c, c2p, p2c) per layer and head

  deberta-lens explain --model DIR|default|bert-twin (--text STR | --file PATH | --ids 1,2,3) [--pair STR]
                       [--layers all|0,3,5] [--format json|npz] [--out FILE]
  deberta-lens predict --model DIR|default|bert-twin (--text STR | --file PATH | --ids 1,2,3) [--pair STR]
                       [--choices "A|B|C"] [--positions 3,7] [--top 5] [--no-emd]
  deberta-lens ablate  --model DIR|default|bert-twin (--text STR | --file PATH | --ids 1,2,3) [--pair STR]
                       [--choices "A|B|C"] --ablate 1.0:c2p[,4.*:p2c,2.3:all] [--mean] [--positions 3,7] [--top 5]
  deberta-lens ablate  --model DIR|default|bert-twin (--text STR | --file PATH | --ids 1,2,3) [--pair STR]
                       --sweep c2p|p2c|c2c|all [--position i] [--target label:NAME|label:ID|token:ID] [--mean]
  deberta-lens attribute --model DIR|default|bert-twin (--text STR | --file PATH | --ids 1,2,3) [--pair STR]
                       [--target label:NAME|label:ID|token:ID] [--position i] [--method mask|remove|both] [--words|--identifiers]
                       [--no-batch]
  deberta-lens patch   --model DIR|default --text CLEAN --corrupt CORRUPT [--pair P --corrupt-pair P2]
                       (--patch SPEC[,SPEC…] | --trace heads|resid|flow [--threshold T]) [--target …] [--position i]
  deberta-lens atlas   --model DIR|default|bert-twin --corpus DIR|FILE [--window 128] [--out FILE] [--shard i/N] [--checkpoint-every 5]
  deberta-lens atlas merge A.json B.json … [--out ALL.json]
  deberta-lens info    --model DIR|default|bert-twin [--json]
  deberta-lens bench   --model DIR|default|bert-twin [--lengths 32,128,512] [--runs 5] [--json]
  deberta-lens cache list [--json] | cache clear   [--cache-dir DIR]

Engine flags: --ep auto|cuda|dml|coreml|webgpu|cpu  --threads N  --max-tokens N  --verbose
              --cache-dir DIR (default ~/.cache/deberta-lens)
              --cache-max-gb G (default ${DEFAULT_CACHE_MAX_GB}, or $${CACHE_MAX_ENV}): built graphs kept, least recently used removed
DIR is a Hugging Face DeBERTa or BERT folder (config.json, model.safetensors or pytorch_model.bin, and the
tokenizer: spm.model | tokenizer.json | vocab.json + merges.txt for DeBERTa, vocab.txt | tokenizer.json for BERT).
predict decodes masked tokens through DeBERTa's Enhanced Mask Decoder as microsoft/DeBERTa does where the checkpoint
has it (microsoft's lm_predictions.lm_head.* head and the absolute position table; JSON "decoder": "emd");
--no-emd gives the plain head on the last hidden state, as Hugging Face computes it ("decoder": "plain").
--ablate LAYER.HEAD:TERM removes a term (c2c, c2p, p2c, or all = the whole head; head * = every head of the
layer) before the softmax and reruns every later layer; --mean replaces it by its mean over key positions instead.
--sweep TERMS removes each head's term alone (rerun from its layer) and ranks heads by the drop in the log-probability
of the token followed at --position (default: the first [MASK]; another position is masked first; --target token:ID
follows that token). On a fine-tuned head it ranks by the drop in a decision's logit: a classifier's label
(--target label:NAME|label:ID, default the predicted one; token classification at --position), a QA head's
predicted answer span (start + end logit).
attribute scores each token by occlusion: the token replaced by [MASK] (--method mask) or deleted (remove), alone,
and the followed value (as for --sweep: a label's logit, a QA span, a masked token's log-probability at --position)
run again; score = before − after (positive: the token supported it; null for specials). --words takes each word
out whole (all its pieces; --identifiers: code identifiers), every piece holding its word's score. Variants run in
batches (--no-batch: one forward pass each, the same numbers).
patch runs both texts, then the corrupted one again with the clean run's values put in from the first patched layer
(positions are the clean text's; of another length, the corrupted tokens pair with the clean ones, see "paired"): L.H:c2c|c2p|p2c|all|out (a head's term, whole score or context vector; H or L may be *),
resid:L (the state entering layer L; L = layers: the final state), resid:L@i (position i only), knock:L:i->j (edge
removed in every head). It prints clean, corrupt and patched (what predict prints) and restored = (patched −
corrupt) / (clean − corrupt) of the target (as for --sweep; an RTD-only checkpoint: the RTD logit at --position; a
multiple-choice head: the score of the choice given as --pair, the prompt as --text). --corrupt-pair alone corrupts
only the pair.
--trace heads patches every head's term alone (grid term × layer × head), --trace resid every state row (layer ×
position); cells from one layer run as batches (--no-batch: one rerun each). --trace flow knocks out attention edges
of the clean run one at a time, walking back from the target's rows layer by layer, and keeps an edge (with the term
that dominates its score) when the target moves by more than --threshold (default 0.1 × |clean − corrupt|).
atlas reads every paragraph (blank-line separated) of the .txt and .md files under --corpus (cut into windows of
--window tokens, [CLS] and [SEP] counted) and prints per layer and head: the c2c/c2p/p2c shares, mean_distance,
entropy, special_mass, max_prob, prev_token, next_token and the strongest attention pairs (file and character
offsets). With --out it keeps its progress in OUT.partial (every --checkpoint-every seconds, default 5, and on Ctrl+C)
and resumes from there when run again, even inside a long paragraph; --shard i/N takes every N-th paragraph from the
i-th, and atlas merge adds the shards' atlases up.
--pair STR makes a sentence pair [CLS] text [SEP] pair [SEP] (token types 0, then 1, where the model has token
types). predict on a fine-tuned head prints "task" and its output: sequence classification (every label's logit and
score), token classification (every position), question answering (--text QUESTION --pair CONTEXT: start/end logits
and the best span in the context's characters), multiple choice (--text PROMPT --choices "A|B|C": one run
[CLS] prompt [SEP] choice [SEP] per choice, softmax over the choices; | separates choices).
"default" is the small demo model shipped with DeBERTa Lens, "bert-twin" its BERT twin (same size, data and training,
absolute positions; at most 128 tokens); for real analyses pass a real checkpoint such as microsoft/deberta-v3-base.`;

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
  const threads = positive('threads');
  // Each thread reserves a stack: --threads 100000 spawns threads until the process runs out of memory.
  if (threads !== undefined && threads > maxThreads()) {
    throw new LensError(
      `--threads ${threads} is more than this machine can use: at most ${maxThreads()} (4 per core, 256 at most); leave it out to use every core`,
    );
  }
  return {
    executionProvider: ep,
    threads,
    maxTokens: positive('max-tokens'),
    maxTokensName: '--max-tokens',
    cacheDir: flags.get('cache-dir'),
    cacheMaxGB: cacheMaxGB(flags),
    log: flags.has('verbose') ? (line) => process.stderr.write(`deberta-lens: ${line}\n`) : undefined,
    isolate: isolate(),
  };
}

/** --cache-max-gb, else $DEBERTA_LENS_CACHE_MAX_GB, else the engine's default. */
function cacheMaxGB(flags: Map<string, string>): number | undefined {
  const [value, source] = flags.has('cache-max-gb')
    ? [flags.get('cache-max-gb')!, '--cache-max-gb']
    : [process.env[CACHE_MAX_ENV], CACHE_MAX_ENV];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new LensError(`${source} takes a size in GB (0 or more, e.g. 4 or 0.5), got "${value}"`);
  return n;
}

function cacheCommand(sub: 'list' | 'clear', flags: Map<string, string>): void {
  const dir = flags.get('cache-dir') ?? defaultCacheDir();
  const inUse = (e: EntryInfo) => (e.users.length ? `in use (pid ${e.users.join(', ')})` : '');
  const describe = (e: EntryInfo) => `${e.model?.name ?? '(unknown model)'}  ${e.model?.dir ?? e.dir}`;
  if (sub === 'clear') {
    const { removed, kept } = clearCache(dir);
    const freed = removed.reduce((s, e) => s + e.bytes, 0);
    process.stdout.write(
      `removed ${removed.length} graph${removed.length === 1 ? '' : 's'} (${formatBytes(freed, 'decimal')}) from ${dir}\n`,
    );
    for (const e of kept) process.stdout.write(`kept ${describe(e)}: ${inUse(e) || 'could not be removed'}\n`);
    return;
  }
  const entries = listEntries(dir);
  if (flags.has('json')) {
    const rows = entries.map((e) => ({
      key: e.key,
      model: e.model?.name,
      model_dir: e.model?.dir,
      checkpoint_hash: e.model?.hash,
      bytes: e.bytes,
      linked_bytes: e.linkedBytes,
      last_used: e.lastUsed.toISOString(),
      in_use_by: e.users,
    }));
    process.stdout.write(`${JSON.stringify({ cache_dir: dir, graphs: rows }, null, 2)}\n`);
    return;
  }
  const own = entries.reduce((s, e) => s + e.bytes, 0);
  const linked = entries.reduce((s, e) => s + e.linkedBytes, 0);
  const lines = [
    `${dir}: ${entries.length} graph${entries.length === 1 ? '' : 's'}, ${formatBytes(own, 'decimal')} on disk (+ ${formatBytes(linked, 'decimal')} of weights hard-linked from model folders)`,
  ];
  if (entries.length) lines.push(`${'SIZE'.padEnd(10)}${'LAST USED'.padEnd(22)}MODEL`);
  for (const e of entries) {
    const when = e.lastUsed.toISOString().slice(0, 16).replace('T', ' ');
    lines.push(
      `${formatBytes(e.bytes, 'decimal').padEnd(10)}${`${when} UTC`.padEnd(22)}${describe(e)}${e.users.length ? `  [${inUse(e)}]` : ''}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function requireModel(flags: Map<string, string>): string {
  const m = flags.get('model');
  if (!m) throw new LensError('--model is required: a DeBERTa or BERT folder, or "default" (or "bert-twin") for a bundled demo model');
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
  if (out !== undefined) checkOutWritable(out);

  const model = await openModel(requireModel(flags), engineOptions(flags));
  try {
    const result = await model.explain(ids ? { ids, layers } : { text, pair, layers });
    // Written layer by layer: each layer is computed, written and dropped (the layer cache bounds what stays).
    try {
      if (format === 'npz') await writeNpzFile(result, out!);
      else await writeChunks(out ?? 1, withNewline(jsonChunks(result)));
    } catch (e) {
      // A LensError from computing a layer passes; a failed write (ENOSPC, EIO, a closed pipe) is the output's.
      if (isLensError(e) || isClosedPipe(e) || (e as NodeJS.ErrnoException).code === undefined) throw e;
      throw writeError(e, '--out', out);
    }
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
  const s = await inspectModel(requireModel(flags), { isolate: isolate() });
  if (flags.has('json')) {
    process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
    return;
  }
  const lines = [
    `model        ${s.name}${s.bundled ? ` (bundled ${s.bundled === 'bert-twin' ? 'BERT twin of the demo model' : 'demo model'}: small, trained from scratch; pass --model DIR for a real checkpoint)` : ''}`,
    `path         ${s.path}`,
    `type         ${s.type}`,
    `layers       ${s.layers} × ${s.heads} heads of ${s.head_dim} (hidden ${s.hidden_size}, FFN ${s.intermediate_size})`,
    `parameters   ${s.parameters.toLocaleString('en-US')} (encoder)`,
    `vocabulary   ${s.vocab_size} (tokenizer: ${s.tokenizer})`,
    ...(s.architecture === 'bert'
      ? [`attention    entangled: absolute positions (max ${s.max_relative_positions}) added to the word embeddings`]
      : [
          `terms        ${s.terms.join(', ')}`,
          `positions    relative, ${s.position_buckets > 0 ? `${s.position_buckets} log buckets` : 'no buckets'}, max ${s.max_relative_positions}`,
        ]),
    `predicts     ${s.prediction_heads.length ? s.prediction_heads.map((h) => (h === 'mask_predictions' ? `replaced-token detection (${h}.*)` : TASK_PREFIXES.includes(h) ? `task head (${h}.*)` : `masked LM (${h}.*)`)).join(', ') : 'none: a bare encoder (predict has nothing to run)'}`,
    `weights      ${s.weights.join(', ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

export async function main(argv: string[]): Promise<number> {
  const verbose = argv.includes('--verbose');
  try {
    // `cache list` / `cache clear`: a command of two words.
    const args = argv[0] === 'cache' && argv[1] !== undefined && !argv[1].startsWith('-') ? [`cache ${argv[1]}`, ...argv.slice(2)] : argv;
    // `atlas merge A.json B.json …`: the files come before the flags.
    if (argv[0] === 'atlas' && argv[1] === 'merge') {
      const files = argv.slice(2).filter((a, k, all) => !a.startsWith('--') && !(k > 0 && all[k - 1] === '--out'));
      const rest = argv.slice(2).filter((a) => !files.includes(a));
      atlasMergeCommand(files, parseArgs(['atlas merge', ...rest], COMMANDS).flags);
      return 0;
    }
    const { command, flags } = parseArgs(args, COMMANDS);
    if (command === 'help') process.stdout.write(`${HELP}\n`);
    else if (command === 'version') process.stdout.write(`${packageVersion()}\n`);
    else if (command === 'explain') await explainCommand(flags);
    else if (command === 'predict') await predictCommand(flags, engineOptions(flags), requireModel(flags));
    else if (command === 'ablate') await ablateCommand(flags, engineOptions(flags), requireModel(flags));
    else if (command === 'attribute') await attributeCommand(flags, engineOptions(flags), requireModel(flags));
    else if (command === 'patch') await patchCommand(flags, engineOptions(flags), requireModel(flags));
    else if (command === 'atlas') await atlasCommand(flags, engineOptions(flags), requireModel(flags));
    else if (command === 'info') await infoCommand(flags);
    else if (command === 'cache list' || command === 'cache clear') cacheCommand(command === 'cache list' ? 'list' : 'clear', flags);
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
    // A reader that stopped early (`| head`) is not an error.
    if (isClosedPipe(e)) return 0;
    if (isLensError(e)) process.stderr.write(`deberta-lens: ${e.message}\n`);
    else
      process.stderr.write(
        `deberta-lens: internal error: ${oneLine(String((e as Error)?.message ?? e))}${verbose ? `\n${(e as Error)?.stack}` : ' (--verbose shows details)'}\n`,
      );
    return 1;
  }
}

if (require.main === module) {
  // Writes to a closed pipe fail asynchronously on process.stdout; without a listener that is an uncaught error.
  process.stdout.on('error', (e) => {
    if (isClosedPipe(e)) process.exit(0);
    process.stderr.write(`deberta-lens: ${writeError(e, '', undefined).message}\n`);
    process.exit(1);
  });
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}

function packageVersion(): string {
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}
