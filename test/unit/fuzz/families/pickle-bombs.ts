// Object bombs: small pytorch_model.bin files whose pickle costs far more than its bytes — floods of empty
// containers, marks, memo entries, huge integers, deep nesting, length fields that lie, opcodes a state dict
// never needs, random opcode soup. Each must be refused in one line naming the file, within the limits.
import * as path from 'node:path';
import { PickleWriter, writeZip } from '../../../../tools/fixtures/write-torch-bin';
import type { Rng } from '../mutate';
import { explainArgs, type Family, v3Folder } from './family';

const MiB = 2 ** 20;

/** PROTO 2, then a dict with one real-looking tensor entry, left open (MARK … ) for the bomb to follow. */
function prefix(): Uint8Array {
  const p = new PickleWriter();
  p.proto();
  p.op(0x7d); // EMPTY_DICT
  p.put();
  p.mark();
  p.unicode('deberta.embeddings.word_embeddings.weight');
  p.rebuildTensor('FloatStorage', '0', 160 * 32, 0, [160, 32], [32, 1]);
  return p.bytes();
}

function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}

/** `unit` repeated to fill `bytes`, after `head`, then `tail`. */
function flood(head: Uint8Array, unit: number[], bytes: number, tail: number[] = [0x2e]): Uint8Array {
  const n = Math.floor(bytes / unit.length);
  const out = new Uint8Array(head.length + n * unit.length + tail.length);
  out.set(head);
  for (let k = 0; k < n; k++) out.set(unit, head.length + k * unit.length);
  out.set(tail, head.length + n * unit.length);
  return out;
}

/** Opcodes torch.save never writes for a state dict. */
const REFUSED = [0x69, 0x81, 0x92, 0x6f, 0x82, 0x83, 0x84, 0x8f, 0x90, 0x91, 0x96, 0x97, 0x98, 0x52, 0xff, 0x00];
/** Opcodes a state dict's pickle is made of, for soup. */
const SOUP = [
  0x28, 0x29, 0x2e, 0x4a, 0x4b, 0x4d, 0x4e, 0x51, 0x52, 0x58, 0x5d, 0x61, 0x62, 0x63, 0x65, 0x68, 0x71, 0x73, 0x74, 0x75, 0x7d, 0x85, 0x86,
  0x87, 0x88, 0x89, 0x8a,
];

function bomb(rng: Rng): { pkl: Uint8Array; what: string } {
  const head = prefix();
  const size = rng.pick([1, 4, 16, 32]) * MiB;
  switch (rng.int(12)) {
    case 0:
      return { pkl: flood(head, [0x7d], size), what: `${size / MiB} MiB of EMPTY_DICT` };
    case 1:
      return { pkl: flood(Uint8Array.from([...head, 0x5d]), [0x7d, 0x61], size), what: `${size / MiB} MiB of EMPTY_DICT APPEND` };
    case 2:
      return { pkl: flood(head, [0x28], size), what: `${size / MiB} MiB of MARK` };
    case 3: {
      const n = rng.pick([600_000, 2_000_000]);
      const out = new Uint8Array(head.length + 1 + n * 5 + 1);
      out.set(head);
      out[head.length] = 0x4e; // NONE
      for (let k = 0; k < n; k++) out.set([0x72, ...le32(k)], head.length + 1 + k * 5);
      out[out.length - 1] = 0x2e;
      return { pkl: out, what: `${n} LONG_BINPUT memo entries` };
    }
    case 4: {
      const len = rng.pick([9, 64, 4096, MiB, 8 * MiB]);
      const out = new Uint8Array(head.length + 5 + len + 1);
      out.set(head);
      out.set([0x8b, ...le32(len)], head.length);
      out.fill(0x7f, head.length + 5, head.length + 5 + len);
      out[out.length - 1] = 0x2e;
      return { pkl: out, what: `a ${len}-byte LONG4` };
    }
    case 5: {
      const len = 9 + rng.int(247);
      return { pkl: Uint8Array.from([...head, 0x8a, len, ...new Array<number>(len).fill(0x55), 0x2e]), what: `a ${len}-byte LONG1` };
    }
    case 6: {
      const op = rng.pick(REFUSED);
      return { pkl: Uint8Array.from([...head, op, 0x2e]), what: `opcode 0x${op.toString(16)}` };
    }
    case 7: {
      const n = rng.pick([10_000, 500_000, 990_000]);
      // The value of a key in the state dict, so the loader walks it.
      return {
        pkl: flood(Uint8Array.from([...head, 0x8c, 1, 0x78, 0x4e]), [0x85], n, [0x75, 0x2e]),
        what: `${n} nested TUPLE1 as a value`,
      };
    }
    case 8: {
      const op = rng.pick([0x58, 0x42, 0x8d, 0x8e, 0x54, 0x43, 0x8c]);
      const wide = op === 0x8d || op === 0x8e;
      const len =
        op === 0x43 || op === 0x8c
          ? [0xff]
          : wide
            ? [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
            : le32(rng.pick([0x7fffffff, 0xffffffff, 1000]));
      return { pkl: Uint8Array.from([...head, op, ...len, 0x61, 0x62]), what: `opcode 0x${op.toString(16)} whose length passes the end` };
    }
    case 9: {
      // Distinct keys: a dict of a million entries, each a tiny string.
      const n = rng.pick([200_000, 1_200_000]);
      const out: number[] = [...head];
      for (let k = 0; k < n; k++) {
        const key = k.toString(36);
        out.push(0x8c, key.length, ...Buffer.from(key), 0x4e);
      }
      out.push(0x75, 0x2e);
      return { pkl: Uint8Array.from(out), what: `${n} dict entries` };
    }
    case 10: {
      const k = rng.pick([7, 255, 0xffffffff]);
      return { pkl: Uint8Array.from([...head, 0x6a, ...le32(k), 0x2e]), what: `LONG_BINGET ${k} never put` };
    }
    default: {
      const n = rng.pick([64, 4096, 65_536]);
      const out = Uint8Array.from({ length: n }, () => (rng.chance(0.8) ? rng.pick(SOUP) : rng.int(256)));
      return { pkl: Uint8Array.from([...head, ...out]), what: `${n} bytes of opcode soup` };
    }
  }
}

export const pickleBombs: Family = {
  name: 'object bombs (pickle)',
  make({ rng, dir, cache }) {
    const model = v3Folder(path.join(dir, 'model'), false);
    const { pkl, what } = bomb(rng);
    const top = rng.pick(['archive', 'pytorch_model']);
    writeZip(
      path.join(model, 'pytorch_model.bin'),
      [
        { name: `${top}/data.pkl`, data: pkl, deflate: true },
        { name: `${top}/data/0`, data: new Uint8Array(160 * 32 * 4) },
        { name: `${top}/version`, data: Buffer.from('3\n') },
      ],
      false,
    );
    return { what, args: explainArgs(model, cache, '--ids', '1,9,17,33,2'), expect: 'error', names: /pytorch_model\.bin/ };
  },
};
