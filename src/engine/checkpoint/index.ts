// A checkpoint folder → its ModelSpec and lazily read weights (safetensors or PyTorch .bin, single or sharded).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLensError, LensError } from '../errors';
import type { ModelSpec, TensorData } from '../types';
import { parseConfig } from './config';
import { shapeText } from './dtype';
import { checkpointName, findWeights, resolveSnapshot } from './files';
import { checkedOnRead, hashAndScan, nonFiniteError, type NonFinite } from './finite';
import { type HashedFile, unchangedSinceHashed } from './hash';
import { readJsonFile } from './json-file';
import { MAX_SMALL_JSON_BYTES } from './regular-file';
import { readSafetensors } from './safetensors';
import type { FileTensors, SkippedTensor, SourcedTensor } from './tensor';
import { readTorchBin } from './torch-bin';
import { basePrefix, canonicalWeightName } from './weight-names';

export { parseConfig } from './config';
export type { SkippedTensor } from './tensor';

export interface Checkpoint {
  dir: string; // absolute
  name: string; // folder name, or the HF cache repo name (models--org--name/snapshots/x → org/name)
  spec: ModelSpec; // from config.json
  weights: Map<string, TensorData>; // names without the `deberta.`/`bert.` prefix; ALL float tensors kept (graph picks)
  weightFiles: string[]; // absolute paths of the weight files read
  hash: string; // sha256 of `sha256sum config.json <weight files>` (streamed; remembered per inode state, see hash.ts)
  /** config.json and the weight files with their sha256 and the inode state they were hashed in. */
  hashed: HashedFile[];
  /** Non-float tensors (integer buffers such as `embeddings.position_ids`): not weights, listed for messages. */
  skipped: Map<string, SkippedTensor>;
  /** Weights referenced in place that hold NaN or ±Inf (found while hashing; not looked for without a hash). */
  nonFinite?: Map<string, NonFinite>;
  /** Whether any tensor name carried the base-model prefix (`deberta.`/`bert.`): a task head stored beside an
   *  unprefixed encoder is a layout Hugging Face refuses (checkpoint/task-head.ts). */
  basePrefixed?: boolean;
}

export interface LoadOptions {
  /** A folder where file hashes are remembered across processes (the graph cache keeps one). */
  hashStore?: string;
  /** false: skip hashing (hash '' and no hashed files) where only the shape of the model is wanted. */
  hash?: boolean;
  /** Called once every file's structure is parsed, before any weight byte is hashed (with the weights' total bytes). */
  onParsed?: (weightBytes: number) => void;
}

export async function loadCheckpoint(dir: string, opts: LoadOptions = {}): Promise<Checkpoint> {
  const abs = resolveSnapshot(path.resolve(dir));
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    throw new LensError(`${abs}: model folder not found; check the path (it should hold config.json and the weights).`, 'not-found');
  }
  if (!st.isDirectory()) {
    throw new LensError(`${abs}: is a file; pass the model folder that holds config.json and the weights.`, 'invalid-input');
  }
  const configFile = path.join(abs, 'config.json');
  const spec = parseConfig(readJson(configFile), configFile);

  const layout = findWeights(abs);
  const weights = new Map<string, TensorData>();
  const skipped = new Map<string, SkippedTensor>();
  const origin = new Map<string, string>(); // stripped name → original name, to report collisions
  const prefix = basePrefix(spec);
  let basePrefixed = false;
  for (const file of layout.files) {
    const found: FileTensors = layout.format === 'safetensors' ? readSafetensors(file) : readTorchBin(file);
    if (layout.weightMap) checkShard(file, found, layout.weightMap);
    for (const t of found.tensors) {
      if (t.name.startsWith(prefix)) basePrefixed = true;
      const name = canonicalWeightName(t.name, prefix);
      claim(origin, name, t.name, file);
      // Bytes that are read rather than referenced in place are checked for NaN/Inf as they are read.
      weights.set(name, t.file === undefined ? checkedOnRead({ ...t, name }, t.source) : { ...t, name });
    }
    for (const s of found.skipped) {
      const name = canonicalWeightName(s.name, prefix);
      claim(origin, name, s.name, file);
      skipped.set(name, { ...s, name });
    }
  }
  let weightBytes = 0;
  for (const t of weights.values()) weightBytes += t.byteLength;
  opts.onParsed?.(weightBytes);
  const {
    hash,
    files: hashed,
    nonFinite,
  } = opts.hash === false
    ? { hash: '', files: [], nonFinite: undefined }
    : await hashAndScan([configFile, ...layout.files], weights.values(), opts.hashStore);
  return { dir: abs, name: checkpointName(abs), spec, weights, weightFiles: layout.files, hash, hashed, skipped, nonFinite, basePrefixed };
}

/**
 * Weights read after loading (a layer's, when a view opens it) must be the bytes the checkpoint was hashed and
 * its graph built with: a file replaced or rewritten since is refused, never mixed with the old weights.
 */
export function assertUnchanged(ck: Checkpoint): void {
  const changed = ck.hashed.find((h) => !unchangedSinceHashed(h));
  if (changed) {
    throw new LensError(
      `${changed.file}: changed since the model was loaded: load the model again (Select Model… in VS Code; run the command again in the CLI) so that its layers are computed from the weights its graph was built with.`,
      'corrupt',
    );
  }
}

/**
 * The named weight with the expected shape, or a LensError naming the weight file, the tensor and both shapes.
 * `name` is without the `deberta.`/`bert.` prefix.
 */
export function requireWeight(ck: Checkpoint, name: string, shape: number[]): TensorData {
  const t = ck.weights.get(name);
  if (t === undefined) {
    const skip = ck.skipped.get(name);
    if (skip) {
      throw new LensError(
        `${skip.source}: tensor '${name}' is ${skip.dtype}; a weight must be float32, float16 or bfloat16 — re-save the checkpoint as float32.`,
        'unsupported',
      );
    }
    const where = ck.weightFiles.length === 1 ? ck.weightFiles[0] : `${ck.dir} (${ck.weightFiles.length} weight files)`;
    throw new LensError(
      `${where}: tensor '${name}' ${shapeText(shape)} is missing; the weights do not match config.json (${ck.spec.modelType}).`,
      'invalid-input',
    );
  }
  if (t.shape.length !== shape.length || t.shape.some((s, k) => s !== shape[k])) {
    const source = (t as Partial<SourcedTensor>).source ?? t.file ?? ck.dir;
    throw new LensError(
      `${source}: tensor '${name}' has shape ${shapeText(t.shape)}, but config.json implies ${shapeText(shape)}; ` +
        `the weights and config.json do not belong together.`,
      'invalid-input',
    );
  }
  const bad = ck.nonFinite?.get(name);
  if (bad) throw nonFiniteError((t as Partial<SourcedTensor>).source ?? t.file ?? ck.dir, name, bad);
  return t;
}

function readJson(file: string): unknown {
  try {
    return readJsonFile(file, 'config.json', MAX_SMALL_JSON_BYTES, 're-download it.');
  } catch (e) {
    if (isLensError(e)) throw e;
    throw new LensError(`${file}: not found; a model folder needs the config.json that came with the weights.`, 'not-found');
  }
}

function claim(origin: Map<string, string>, name: string, original: string, file: string): void {
  const before = origin.get(name);
  if (before !== undefined) {
    throw new LensError(
      `${file}: tensors '${before}' and '${original}' both become '${name}' once the model prefix is dropped (and gamma/beta read as weight/bias); keep only one.`,
      'corrupt',
    );
  }
  origin.set(name, original);
}

/** Every tensor the shard index places in `file` must be there. */
function checkShard(file: string, found: FileTensors, weightMap: Map<string, string>): void {
  const present = new Set([...found.tensors.map((t) => t.name), ...found.skipped.map((s) => s.name)]);
  for (const [name, shard] of weightMap) {
    if (shard === file && !present.has(name)) {
      throw new LensError(
        `${file}: tensor '${name}' is listed for this shard in the index but is not in it; re-download the shards.`,
        'corrupt',
      );
    }
  }
}
