// Streams an export to a file or a file descriptor (stdout), chunk by chunk, buffering small chunks: a large
// result is several GB as JSON or .npz and must never be built in memory whole. Files are written with
// asynchronous writes, so an export from the extension host leaves the host's event loop free between writes.
import * as fs from 'node:fs';

const FLUSH_BYTES = 1 << 20;

/** Writes `chunks` in order to `target` (a path, created or truncated; or an open descriptor such as 1). */
export async function writeChunks(
  target: string | number,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<void> {
  const file = typeof target === 'number' ? undefined : await fs.promises.open(target, 'w');
  const write = async (data: Buffer) => {
    if (!file) return writeAll(target as number, data);
    for (let off = 0; off < data.length;) off += (await file.write(data, off)).bytesWritten;
  };
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    if (size === 0) return;
    const [only] = pending;
    const data = only && pending.length === 1 ? only : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    await write(data);
  };
  try {
    for await (const c of chunks) {
      const b = typeof c === 'string' ? Buffer.from(c) : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
      if (b.length >= FLUSH_BYTES) {
        await flush();
        await write(b);
        continue;
      }
      pending.push(b);
      size += b.length;
      if (size >= FLUSH_BYTES) await flush();
    }
    await flush();
  } finally {
    await file?.close();
  }
}

/** A full write; a non-blocking stdout (a pipe) may answer EAGAIN, then we retry. */
function writeAll(fd: number, data: Buffer): void {
  for (let off = 0; off < data.length;) {
    try {
      off += fs.writeSync(fd, data, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}
