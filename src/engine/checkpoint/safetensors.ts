// safetensors: an 8-byte little-endian header length, a JSON header, then the raw tensor bytes.
// Only the header is read here; tensor bytes are referenced by file + offset.
import { isLensError, LensError } from '../errors';
import { regularFileSize } from './regular-file';
import { own } from './own';
import { SAFETENSORS_DTYPES, SAFETENSORS_INTEGER_DTYPES, DTYPE_BYTES, elementCount, shapeText } from './dtype';
import { contiguousFileTensor, readRange, type FileTensors, type SkippedTensor, type SourcedTensor } from './tensor';

// The format's own limit; a larger value means a garbled file, and we must not allocate it.
const MAX_HEADER_BYTES = 100_000_000;

export function readSafetensors(file: string): FileTensors {
  const size = fileSize(file);
  const corrupt = (what: string) =>
    new LensError(`${file}: not a valid safetensors file (${what}); re-download or re-convert it.`, 'corrupt');
  if (size < 8) throw corrupt(`only ${size} bytes long`);
  const lenBytes = readRange(file, 0, 8);
  const headerLen = new DataView(lenBytes.buffer).getBigUint64(0, true);
  if (headerLen > BigInt(Math.min(size - 8, MAX_HEADER_BYTES))) {
    throw corrupt(`header length ${headerLen} exceeds the file size ${size}`);
  }
  const n = Number(headerLen);
  const dataStart = 8 + n;
  const dataSize = size - dataStart;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(readRange(file, 8, n)).toString('utf8'));
  } catch {
    throw corrupt('the header is not JSON');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) throw corrupt('the header is not a JSON object');

  const tensors: SourcedTensor[] = [];
  const skipped: SkippedTensor[] = [];
  const ranges: { name: string; begin: number; end: number }[] = [];
  for (const [name, info] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') continue;
    const entry = parseEntry(info, name, corrupt);
    const floatType = own(SAFETENSORS_DTYPES, entry.dtype);
    const intBytes = own(SAFETENSORS_INTEGER_DTYPES, entry.dtype);
    if (floatType === undefined && intBytes === undefined) {
      throw new LensError(
        `${file}: tensor '${name}' has dtype ${entry.dtype}; DeBERTa Lens reads F32, F16 and BF16 weights — re-save the checkpoint as float32.`,
        'unsupported',
      );
    }
    const elemBytes = floatType !== undefined ? DTYPE_BYTES[floatType] : intBytes!;
    const expected = elementCount(entry.shape) * elemBytes;
    if (entry.end - entry.begin !== expected) {
      throw corrupt(`tensor '${name}' spans ${entry.end - entry.begin} bytes but its shape ${shapeText(entry.shape)} needs ${expected}`);
    }
    if (entry.end > dataSize) throw corrupt(`tensor '${name}' ends at byte ${dataStart + entry.end}, past the end of the file (${size})`);
    ranges.push({ name, begin: entry.begin, end: entry.end });
    if (floatType === undefined) {
      skipped.push({ name, dtype: entry.dtype, shape: entry.shape, source: file });
    } else {
      tensors.push(contiguousFileTensor(name, floatType, entry.shape, file, dataStart + entry.begin));
    }
  }
  ranges.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let prev: (typeof ranges)[number] | undefined;
  for (const cur of ranges) {
    // Empty tensors occupy no bytes and may share an offset with anything.
    if (prev && cur.begin < prev.end && cur.end > cur.begin) throw corrupt(`tensors '${prev.name}' and '${cur.name}' overlap`);
    prev = cur;
  }
  // As the format requires (and its reference reader checks), tensors tile the data section exactly. A header
  // length one byte short still parses (the header ends in padding spaces) but shifts every weight by a byte.
  let covered = 0;
  for (const r of ranges) {
    if (r.end === r.begin) continue;
    if (r.begin !== covered) {
      throw corrupt(`tensor '${r.name}' starts at data byte ${r.begin}, but the tensors before it end at ${covered} (a gap)`);
    }
    covered = r.end;
  }
  if (covered !== dataSize) {
    throw corrupt(
      `its tensors cover ${covered} bytes but the data section after the ${n}-byte header is ${dataSize}; ` +
        `the header length is wrong or the file has extra bytes`,
    );
  }
  return { tensors, skipped };
}

function parseEntry(info: unknown, name: string, corrupt: (what: string) => LensError) {
  if (info === null || typeof info !== 'object') throw corrupt(`entry '${name}' is not an object`);
  const { dtype, shape, data_offsets: offsets } = info as Record<string, unknown>;
  if (typeof dtype !== 'string') throw corrupt(`tensor '${name}' has no dtype`);
  if (!Array.isArray(shape) || !shape.every(isNonNegInt)) throw corrupt(`tensor '${name}' has an invalid shape`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegInt) || offsets[1] < offsets[0]) {
    throw corrupt(`tensor '${name}' has invalid data_offsets ${JSON.stringify(offsets)}`);
  }
  return { dtype, shape: shape as number[], begin: offsets[0] as number, end: offsets[1] as number };
}

function isNonNegInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** The size of a weight file, refusing a device, FIFO or folder by name (a /dev/zero symlink never ends). */
export function fileSize(file: string): number {
  try {
    return regularFileSize(file, 'the weight file');
  } catch (e) {
    if (isLensError(e)) throw e;
    throw new LensError(
      `${file}: cannot read weight file (${(e as NodeJS.ErrnoException).code ?? 'error'}); check it exists.`,
      'not-found',
    );
  }
}
