// Content hash of a checkpoint (config + weights), streamed so multi-GB files never sit in memory. Memoised on
// each file's path, size and mtime, so reopening an unchanged checkpoint costs only a few stat calls.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { LensError } from '../errors';

const memo = new Map<string, string>();

export async function hashFiles(files: string[]): Promise<string> {
  const stats = files.map((f) => {
    const st = fs.statSync(f);
    return `${f}\0${st.size}\0${st.mtimeMs}`;
  });
  const key = stats.join('\n');
  const known = memo.get(key);
  if (known !== undefined) return known;
  const h = createHash('sha256');
  for (const f of files) {
    try {
      for await (const chunk of fs.createReadStream(f, { highWaterMark: 1 << 22 })) h.update(chunk as Buffer);
    } catch (e) {
      throw new LensError(`${f}: cannot read it to hash the checkpoint (${(e as NodeJS.ErrnoException).code ?? 'error'}).`, 'not-found');
    }
  }
  const digest = h.digest('hex');
  memo.set(key, digest);
  return digest;
}
