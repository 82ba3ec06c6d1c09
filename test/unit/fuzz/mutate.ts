// Seeded mutations of model-folder files: byte-level damage that any file can suffer, JSON edits that swap in
// values a hostile or careless writer might put there, and line edits for merges.txt.

/** mulberry32: small, fast, and the same sequence on every platform for a seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error('Rng.pick from an empty list');
    return item;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Integers that break size arithmetic: zero, one, sign and width boundaries. */
const INTERESTING = [0, 1, 2, 7, 255, 256, 65535, 0x7fffffff, 0x80000000, 0xffffffff, 2 ** 32, 2 ** 53 - 1, 2 ** 53 + 2, 2 ** 63];

function writeInt(buf: Uint8Array, at: number, v: number, width: number): void {
  let x = BigInt.asUintN(64, BigInt(v));
  for (let k = 0; k < width && at + k < buf.length; k++) {
    buf[at + k] = Number(x & 0xffn);
    x >>= 8n;
  }
}

/** One byte-level mutation; `focus` (when given) is the region most mutations land in (a header, a pickle). */
export function mutateBytes(input: Uint8Array, rng: Rng, focus?: [number, number]): { bytes: Uint8Array; what: string } {
  const len = input.length;
  const at = (): number => {
    if (len === 0) return 0;
    // An earlier round may have cut the file short of the focus region.
    if (focus && focus[0] < len && rng.chance(0.7)) return focus[0] + rng.int(Math.max(1, Math.min(focus[1], len) - focus[0]));
    return rng.int(len);
  };
  const buf = Uint8Array.from(input);
  if (len === 0) {
    const extra = Uint8Array.from({ length: 1 + rng.int(16) }, () => rng.int(256));
    return { bytes: extra, what: `empty file given ${extra.length} random bytes` };
  }
  switch (rng.int(8)) {
    case 0: {
      const n = 1 + rng.int(4);
      const where: number[] = [];
      for (let k = 0; k < n && len > 0; k++) {
        const p = at();
        buf[p] = (buf[p] ?? 0) ^ (1 << rng.int(8)); // p < len: the byte is there
        where.push(p);
      }
      return { bytes: buf, what: `bit flips at ${where.join(',')}` };
    }
    case 1: {
      const p = at();
      const width = rng.pick([1, 2, 4, 8]);
      const v = rng.pick(INTERESTING) * (rng.chance(0.2) ? -1 : 1);
      writeInt(buf, p, v, width);
      return { bytes: buf, what: `int ${v} (${width} bytes) at ${p}` };
    }
    case 2: {
      const cut = at();
      return { bytes: buf.subarray(0, cut), what: `truncated to ${cut}` };
    }
    case 3: {
      const p = at();
      const n = 1 + rng.int(64);
      const extra = Uint8Array.from({ length: n }, () => rng.int(256));
      const out = new Uint8Array(len + n);
      out.set(buf.subarray(0, p));
      out.set(extra, p);
      out.set(buf.subarray(p), p + n);
      return { bytes: out, what: `${n} random bytes inserted at ${p}` };
    }
    case 4: {
      const p = at();
      const n = 1 + rng.int(Math.min(4096, Math.max(1, len - p)));
      buf.fill(rng.pick([0, 0xff, 0x20]), p, p + n);
      return { bytes: buf, what: `${n} bytes filled at ${p}` };
    }
    case 5: {
      const p = at();
      const n = 1 + rng.int(Math.min(256, Math.max(1, len - p)));
      const out = new Uint8Array(len - Math.min(n, len - p));
      out.set(buf.subarray(0, p));
      out.set(buf.subarray(p + n), p);
      return { bytes: out, what: `${n} bytes removed at ${p}` };
    }
    case 6: {
      const p = at();
      const n = 1 + rng.int(Math.min(1024, Math.max(1, len - p)));
      const out = new Uint8Array(len + n);
      out.set(buf.subarray(0, p + n));
      out.set(buf.subarray(p, p + n), p + n);
      out.set(buf.subarray(p + n), p + 2 * n);
      return { bytes: out.subarray(0, len + Math.min(n, len - p)), what: `${n} bytes duplicated at ${p}` };
    }
    default: {
      const p = at();
      for (let k = 0; k < 16 && p + k < len; k++) buf[p + k] = rng.int(256);
      return { bytes: buf, what: `16 random bytes at ${p}` };
    }
  }
}

/** Values a JSON field might hold in a hostile or broken file. */
function interestingJson(rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => -1,
    () => 0,
    () => 1,
    () => 3,
    () => 10_000_000,
    () => 1e12,
    () => 2 ** 31,
    () => 2 ** 53 + 2,
    () => -1e9,
    () => 0.5,
    () => 1e308,
    () => '',
    () => 'x',
    () => '▁',
    () => '__proto__',
    () => 'toString',
    () => 'constructor',
    () => null,
    () => true,
    () => [],
    () => {
      return {};
    },
    () => [[]],
    () => 'a'.repeat(5000),
    () => new Array(10_000).fill(1),
    () => '(a+)+$',
    () => '\n',
  ])();
}

type Path = (string | number)[];

function paths(v: unknown, prefix: Path, out: Path[], limit: number): void {
  if (out.length >= limit) return;
  out.push(prefix);
  if (Array.isArray(v)) {
    // Long arrays (vocabularies): sample a few elements rather than walk all of them.
    const idx = v.length <= 8 ? v.map((_, i) => i) : [0, 1, 2, v.length - 1, Math.floor(v.length / 2)];
    for (const i of idx) paths(v[i], [...prefix, i], out, limit);
  } else if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    const sample = keys.length <= 40 ? keys : [...keys.slice(0, 20), ...keys.slice(-5)];
    for (const k of sample) paths((v as Record<string, unknown>)[k], [...prefix, k], out, limit);
  }
}

function getAt(root: unknown, p: Path): unknown {
  return p.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], root);
}

/** One edit of a parsed JSON value (in place where possible); returns the new root and what was done. */
export function mutateJson(root: unknown, rng: Rng): { value: unknown; what: string } {
  const all: Path[] = [];
  paths(root, [], all, 2000);
  const p = rng.pick(all.length > 1 ? all.slice(1) : all);
  const where = p.join('.') || '(root)';
  const key = p[p.length - 1];
  if (key === undefined) return { value: interestingJson(rng), what: 'root replaced' };
  const parent = getAt(root, p.slice(0, -1)) as Record<string | number, unknown>;
  switch (rng.int(5)) {
    case 0:
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      return { value: root, what: `deleted ${where}` };
    case 1: {
      const target = getAt(root, p);
      if (Array.isArray(target) && target.length > 0) {
        const n = rng.int(target.length);
        target.length = n;
        return { value: root, what: `${where} cut to ${n} items` };
      }
      parent[key] = interestingJson(rng);
      return { value: root, what: `${where} = ${JSON.stringify(parent[key])?.slice(0, 40)}` };
    }
    case 2: {
      const target = getAt(root, p);
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
        const k = rng.pick(['__proto__', 'constructor', 'toString', 'extra', '']);
        Object.defineProperty(target, k, { value: interestingJson(rng), enumerable: true, configurable: true, writable: true });
        return { value: root, what: `${where}.${k} added` };
      }
      parent[key] = interestingJson(rng);
      return { value: root, what: `${where} = ${JSON.stringify(parent[key])?.slice(0, 40)}` };
    }
    default: {
      const v = interestingJson(rng);
      parent[key] = v;
      return { value: root, what: `${where} = ${JSON.stringify(v)?.slice(0, 40)}` };
    }
  }
}

/** Line-level damage of a text file such as merges.txt. */
export function mutateLines(text: string, rng: Rng): { text: string; what: string } {
  const lines = text.split('\n');
  const i = rng.int(lines.length);
  switch (rng.int(5)) {
    case 0:
      lines.splice(i, 0, ...new Array(1 + rng.int(1000)).fill(lines[i]));
      return { text: lines.join('\n'), what: `line ${i} repeated` };
    case 1:
      lines[i] = rng.pick(['a b c', '', ' ', 'x', `${'a'.repeat(100_000)} b`, '\u0000 \u0000', '#version: 0.2', '▁ ▁']);
      return { text: lines.join('\n'), what: `line ${i} replaced` };
    case 2:
      lines.reverse();
      return { text: lines.join('\n'), what: 'lines reversed' };
    case 3:
      return { text: lines.slice(0, i).join('\n'), what: `cut after line ${i}` };
    default:
      lines.splice(i, 0, ...Array.from({ length: 5000 }, (_, k) => `${'a'.repeat((k % 7) + 1)} ${'a'.repeat((k % 5) + 1)}`));
      return { text: lines.join('\n'), what: `5000 merges of a-runs inserted at ${i}` };
  }
}
