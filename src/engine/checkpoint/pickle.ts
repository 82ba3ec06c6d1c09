// A strict pickle reader. It understands only the opcodes torch.save emits for a state dict and never runs
// code: GLOBAL only asks `hooks.findClass` for a token (which refuses anything off its allow-list) and REDUCE
// only asks `hooks.reduce` to build a plain value from such a token. Any other opcode is refused.
import { LensError } from '../errors';
import { opcodeName } from './pickle-opcodes';

/** A Python tuple (kept apart from lists so argument tuples are recognisable). */
export class PyTuple {
  constructor(readonly items: unknown[]) {}
}

export interface PickleHooks {
  /** Returns an opaque token for an allowed global; throws LensError('unsafe') for any other. */
  findClass(module: string, name: string): unknown;
  /** `callable(*args)` for a token from findClass; must not execute anything. */
  reduce(callable: unknown, args: unknown[]): unknown;
  /** Resolves a persistent id (torch: a storage reference). */
  persistentLoad(pid: unknown): unknown;
  /** BUILD: applies `state` to `target` (may ignore it); throws if `target` cannot take state. */
  build(target: unknown, state: unknown): void;
}

const MARK = Symbol('mark');

// Budgets. The byte cap on data.pkl bounds bytes, not objects: 32 MiB of EMPTY_DICT opcodes is 33 million Maps,
// which exhausts V8's heap. deberta-v3-large's pickle makes ~30k values, its memo ~10k entries and its stack stays
// under ~2k (the pickler writes SETITEMS in batches of 1000), so these are far beyond any state dict yet bound the
// worst case to some 150 MB.
/** Values pushed in all (every opcode that makes or fetches one). */
export const MAX_PICKLE_VALUES = 1_000_000;
/** Values on the stack at once. */
export const MAX_PICKLE_STACK = 500_000;
/** Memo entries. */
export const MAX_PICKLE_MEMO = 500_000;
/** LONG1/LONG4 integers: a state dict's sizes, strides and offsets fit in 8 bytes; a 1 MiB integer takes minutes
 *  of BigInt arithmetic (torch's own weights_only loader refuses LONG4 outright). */
const MAX_LONG_BYTES = 8;

export function unpickle(data: Uint8Array, file: string, hooks: PickleHooks): unknown {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const stack: unknown[] = [];
  const memo = new Map<number, unknown>();
  let pos = 0;
  let pushed = 0;

  const corrupt = (what: string) =>
    new LensError(`${file}: the checkpoint's pickle is damaged (${what} at byte ${pos}); re-download or re-save it.`, 'corrupt');
  const overBudget = (what: string, limit: number) =>
    new LensError(
      `${file}: refusing to load: the pickle holds more than ${limit} ${what} (at byte ${pos}), far beyond what a state dict ` +
        `needs; convert the checkpoint to model.safetensors from a trusted source.`,
      'unsafe',
    );
  const push = (v: unknown) => {
    if (++pushed > MAX_PICKLE_VALUES) throw overBudget('values', MAX_PICKLE_VALUES);
    if (stack.length >= MAX_PICKLE_STACK) throw overBudget('values on its stack at once', MAX_PICKLE_STACK);
    stack.push(v);
  };
  const memoSet = (k: number, v: unknown) => {
    if (!memo.has(k) && memo.size >= MAX_PICKLE_MEMO) throw overBudget('memo entries', MAX_PICKLE_MEMO);
    memo.set(k, v);
  };
  const need = (n: number) => {
    if (n < 0 || pos + n > buf.length) throw corrupt('unexpected end of data');
  };
  const u8 = () => {
    need(1);
    return buf[pos++]!;
  };
  const take = (n: number) => {
    need(n);
    const s = buf.subarray(pos, pos + n);
    pos += n;
    return s;
  };
  const u32 = () => {
    need(4);
    const v = buf.readUInt32LE(pos);
    pos += 4;
    return v;
  };
  const u64 = () => {
    need(8);
    const v = buf.readBigUInt64LE(pos);
    pos += 8;
    if (v > BigInt(buf.length)) throw corrupt('length beyond the data');
    return Number(v);
  };
  const line = () => {
    const end = buf.indexOf(0x0a, pos);
    if (end < 0) throw corrupt('unterminated GLOBAL');
    const s = buf.toString('utf8', pos, end);
    pos = end + 1;
    return s;
  };
  const pop = () => {
    if (stack.length === 0) throw corrupt('stack underflow');
    const v = stack.pop();
    if (v === MARK) throw corrupt('unexpected MARK');
    return v;
  };
  const top = () => {
    if (stack.length === 0 || stack[stack.length - 1] === MARK) throw corrupt('stack underflow');
    return stack[stack.length - 1];
  };
  const popMark = () => {
    const at = stack.lastIndexOf(MARK);
    if (at < 0) throw corrupt('missing MARK');
    const items = stack.splice(at);
    items.shift();
    return items;
  };
  const memoGet = (k: number) => {
    if (!memo.has(k)) throw corrupt(`memo ${k} is unset`);
    return memo.get(k);
  };
  const setItems = (target: unknown, kv: unknown[]) => {
    if (!(target instanceof Map)) throw corrupt('SETITEMS on a non-dict');
    if (kv.length % 2) throw corrupt('odd SETITEMS');
    for (let k = 0; k < kv.length; k += 2) target.set(kv[k], kv[k + 1]);
  };
  const appendItems = (target: unknown, items: unknown[]) => {
    if (!Array.isArray(target)) throw corrupt('APPENDS on a non-list');
    // Not push(...items): spreading 300k items overflows the call stack.
    for (const item of items) target.push(item);
  };
  const long = (op: string, length: number) => {
    if (length > MAX_LONG_BYTES) {
      throw new LensError(
        `${file}: refusing to load: the pickle holds a ${length}-byte ${op} integer at byte ${pos}; a state dict's numbers ` +
          `fit in ${MAX_LONG_BYTES} bytes — convert the checkpoint to model.safetensors from a trusted source.`,
        'unsafe',
      );
    }
    const bytes = take(length);
    if (bytes.length === 0) return 0;
    let v = 0n;
    for (let k = bytes.length - 1; k >= 0; k--) v = (v << 8n) | BigInt(bytes[k]!);
    if (bytes[bytes.length - 1]! & 0x80) v -= 1n << BigInt(8 * bytes.length);
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };

  for (;;) {
    const opAt = pos;
    const op = u8();
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) throw corrupt('unknown pickle protocol');
        break;
      case 0x95: // FRAME (a length hint only)
        need(8);
        pos += 8;
        break;
      case 0x28: // MARK
        push(MARK);
        break;
      case 0x2e: // STOP
        return pop();
      case 0x7d: // EMPTY_DICT
        push(new Map());
        break;
      case 0x5d: // EMPTY_LIST
        push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        push(new PyTuple([]));
        break;
      case 0x58: // BINUNICODE
        push(take(u32()).toString('utf8'));
        break;
      case 0x8c: // SHORT_BINUNICODE
        push(take(u8()).toString('utf8'));
        break;
      case 0x8d: // BINUNICODE8
        push(take(u64()).toString('utf8'));
        break;
      case 0x55: // SHORT_BINSTRING (Python 2 str)
        push(take(u8()).toString('latin1'));
        break;
      case 0x54: // BINSTRING
        push(take(u32()).toString('latin1'));
        break;
      case 0x43: // SHORT_BINBYTES
        push(Uint8Array.from(take(u8())));
        break;
      case 0x42: // BINBYTES
        push(Uint8Array.from(take(u32())));
        break;
      case 0x63: {
        // GLOBAL
        const module = line();
        const name = line();
        push(hooks.findClass(module, name));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') throw corrupt('STACK_GLOBAL without names');
        push(hooks.findClass(module, name));
        break;
      }
      case 0x51: // BINPERSID
        push(hooks.persistentLoad(pop()));
        break;
      case 0x74: // TUPLE
        push(new PyTuple(popMark()));
        break;
      case 0x85: // TUPLE1
        push(new PyTuple([pop()]));
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        push(new PyTuple([pop(), b]));
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        push(new PyTuple([pop(), b, c]));
        break;
      }
      case 0x6c: // LIST
        push(popMark());
        break;
      case 0x64: {
        // DICT
        const d = new Map();
        setItems(d, popMark());
        push(d);
        break;
      }
      case 0x4b: // BININT1
        push(u8());
        break;
      case 0x4d: // BININT2
        need(2);
        push(buf.readUInt16LE(pos));
        pos += 2;
        break;
      case 0x4a: // BININT
        need(4);
        push(buf.readInt32LE(pos));
        pos += 4;
        break;
      case 0x8a: // LONG1
        push(long('LONG1', u8()));
        break;
      case 0x8b: // LONG4
        push(long('LONG4', u32()));
        break;
      case 0x47: // BINFLOAT (big-endian double)
        need(8);
        push(buf.readDoubleBE(pos));
        pos += 8;
        break;
      case 0x88: // NEWTRUE
        push(true);
        break;
      case 0x89: // NEWFALSE
        push(false);
        break;
      case 0x4e: // NONE
        push(null);
        break;
      case 0x52: {
        // REDUCE
        const args = pop();
        const fn = pop();
        if (!(args instanceof PyTuple)) throw corrupt('REDUCE without an argument tuple');
        push(hooks.reduce(fn, args.items));
        break;
      }
      case 0x62: {
        // BUILD
        const state = pop();
        hooks.build(top(), state);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const kv = popMark();
        setItems(top(), kv);
        break;
      }
      case 0x61: {
        // APPEND
        const v = pop();
        appendItems(top(), [v]);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        appendItems(top(), items);
        break;
      }
      case 0x71: // BINPUT
        memoSet(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memoSet(u32(), top());
        break;
      case 0x94: // MEMOIZE
        memoSet(memo.size, top());
        break;
      case 0x68: // BINGET
        push(memoGet(u8()));
        break;
      case 0x6a: // LONG_BINGET
        push(memoGet(u32()));
        break;
      case 0x30: // POP
        if (stack.length === 0) throw corrupt('stack underflow');
        stack.pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      default:
        throw new LensError(
          `${file}: refusing to load: the pickle uses opcode ${opcodeName(op)} at byte ${opAt}, ` +
            `which a plain tensor state dict never needs; convert the checkpoint to model.safetensors from a trusted source.`,
          'unsafe',
        );
    }
  }
}
