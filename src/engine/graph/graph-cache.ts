import * as fs from 'node:fs';
import * as path from 'node:path';
import { type CacheEntry, findEntry, openEntry, type OpenOptions } from '../cache/cache-entry';
import { entryKey } from '../cache/cache-layout';
import type { Checkpoint } from '../checkpoint';
import { buildDecompositionGraph } from './bert-decomposition';
import { buildForwardGraph, FORWARD_HEAD_GROUP, GRAPH_VERSION, OPSET } from './deberta-graph';
import { buildLayerGraph, buildPositionsGraph } from './layer-graphs';
import { GraphBuilder, WEIGHTS_FILE } from './graph-builder';
import { encodeModel } from './onnx-proto';

export { defaultCacheDir } from '../cache/cache-layout';
export const MODEL_FILE = 'model.onnx';
/** The one-layer attention graph (no weights of its own: the layer's weights are fed). */
export const LAYER_FILE = 'layer.onnx';
/** BERT's layer-0 decomposition graph (weights fed too). */
export const DECOMPOSITION_FILE = 'decomposition.onnx';
/** A layer's position projections of the relative table (weights fed; relative attention only). */
export const POSITIONS_FILE = 'positions.onnx';

/** A cache entry holding one graph with weights (model.onnx) and any weightless graphs beside it. */
export interface CachedModelGraph extends CacheEntry {
  modelPath: string;
}

export interface CachedGraph extends CachedModelGraph {
  layerPath: string;
  /** BERT only: the layer-0 decomposition graph. */
  decompositionPath?: string;
  /** Models with relative attention: the positions graph. */
  positionsPath?: string;
}

export interface GraphOptions extends OpenOptions {
  /** The forward graph computes attention this many heads at a time (a cache variant of its own). */
  headGroup?: number;
}

/** What to cache: a graph built from a checkpoint, versioned on its own (the encoder, the prediction heads). */
export interface GraphKind {
  version: string;
  /** Appended to the cache key after the checkpoint hash (a variant of the same graph). */
  variant?: string;
  /** For the log line ("ONNX graphs", "head graph"). */
  what: string;
  build: () => GraphBuilder;
  /** Weightless graphs written beside the main one, by file name. */
  extraFiles?: () => Record<string, Uint8Array>;
}

/**
 * Returns the ONNX graphs for a checkpoint (the forward graph, the one-layer graph, the positions graph for
 * relative attention and, for BERT, the layer-0 decomposition graph), building them once and caching them keyed
 * by the checkpoint's content hash (and the graph version).
 */
export function ensureGraph(ck: Checkpoint, cacheDir: string, opts: GraphOptions = {}): CachedGraph {
  const headGroup = opts.headGroup ?? FORWARD_HEAD_GROUP;
  const bert = ck.spec.architecture === 'bert';
  const relative = ck.spec.relativeAttention && ck.spec.posAttType.length > 0;
  const kind: GraphKind = {
    version: GRAPH_VERSION,
    variant: headGroup === FORWARD_HEAD_GROUP ? '' : `\nheads/${headGroup}`,
    what: 'ONNX graphs',
    build: () => buildForwardGraph(ck, headGroup),
    extraFiles: () => {
      const files: Record<string, Uint8Array> = {
        [LAYER_FILE]: encodeModel(buildLayerGraph(ck.spec).build(`deberta-lens-layer:${ck.name}`), OPSET, 'deberta-lens'),
      };
      if (relative)
        files[POSITIONS_FILE] = encodeModel(buildPositionsGraph(ck.spec).build(`deberta-lens-positions:${ck.name}`), OPSET, 'deberta-lens');
      if (bert) {
        const g = new GraphBuilder();
        buildDecompositionGraph(g, ck.spec);
        files[DECOMPOSITION_FILE] = encodeModel(g.build(`deberta-lens-decomposition:${ck.name}`), OPSET, 'deberta-lens');
      }
      return files;
    },
  };
  const entry = ensureGraphOf(ck, cacheDir, kind, opts);
  return {
    ...entry,
    layerPath: path.join(entry.dir, LAYER_FILE),
    decompositionPath: bert ? path.join(entry.dir, DECOMPOSITION_FILE) : undefined,
    positionsPath: relative ? path.join(entry.dir, POSITIONS_FILE) : undefined,
  };
}

/**
 * One cached graph of a checkpoint. Weights are ONNX external data: float32 tensors are referenced in place in the
 * checkpoint's own files (hard-linked into the cache folder: onnxruntime refuses external data outside the model's
 * folder, symlinks included); other dtypes are widened into weights.bin.
 */
export function ensureGraphOf(ck: Checkpoint, cacheDir: string, kind: GraphKind, opts: OpenOptions = {}): CachedModelGraph {
  const entry = openEntry(
    cacheDir,
    entryKey(kind.version, ck.hash, kind.variant),
    { name: ck.name, dir: ck.dir, hash: ck.hash },
    ck.hashed,
    (w) => {
      const builder = kind.build();
      const proto = encodeModel(builder.build(`deberta-lens:${ck.name}`), OPSET, 'deberta-lens');
      fs.writeFileSync(path.join(w.dir, MODEL_FILE), proto);
      for (const [name, bytes] of Object.entries(kind.extraFiles?.() ?? {})) fs.writeFileSync(path.join(w.dir, name), bytes);
      const fd = fs.openSync(path.join(w.dir, WEIGHTS_FILE), 'w');
      try {
        for (const blob of builder.placement.blobs) fs.writeSync(fd, blob);
      } finally {
        fs.closeSync(fd);
      }
      for (const [location, source] of builder.placement.linked) w.place(source, location);
    },
    opts,
  );
  if (entry.built) opts.log?.(`built ${kind.what} for ${ck.name} in ${entry.buildMs.toFixed(0)} ms → ${entry.dir}`);
  return { ...entry, modelPath: path.join(entry.dir, MODEL_FILE) };
}

/** The cached graph of `kind`, opened, if a valid entry holds it; undefined otherwise (nothing is built). */
export function findGraph(ck: Checkpoint, cacheDir: string, kind: GraphKind, opts: OpenOptions = {}): CachedModelGraph | undefined {
  const entry = findEntry(cacheDir, entryKey(kind.version, ck.hash, kind.variant), opts);
  return entry && { ...entry, modelPath: path.join(entry.dir, MODEL_FILE) };
}
