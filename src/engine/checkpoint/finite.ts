// Finds NaN and ±Inf in weights. A checkpoint holding one produces NaN attention that would be drawn as if it
// were a number; the tensor is named instead. Tensors referenced in place are scanned while the checkpoint is
// hashed (the bytes pass by anyway, so it costs no extra read; what a file showed is remembered with its hash, so
// an unchanged file is not re-read); tensors that are read, gathered or inflated are checked when read.
import { at } from '../../shared/checked';
import { LensError } from '../errors';
import type { DType, TensorData } from '../types';
import { DTYPE_BYTES } from './dtype';
import { type ByteObserver, type CheckpointHash, hashFiles } from './hash';

/** The first non-finite element of a tensor. */
export interface NonFinite {
  index: number;
  value: 'NaN' | 'Infinity' | '-Infinity';
}

interface Range {
  names: string[]; // tensors whose bytes lie in [begin, end) (views of one storage share a range)
  begins: number[];
  ends: number[];
  begin: number;
  end: number;
  dtype: DType;
}

/** Bit patterns with an all-ones exponent: NaN or ±Inf. */
const EXP = { float32: 0x7f800000, float16: 0x7c00, bfloat16: 0x7f80 } as const;

function classify(dtype: DType, bits: number): NonFinite['value'] {
  const mantissa = dtype === 'float32' ? bits & 0x7fffff : dtype === 'float16' ? bits & 0x3ff : bits & 0x7f;
  if (mantissa !== 0) return 'NaN';
  const negative = dtype === 'float32' ? bits >>> 31 : bits >>> 15;
  return negative ? '-Infinity' : 'Infinity';
}

/** Index of the first non-finite element of `bytes` (whole elements of `dtype`, little-endian), or -1. */
export function firstNonFinite(bytes: Uint8Array, dtype: DType): number {
  const exp = EXP[dtype];
  if (dtype === 'float32') {
    const n = bytes.byteLength >>> 2;
    if (bytes.byteOffset % 4 === 0) {
      const u = new Uint32Array(bytes.buffer, bytes.byteOffset, n);
      for (let i = 0; i < n; i++) if ((u[i]! & exp) === exp) return i;
      return -1;
    }
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < n; i++) if ((v.getUint32(i * 4, true) & exp) === exp) return i;
    return -1;
  }
  const n = bytes.byteLength >>> 1;
  if (bytes.byteOffset % 2 === 0) {
    const u = new Uint16Array(bytes.buffer, bytes.byteOffset, n);
    for (let i = 0; i < n; i++) if ((u[i]! & exp) === exp) return i;
    return -1;
  }
  for (let i = 0; i < n; i++) if (((bytes[2 * i]! | (bytes[2 * i + 1]! << 8)) & exp) === exp) return i;
  return -1;
}

function bitsAt(bytes: Uint8Array, at: number, dtype: DType): number {
  return dtype === 'float32'
    ? (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0
    : bytes[at]! | (bytes[at + 1]! << 8);
}

/** Scans the tensor ranges of several files as their bytes stream past (chunks in order, any sizes). */
export class NonFiniteScan implements ByteObserver {
  readonly found = new Map<string, NonFinite>();
  private readonly ranges: Range[][];
  /** The tensors each file holds in place, for its findings. */
  private readonly names: Set<string>[];
  private readonly next: number[];
  private readonly carry = new Uint8Array(4);
  private carryLen = 0;

  constructor(files: string[], tensors: Iterable<TensorData>) {
    const byFile = new Map<string, Range[]>(files.map((f) => [f, []]));
    for (const t of tensors) {
      const list = t.file !== undefined && t.offset !== undefined && t.byteLength > 0 ? byFile.get(t.file) : undefined;
      list?.push({
        names: [t.name],
        begins: [t.offset!],
        ends: [t.offset! + t.byteLength],
        begin: t.offset!,
        end: t.offset! + t.byteLength,
        dtype: t.dtype,
      });
    }
    this.names = files.map((f) => new Set(byFile.get(f)!.flatMap((r) => r.names)));
    this.ranges = files.map((f) => mergeOverlaps(byFile.get(f)!));
    this.next = files.map(() => 0);
  }

  /** The non-finite tensors of files[file], as remembered with its hash: `[name, NonFinite]` pairs. */
  findings(file: number): [string, NonFinite][] {
    const names = at(this.names, file, 'file');
    return [...this.found].filter(([name]) => names.has(name));
  }

  /** What files[file] showed when it was scanned before (its bytes are unchanged since). */
  recalled(file: number, findings: unknown): void {
    if (!Array.isArray(findings)) return;
    const names = at(this.names, file, 'file');
    for (const f of findings as unknown[]) {
      if (!Array.isArray(f) || f.length !== 2) continue;
      const [name, bad] = f as [unknown, Partial<NonFinite> | null];
      if (typeof name !== 'string' || !names.has(name) || typeof bad?.index !== 'number') continue;
      if (bad.value === 'NaN' || bad.value === 'Infinity' || bad.value === '-Infinity')
        this.found.set(name, { index: bad.index, value: bad.value });
    }
  }

  private rangesOf(file: number): Range[] {
    return at(this.ranges, file, 'file');
  }

  /** `chunk` holds bytes [at, at + chunk.length) of files[file]. */
  feed(file: number, chunk: Uint8Array, at: number): void {
    const ranges = this.rangesOf(file);
    const chunkEnd = at + chunk.length;
    while (this.next[file]! < ranges.length) {
      const r = ranges[this.next[file]!]!; // the loop's bound
      if (r.begin >= chunkEnd) return;
      const elem = DTYPE_BYTES[r.dtype];
      let s = Math.max(r.begin, at);
      const e = Math.min(r.end, chunkEnd);
      if (this.carryLen > 0) {
        // An element split across the previous chunk and this one.
        const need = elem - this.carryLen;
        if (chunk.length < need) {
          this.carry.set(chunk, this.carryLen);
          this.carryLen += chunk.length;
          return;
        }
        this.carry.set(chunk.subarray(0, need), this.carryLen);
        this.check(r, bitsAt(this.carry, 0, r.dtype), s - this.carryLen);
        this.carryLen = 0;
        s += need;
      }
      const whole = Math.floor((e - s) / elem) * elem;
      // Views of one storage may each need a later bad value, so continue past each hit while any is unnamed.
      for (let from = 0; from < whole && r.names.some((n) => !this.found.has(n));) {
        const k = firstNonFinite(chunk.subarray(s - at + from, s - at + whole), r.dtype);
        if (k < 0) break;
        const byte = from + k * elem;
        this.check(r, bitsAt(chunk, s - at + byte, r.dtype), s + byte);
        from = byte + elem;
      }
      const rest = e - s - whole;
      if (rest > 0) {
        this.carry.set(chunk.subarray(s - at + whole, e - at));
        this.carryLen = rest;
      }
      if (r.end > chunkEnd) return;
      this.next[file]!++;
    }
  }

  private check(r: Range, bits: number, byteAt: number): void {
    const exp = EXP[r.dtype];
    if ((bits & exp) !== exp) return;
    // Every tensor whose bytes hold the value, with the element's index in that tensor.
    const elem = DTYPE_BYTES[r.dtype];
    const value = classify(r.dtype, bits);
    r.names.forEach((name, j) => {
      if (!this.found.has(name) && r.begins[j]! <= byteAt && byteAt < r.ends[j]!) {
        this.found.set(name, { index: Math.floor((byteAt - r.begins[j]!) / elem), value });
      }
    });
  }
}

function mergeOverlaps(list: Range[]): Range[] {
  list.sort((a, b) => a.begin - b.begin);
  const out: Range[] = [];
  for (const r of list) {
    const last = out[out.length - 1];
    if (last && r.begin < last.end) {
      last.names.push(...r.names);
      last.begins.push(...r.begins);
      last.ends.push(...r.ends);
      last.end = Math.max(last.end, r.end);
    } else out.push(r);
  }
  return out;
}

/**
 * The checkpoint's file hashes and the non-finite tensors among those referenced in place, in one read. `store`:
 * where hashes (and what the scan found) are remembered across processes.
 */
export async function hashAndScan(
  files: string[],
  tensors: Iterable<TensorData>,
  store?: string,
): Promise<CheckpointHash & { nonFinite: Map<string, NonFinite> }> {
  const scan = new NonFiniteScan(files, tensors);
  const hashed = await hashFiles(files, store, scan);
  return { ...hashed, nonFinite: scan.found };
}

export function nonFiniteError(source: string, name: string, bad: NonFinite): LensError {
  return new LensError(
    `${source}: tensor '${name}' holds ${bad.value} (element ${bad.index}); the weights are damaged or the training diverged — ` +
      `use an intact checkpoint.`,
    'corrupt',
  );
}

/** The tensor with `read()` checked: bytes that are read (not referenced in place) are scanned as they arrive.
 *  `unchecked` keeps the plain read, for copying the bytes elsewhere (the check then happens where they are read). */
export function checkedOnRead<T extends TensorData>(t: T, source: string): T & { unchecked: () => Uint8Array } {
  const read = () => t.read();
  return {
    ...t,
    unchecked: read,
    read: () => {
      const bytes = read();
      const k = firstNonFinite(bytes, t.dtype);
      if (k >= 0) {
        const elem = DTYPE_BYTES[t.dtype];
        throw nonFiniteError(source, t.name, { index: k, value: classify(t.dtype, bitsAt(bytes, k * elem, t.dtype)) });
      }
      return bytes;
    },
  };
}
