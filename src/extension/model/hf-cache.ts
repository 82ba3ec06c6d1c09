// Finds DeBERTa and BERT checkpoints already downloaded by Hugging Face tools: no network, only the local cache.
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

export interface CachedModel {
  /** The snapshot folder (holds config.json and the weights). */
  path: string;
  /** "microsoft/deberta-v3-base" (from models--microsoft--deberta-v3-base). */
  name: string;
  /** The snapshot's revision hash folder name. */
  revision: string;
  modelType: string;
}

/** The hub cache folder: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub. */
export function hfHubDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HUGGINGFACE_HUB_CACHE) return env.HUGGINGFACE_HUB_CACHE;
  if (env.HF_HOME) return path.join(env.HF_HOME, 'hub');
  const xdg = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(xdg, 'huggingface', 'hub');
}

async function readDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch {
    return [];
  }
}

/** Larger than any real config.json (a few KB): such a file is not offered, and never read on the host's thread. */
export const MAX_LISTED_CONFIG_BYTES = 1 << 20;

/** The config's text, or undefined for anything but a small regular file: a FIFO would never end the read, and
 *  /dev/zero would fill the extension host's memory (a snapshot's config.json is a symlink to any path). */
async function smallConfig(file: string): Promise<string | undefined> {
  const st = await fs.stat(file);
  if (!st.isFile() || st.size > MAX_LISTED_CONFIG_BYTES) return undefined;
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(MAX_LISTED_CONFIG_BYTES + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return bytesRead > MAX_LISTED_CONFIG_BYTES ? undefined : buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

async function modelTypeOf(snapshot: string): Promise<string | undefined> {
  try {
    const text = await smallConfig(path.join(snapshot, 'config.json'));
    if (text === undefined) return undefined;
    const cfg = JSON.parse(text) as { model_type?: unknown };
    return typeof cfg.model_type === 'string' ? cfg.model_type : undefined;
  } catch {
    return undefined; // missing or unreadable config: not a model we can offer
  }
}

/** Every models--NAME/snapshots/REV folder whose config.json says model_type deberta* or bert. Never throws. */
export async function listHfCacheModels(hubDir: string = hfHubDir()): Promise<CachedModel[]> {
  const out: CachedModel[] = [];
  for (const repo of (await readDir(hubDir)).sort()) {
    if (!repo.startsWith('models--')) continue;
    const name = repo.slice('models--'.length).split('--').join('/');
    const snapDir = path.join(hubDir, repo, 'snapshots');
    for (const revision of (await readDir(snapDir)).sort()) {
      const snapshot = path.join(snapDir, revision);
      const type = await modelTypeOf(snapshot);
      if (type && (type.startsWith('deberta') || type === 'bert')) out.push({ path: snapshot, name, revision, modelType: type });
    }
  }
  return out;
}
