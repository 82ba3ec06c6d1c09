// `deberta-lens atlas`: every head's behaviour over a corpus (../analysis/atlas/), as JSON; `atlas merge` adds up the
// atlases of shards. With --out, progress is kept in OUT.partial as the run goes: run the same command again after
// an interruption and it resumes there.
import * as fs from 'node:fs';
import { buildAtlas, mergeAtlases, type AtlasJson } from '../analysis/atlas/atlas';
import { type EngineOptions, LensError, openModel } from '../engine';
import { checkOutWritable } from './output';

function shardFlag(text: string | undefined): { index: number; count: number } | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) throw new LensError(`--shard takes i/N (this run's share: the i-th of N), got "${text}"`);
  return { index: Number(m[1]), count: Number(m[2]) };
}

function write(out: string | undefined, atlas: AtlasJson): void {
  const text = `${JSON.stringify(atlas)}\n`;
  if (out === undefined) process.stdout.write(text);
  else fs.writeFileSync(out, text);
}

export async function atlasCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  const corpus = flags.get('corpus');
  if (corpus === undefined) throw new LensError('atlas needs a corpus: --corpus DIR (its .txt and .md files) or --corpus FILE');
  const window = flags.has('window') ? Number(flags.get('window')) : undefined;
  const shard = shardFlag(flags.get('shard'));
  const out = flags.get('out');
  if (out !== undefined) checkOutWritable(out);
  const checkpoint = out !== undefined ? `${out}.partial` : undefined;
  const everyS = flags.has('checkpoint-every') ? Number(flags.get('checkpoint-every')) : undefined;
  if (everyS !== undefined && !(everyS >= 0))
    throw new LensError(`--checkpoint-every takes seconds ≥ 0 (how much work a kill may lose), got "${flags.get('checkpoint-every')}"`);
  const model = await openModel(modelDir, engine);
  const verbose = flags.has('verbose');
  let said = 0;
  // Ctrl+C (or a polite kill): the checkpoint is written before the process ends, and the line says how to go on.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (checkpoint && fs.existsSync(checkpoint)) process.stderr.write(`atlas: resuming from ${checkpoint}\n`);
    const atlas = await buildAtlas(model, {
      corpus,
      window,
      shard,
      checkpoint,
      checkpointEveryMs: everyS === undefined ? undefined : everyS * 1000,
      signal: stop.signal,
      // The listing's outcome always (a folder of 100,000 files takes a moment), its start with --verbose: an empty
      // folder's error stays one line.
      onStage: (line) => (verbose || !line.endsWith('…')) && process.stderr.write(`atlas: ${line}\n`),
      onSkip: (line) => process.stderr.write(`atlas: ${line}\n`),
      onProgress: ({ texts, tokens, file }) => {
        if (!verbose || performance.now() - said < 2000) return;
        said = performance.now();
        process.stderr.write(`atlas: ${texts} paragraphs, ${tokens} tokens (${file})\n`);
      },
    });
    write(out, atlas);
    if (checkpoint) fs.rmSync(checkpoint, { force: true });
  } catch (e) {
    if (stop.signal.aborted)
      throw new LensError(
        checkpoint
          ? `atlas stopped; its progress is in ${checkpoint}: run the same command again to resume`
          : 'atlas stopped (without --out nothing is kept)',
        'cancelled',
      );
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await model.dispose();
  }
}

export function atlasMergeCommand(files: string[], flags: Map<string, string>): void {
  const out = flags.get('out');
  if (out !== undefined) checkOutWritable(out);
  const parts = files.map((name) => {
    let atlas: AtlasJson;
    try {
      atlas = JSON.parse(fs.readFileSync(name, 'utf8')) as AtlasJson;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new LensError(
        `${name}: ${code ? `cannot read it (${code})` : 'not JSON'}; give atlas files that deberta-lens atlas --out wrote`,
      );
    }
    return { name, atlas };
  });
  write(out, mergeAtlases(parts));
}
