// NumPy .npy v1.0 for the two dtypes we export: little-endian float32 ('<f4') and int32 ('<i4'), C order.
import { LensError } from '../../engine/errors';

export type NpyArray = { dtype: 'float32'; shape: number[]; data: Float32Array } | { dtype: 'int32'; shape: number[]; data: Int32Array };

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

export function encodeNpy(data: Float32Array | Int32Array, shape: readonly number[]): Uint8Array {
  const header = npyHeader(data, shape);
  const out = new Uint8Array(header.length + data.byteLength);
  out.set(header, 0);
  // Typed arrays are little-endian on every platform Node runs VS Code on.
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), header.length);
  return out;
}

/** The header alone, for writers that stream the data after it without a copy. */
export function npyHeader(data: Float32Array | Int32Array, shape: readonly number[]): Uint8Array {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw new LensError(`export: shape [${shape.join(',')}] does not hold ${data.length} values`);
  const descr = data instanceof Float32Array ? '<f4' : '<i4';
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  // Pad with spaces and a newline so the data starts on a 64-byte boundary (what numpy writes).
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - 10 - header.length - 1) + '\n';
  const out = new Uint8Array(total);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  return out;
}

export function decodeNpy(bytes: Uint8Array, source = 'array'): NpyArray {
  const bad = (why: string) => new LensError(`${source}: not a supported .npy (${why})`, 'corrupt');
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) throw bad('missing \\x93NUMPY magic');
  const major = bytes[6];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder('latin1').decode(bytes.subarray(start, start + headerLen));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw bad('unreadable header');
  if (fortran === 'True') throw bad('Fortran order');
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = start + headerLen;
  if (bytes.length - dataStart !== count * 4) throw bad(`data size ${bytes.length - dataStart} does not match shape [${shape.join(',')}]`);
  // Copy: the data may not be 4-byte aligned inside the zip.
  const raw = bytes.slice(dataStart).buffer;
  if (descr === '<f4') return { dtype: 'float32', shape, data: new Float32Array(raw) };
  if (descr === '<i4') return { dtype: 'int32', shape, data: new Int32Array(raw) };
  throw bad(`dtype ${descr}; expected <f4 or <i4`);
}
