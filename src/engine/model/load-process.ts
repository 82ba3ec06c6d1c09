// The load process: reads an untrusted model folder — config.json, the shard index, safetensors headers, the .bin
// zip and its pickle, the tokenizer files, every weight byte for the hash — and builds its graphs (at open, and
// each graph built on first use later: a 'build' request with a recipe, graph/graph-recipes.ts), in a child of
// the caller that runs under a heap limit, an RSS watchdog and a deadline (isolated-load.ts). A hostile file that
// gets past the parsers' own budgets can then exhaust or freeze this process only; the caller receives plain data
// (a ModelSummary, or the checkpoint as byte ranges: checkpoint-wire.ts) and the one-line error. One request, then
// it exits; it dies with its parent (the IPC channel closing).
import { hashStoreOf } from '../cache/cache-layout';
import { loadCheckpoint } from '../checkpoint';
import { isLensError } from '../errors';
import { ensureGraph, ensureGraphOf } from '../graph/graph-cache';
import { graphKind } from '../graph/graph-recipes';
import { fromWire, toWire } from './checkpoint-wire';
import type { FromLoader, ToLoader } from './load-messages';
import { summarize, tryTokenizer } from './model-summary';
import { openTensorCopies } from './tensor-copies';
import { startWatchdog } from './load-watchdog';

if (!process.send) throw new Error('the load process must be started with an IPC channel');
// First, before any file is read: the memory budget this process keeps to, on every platform.
const watchdog = startWatchdog();
const post = (m: FromLoader): Promise<void> => new Promise((resolve) => process.send!(m, undefined, undefined, () => resolve()));
const log = (line: string) => void post({ type: 'log', line });

async function handle(msg: ToLoader): Promise<FromLoader> {
  if (msg.type === 'build') {
    const ck = fromWire(msg.checkpoint);
    // Nothing to parse: the budget for reading bytes starts now.
    const weightBytes = msg.checkpoint.tensors.reduce((a, t) => a + t.byteLength, 0);
    watchdog?.parsed(weightBytes);
    await post({ type: 'parsed', weightBytes });
    const entry = ensureGraphOf(ck, msg.cacheDir, graphKind(ck, msg.recipe), { maxGB: msg.maxGB, log });
    entry.release();
    return { type: 'built', built: entry.built, buildMs: entry.buildMs, pid: process.pid };
  }
  if (msg.type === 'inspect') {
    const ck = await loadCheckpoint(msg.dir, {
      hash: false,
      onParsed: (weightBytes) => (watchdog?.parsed(weightBytes), void post({ type: 'parsed', weightBytes })),
    });
    const tok = await tryTokenizer(ck.dir, ck);
    await tok?.dispose();
    return { type: 'inspected', summary: summarize(ck, tok) };
  }
  const ck = await loadCheckpoint(msg.dir, {
    hashStore: msg.hashStore || hashStoreOf(msg.cacheDir),
    onParsed: (weightBytes) => (watchdog?.parsed(weightBytes), void post({ type: 'parsed', weightBytes })),
  });
  // The tokenizer is checked here too, so the caller opens only tokenizer files this process read within budget.
  const tok = await tryTokenizer(ck.dir, ck);
  await tok?.dispose();
  const options = { maxGB: msg.maxGB, log, headGroup: msg.headGroup };
  const graph = ensureGraph(ck, msg.cacheDir, options);
  graph.release();
  const copies = openTensorCopies(ck, msg.cacheDir, true, options);
  copies.entry?.release();
  return { type: 'opened', checkpoint: toWire(ck, copies.at, copies.file), graphBuilt: graph.built };
}

process.once('message', (msg: ToLoader) => {
  void handle(msg)
    .catch((e: unknown): FromLoader => {
      if (isLensError(e)) return { type: 'error', message: e.message, code: e.code };
      return { type: 'error', message: String((e as Error)?.message ?? e) };
    })
    .then(post)
    .then(() => process.exit(0));
});
// The caller is gone (closed the channel, or was killed): nothing to report to.
process.on('disconnect', () => process.exit(0));
