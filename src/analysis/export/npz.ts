// .npz export of a result and its reader (the CLI's --format npz, and round-trip tests).
// Layout: layer{L}_{kind}.npy float32 [H,n,n] for each present term and probs; input_ids.npy int32 [n];
// meta.json (model info, scale, tokens with offsets, text, layers). np.load(path) reads the arrays;
// meta.json comes back as bytes from np.load(path)['meta.json'] or via zipfile.
import { LensError } from '../../engine/errors';
import { ExplainResult, type LayerTensors } from '../../engine/result/explain-result';
import type { ModelInfo, Token } from '../../engine/types';
import { decodeNpy, encodeNpy, npyHeader } from './npy';
import { writeChunks } from './write-chunks';
import { crc32 } from '../../shared/crc32';
import { bytesSource, readZipEntries } from '../../engine/zip/zip-reader';
import { concatBytes, ZipWriter, type ZipWriterOptions } from '../../engine/zip/zip-writer';

const FORMAT = 'deberta-lens-npz';

interface NpzMeta {
  format: typeof FORMAT;
  version: 1;
  model: ModelInfo;
  scale: number;
  n: number;
  heads: number;
  layers: number[];
  tokens: Token[];
  text?: string;
}

const KINDS = ['c2c', 'c2p', 'p2c', 'probs'] as const;

/** The archive's bytes in order, computing one layer at a time (zip64 once the archive passes 4 GiB). */
export async function* npzChunks(result: ExplainResult, opts: ZipWriterOptions = {}): AsyncGenerator<Uint8Array> {
  const { n, heads } = result;
  const zip = new ZipWriter(opts);
  yield* zip.entry('input_ids.npy', [encodeNpy(Int32Array.from(result.inputIds), [n])]);
  for (const layer of result.layers) {
    await result.load(layer);
    for (const kind of KINDS) {
      if (!result.has(kind)) continue;
      const t = result.tensor(layer, kind);
      yield* zip.entry(`layer${layer}_${kind}.npy`, [npyHeader(t, [heads, n, n]), new Uint8Array(t.buffer, t.byteOffset, t.byteLength)]);
    }
  }
  const meta: NpzMeta = {
    format: FORMAT,
    version: 1,
    model: result.model,
    scale: result.scale,
    n,
    heads,
    layers: result.layers,
    tokens: result.tokens,
    ...(result.text !== undefined ? { text: result.text } : {}),
  };
  yield* zip.entry('meta.json', [new TextEncoder().encode(JSON.stringify(meta))]);
  yield* zip.finish();
}

/** Writes the .npz of a result to `file`, layer by layer. */
export function writeNpzFile(result: ExplainResult, file: string, opts: ZipWriterOptions = {}): Promise<void> {
  return writeChunks(file, npzChunks(result, opts));
}

/** The whole .npz in memory (small results, tests). */
export async function toNpz(result: ExplainResult, opts: ZipWriterOptions = {}): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of npzChunks(result, opts)) parts.push(c.slice());
  return concatBytes(parts);
}

/** Parse what toNpz wrote back into an ExplainResult. `source` (a file path) names the file in errors. */
export function readNpz(bytes: Uint8Array, source = 'the .npz file'): ExplainResult {
  const entries = readZip(bytes, source);
  const bad = (why: string) => new LensError(`${source}: ${why}; it was not written by deberta-lens --format npz`, 'corrupt');
  const metaBytes = entries.get('meta.json');
  if (!metaBytes) throw bad('no meta.json inside');
  let meta: NpzMeta;
  try {
    meta = JSON.parse(new TextDecoder().decode(metaBytes)) as NpzMeta;
  } catch {
    throw bad('meta.json is not valid JSON');
  }
  if (meta.format !== FORMAT || meta.version !== 1) throw bad(`meta.json has format ${String(meta.format)} v${String(meta.version)}`);
  const get = (name: string, dtype: 'float32' | 'int32', shape: number[]) => {
    const b = entries.get(name);
    if (!b) throw bad(`${name} is missing`);
    const arr = decodeNpy(b, `${source}:${name}`);
    if (arr.dtype !== dtype || arr.shape.join(',') !== shape.join(',')) {
      throw bad(`${name} is ${arr.dtype} [${arr.shape.join(',')}], expected ${dtype} [${shape.join(',')}]`);
    }
    return arr.data;
  };
  const { n, heads } = meta;
  const ids = Array.from(get('input_ids.npy', 'int32', [n]));
  const layers: LayerTensors[] = meta.layers.map((layer) => {
    const t: LayerTensors = {
      layer,
      c2c: get(`layer${layer}_c2c.npy`, 'float32', [heads, n, n]) as Float32Array,
      probs: get(`layer${layer}_probs.npy`, 'float32', [heads, n, n]) as Float32Array,
    };
    for (const term of ['c2p', 'p2c'] as const) {
      if (meta.model.terms.includes(term)) t[term] = get(`layer${layer}_${term}.npy`, 'float32', [heads, n, n]) as Float32Array;
    }
    return t;
  });
  return new ExplainResult(meta.model, ids, meta.tokens, meta.scale, layers, meta.text);
}

/** Entries of an .npz by name (views into `bytes`): stored entries only, every CRC checked. `source` names the
 *  file in error messages. */
export function readZip(bytes: Uint8Array, source = 'the archive'): Map<string, Uint8Array> {
  const bad = (why: string) =>
    new LensError(`${source}: not a readable .npz/zip (${why}); export it again with deberta-lens --format npz`, 'corrupt');
  const check = (e: { name: string; method: number; compressedSize: number; size: number }) => {
    if (e.method !== 0 || e.compressedSize !== e.size) throw bad(`entry ${e.name} is compressed; only stored entries are supported`);
  };
  const src = bytesSource(bytes);
  const out = new Map<string, Uint8Array>();
  for (const e of readZipEntries(src, { corrupt: bad, check })) {
    const data = src.read(e.dataOffset, e.size);
    if (crc32(data) !== e.crc) throw bad(`CRC mismatch in ${e.name}`);
    out.set(e.name, data);
  }
  return out;
}
