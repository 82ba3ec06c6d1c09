// A fuzz family: a seeded maker of cases of one kind of hostile or semantic input, and what each must end in.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES } from '../../helpers';
import type { Bases } from '../cases';
import type { FuzzCase } from '../judge';
import type { Rng } from '../mutate';

export interface MakeContext {
  rng: Rng;
  /** An empty folder of the case's own (it may put a model folder or anything else there). */
  dir: string;
  /** The graph cache every case of a run shares (a stale entry would show as a wrong number). */
  cache: string;
  bases: Bases;
}

export interface Family {
  name: string;
  make(ctx: MakeContext): FuzzCase;
}

export const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const V3_SMALL_FILES = ['config.json', 'special_tokens_map.json', 'tokenizer_config.json', 'spm.model'];

/** A v3_tiny folder at `dir` (its weights as model.safetensors unless `weights` is false). */
export function v3Folder(dir: string, weights = true): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of V3_SMALL_FILES) fs.copyFileSync(path.join(V3, f), path.join(dir, f));
  if (weights) fs.copyFileSync(path.join(V3, 'model.safetensors'), path.join(dir, 'model.safetensors'));
  return dir;
}

/** explain on `model` with the run's cache and one thread, then `more`. */
export function explainArgs(model: string, cache: string, ...more: string[]): string[] {
  return ['explain', '--model', model, '--cache-dir', cache, '--threads', '1', ...more];
}

/** A regular expression matching `s` literally. */
export function literal(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
