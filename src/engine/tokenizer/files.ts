// Reading tokenizer files with errors the user can act on.
import * as fs from 'node:fs';
import { LensError } from '../errors';

export function readFileOrThrow(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new LensError(`${what} not found: ${file} — check the model folder.`, 'not-found');
    throw new LensError(`Cannot read ${what} ${file} (${code ?? String(e)}) — check its permissions.`, 'invalid-input');
  }
}

export function readJsonOrThrow(file: string, what: string): unknown {
  const text = readFileOrThrow(file, what).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new LensError(
      `${what} ${file} is not valid JSON (${(e as Error).message}) — replace it with the model's original file.`,
      'corrupt',
    );
  }
}

export function exists(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Largest token id accepted from a tokenizer file. The biggest released vocabularies hold ~250k pieces; ids
 *  index tables, so a file claiming id 10^12 must be refused before anything is sized by it. */
export const MAX_TOKEN_ID = 2 ** 24 - 1;

/** `id` if it is an integer in [0, MAX_TOKEN_ID]; otherwise a LensError naming the file and what carried it. */
export function tokenId(id: unknown, file: string, what: string): number {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= MAX_TOKEN_ID) return id;
  throw new LensError(
    `${file}: ${what} has id ${JSON.stringify(id) ?? String(id)}; token ids must be integers from 0 to ${MAX_TOKEN_ID} — use the tokenizer files that came with the model.`,
    'corrupt',
  );
}
