// Reading tokenizer files with errors the user can act on.
import * as fs from 'node:fs';
import { LensError, isLensError } from '../errors';
import { parseJsonText } from '../checkpoint/json-file';
import { MAX_SMALL_JSON_BYTES, MAX_TOKENIZER_FILE_BYTES, MAX_TOKENIZER_JSON_BYTES, readRegularFile } from '../checkpoint/regular-file';

/** The file's bytes; a device, FIFO or folder in its place, or a file over `maxBytes`, is refused by name. */
export function readFileOrThrow(file: string, what: string, maxBytes = MAX_TOKENIZER_FILE_BYTES): Buffer {
  try {
    return readRegularFile(file, what, maxBytes);
  } catch (e) {
    if (isLensError(e)) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new LensError(`${what} not found: ${file} — check the model folder.`, 'not-found');
    throw new LensError(`Cannot read ${what} ${file} (${code ?? String(e)}) — check its permissions.`, 'invalid-input');
  }
}

// tokenizer.json and vocab.json hold a whole vocabulary; the others (tokenizer_config.json,
// special_tokens_map.json, added_tokens.json) are small, so a file far larger is not what it claims.
const JSON_CAPS: Record<string, number> = { 'tokenizer.json': MAX_TOKENIZER_JSON_BYTES, 'vocab.json': MAX_TOKENIZER_FILE_BYTES };

/** Parsed JSON; an error names the file and the fault's position, never the file's content. */
export function readJsonOrThrow(file: string, what: string): unknown {
  const text = readFileOrThrow(file, what, JSON_CAPS[what] ?? MAX_SMALL_JSON_BYTES).toString('utf8');
  return parseJsonText(
    text,
    (where) => new LensError(`${what} ${file} is not valid JSON (${where}) — replace it with the model's original file.`, 'corrupt'),
  );
}

/** Something is there (after symlinks). Not only regular files: a device or FIFO named like a tokenizer file is
 *  then refused by name when read, rather than silently passed over. */
export function exists(file: string): boolean {
  try {
    fs.statSync(file);
    return true;
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
