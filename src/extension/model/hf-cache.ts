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

async function modelTypeOf(snapshot: string): Promise<string | undefined> {
  try {
    const cfg = JSON.parse(await fs.readFile(path.join(snapshot, 'config.json'), 'utf8')) as { model_type?: unknown };
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
