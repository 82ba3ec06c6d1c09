// File-backed lazy tensors: bytes are read from disk only when the graph asks for them.
import * as fs from 'node:fs';
import { LensError } from '../errors';
import type { DType, TensorData } from '../types';
import { DTYPE_BYTES, elementCount } from './dtype';

/** A checkpoint tensor plus the file it came from (for error messages, even when it is not contiguous). */
export interface SourcedTensor extends TensorData {
  source: string;
}

/** A tensor the engine cannot use as a weight (an integer buffer such as position_ids). */
export interface SkippedTensor {
  name: string;
  dtype: string;
  shape: number[];
  source: string;
}

/** What one weight file yields. */
export interface FileTensors {
  tensors: SourcedTensor[];
  skipped: SkippedTensor[];
}

/** Reads exactly `length` bytes at `offset`; a short read means the file changed or was truncated. */
export function readRange(file: string, offset: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw new LensError(
      `${file}: cannot open weight file (${(e as NodeJS.ErrnoException).code ?? 'error'}); check it exists and is readable.`,
      'not-found',
    );
  }
  try {
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, out, done, length - done, offset + done);
      if (n === 0) {
        throw new LensError(
          `${file}: file ended at byte ${offset + done} while reading ${length} bytes at ${offset}; it was truncated or changed, re-download it.`,
          'corrupt',
        );
      }
      done += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

/** A tensor whose bytes lie contiguous, little-endian and unmodified at `offset` in `file`. */
export function contiguousFileTensor(name: string, dtype: DType, shape: number[], file: string, offset: number): SourcedTensor {
  const byteLength = elementCount(shape) * DTYPE_BYTES[dtype];
  return { name, dtype, shape, byteLength, file, offset, source: file, read: () => readRange(file, offset, byteLength) };
}
