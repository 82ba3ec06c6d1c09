// pytorch_model.bin (torch.save's zip format): `<top>/data.pkl` describes the state dict, `<top>/data/<key>` holds
// each storage's raw bytes. The pickle is read by the strict interpreter with an allow-list of torch globals.
import { LensError } from '../errors';
import type { DType } from '../types';
import { DTYPE_BYTES, elementCount, shapeText } from './dtype';
import { unpickle, PyTuple, type PickleHooks } from './pickle';
import { fileSize } from './safetensors';
import { contiguousFileTensor, readRange, type FileTensors, type SkippedTensor, type SourcedTensor } from './tensor';
import { ZipArchive, type ZipEntry } from './zip';

/** torch storage classes: float ones become weights; integer ones (position_ids buffers) are skipped. */
// A Map, not an object literal: a name from the file such as `__proto__` or `toString` must not find anything.
const STORAGES = new Map<string, { dtype?: DType; label: string; bytes: number }>([
  ['FloatStorage', { dtype: 'float32', label: 'float32', bytes: 4 }],
  ['HalfStorage', { dtype: 'float16', label: 'float16', bytes: 2 }],
  ['BFloat16Storage', { dtype: 'bfloat16', label: 'bfloat16', bytes: 2 }],
  ['DoubleStorage', { label: 'float64', bytes: 8 }],
  ['LongStorage', { label: 'int64', bytes: 8 }],
  ['IntStorage', { label: 'int32', bytes: 4 }],
  ['ShortStorage', { label: 'int16', bytes: 2 }],
  ['CharStorage', { label: 'int8', bytes: 1 }],
  ['ByteStorage', { label: 'uint8', bytes: 1 }],
  ['BoolStorage', { label: 'bool', bytes: 1 }],
]);
type StorageType = NonNullable<ReturnType<typeof STORAGES.get>>;

const REBUILD = new Set(['_rebuild_tensor_v2', '_rebuild_tensor', '_rebuild_parameter']);

class Global {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
}

interface StorageRef {
  kind: 'storage';
  type: StorageType;
  entry: ZipEntry;
}

interface TensorRef {
  kind: 'tensor';
  storage: StorageRef;
  offset: number;
  shape: number[];
  stride: number[];
}

const ZIP_MAGIC = 0x04034b50;

/** data.pkl of deberta-v3-large is ~60 KB; every opcode may allocate an object, so the pickle's size bounds memory. */
const MAX_PICKLE_BYTES = 32 * 2 ** 20;

export function readTorchBin(file: string): FileTensors {
  const size = fileSize(file);
  const head = readRange(file, 0, Math.min(size, 4));
  if (head.length < 4 || Buffer.from(head).readUInt32LE(0) !== ZIP_MAGIC) {
    if (head[0] === 0x80) {
      throw new LensError(
        `${file}: this is PyTorch's legacy (pre-1.6, non-zip) format, which DeBERTa Lens does not read; ` +
          `re-save it with a current torch.save or convert it to model.safetensors.`,
        'unsupported',
      );
    }
    throw new LensError(`${file}: not a PyTorch checkpoint (no zip header); re-download it.`, 'corrupt');
  }
  const zip = new ZipArchive(file, size);
  const pklName = [...zip.entries.keys()].find((n) => n === 'data.pkl' || n.endsWith('/data.pkl'));
  if (pklName === undefined) throw new LensError(`${file}: no data.pkl inside the zip; this is not a torch.save checkpoint.`, 'corrupt');
  const prefix = pklName.slice(0, pklName.length - 'data.pkl'.length);
  const pkl = zip.entries.get(pklName)!;
  if (pkl.size > MAX_PICKLE_BYTES) {
    throw new LensError(
      `${file}: data.pkl is ${pkl.size} bytes, over the limit of ${MAX_PICKLE_BYTES} for a state dict's description; this is not a plain checkpoint.`,
      'corrupt',
    );
  }
  const byteorder = zip.entries.get(`${prefix}byteorder`);
  if (byteorder && byteorder.size > 16)
    throw new LensError(`${file}: the byteorder entry is ${byteorder.size} bytes, not "little"; re-save the checkpoint.`, 'corrupt');
  if (byteorder && Buffer.from(zip.readEntry(byteorder)).toString('latin1').trim() !== 'little') {
    throw new LensError(`${file}: the checkpoint was saved big-endian; re-save it on a little-endian machine.`, 'unsupported');
  }

  const root = unpickle(zip.readEntry(pkl), file, torchHooks(file, zip, prefix));
  const dict = stateDictOf(root);
  if (dict === undefined)
    throw new LensError(`${file}: the pickle holds no state dict of tensors; save model.state_dict().`, 'invalid-input');

  const tensors: SourcedTensor[] = [];
  const skipped: SkippedTensor[] = [];
  const copies = new CopyBudget(file, zip);
  for (const [name, value] of dict) {
    if (typeof name !== 'string' || !isTensor(value)) continue; // non-tensor entries (e.g. an epoch counter) are not weights
    const { type } = value.storage;
    if (type.dtype === undefined) {
      if (type.label === 'float64') {
        throw new LensError(
          `${file}: tensor '${name}' is float64; DeBERTa Lens reads float32, float16 and bfloat16 weights — re-save it as float32.`,
          'unsupported',
        );
      }
      skipped.push({ name, dtype: type.label, shape: value.shape, source: file });
      continue;
    }
    tensors.push(copies.add(tensorFrom(file, zip, name, type.dtype, value), value));
  }
  return { tensors, skipped };
}

/**
 * Tensors whose bytes are copied out of their storage (deflated, or non-contiguous views) are bounded together by
 * the archive's uncompressed size: torch keeps a storage once however many tensors view it, and a 150 KB file
 * whose 870 tensors each view one inflated storage would otherwise take 2.4 GB of memory and cache. Views with the
 * same storage, offset, shape and stride are one tensor under several names (tied weights): they count once and
 * share a key, so the graph stores their bytes once.
 */
class CopyBudget {
  private readonly seen = new Set<string>();
  private copied = 0;
  private readonly limit: number;

  constructor(
    private readonly file: string,
    zip: ZipArchive,
  ) {
    this.limit = [...zip.entries.values()].reduce((s, e) => s + e.size, 0);
  }

  add(t: SourcedTensor, ref: TensorRef): SourcedTensor {
    const key = `${this.file}|${ref.storage.entry.name}|${t.dtype}|${ref.offset}|${ref.shape.join(',')}|${ref.stride.join(',')}`;
    // float32 read in place is referenced by the graph, never copied; float16/bfloat16 in place are widened into it.
    if (t.file !== undefined && t.dtype === 'float32') return { ...t, shareKey: key };
    if (!this.seen.has(key)) {
      this.seen.add(key);
      this.copied += t.byteLength;
      if (this.copied > this.limit) {
        throw new LensError(
          `${this.file}: its tensors would take more than ${this.limit} bytes once copied out of their storages, more than ` +
            `the archive holds uncompressed (many views of the same storage); re-save the checkpoint with each tensor ` +
            `in its own storage, e.g. {k: v.clone() for k, v in state_dict.items()}.`,
          'corrupt',
        );
      }
    }
    return { ...t, shareKey: key };
  }
}

function torchHooks(file: string, zip: ZipArchive, prefix: string): PickleHooks {
  const corrupt = (what: string) =>
    new LensError(`${file}: the checkpoint's pickle is not a tensor state dict (${what}); re-save it with torch.save.`, 'corrupt');
  return {
    findClass(module, name) {
      const ok =
        (module === 'collections' && name === 'OrderedDict') ||
        (module === 'torch._utils' && REBUILD.has(name)) ||
        (module === 'torch' && STORAGES.has(name));
      if (!ok) {
        throw new LensError(
          `${file}: refusing to load: the pickle references ${module}.${name}, which is not a tensor or state-dict type ` +
            `(nothing was executed); use a checkpoint from a trusted source, preferably model.safetensors.`,
          'unsafe',
        );
      }
      return new Global(module, name);
    },
    reduce(fn, args) {
      if (!(fn instanceof Global)) throw corrupt('REDUCE of a non-global');
      if (fn.name === 'OrderedDict') {
        if (args.length !== 0) throw corrupt('OrderedDict with arguments');
        return new Map();
      }
      if (fn.name === '_rebuild_parameter') {
        if (!isTensor(args[0])) throw corrupt('parameter without a tensor');
        return args[0];
      }
      if (fn.name === '_rebuild_tensor_v2' || fn.name === '_rebuild_tensor') {
        const [storage, offset, shape, stride] = args;
        if (!isStorage(storage)) throw corrupt('tensor without a storage');
        if (!isCount(offset)) throw corrupt('bad storage offset');
        const dims = intTuple(shape);
        const strides = intTuple(stride);
        if (!dims || !strides || dims.length !== strides.length) throw corrupt('bad tensor size or stride');
        return { kind: 'tensor', storage, offset, shape: dims, stride: strides } satisfies TensorRef;
      }
      throw corrupt(`${fn.module}.${fn.name} called`);
    },
    persistentLoad(pid) {
      // ('storage', torch.FloatStorage, key, location, numel)
      if (!(pid instanceof PyTuple) || pid.items[0] !== 'storage' || pid.items.length < 5) throw corrupt('unknown persistent id');
      const [, cls, key, , numel] = pid.items;
      const type = cls instanceof Global && cls.module === 'torch' ? STORAGES.get(cls.name) : undefined;
      if (type === undefined) throw corrupt('storage of unknown type');
      if (typeof key !== 'string' || !isCount(numel)) throw corrupt('bad storage reference');
      const entry = zip.entries.get(`${prefix}data/${key}`);
      if (!entry) throw corrupt(`storage ${key} missing from the zip`);
      if (entry.size < numel * type.bytes) {
        throw new LensError(
          `${file}: storage ${key} holds ${entry.size} bytes, fewer than its ${numel} elements need; re-download it.`,
          'corrupt',
        );
      }
      return { kind: 'storage', type, entry } satisfies StorageRef;
    },
    build(target, _state) {
      // torch pickles state-dict metadata (`_metadata`) and parameter attributes this way; none of it matters here.
      if (!(target instanceof Map) && !isTensor(target)) throw corrupt('BUILD on an unexpected object');
    },
  };
}

function tensorFrom(file: string, zip: ZipArchive, name: string, dtype: DType, t: TensorRef): SourcedTensor {
  const elem = DTYPE_BYTES[dtype];
  const count = elementCount(t.shape);
  // A view with more elements than its storage holds (stride 0, overlapping strides) would be materialised at
  // full size: expand(10^7, 32) of 32 stored floats is 1.28 GB. torch.save of a state dict never writes one.
  const stored = Math.floor(t.storage.entry.size / elem);
  if (count > stored) {
    throw new LensError(
      `${file}: tensor '${name}' has shape ${shapeText(t.shape)} (${count} elements) but its storage holds only ${stored}; ` +
        `expanded or overlapping views are not weights — re-save the checkpoint with tensors made contiguous.`,
      'corrupt',
    );
  }
  let last = t.offset;
  for (let k = 0; k < t.shape.length; k++) if (t.shape[k]! > 0) last += (t.shape[k]! - 1) * t.stride[k]!;
  if (count > 0 && (last + 1) * elem > t.storage.entry.size) {
    throw new LensError(`${file}: tensor '${name}' reaches past the end of its storage; re-download the checkpoint.`, 'corrupt');
  }
  const entry = t.storage.entry;
  if (entry.method === 0 && isContiguous(t.shape, t.stride)) {
    return contiguousFileTensor(name, dtype, t.shape, file, entry.dataOffset + t.offset * elem);
  }
  const byteLength = count * elem;
  return {
    name,
    dtype,
    shape: t.shape,
    byteLength,
    source: file,
    read: () => gather(entry.method === 0 ? null : zip.readEntry(entry), file, entry, t, elem, byteLength),
  };
}

/** Copies a strided view into row-major order, reading the storage once. */
function gather(inflated: Uint8Array | null, file: string, entry: ZipEntry, t: TensorRef, elem: number, byteLength: number): Uint8Array {
  const out = new Uint8Array(byteLength);
  if (byteLength === 0) return out;
  // Strides are non-negative, so the view spans storage elements [lo, hi].
  const lo = t.offset;
  let hi = t.offset;
  for (let k = 0; k < t.shape.length; k++) hi += (t.shape[k]! - 1) * t.stride[k]!;
  const spanElems = hi - lo + 1;
  const count = byteLength / elem;
  if (inflated || spanElems <= 4 * count + 65536) {
    const src = inflated ? inflated.subarray(lo * elem, (hi + 1) * elem) : readRange(file, entry.dataOffset + lo * elem, spanElems * elem);
    forEachElement(t, (n, at) => out.set(src.subarray((at - lo) * elem, (at - lo) * elem + elem), n * elem));
  } else {
    // The view spans far more of its storage than it holds (shape [2], stride [10^8]): read element by element
    // rather than the whole span, so the work stays proportional to the tensor.
    forEachElement(t, (n, at) => out.set(readRange(file, entry.dataOffset + at * elem, elem), n * elem));
  }
  return out;
}

/** Calls fn(n, storage element index) for the view's elements in row-major order (an odometer over the shape). */
function forEachElement(t: TensorRef, fn: (n: number, at: number) => void): void {
  const rank = t.shape.length;
  const idx = new Array<number>(rank).fill(0);
  const count = elementCount(t.shape);
  let at = t.offset;
  for (let n = 0; n < count; n++) {
    fn(n, at);
    for (let k = rank - 1; k >= 0; k--) {
      idx[k]!++;
      at += t.stride[k]!;
      if (idx[k]! < t.shape[k]!) break;
      at -= t.stride[k]! * t.shape[k]!;
      idx[k] = 0;
    }
  }
}

function isContiguous(shape: number[], stride: number[]): boolean {
  let expect = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    if (shape[k] !== 1 && stride[k] !== expect) return false;
    expect *= shape[k]!;
  }
  return true;
}

/** The dict of tensors: the pickle's root, or a common wrapper such as {"state_dict": {...}} / {"model": {...}}. */
function stateDictOf(root: unknown): Map<unknown, unknown> | undefined {
  if (!(root instanceof Map)) return undefined;
  if ([...root.values()].some(isTensor)) return root;
  for (const key of ['state_dict', 'model', 'module']) {
    const inner: unknown = root.get(key);
    if (inner instanceof Map && [...inner.values()].some(isTensor)) return inner;
  }
  return undefined;
}

function isTensor(v: unknown): v is TensorRef {
  return typeof v === 'object' && v !== null && (v as TensorRef).kind === 'tensor';
}

function isStorage(v: unknown): v is StorageRef {
  return typeof v === 'object' && v !== null && (v as StorageRef).kind === 'storage';
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function intTuple(v: unknown): number[] | undefined {
  // torch never writes negative sizes or strides.
  if (!(v instanceof PyTuple) || !v.items.every(isCount)) return undefined;
  return v.items;
}
