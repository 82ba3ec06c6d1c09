import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type CacheEntry, openEntry, type OpenOptions } from '../cache/cache-entry';
import type { Checkpoint } from '../checkpoint';
import { buildForwardGraph, buildLayerGraph, FORWARD_HEAD_GROUP, GRAPH_VERSION, OPSET } from './deberta-graph';
import { WEIGHTS_FILE } from './graph-builder';
import { encodeModel } from './onnx-proto';

export { defaultCacheDir } from '../cache/cache-layout';
export const MODEL_FILE = 'model.onnx';
/** The one-layer attention graph (no weights of its own: the layer's weights are fed). */
export const LAYER_FILE = 'layer.onnx';

export interface CachedGraph extends CacheEntry {
  modelPath: string;
  layerPath: string;
}

export interface GraphOptions extends OpenOptions {
  /** The forward graph computes attention this many heads at a time (a cache variant of its own). */
  headGroup?: number;
}

/**
 * Returns the ONNX graphs for a checkpoint (the forward graph and the one-layer graph), building them once and
 * caching them keyed by the checkpoint's content hash (and the graph version). Weights are ONNX external data:
 * float32 tensors are referenced in place in the checkpoint's own files (hard-linked into the cache folder:
 * onnxruntime refuses external data outside the model's folder, symlinks included); other dtypes are widened
 * into weights.bin.
 */
export function ensureGraph(ck: Checkpoint, cacheDir: string, opts: GraphOptions = {}): CachedGraph {
  const headGroup = opts.headGroup ?? FORWARD_HEAD_GROUP;
  const variant = headGroup === FORWARD_HEAD_GROUP ? '' : `\nheads/${headGroup}`;
  const key = createHash('sha256').update(`${GRAPH_VERSION}\n${ck.hash}${variant}`).digest('hex').slice(0, 20);
  const entry = openEntry(cacheDir, key, { name: ck.name, dir: ck.dir, hash: ck.hash }, ck.hashed, (w) => {
    const builder = buildForwardGraph(ck, headGroup);
    const proto = encodeModel(builder.build(`deberta-lens:${ck.name}`), OPSET, 'deberta-lens');
    fs.writeFileSync(path.join(w.dir, MODEL_FILE), proto);
    fs.writeFileSync(path.join(w.dir, LAYER_FILE), encodeModel(buildLayerGraph(ck.spec).build(`deberta-lens-layer:${ck.name}`), OPSET, 'deberta-lens'));
    const fd = fs.openSync(path.join(w.dir, WEIGHTS_FILE), 'w');
    try {
      for (const blob of builder.placement.blobs) fs.writeSync(fd, blob);
    } finally {
      fs.closeSync(fd);
    }
    for (const [location, source] of builder.placement.linked) w.place(source, location);
  }, opts);
  if (entry.built) opts.log?.(`built ONNX graphs for ${ck.name} in ${entry.buildMs.toFixed(0)} ms → ${entry.dir}`);
  return { ...entry, modelPath: path.join(entry.dir, MODEL_FILE), layerPath: path.join(entry.dir, LAYER_FILE) };
}
