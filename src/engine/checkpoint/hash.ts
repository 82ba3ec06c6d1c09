// Content hash of a checkpoint (config + weights), streamed so multi-GB files never sit in memory. Memoised on
// each file's path, size and mtime, so reopening an unchanged checkpoint costs only a few stat calls.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { LensError } from '../errors';

const memo = new Map<string, string>();

/** What the memo is keyed on: each file's path, size and mtime. */
export function fileStamp(files: string[]): string {
  return files.map((f) => {
    const st = fs.statSync(f);
    return `${f}\0${st.size}\0${st.mtimeMs}`;
  }).join('\n');
}

/** `observe`, when given, sees every chunk of every file (so other checks share the one read); the memo is then
 *  bypassed. */
export async function hashFiles(files: string[], observe?: (file: number, chunk: Buffer, at: number) => void): Promise<string> {
  const key = fileStamp(files);
  const known = observe ? undefined : memo.get(key);
  if (known !== undefined) return known;
  const h = createHash('sha256');
  for (const [i, f] of files.entries()) {
    try {
      let at = 0;
      for await (const chunk of fs.createReadStream(f, { highWaterMark: 1 << 22 })) {
        h.update(chunk as Buffer);
        observe?.(i, chunk as Buffer, at);
        at += (chunk as Buffer).length;
      }
    } catch (e) {
      if (e instanceof LensError) throw e;
      throw new LensError(`${f}: cannot read it to hash the checkpoint (${(e as NodeJS.ErrnoException).code ?? 'error'}).`, 'not-found');
    }
  }
  const digest = h.digest('hex');
  memo.set(key, digest);
  return digest;
}
