// The head atlas: a corpus streamed through the model window by window (./corpus.ts), each window explained and
// every layer read once into per-head sums (./metrics.ts), then dropped: memory stays that of one window. A shard
// takes every N-th paragraph; a checkpoint file written as it goes lets an interrupted run resume where it was.
import * as fs from 'node:fs';
import { LensError } from '../../engine/errors';
import type { OpenModel } from '../../engine/model/open-model';
import type { ModelInfo, TermName, Token } from '../../engine/types';
import { corpusFiles, paragraphs, readCorpusFile } from './corpus';
import { addHead, emptySums, headMetrics, mergeSums, type HeadMetrics, type HeadSums, type TextPlace, type TopPair } from './metrics';

export const DEFAULT_WINDOW = 128;
export const DEFAULT_TOP = 8;
// 2: the position is a window inside a paragraph and the file it is in (1 was a paragraph).
const CHECKPOINT_VERSION = 'deberta-lens-atlas-checkpoint-2';
const CHECKPOINT_EVERY_MS = 5000;
const CHUNK_CHARS = 200_000;

export interface AtlasOptions {
  corpus: string;
  /** Tokens per window, [CLS] and [SEP] counted (default 128). */
  window?: number;
  /** This run's share of the paragraphs: index 1…count, every count-th paragraph from the index-th. */
  shard?: { index: number; count: number };
  topK?: number;
  /** A file the run's progress is written to as it goes; a run given one that exists resumes from it. */
  checkpoint?: string;
  /** How often the checkpoint is written, at most (default 5,000 ms; 0: after every window). */
  checkpointEveryMs?: number;
  /** A paragraph longer than this is tokenized in pieces of about this many characters, cut at white space
   *  (default 200,000): a paragraph of many MB never holds all its tokens at once. */
  chunkChars?: number;
  /** What the run is doing before its first window (listing a big folder takes a while): one line each. */
  onStage?: (line: string) => void;
  onProgress?: (p: { texts: number; windows: number; tokens: number; file: string }) => void;
  onSkip?: (line: string) => void;
  signal?: AbortSignal;
}

export interface AtlasHead {
  layer: number;
  head: number;
  metrics: HeadMetrics;
  top: TopPair[];
  /** What the metrics are divided from: `deberta-lens atlas merge` adds these. */
  sums: HeadSums;
}

export interface AtlasJson {
  model: ModelInfo;
  corpus: string;
  window: number;
  top_k: number;
  /** The shards this atlas holds ([index, count] each; [[1, 1]] for a whole run). */
  shards: [number, number][];
  texts: number;
  windows: number;
  tokens: number;
  skipped: string[];
  heads: AtlasHead[];
}

interface Progress {
  version: string;
  model: string;
  corpus: string;
  window: number;
  shard: [number, number];
  top_k: number;
  /** Paragraphs (in corpus order, all shards counted) done: the run goes on from this one… */
  next: number;
  /** …from this token of it (the first of the next window; 0: the paragraph's start)… */
  piece: number;
  /** …in this file (absent before the first), whose first paragraph is paragraph `first`: a resumed run skips the
   *  files before it unread. */
  file?: string;
  first?: number;
  texts: number;
  windows: number;
  tokens: number;
  skipped: string[];
  sums: HeadSums[];
}

function checkOptions(o: AtlasOptions): { window: number; topK: number; shard: [number, number] } {
  const window = o.window ?? DEFAULT_WINDOW;
  if (!Number.isInteger(window) || window < 3) throw new LensError(`--window must be a whole number of tokens ≥ 3, got ${window}`);
  const topK = o.topK ?? DEFAULT_TOP;
  const shard: [number, number] = o.shard ? [o.shard.index, o.shard.count] : [1, 1];
  if (!(Number.isInteger(shard[1]) && shard[1] >= 1 && Number.isInteger(shard[0]) && shard[0] >= 1 && shard[0] <= shard[1]))
    throw new LensError(`--shard must be i/N with 1 ≤ i ≤ N, got ${shard[0]}/${shard[1]}`);
  return { window, topK, shard };
}

function readProgress(
  file: string,
  want: Omit<Progress, keyof Position | 'texts' | 'windows' | 'tokens' | 'skipped' | 'sums'>,
): Progress | undefined {
  if (!fs.existsSync(file)) return undefined;
  let p: Progress;
  try {
    p = JSON.parse(fs.readFileSync(file, 'utf8')) as Progress;
  } catch {
    throw new LensError(`${file}: not an atlas checkpoint (it does not parse); delete it to start over`, 'corrupt');
  }
  const same =
    p.version === want.version &&
    p.model === want.model &&
    p.corpus === want.corpus &&
    p.window === want.window &&
    p.top_k === want.top_k &&
    p.shard?.[0] === want.shard[0] &&
    p.shard?.[1] === want.shard[1];
  if (!same)
    throw new LensError(`${file}: a checkpoint of another atlas run (model, corpus, window or shard differ); delete it to start over`);
  return p;
}

type Position = Pick<Progress, 'next' | 'piece' | 'file' | 'first'>;
const START: Position = { next: 0, piece: 0 };

function writeProgress(file: string, p: Progress): void {
  // Written beside and renamed: a run killed mid-write leaves the previous checkpoint whole (and its next write
  // replaces the half-written one).
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(p));
  fs.renameSync(tmp, file);
}

export async function buildAtlas(model: OpenModel, o: AtlasOptions): Promise<AtlasJson> {
  const { window, topK, shard } = checkOptions(o);
  const tok = model.tokenizer;
  if (!tok) throw new LensError(`${model.info.path}: no tokenizer files; the atlas reads text`, 'not-found');
  const info = model.info;
  const L = info.layers,
    H = info.heads;
  const terms: TermName[] = info.terms;
  // A set: a resumed run meets again the folders it could not read (in the same order), and says each once.
  const skipped = new Set<string>();
  const skip = (line: string) => {
    if (skipped.has(line)) return;
    skipped.add(line);
    o.onSkip?.(line);
  };
  const key = { version: CHECKPOINT_VERSION, model: info.checkpoint_hash ?? info.path, corpus: o.corpus, window, shard, top_k: topK };
  const resumed = o.checkpoint ? readProgress(o.checkpoint, key) : undefined;
  for (const line of resumed?.skipped ?? []) skipped.add(line);
  o.onStage?.(`listing the .txt and .md files of ${o.corpus}…`);
  const t0 = performance.now();
  const { root, files } = corpusFiles(o.corpus, skip);
  o.onStage?.(`${files.length} file${files.length === 1 ? '' : 's'} listed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const sums: HeadSums[] = resumed?.sums ?? Array.from({ length: L * H }, () => emptySums(terms));
  let [texts, windows, tokens] = resumed ? [resumed.texts, resumed.windows, resumed.tokens] : [0, 0, 0];
  /** Where the sums stop: paragraph `next` (all shards counted) from token `piece` of it, in `file`, whose first paragraph is `first`. */
  let at: Position = resumed ? { next: resumed.next, piece: resumed.piece ?? 0, file: resumed.file, first: resumed.first } : START;
  const everyMs = o.checkpointEveryMs ?? CHECKPOINT_EVERY_MS;
  let lastWrite = performance.now();
  const save = () => {
    if (!o.checkpoint) return;
    writeProgress(o.checkpoint, { ...key, ...at, texts, windows, tokens, skipped: [...skipped], sums });
    lastWrite = performance.now();
  };
  const encoder = tok;
  const { cls, sep } = tok.special;
  const chunkChars = o.chunkChars ?? CHUNK_CHARS;
  try {
    await walk();
  } catch (e) {
    // Cancelled, or stopped by an error: what is done stays in the checkpoint, and the same command resumes there.
    save();
    throw e;
  }
  save();
  return atlasJson(info, o.corpus, window, topK, [shard], texts, windows, tokens, [...skipped], sums, H);

  async function walk(): Promise<void> {
    const from = at;
    let k = 0;
    for (const file of files) {
      // A resumed run does not read again the files before the one it stopped in (a folder of 100,000 files).
      if (from.file !== undefined && file < from.file) continue;
      if (file === from.file) k = from.first ?? k;
      const first = k;
      const text = readCorpusFile(root, file, skip);
      if (text === undefined) continue;
      for (const para of paragraphs(file, text)) {
        const index = k++;
        if (index % shard[1] !== shard[0] - 1 || index < from.next) continue;
        if (o.signal?.aborted) throw new LensError('cancelled', 'cancelled');
        // Windows go straight into the sums; the checkpoint says which window comes next, so a run stopped in a
        // long paragraph (a 1 MB one is 2,000 windows) resumes inside it.
        const start = index === from.next ? from.piece : 0;
        for await (const { w0, part } of paragraphWindows(encoder, para.text, window - 2, start, chunkChars, o.signal)) {
          const ids = [cls, ...part.map((t) => t.id), sep];
          const firstChar = para.offset + part[0]!.start,
            lastChar = para.offset + part[part.length - 1]!.end;
          const place: TextPlace = {
            file,
            starts: [firstChar, ...part.map((t) => para.offset + t.start), lastChar],
            ends: [firstChar, ...part.map((t) => para.offset + t.end), lastChar],
            special: [true, ...part.map((t) => t.special), true],
          };
          const n = ids.length;
          const r = await model.explain({ ids }, o.signal);
          // The window's own sums, added to the run's once every layer is in: a run stopped mid-window leaves the
          // sums as the checkpoint says they are.
          const add = Array.from({ length: L * H }, () => emptySums(terms));
          try {
            for (let l = 0; l < L; l++) {
              await r.load(l, o.signal);
              for (let h = 0; h < H; h++) {
                const byTerm = Object.fromEntries(terms.map((term) => [term, r.slice(l, h, term)]));
                addHead(add[l * H + h]!, byTerm, r.slice(l, h, 'probs'), n, place, topK);
              }
            }
          } finally {
            r.release();
          }
          for (let j = 0; j < sums.length; j++) sums[j] = mergeSums(sums[j]!, add[j]!, topK);
          windows++;
          tokens += n;
          at = { next: index, piece: w0 + window - 2, file, first };
          o.onProgress?.({ texts, windows, tokens, file });
          if (performance.now() - lastWrite > everyMs) save();
        }
        texts++;
        at = { next: index + 1, piece: 0, file, first };
        o.onProgress?.({ texts, windows, tokens, file });
        if (performance.now() - lastWrite > everyMs) save();
      }
    }
  }
}

/**
 * A paragraph's windows of `size` tokens (its specials not counted), from token `from` on, each with the index of its
 * first token. The text is tokenized `chunk` characters at a time, cut at white space (so the tokens are those of the
 * whole text), and only a window's worth of tokens is carried from one piece to the next.
 */
async function* paragraphWindows(
  encoder: NonNullable<OpenModel['tokenizer']>,
  text: string,
  size: number,
  from: number,
  chunk: number,
  signal?: AbortSignal,
): AsyncGenerator<{ w0: number; part: Token[] }> {
  let buf: Token[] = [];
  /** The paragraph's index of buf[0]. */
  let at = 0;
  for (let s = 0; s < text.length;) {
    let e = Math.min(text.length, s + chunk);
    if (e < text.length) {
      // Back to the white space before the cut (a word longer than half a piece is cut where it is).
      let k = e;
      while (k > s + chunk / 2 && !/\s/.test(text[k]!)) k--;
      if (k > s + chunk / 2) e = k;
    }
    // Tokenized from the word before the piece: its first word's tokens (and offsets, a SentencePiece word starting
    // at the space before it) are those the whole text gives; the tokens before the piece are the last piece's.
    let p = s;
    while (p > 0 && p > s - 1000 && /\s/.test(text[p - 1]!)) p--;
    while (p > 0 && p > s - 1000 && !/\s/.test(text[p - 1]!)) p--;
    const got = await encoder.encode(text.slice(p, e), signal);
    for (const t of got) if (t.start + p >= s) buf.push({ ...t, start: t.start + p, end: t.end + p });
    s = e;
    const last = s >= text.length;
    // Whole windows (or, at the end, what is left), from a multiple of `size` on.
    let k = 0;
    while (buf.length - k >= size || (last && k < buf.length)) {
      const w0 = at + k;
      if (w0 + size > from) yield { w0, part: buf.slice(k, k + size) };
      k += size;
    }
    buf = buf.slice(k);
    at += k;
  }
}

export function atlasJson(
  model: ModelInfo,
  corpus: string,
  window: number,
  topK: number,
  shards: [number, number][],
  texts: number,
  windows: number,
  tokens: number,
  skipped: string[],
  sums: HeadSums[],
  H: number,
): AtlasJson {
  return {
    model,
    corpus,
    window,
    top_k: topK,
    shards,
    texts,
    windows,
    tokens,
    skipped,
    heads: sums.map((s, k) => ({ layer: Math.floor(k / H), head: k % H, metrics: headMetrics(s), top: s.top, sums: s })),
  };
}

/** Atlases of shards of one corpus as one: the sums add, the top lists merge. Refuses atlases of other runs. */
export function mergeAtlases(parts: { name: string; atlas: AtlasJson }[]): AtlasJson {
  const [a] = parts;
  if (!a || parts.length < 2) throw new LensError('atlas merge needs at least two atlas files');
  const H = a.atlas.model.heads;
  const seen = new Set<string>();
  let sums = a.atlas.heads.map((h) => h.sums);
  let [texts, windows, tokens] = [0, 0, 0];
  const skipped: string[] = [];
  for (const { name, atlas } of parts) {
    if (!Array.isArray(atlas?.heads) || !Array.isArray(atlas.shards) || !atlas.model)
      throw new LensError(`${name}: not an atlas (deberta-lens atlas --out writes one)`, 'invalid-input');
    const other = (what: string) => new LensError(`${name}: an atlas of another ${what} than ${a.name}; merge shards of one run only`);
    if ((atlas.model.checkpoint_hash ?? atlas.model.path) !== (a.atlas.model.checkpoint_hash ?? a.atlas.model.path)) throw other('model');
    if (atlas.window !== a.atlas.window || atlas.top_k !== a.atlas.top_k) throw other('--window');
    if (atlas.heads.length !== sums.length) throw other('model');
    for (const [i, count] of atlas.shards) {
      if (count !== a.atlas.shards[0]![1]) throw other('shard count');
      if (seen.has(String(i))) throw new LensError(`${name}: shard ${i}/${count} is in the merge twice`);
      seen.add(String(i));
    }
    if (atlas !== a.atlas) sums = sums.map((s, k) => mergeSums(s, atlas.heads[k]!.sums, a.atlas.top_k));
    texts += atlas.texts;
    windows += atlas.windows;
    tokens += atlas.tokens;
    skipped.push(...atlas.skipped);
  }
  const shards = parts.flatMap((p) => p.atlas.shards).sort((x, y) => x[0] - y[0]);
  return atlasJson(
    a.atlas.model,
    a.atlas.corpus,
    a.atlas.window,
    a.atlas.top_k,
    shards,
    texts,
    windows,
    tokens,
    [...new Set(skipped)],
    sums,
    H,
  );
}
