import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Checkpoint } from '../checkpoint';
import { LensError } from '../errors';
import { buildDecompositionGraph } from './bert-decomposition';
import { buildForwardGraph, buildLayerGraph, FORWARD_HEAD_GROUP, GRAPH_VERSION, OPSET } from './deberta-graph';
import { GraphBuilder, WEIGHTS_FILE } from './graph-builder';
import { encodeModel } from './onnx-proto';

export const MODEL_FILE = 'model.onnx';
/** The one-layer attention graph (no weights of its own: the layer's weights are fed). */
export const LAYER_FILE = 'layer.onnx';
/** BERT's layer-0 decomposition graph (weights fed too). */
export const DECOMPOSITION_FILE = 'decomposition.onnx';
const READY_FILE = 'READY';

export interface CachedGraph {
  modelPath: string;
  layerPath: string;
  /** BERT only: the layer-0 decomposition graph. */
  decompositionPath?: string;
  /** True when this call built the graph (a cold load); false when it came from the cache. */
  built: boolean;
  buildMs: number;
}

export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'deberta-lens');
}

/**
 * Returns the ONNX graphs for a checkpoint (the forward graph and the one-layer graph), building it once and caching it keyed by the checkpoint's content
 * hash (and the graph version). Weights are ONNX external data: float32 tensors are referenced in place in the
 * checkpoint's own files (through a hard link in the cache folder); other dtypes are widened into weights.bin.
 */
export function ensureGraph(ck: Checkpoint, cacheDir: string, log?: (s: string) => void, headGroup = FORWARD_HEAD_GROUP): CachedGraph {
  const variant = headGroup === FORWARD_HEAD_GROUP ? '' : `\nheads/${headGroup}`;
  const bert = ck.spec.architecture === 'bert';
  const kind: GraphKind = {
    version: GRAPH_VERSION,
    variant,
    what: 'ONNX graph',
    build: () => buildForwardGraph(ck, headGroup),
    extraFiles: () => {
      const files: Record<string, Uint8Array> = { [LAYER_FILE]: encodeModel(buildLayerGraph(ck.spec).build(`deberta-lens-layer:${ck.name}`), OPSET, 'deberta-lens') };
      if (bert) {
        const g = new GraphBuilder();
        buildDecompositionGraph(g, ck.spec);
        files[DECOMPOSITION_FILE] = encodeModel(g.build(`deberta-lens-decomposition:${ck.name}`), OPSET, 'deberta-lens');
      }
      return files;
    },
  };
  const { modelPath, built, buildMs } = ensureGraphOf(ck, cacheDir, kind, log);
  const dir = path.dirname(modelPath);
  return { modelPath, layerPath: path.join(dir, LAYER_FILE), decompositionPath: bert ? path.join(dir, DECOMPOSITION_FILE) : undefined, built, buildMs };
}

/** What to cache: a graph built from a checkpoint, versioned on its own (the encoder, the prediction heads). */
export interface GraphKind {
  version: string;
  /** Appended to the cache key after the checkpoint hash (a variant of the same graph). */
  variant?: string;
  /** For the log line ("ONNX graph", "head graph"). */
  what: string;
  build: () => GraphBuilder;
  /** Weightless graphs written beside the main one, by file name. */
  extraFiles?: () => Record<string, Uint8Array>;
}

export function ensureGraphOf(ck: Checkpoint, cacheDir: string, kind: GraphKind, log?: (s: string) => void): Omit<CachedGraph, 'layerPath' | 'decompositionPath'> {
  const key = createHash('sha256').update(`${kind.version}\n${ck.hash}${kind.variant ?? ''}`).digest('hex').slice(0, 20);
  const dir = path.join(cacheDir, 'graphs', key);
  const modelPath = path.join(dir, MODEL_FILE);
  if (fs.existsSync(path.join(dir, READY_FILE)) && linksValid(dir)) return { modelPath, built: false, buildMs: 0 };

  const t0 = performance.now();
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    fs.mkdirSync(tmp, { recursive: true });
    const builder = kind.build();
    const proto = encodeModel(builder.build(`deberta-lens:${ck.name}`), OPSET, 'deberta-lens');
    fs.writeFileSync(path.join(tmp, MODEL_FILE), proto);
    for (const [name, bytes] of Object.entries(kind.extraFiles?.() ?? {})) fs.writeFileSync(path.join(tmp, name), bytes);
    const fd = fs.openSync(path.join(tmp, WEIGHTS_FILE), 'w');
    try {
      for (const blob of builder.placement.blobs) fs.writeSync(fd, blob);
    } finally {
      fs.closeSync(fd);
    }
    for (const [location, target] of builder.placement.linked) linkOrCopy(target, path.join(tmp, location));
    fs.writeFileSync(path.join(tmp, READY_FILE), `${ck.dir}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (e instanceof LensError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EROFS' || code === 'ENOSPC') {
      throw new LensError(`cannot write the graph cache in ${cacheDir} (${code}): free space or choose another cache folder`, 'runtime');
    }
    throw e;
  }
  const buildMs = performance.now() - t0;
  log?.(`built ${kind.what} for ${ck.name} in ${buildMs.toFixed(0)} ms → ${dir}`);
  return { modelPath, built: true, buildMs };
}

/**
 * A hard link keeps the weights where they are without a copy. Not a symlink: onnxruntime resolves links and
 * refuses external data outside the model's folder. Across file systems a hard link is impossible: copy.
 */
function linkOrCopy(target: string, link: string): void {
  try {
    fs.linkSync(target, link);
  } catch {
    fs.copyFileSync(target, link);
  }
}

function linksValid(dir: string): boolean {
  for (const f of fs.readdirSync(dir)) {
    if (f.startsWith('ckpt') && !fs.existsSync(path.join(dir, f))) return false;
  }
  return true;
}
