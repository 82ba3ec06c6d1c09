import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Checkpoint } from '../checkpoint';
import { LensError } from '../errors';
import { buildDebertaGraph, GRAPH_VERSION, OPSET } from './deberta-graph';
import { WEIGHTS_FILE } from './graph-builder';
import { encodeModel } from './onnx-proto';

export const MODEL_FILE = 'model.onnx';
const READY_FILE = 'READY';

export interface CachedGraph {
  modelPath: string;
  /** True when this call built the graph (a cold load); false when it came from the cache. */
  built: boolean;
  buildMs: number;
}

export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'deberta-lens');
}

/**
 * Returns the ONNX graph for a checkpoint, building it once and caching it keyed by the checkpoint's content
 * hash (and the graph version). Weights are ONNX external data: float32 tensors are referenced in place in the
 * checkpoint's own files (through a hard link in the cache folder); other dtypes are widened into weights.bin.
 */
export function ensureGraph(ck: Checkpoint, cacheDir: string, log?: (s: string) => void): CachedGraph {
  const key = createHash('sha256').update(`${GRAPH_VERSION}\n${ck.hash}`).digest('hex').slice(0, 20);
  const dir = path.join(cacheDir, 'graphs', key);
  const modelPath = path.join(dir, MODEL_FILE);
  if (fs.existsSync(path.join(dir, READY_FILE)) && linksValid(dir)) return { modelPath, built: false, buildMs: 0 };

  const t0 = performance.now();
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    fs.mkdirSync(tmp, { recursive: true });
    const builder = buildDebertaGraph(ck);
    const proto = encodeModel(builder.build(`deberta-lens:${ck.name}`), OPSET, 'deberta-lens');
    fs.writeFileSync(path.join(tmp, MODEL_FILE), proto);
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
  return { modelPath, built: true, buildMs };
}

/**
 * A hard link keeps the weights where they are without a copy. Not a symlink: onnxruntime resolves links and
 * refuses external data outside the model's folder. The target's real path is linked: link(2) does not follow
 * symlinks, and a Hugging Face snapshot's files are relative symlinks into blobs/ that would dangle from the
 * cache. Across file systems (or where the file may not be linked) a hard link is impossible: copy.
 */
function linkOrCopy(target: string, link: string): void {
  const real = fs.realpathSync(target);
  try {
    fs.linkSync(real, link);
  } catch {
    fs.copyFileSync(real, link);
  }
}

function linksValid(dir: string): boolean {
  for (const f of fs.readdirSync(dir)) {
    if (f.startsWith('ckpt') && !fs.existsSync(path.join(dir, f))) return false;
  }
  return true;
}
