// A checkpoint as the load process (load-process.ts) hands it to its caller: plain data, no parser state. Every
// tensor is a byte range of a file — in place in the checkpoint, or in the `tensors.bin` the load process wrote
// for bytes it had to inflate or gather — so the caller (the extension host) reads weights without ever parsing
// a pickle, a zip or a header of the user's files again.
import type { Checkpoint, SkippedTensor } from '../checkpoint';
import { checkedOnRead, type NonFinite } from '../checkpoint/finite';
import type { HashedFile } from '../checkpoint/hash';
import { readRange, type SourcedTensor } from '../checkpoint/tensor';
import { LensError } from '../errors';
import type { DType, ModelSpec } from '../types';

/** One tensor: where its bytes lie. `file` set: in place in a checkpoint file; `copiedAt` set: in tensors.bin. */
export interface WireTensor {
  name: string;
  dtype: DType;
  shape: number[];
  byteLength: number;
  source: string;
  file?: string;
  offset?: number;
  copiedAt?: number;
  shareKey?: string;
}

export interface WireCheckpoint {
  dir: string;
  name: string;
  spec: ModelSpec;
  tensors: WireTensor[];
  weightFiles: string[];
  hash: string;
  hashed: HashedFile[];
  skipped: SkippedTensor[];
  nonFinite: [string, NonFinite][];
  basePrefixed?: boolean;
  /** The tensors.bin holding the copied tensors (absent when every tensor lies in place). */
  copies?: string;
}

/** More tensors than any DeBERTa or BERT checkpoint holds (v2-xxlarge: ~800): a table this long is refused rather
 *  than handed to the extension host. */
export const MAX_WIRE_TENSORS = 50_000;

/** `copiedAt`: where each copied tensor's bytes start in tensors.bin (by name). */
export function toWire(ck: Checkpoint, copiedAt: Map<string, number>, copies: string | undefined): WireCheckpoint {
  const count = ck.weights.size + ck.skipped.size;
  if (count > MAX_WIRE_TENSORS) {
    const where = ck.weightFiles.length === 1 ? ck.weightFiles[0] : ck.dir;
    throw new LensError(
      `${where}: holds ${count} tensors, more than any DeBERTa or BERT checkpoint (at most ${MAX_WIRE_TENSORS} are read); use the checkpoint's original files.`,
      'corrupt',
    );
  }
  const tensors: WireTensor[] = [];
  for (const t of ck.weights.values()) {
    const s = t as Partial<SourcedTensor>;
    const w: WireTensor = { name: t.name, dtype: t.dtype, shape: t.shape, byteLength: t.byteLength, source: s.source ?? t.file ?? ck.dir };
    if (t.shareKey !== undefined) w.shareKey = t.shareKey;
    if (t.file !== undefined && t.offset !== undefined) {
      w.file = t.file;
      w.offset = t.offset;
    } else w.copiedAt = copiedAt.get(t.name);
    tensors.push(w);
  }
  return {
    dir: ck.dir,
    name: ck.name,
    spec: ck.spec,
    tensors,
    weightFiles: ck.weightFiles,
    hash: ck.hash,
    hashed: ck.hashed,
    skipped: [...ck.skipped.values()],
    nonFinite: [...(ck.nonFinite ?? new Map<string, NonFinite>())],
    basePrefixed: ck.basePrefixed,
    copies,
  };
}

/** The Checkpoint the engine runs on, whose reads are range reads of the files the load process named. */
export function fromWire(w: WireCheckpoint): Checkpoint {
  const weights = new Map<string, SourcedTensor>();
  for (const t of w.tensors) {
    const base = { name: t.name, dtype: t.dtype, shape: t.shape, byteLength: t.byteLength, source: t.source, shareKey: t.shareKey };
    if (t.file !== undefined && t.offset !== undefined) {
      const { file, offset } = t;
      weights.set(t.name, { ...base, file, offset, read: () => readRange(file, offset, t.byteLength) });
    } else {
      const copies = w.copies;
      const at = t.copiedAt;
      const read = (): Uint8Array => {
        if (copies === undefined || at === undefined) {
          throw new LensError(`${t.source}: tensor '${t.name}' was not copied when the model was loaded; load the model again.`, 'runtime');
        }
        return readRange(copies, at, t.byteLength);
      };
      // Copied bytes were not scanned for NaN/Inf in place: they are checked as they are read, as before.
      weights.set(t.name, checkedOnRead({ ...base, read }, t.source));
    }
  }
  return {
    dir: w.dir,
    name: w.name,
    spec: w.spec,
    weights,
    weightFiles: w.weightFiles,
    hash: w.hash,
    hashed: w.hashed,
    skipped: new Map(w.skipped.map((s) => [s.name, s])),
    nonFinite: new Map(w.nonFinite),
    basePrefixed: w.basePrefixed,
  };
}
