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
  const key = createHash('sha256').update(`${GRAPH_VERSION}\n${ck.hash}${variant}`).digest('hex').slice(0, 20);
  const dir = path.join(cacheDir, 'graphs', key);
  const modelPath = path.join(dir, MODEL_FILE);
  const layerPath = path.join(dir, LAYER_FILE);
  const decompositionPath = ck.spec.architecture === 'bert' ? path.join(dir, DECOMPOSITION_FILE) : undefined;
  if (fs.existsSync(path.join(dir, READY_FILE)) && linksValid(dir)) return { modelPath, layerPath, decompositionPath, built: false, buildMs: 0 };

  const t0 = performance.now();
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    fs.mkdirSync(tmp, { recursive: true });
    const builder = buildForwardGraph(ck, headGroup);
    const proto = encodeModel(builder.build(`deberta-lens:${ck.name}`), OPSET, 'deberta-lens');
    fs.writeFileSync(path.join(tmp, MODEL_FILE), proto);
    fs.writeFileSync(path.join(tmp, LAYER_FILE), encodeModel(buildLayerGraph(ck.spec).build(`deberta-lens-layer:${ck.name}`), OPSET, 'deberta-lens'));
    if (decompositionPath) {
      const g = new GraphBuilder();
      buildDecompositionGraph(g, ck.spec);
      fs.writeFileSync(path.join(tmp, DECOMPOSITION_FILE), encodeModel(g.build(`deberta-lens-decomposition:${ck.name}`), OPSET, 'deberta-lens'));
    }
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
  log?.(`built ONNX graph for ${ck.name} in ${buildMs.toFixed(0)} ms → ${dir}`);
  return { modelPath, layerPath, decompositionPath, built: true, buildMs };
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
