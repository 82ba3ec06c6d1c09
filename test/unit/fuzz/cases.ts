// Fuzz cases: a model folder per case, made from an intact base folder of one of six file kinds with one to three
// seeded mutations. Each case is reproducible from (seed, index).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadCheckpoint } from '../../../src/engine/checkpoint';
import { readSafetensors } from '../../../src/engine/checkpoint/safetensors';
import { contiguousStrides, PickleWriter, writeTorchBin, writeZip } from '../../../tools/fixtures/write-torch-bin';
import { unigramTokenizerJson } from '../../../tools/fixtures/write-tokenizer-json';
import { FIXTURES } from '../helpers';
import { mutateBytes, mutateJson, mutateLines, Rng } from './mutate';

export const KINDS = ['safetensors', 'config.json', 'spm.model', 'tokenizer.json', 'vocab/merges', '.bin'] as const;
export type Kind = (typeof KINDS)[number];

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const V1 = path.join(FIXTURES, 'deberta', 'v1_tiny');
const V3_FILES = ['config.json', 'special_tokens_map.json', 'tokenizer_config.json'];

/** Text explained: ASCII, accents, an astral character, and (where the model has room: v1_tiny has 40 absolute
 *  positions) a run that backtracking patterns choke on. */
export function textFor(kind: Kind): string {
  return kind === 'vocab/merges' ? 'A naïve café ✓ 𝔘!' : 'naïve café ✓ 𝔘 aaaaaaaaaaaaaaaaaaaaaaaaaaaa!';
}

interface StoredTensor {
  name: string;
  shape: number[];
  bytes: Uint8Array;
}

export interface Bases {
  dir: string;
  v3Tensors: StoredTensor[];
  tokenizerJson: Record<string, unknown>;
}

/** Intact base folders, one per kind, written once per run. */
export async function makeBases(dir: string): Promise<Bases> {
  const ck = await loadCheckpoint(V3);
  const stored = readSafetensors(path.join(V3, 'model.safetensors')).tensors.map((t) => t.name);
  const v3Tensors = stored.map((name) => {
    const t = ck.weights.get(name.replace(/^deberta\./, ''))!;
    return { name, shape: t.shape, bytes: t.read().slice() };
  });
  const tokenizerJson = unigramTokenizerJson(path.join(V3, 'spm.model'));
  return { dir, v3Tensors, tokenizerJson };
}

function copyV3(dst: string, withSpm = true, withWeights = true): void {
  fs.mkdirSync(dst, { recursive: true });
  for (const f of V3_FILES) fs.copyFileSync(path.join(V3, f), path.join(dst, f));
  if (withSpm) fs.copyFileSync(path.join(V3, 'spm.model'), path.join(dst, 'spm.model'));
  if (withWeights) fs.copyFileSync(path.join(V3, 'model.safetensors'), path.join(dst, 'model.safetensors'));
}

/** Byte mutations, `rounds` times over. */
function damage(bytes: Uint8Array, rng: Rng, rounds: number, focus?: [number, number]): { bytes: Uint8Array; what: string[] } {
  const what: string[] = [];
  let b = bytes;
  for (let k = 0; k < rounds; k++) {
    const m = mutateBytes(b, rng, focus);
    b = m.bytes;
    what.push(m.what);
  }
  return { bytes: b, what };
}

function editJson(value: unknown, rng: Rng, rounds: number): { value: unknown; what: string[] } {
  const what: string[] = [];
  let v = structuredClone(value);
  for (let k = 0; k < rounds; k++) {
    const m = mutateJson(v, rng);
    v = m.value;
    what.push(m.what);
  }
  return { value: v, what };
}

const NESTED = '@@nested-sequence:';

/** JSON text of `json`, with a nested-Sequence placeholder expanded. */
function jsonText(json: Record<string, unknown>): string {
  const text = JSON.stringify(json);
  const m = /"@@nested-sequence:(\d+)"/.exec(text);
  if (!m) return text;
  const depth = Number(m[1]);
  const nested = `${'{"type":"Sequence","normalizers":['.repeat(depth)}{"type":"Lowercase"}${']}'.repeat(depth)}`;
  return text.slice(0, m.index) + nested + text.slice(m.index + m[0].length);
}

const CATASTROPHIC = ['(a+)+$', '(a|aa)+$', '(a*)*b', '(\\w+\\s?)*$', '^(([a-z])+.)+[A-Z]([a-z])+$', '(.*a){12}'];

/** Tokenizer constructs that are valid JSON but hostile: patterns that backtrack, replacements that loop or blow up. */
function hostileTokenizerEdit(json: Record<string, unknown>, rng: Rng): string {
  switch (rng.int(5)) {
    case 0: {
      const re = rng.pick(CATASTROPHIC);
      json.normalizer = { type: 'Replace', pattern: { Regex: re }, content: rng.pick(['x', '', 'aa']) };
      return `Replace /${re}/`;
    }
    case 1: {
      const rep = rng.pick(['', 'ab', '▁▁', ' ', '\u0000']);
      json.pre_tokenizer = {
        type: 'Metaspace',
        replacement: rep,
        prepend_scheme: rng.pick(['always', 'first', 'never']),
        split: rng.chance(0.7),
      };
      return `Metaspace replacement ${JSON.stringify(rep)}`;
    }
    case 2: {
      // Written as text by makeCase: JSON.stringify itself overflows the stack on 20,000 levels.
      const depth = rng.pick([10, 1000, 20_000]);
      json.normalizer = `${NESTED}${depth}`;
      return `Sequence nested ${depth} deep`;
    }
    case 3: {
      json.normalizer = {
        type: 'Replace',
        pattern: { String: rng.pick(['a', ' ', '']) },
        content: 'b'.repeat(rng.pick([1, 1000, 100_000])),
      };
      return 'Replace with a long content';
    }
    default: {
      const tokens = json.added_tokens as unknown[];
      const n = rng.pick([1, 1000, 20_000]);
      for (let k = 0; k < n; k++) tokens.push({ id: 4 + (k % 50), content: `a${'a'.repeat(k % 40)}`, special: false });
      return `${n} added tokens of a-runs`;
    }
  }
}

/** A torch-style .bin of the v3 weights where one tensor's view is replaced by hostile numbers. */
function writeHostileBin(file: string, tensors: StoredTensor[], rng: Rng): string {
  const p = new PickleWriter();
  p.proto();
  p.op(0x7d);
  p.put();
  p.mark();
  const victim = rng.int(tensors.length);
  const entries: { name: string; data: Uint8Array }[] = [];
  const pick = () => rng.pick([0, 1, 2, 32, 10_000_000, 2 ** 31, 2 ** 40, 2 ** 53 - 1]);
  let what = '';
  tensors.forEach((t, k) => {
    let shape = t.shape;
    let stride = contiguousStrides(t.shape);
    let numel = t.bytes.length / 4;
    let offset = 0;
    let cls = 'FloatStorage';
    if (k === victim) {
      switch (rng.int(5)) {
        case 0:
          shape = shape.map((s) => (rng.chance(0.5) ? pick() : s));
          stride = stride.map(() => 0);
          break;
        case 1:
          stride = stride.map(() => pick());
          break;
        case 2:
          numel = pick();
          break;
        case 3:
          offset = pick();
          break;
        default:
          cls = rng.pick(['__proto__', 'toString', 'DoubleStorage', 'LongStorage', 'HalfStorage', 'constructor']);
      }
      what = `${t.name}: shape [${shape.join(',')}] stride [${stride.join(',')}] numel ${numel} offset ${offset} ${cls}`;
    }
    p.unicode(t.name);
    p.rebuildTensor(cls, String(k), numel, offset, shape, stride);
    entries.push({ name: `archive/data/${k}`, data: t.bytes });
  });
  p.op(0x75);
  p.op(0x2e);
  writeZip(file, [{ name: 'archive/data.pkl', data: p.bytes() }, ...entries], false);
  return what;
}

/** Writes case `index` of `kind` into `dir`; returns a one-line description of the damage. */
export function makeCase(kind: Kind, bases: Bases, rng: Rng, dir: string): string {
  const rounds = 1 + rng.int(3);
  switch (kind) {
    case 'safetensors': {
      copyV3(dir, true, false);
      const bytes = fs.readFileSync(path.join(V3, 'model.safetensors'));
      const n = Number(bytes.readBigUInt64LE(0));
      let out: Uint8Array;
      let what: string[];
      if (rng.chance(0.4)) {
        const header = JSON.parse(bytes.toString('utf8', 8, 8 + n));
        const edited = editJson(header, rng, rounds);
        const text = Buffer.from(JSON.stringify(edited.value));
        const lie = rng.chance(0.3) ? rng.pick([-2, -1, 1, 2]) : 0;
        const len = Buffer.alloc(8);
        len.writeBigUInt64LE(BigInt(Math.max(0, text.length + lie)));
        out = Buffer.concat([len, text, bytes.subarray(8 + n)]);
        what = [...edited.what, `header length ${lie >= 0 ? '+' : ''}${lie}`];
      } else ({ bytes: out, what } = damage(bytes, rng, rounds, [0, 8 + n]));
      fs.writeFileSync(path.join(dir, 'model.safetensors'), out);
      return what.join('; ');
    }
    case 'config.json': {
      copyV3(dir);
      const file = path.join(dir, 'config.json');
      if (rng.chance(0.8)) {
        const edited = editJson(JSON.parse(fs.readFileSync(file, 'utf8')), rng, rounds);
        fs.writeFileSync(file, JSON.stringify(edited.value));
        return edited.what.join('; ');
      }
      const d = damage(fs.readFileSync(file), rng, rounds);
      fs.writeFileSync(file, d.bytes);
      return d.what.join('; ');
    }
    case 'spm.model': {
      copyV3(dir, false);
      const bytes = fs.readFileSync(path.join(V3, 'spm.model'));
      const d = damage(bytes, rng, rounds, [Math.floor(bytes.length * 0.9), bytes.length]);
      fs.writeFileSync(path.join(dir, 'spm.model'), d.bytes);
      return d.what.join('; ');
    }
    case 'tokenizer.json': {
      copyV3(dir, false);
      const file = path.join(dir, 'tokenizer.json');
      const r = rng.next();
      if (r < 0.3) {
        const json = structuredClone(bases.tokenizerJson);
        const what = hostileTokenizerEdit(json, rng);
        fs.writeFileSync(file, jsonText(json));
        return what;
      }
      if (r < 0.8) {
        const edited = editJson(bases.tokenizerJson, rng, rounds);
        fs.writeFileSync(file, JSON.stringify(edited.value));
        return edited.what.join('; ');
      }
      const d = damage(Buffer.from(JSON.stringify(bases.tokenizerJson)), rng, rounds);
      fs.writeFileSync(file, d.bytes);
      return d.what.join('; ');
    }
    case 'vocab/merges': {
      fs.mkdirSync(dir, { recursive: true });
      for (const f of fs.readdirSync(V1)) if (f !== 'expected_outputs.json') fs.copyFileSync(path.join(V1, f), path.join(dir, f));
      const r = rng.next();
      if (r < 0.4) {
        const file = path.join(dir, 'vocab.json');
        const edited = editJson(JSON.parse(fs.readFileSync(file, 'utf8')), rng, rounds);
        fs.writeFileSync(file, JSON.stringify(edited.value));
        return `vocab.json: ${edited.what.join('; ')}`;
      }
      if (r < 0.8) {
        const file = path.join(dir, 'merges.txt');
        const m = mutateLines(fs.readFileSync(file, 'utf8'), rng);
        fs.writeFileSync(file, m.text);
        return `merges.txt: ${m.what}`;
      }
      const f = rng.pick(['vocab.json', 'merges.txt']);
      const d = damage(fs.readFileSync(path.join(dir, f)), rng, rounds);
      fs.writeFileSync(path.join(dir, f), d.bytes);
      return `${f}: ${d.what.join('; ')}`;
    }
    case '.bin': {
      copyV3(dir, true, false);
      const file = path.join(dir, 'pytorch_model.bin');
      if (rng.chance(0.3)) return writeHostileBin(file, bases.v3Tensors, rng);
      const tensors = new Map(bases.v3Tensors.map((t) => [t.name, { shape: t.shape, data: new Float32Array(t.bytes.slice().buffer) }]));
      writeTorchBin(file, tensors, { deflate: rng.chance(0.3), singleStorage: rng.chance(0.3) });
      const bytes = fs.readFileSync(file);
      // Most damage goes to data.pkl (the first entry) and the central directory at the end.
      const pklEnd = Math.min(bytes.length, 64 + bytes.indexOf(Buffer.from('byteorder')));
      const focus: [number, number] = rng.chance(0.7) ? [0, pklEnd] : [Math.max(0, bytes.length - 2000), bytes.length];
      const d = damage(bytes, rng, rounds, focus);
      fs.writeFileSync(file, d.bytes);
      return d.what.join('; ');
    }
  }
}
