// An atlas JSON (what `deberta-lens atlas` writes, ../../analysis/atlas/atlas.ts) read for the panel: checked, and
// each top example given its tokens' text and a line of context from its file. No vscode here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AtlasJson } from '../../analysis/atlas/atlas';
import { paragraphs } from '../../analysis/atlas/corpus';
import type { TopPair } from '../../analysis/atlas/metrics';
import { LensError } from '../../engine';
import { ATLAS_METRICS, type AtlasExample, type AtlasView } from '../../shared/atlas';

/** Beyond any atlas the CLI writes for a real model (144 heads × a few KB); a bigger file is refused unread. */
const MAX_ATLAS_BYTES = 256 * 2 ** 20;
const CONTEXT_CHARS = 60;

export function readAtlasFile(file: string): AtlasJson {
  let atlas: AtlasJson;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_ATLAS_BYTES)
      throw new LensError(`${file}: ${size} bytes, too big for an atlas; open what deberta-lens atlas --out wrote`);
    atlas = JSON.parse(fs.readFileSync(file, 'utf8')) as AtlasJson;
  } catch (e) {
    if (e instanceof LensError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new LensError(`${file}: ${code ? `cannot read it (${code})` : 'not JSON'}; open an atlas that deberta-lens atlas --out wrote`);
  }
  const ok =
    atlas &&
    typeof atlas === 'object' &&
    Array.isArray(atlas.heads) &&
    atlas.model &&
    Number.isInteger(atlas.model.layers) &&
    Number.isInteger(atlas.model.heads) &&
    typeof atlas.corpus === 'string' &&
    atlas.heads.every((h) => h && Number.isInteger(h.layer) && Number.isInteger(h.head) && h.metrics && Array.isArray(h.top));
  if (!ok) throw new LensError(`${file}: not an atlas (no model, corpus or heads); open one that deberta-lens atlas --out wrote`);
  return atlas;
}

/** The folder the atlas's file names count from: the corpus folder, or the folder of a one-file corpus. */
export function corpusRoot(atlas: Pick<AtlasJson, 'corpus'>): string {
  try {
    return fs.statSync(atlas.corpus).isDirectory() ? atlas.corpus : path.dirname(atlas.corpus);
  } catch {
    return atlas.corpus;
  }
}

/** Where a top example is: its file on disk, the query token and the paragraph around it (UTF-16 offsets). */
export function examplePlace(
  atlas: Pick<AtlasJson, 'corpus'>,
  top: TopPair,
): { file: string; text: string; query: [number, number]; key: [number, number]; paragraph: [number, number] } {
  const file = path.join(corpusRoot(atlas), ...top.file.split('/'));
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new LensError(
      `${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)}); the atlas's corpus has moved or changed`,
    );
  }
  const para = paragraphs(top.file, text).find((p) => p.offset <= top.query[0] && top.query[1] <= p.offset + p.text.length);
  if (!para || top.query[1] > text.length || top.key[1] > text.length)
    throw new LensError(`${file}: changed since the atlas was built (the example is no longer there); build the atlas again`);
  return { file, text, query: top.query, key: top.key, paragraph: [para.offset, para.offset + para.text.length] };
}

/** The atlas as the panel shows it: metrics as they are; examples with their text (files read once each). */
export function atlasView(file: string, atlas: AtlasJson): AtlasView {
  const root = corpusRoot(atlas);
  const texts = new Map<string, string | undefined>();
  const textOf = (name: string) => {
    if (!texts.has(name)) {
      try {
        texts.set(name, fs.readFileSync(path.join(root, ...name.split('/')), 'utf8'));
      } catch {
        texts.set(name, undefined);
      }
    }
    return texts.get(name);
  };
  const example = (t: TopPair): AtlasExample => {
    const text = textOf(t.file);
    if (text === undefined) return { file: t.file, prob: t.prob, query: '?', key: '?', context: '(file not found)' };
    const lo = Math.max(0, Math.min(t.query[0], t.key[0]) - CONTEXT_CHARS),
      hi = Math.min(text.length, Math.max(t.query[1], t.key[1]) + CONTEXT_CHARS);
    const context = `${lo > 0 ? '…' : ''}${text.slice(lo, hi).replace(/\s+/g, ' ')}${hi < text.length ? '…' : ''}`;
    return { file: t.file, prob: t.prob, query: text.slice(...t.query), key: text.slice(...t.key), context };
  };
  const metrics = (m: Record<string, number | undefined>) =>
    Object.fromEntries(ATLAS_METRICS.filter((k) => typeof m[k] === 'number').map((k) => [k, m[k]]));
  return {
    file,
    name: `${atlas.model.name ?? path.basename(atlas.model.path)} · ${path.basename(atlas.corpus)}`,
    model: atlas.model.name ?? atlas.model.path,
    corpus: atlas.corpus,
    texts: atlas.texts,
    tokens: atlas.tokens,
    layers: atlas.model.layers,
    heads: atlas.model.heads,
    rows: atlas.heads.map((h) => ({
      layer: h.layer,
      head: h.head,
      metrics: metrics(h.metrics as unknown as Record<string, number | undefined>),
      top: h.top.map(example),
    })),
  };
}
